"""Running async work from sync code, including from a thread that already runs an event loop."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Any


def in_thread(fn: Callable[[], Any]) -> Any:
    """Call ``fn`` on a worker thread (with this context's variables) and return or raise its
    outcome here: the way out when this thread's event loop cannot be re-entered."""
    ctx = contextvars.copy_context()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = ctx.run(fn)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="loopkit-worker")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


async def _await(awaitable: Any) -> Any:
    return await awaitable


def run_coroutine(awaitable: Any, loop: asyncio.AbstractEventLoop | None = None) -> Any:
    """Await ``awaitable`` from sync code: on ``loop`` (or a fresh one) when this thread runs no
    event loop, else on a worker thread, where a nested loop can run."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        if loop is not None:
            return loop.run_until_complete(_await(awaitable))
        return asyncio.run(_await(awaitable))
    return in_thread(lambda: asyncio.run(_await(awaitable)))
