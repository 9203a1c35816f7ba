"""Shared measuring code for ``wire_openai_chat.py`` and ``wire_openai_responses.py``.

Per loop round: ``loopkit.run`` through an adapter and its in-process simulator transport, beside
the ScriptedProvider, the simulator's own share (the same bodies handed to a fresh sans-IO
simulator) and the floor (one ``json.dumps`` + ``json.loads`` of each request body the simulator
received, i.e. what any client and server must at least do with the whole history).
Stream parsing: loopkit's codec vs the official SDK's own parser on the same simulator bytes.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import loopkit  # noqa: E402
import simulators  # noqa: E402
from loopkit.fakes import ScriptedProvider  # noqa: E402
from loopkit.script import Turn, call  # noqa: E402


@loopkit.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script(rounds: int) -> list[Turn]:
    turns = [Turn(tool_calls=[call("add", {"a": i, "b": 1}, id=f"call_{i}")]) for i in range(rounds)]
    return turns + [Turn(text="done")]


def _median(fn: Callable[[], float], reps: int) -> float:
    fn()  # warm-up
    return statistics.median(fn() for _ in range(reps))


def loop_rows(protocol: str, adapter: type, rounds: int, reps: int = 5) -> dict:
    """µs per round: adapter + in-process simulator, ScriptedProvider, and the JSON floor."""
    bodies: list[bytes] = []

    def through_adapter() -> float:
        sim = simulators.create(protocol, script(rounds))
        provider = adapter(model="bench", api_key="k", transport=simulators.transport(sim))
        t = time.perf_counter()
        result = loopkit.run(provider, "go", tools=[add], clock=lambda: 0)
        elapsed = time.perf_counter() - t
        assert result.reason == "stop" and result.model_calls == rounds + 1, result.reason
        bodies[:] = [r.body for r in sim.requests]
        return elapsed

    def scripted() -> float:
        t = time.perf_counter()
        loopkit.run(ScriptedProvider(script(rounds)), "go", tools=[add], clock=lambda: 0)
        return time.perf_counter() - t

    adapter_s = _median(through_adapter, reps)
    scripted_s = _median(scripted, reps)

    def floor() -> float:
        t = time.perf_counter()
        for body in bodies:
            json.dumps(json.loads(body))
        return time.perf_counter() - t

    floor_s = _median(floor, reps)

    def simulator_only() -> float:
        """The same request bodies straight into a fresh sans-IO simulator: the simulator's share
        of a round (no HTTP, no adapter, no loop)."""
        sim = simulators.create(protocol, script(rounds))
        path = "/v1/chat/completions" if protocol == "openai_chat" else "/v1/responses"
        t = time.perf_counter()
        for body in bodies:
            sim.handle(simulators.SimRequest(method="POST", path=path, headers={"content-type": "application/json"}, body=body))
        return time.perf_counter() - t

    sim_s = _median(simulator_only, reps)
    per = 1e6 / rounds
    return {
        "protocol": protocol,
        "rounds": rounds,
        "adapter_sim_us": round(adapter_s * per, 1),
        "scripted_us": round(scripted_s * per, 1),
        "floor_us": round(floor_s * per, 1),
        "simulator_only_us": round(sim_s * per, 1),
        "x_floor": round(adapter_s / floor_s, 2),
    }


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


def main(rows: Callable[[int], dict], parse: Callable[[], dict]) -> None:
    for r in (10, 100, 1000):
        print(json.dumps(rows(r)))
    print(json.dumps(parse()))
