"""Retry policy for provider calls: which errors to retry, and how long to wait.

Sleeps are injected so tests run instantly and can assert the waits. A provider's own
``retry-after`` (seconds) or ``retry-after-ms`` wins over the exponential schedule.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from .errors import ProviderError


@dataclass(slots=True, kw_only=True)
class RetryPolicy:
    """Retry retryable :class:`ProviderError`\\ s (429, 5xx, 529, a connection closed before any
    event) up to ``max_retries`` times.

    Args:
        max_retries: retries after the first attempt (0 disables retrying).
        base_delay: the first wait when the provider gave no retry-after; doubles each retry.
        max_delay: the longest wait loopkit chooses itself, and the longest retry-after it honours:
            a provider asking for more than this fails at once instead of hanging a test.
        sleep: called with the seconds to wait (sync drivers); by default ``time.sleep``, looked
            up at each call (so a test that patches ``time.sleep`` reaches it).
        asleep: awaited with the seconds to wait (async drivers); by default ``asyncio.sleep``.
    """

    max_retries: int = 2
    base_delay: float = 0.5
    max_delay: float = 60.0
    sleep: Callable[[float], None] = field(default=lambda seconds: time.sleep(seconds))
    asleep: Callable[[float], Awaitable[None]] = field(default=lambda seconds: asyncio.sleep(seconds))

    def delay(self, attempt: int, error: ProviderError) -> float | None:
        """Seconds to wait before retry number ``attempt`` (1-based), or None to give up."""
        if not error.retryable or attempt > self.max_retries:
            return None
        if error.retry_after is not None:
            return error.retry_after if error.retry_after <= self.max_delay else None
        return min(self.base_delay * (2 ** (attempt - 1)), self.max_delay)


NO_RETRY = RetryPolicy(max_retries=0)


def parse_retry_after(headers: object) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (a number of seconds) headers."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    ms = get("retry-after-ms")
    if ms is not None:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    s = get("retry-after")
    if s is not None:
        try:
            return float(s)
        except ValueError:
            return None
    return None
