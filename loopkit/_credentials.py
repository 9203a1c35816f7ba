"""Credentials a client signs or authenticates with, remembered so that no recording keeps them.

An AWS secret access key and session token never travel in a header: a recorder cannot see
them. The adapters that sign (Bedrock's SigV4) call :func:`remember_credential`; every cassette
scrubber removes the remembered values wherever they occur.
"""

from __future__ import annotations

import threading

_MIN = 8
_VALUES: set[str] = set()
_LOCK = threading.Lock()


def remember_credential(*values: str | None) -> None:
    """Remember credentials (values shorter than 8 characters are ignored: too common to scrub)."""
    with _LOCK:
        _VALUES.update(v for v in values if isinstance(v, str) and len(v) >= _MIN)


def remembered_credentials() -> frozenset[str]:
    """Every credential remembered in this process."""
    with _LOCK:
        return frozenset(_VALUES)


def credentials_count() -> int:
    """How many credentials are remembered (cheap: tells a scrubber whether to look again)."""
    return len(_VALUES)
