"""Shared measuring code for ``wire_openai_chat.py`` and ``wire_openai_responses.py``: loopkit's
codec vs the official SDK's own parser on the same simulator bytes."""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loopkit import simulators  # noqa: E402
from loopkit.script import Turn, call  # noqa: E402


def _median(fn: Callable[[], float], reps: int) -> float:
    return statistics.median(fn() for _ in range(reps))


def parse_rows(protocol: str, chunks: list[bytes], loopkit_parse: Callable[[list[bytes]], object], sdk_parse: Callable[[list[bytes]], object], reps: int = 7) -> dict:
    """Stream-parse throughput (MB/s) of loopkit's codec and the SDK's parser on ``chunks``."""
    size = sum(map(len, chunks))

    def timed(fn: Callable[[list[bytes]], object]) -> Callable[[], float]:
        def run() -> float:
            t = time.perf_counter()
            fn(chunks)
            return time.perf_counter() - t

        return run

    ours = _median(timed(loopkit_parse), reps)
    sdk = _median(timed(sdk_parse), reps)
    return {
        "protocol": protocol,
        "bytes": size,
        "events": len(chunks),
        "loopkit_MBps": round(size / ours / 1e6, 2),
        "sdk_MBps": round(size / sdk / 1e6, 2),
        "speedup_vs_sdk": round(sdk / ours, 2),
    }


def sim_chunks(protocol: str, path: str, body: dict, turn: Turn) -> list[bytes]:
    """The chunks (one per wire event) a simulator writes for ``turn``."""
    sim = simulators.create(protocol, [turn])
    return sim.handle(simulators.SimRequest(method="POST", path=path, body=json.dumps(body).encode())).chunks


def big_turn() -> Turn:
    text = "The quick brown fox jumps over the lazy dog; ünïcode ✓. " * 60
    return Turn(text=text, tool_calls=[call("add", {"a": i, "b": i, "note": "x" * 200}) for i in range(3)], chunk_size=4)
