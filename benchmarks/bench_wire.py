"""Wire protocols: loop rounds through adapter + in-process simulator, and stream parsing.

1. Microseconds per loop round (one ``add`` tool call per round, then a text answer) through each
   adapter and its simulator on the in-process transport, for R = 10, 100 and 1000 rounds, beside
   ``ScriptedProvider`` and the floor: one ``json.dumps`` + ``json.loads`` of every request body the
   simulator received (a real API is sent the whole history every round, so the floor grows too).
2. Stream-parse throughput of loopkit's codec against the official SDK's own parser on the same
   bytes (the ``wire_<protocol>.py`` modules beside this file), and the event-stream decoder against
   botocore's ``EventStreamBuffer``.

Budgets (issues 3 and 4): a round <= 300 µs at R=10 and <= 3x the floor at R=100 and R=1000;
every codec at least as fast as its SDK's parser.

Usage: python benchmarks/bench_wire.py [--rounds 10 100 1000] [--reps N] [--protocol P ...]
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import loopkit  # noqa: E402
from loopkit import simulators  # noqa: E402
from loopkit.fakes import ScriptedProvider  # noqa: E402
from loopkit.providers import ADAPTERS, adapter_class  # noqa: E402
from loopkit.script import Turn, call  # noqa: E402


@loopkit.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script(rounds: int) -> list[Turn]:
    return [Turn(tool_calls=[call("add", {"a": i, "b": 1}, id=f"call_{i:06d}")]) for i in range(rounds)] + [Turn(text="done")]


def through_simulator(protocol: str, rounds: int) -> tuple[float, list]:
    """Seconds for one run, and the request bodies the simulator received."""
    sim = simulators.create(protocol, script(rounds), chunk_size=64)
    provider = adapter_class(protocol)(model="bench-model", api_key="k", base_url="http://sim" + sim.base_path, transport=simulators.transport(sim))
    t0 = time.perf_counter()
    result = loopkit.run(provider, "go", tools=[add], clock=lambda: 0)
    elapsed = time.perf_counter() - t0
    assert result.reason == "stop" and result.model_calls == rounds + 1, (protocol, result.reason, result.messages[-1])
    return elapsed, [r.json for r in sim.requests]


def scripted(rounds: int) -> float:
    t0 = time.perf_counter()
    loopkit.run(ScriptedProvider(script(rounds), chunk_size=64), "go", tools=[add], clock=lambda: 0)
    return time.perf_counter() - t0


def floor(bodies: list) -> float:
    t0 = time.perf_counter()
    for body in bodies:
        json.loads(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
    return time.perf_counter() - t0


def loop_row(protocol: str, rounds: int, reps: int) -> dict[str, float]:
    through_simulator(protocol, min(rounds, 10))  # warm-up
    runs = [through_simulator(protocol, rounds) for _ in range(reps)]
    wire = statistics.median(r[0] for r in runs)
    base = statistics.median(floor(runs[0][1]) for _ in range(reps))
    fake = statistics.median(scripted(rounds) for _ in range(reps))
    n = rounds + 1
    return {"us_per_round": wire / n * 1e6, "scripted_us": fake / n * 1e6, "floor_us": base / n * 1e6, "x_floor": wire / base}


def parse_rows(protocol: str) -> list[dict]:
    """The codec-vs-SDK rows of ``wire_<protocol>.py`` (a dict or a list of dicts)."""
    try:
        module = importlib.import_module(f"wire_{protocol}")
    except ImportError:
        return []
    rows = module.parse_rows()
    return rows if isinstance(rows, list) else [rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--protocol", action="append", dest="protocols", choices=list(ADAPTERS))
    args = parser.parse_args()
    protocols = args.protocols or list(ADAPTERS)
    ok = True
    print(f"µs per loop round, adapter + in-process simulator (median of {args.reps}; R=1000 of 1)")
    print(f"{'protocol':18} {'R':>5} {'µs/round':>10} {'scripted':>9} {'floor':>9} {'x floor':>8}")
    for protocol in protocols:
        for rounds in args.rounds:
            row = loop_row(protocol, rounds, args.reps if rounds < 1000 else 1)
            within = row["us_per_round"] <= 300 if rounds <= 10 else row["x_floor"] <= 3
            ok = ok and within
            print(
                f"{protocol:18} {rounds:>5} {row['us_per_round']:>10.1f} {row['scripted_us']:>9.1f} "
                f"{row['floor_us']:>9.1f} {row['x_floor']:>8.2f} {'' if within else ' over budget'}",
                flush=True,
            )
    print("\nstream parsing, MB/s on the same bytes (loopkit codec vs the SDK's own parser)")
    for protocol in protocols:
        for row in parse_rows(protocol):
            ours = row.get("loopkit_MBps", row.get("loopkit_typed"))
            sdk = row.get("sdk_MBps", row.get("sdk_typed"))
            ok = ok and ours >= sdk
            label = row.get("stream", "")
            print(f"{protocol:18} {label[:30]:30} loopkit {ours:8.1f}  sdk {sdk:8.1f}  x{ours / sdk:6.1f}", flush=True)
    if "bedrock" in protocols:
        import bench_eventstream

        for row in bench_eventstream.rows():
            ok = ok and row["loopkit_MBps"] >= row["botocore_MBps"]
            print(f"{'bedrock':18} {'event-stream ' + row['chunking']:30} loopkit {row['loopkit_MBps']:8.1f}  botocore {row['botocore_MBps']:8.1f}  x{row['loopkit_MBps'] / row['botocore_MBps']:6.1f}")
    print("budgets:", "met" if ok else "MISSED")


if __name__ == "__main__":
    main()
