"""Loop overhead: a bare hand-written loop vs ``loopkit.run`` and ``loopkit.arun``.

Workload: one tool ``add(a: int, b: int)``; R rounds of one tool call each, then a text answer.
Prints microseconds per round (median of >= 5 repetitions after a warm-up), the ratio to the bare
loop, per-round growth from R=10 to R=1000, peak memory at R=1000, and the cold import time of
``loopkit`` against ``import pydantic, httpx`` (fresh interpreters, whole process).

Budgets (issue "Foundation"): run <= 4x bare per round at R=100 and R=1000; per-round cost at
R=1000 <= 1.5x that at R=10; cold import <= 1.3x pydantic+httpx.

Usage: python benchmarks/bench_loop.py [--reps N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import loopkit  # noqa: E402
from loopkit.fakes import ScriptedProvider  # noqa: E402
from loopkit.script import Turn, call  # noqa: E402


@loopkit.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script(rounds: int) -> list[Turn]:
    turns = [Turn(tool_calls=[call("add", {"a": i, "b": 1}, id=f"c{i}")]) for i in range(rounds)]
    return turns + [Turn(text="done")]


def bare_loop(rounds: int) -> str:
    """The physical limit: dict messages, a dict of tools, json.loads, call, append."""
    replies = [{"role": "assistant", "tool_calls": [{"id": f"c{i}", "name": "add", "arguments": json.dumps({"a": i, "b": 1})}]} for i in range(rounds)]
    replies.append({"role": "assistant", "content": "done"})
    tools = {"add": lambda a, b: a + b}
    messages: list[dict] = [{"role": "user", "content": "go"}]
    n = 0
    while True:
        reply = replies[n]
        n += 1
        messages.append(reply)
        calls = reply.get("tool_calls")
        if not calls:
            return reply["content"]
        for c in calls:
            fn = tools.get(c["name"])
            if fn is None:
                result = f"Tool {c['name']} not found"
            else:
                try:
                    result = str(fn(**json.loads(c["arguments"])))
                except Exception as exc:  # noqa: BLE001
                    result = str(exc)
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": result})


def loopkit_run(rounds: int) -> str:
    provider = ScriptedProvider(script(rounds))
    return loopkit.run(provider, "go", tools=[add], clock=lambda: 0).text


def loopkit_arun(rounds: int) -> str:
    provider = ScriptedProvider(script(rounds))
    return asyncio.run(loopkit.arun(provider, "go", tools=[add], clock=lambda: 0)).text


def per_round_us(fn, rounds: int, reps: int) -> float:
    fn(rounds)  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        assert fn(rounds) == "done"
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / rounds * 1e6


def cold_import(stmt: str, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", stmt], check=True, cwd=ROOT)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    reps = max(5, args.reps)
    print(f"loop overhead, µs per round (median of {reps})")
    print(f"{'R':>6} {'bare':>9} {'run':>9} {'arun':>9} {'run/bare':>9} {'arun/bare':>10}")
    rows = {}
    for rounds in (10, 100, 1000):
        reps_r = reps if rounds < 1000 else max(5, reps // 2)
        b = per_round_us(bare_loop, rounds, reps_r)
        r = per_round_us(loopkit_run, rounds, reps_r)
        a = per_round_us(loopkit_arun, rounds, reps_r)
        rows[rounds] = (b, r, a)
        print(f"{rounds:>6} {b:>9.2f} {r:>9.2f} {a:>9.2f} {r / b:>9.2f} {a / b:>10.2f}")
    growth = rows[1000][1] / rows[10][1]
    print(f"per-round growth R=1000 vs R=10 (run): {growth:.2f}x (budget <= 1.5x)")
    tracemalloc.start()
    loopkit_run(1000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak memory of one run at R=1000: {peak / 1e6:.2f} MB")
    lk = cold_import("import loopkit", reps)
    base = cold_import("import pydantic, httpx", reps)
    print(f"cold import: loopkit {lk:.0f} ms, pydantic+httpx {base:.0f} ms, ratio {lk / base:.2f} (budget <= 1.3)")
    budgets = [
        *(Budget(f"run/bare at R={r}", rows[r][1] / rows[r][0], 4.0, "x") for r in (100, 1000)),
        Budget("per-round growth R=1000 vs R=10", growth, 1.5, "x"),
        Budget("cold import loopkit / pydantic+httpx", lk / base, 1.3, ""),
    ]
    print(report_budgets(budgets))


@dataclass(frozen=True)
class Budget:
    """One speed budget: its name, the figure measured and the most it may be."""

    name: str
    figure: float
    limit: float
    unit: str

    @property
    def met(self) -> bool:
        return self.figure <= self.limit


def report_budgets(budgets: list[Budget]) -> str:
    """One line per budget (met or MISSED, with its figure and limit), then the verdict naming
    every missed budget."""
    lines = [f"  {'met   ' if b.met else 'MISSED'} {b.name}: {b.figure:.2f}{b.unit} (budget <= {b.limit:g}{b.unit})" for b in budgets]
    missed = [b.name for b in budgets if not b.met]
    verdict = "budgets: met" if not missed else f"budgets: MISSED {len(missed)} of {len(budgets)}: {'; '.join(missed)}"
    return "\n".join(["budgets:", *lines, verdict])

if __name__ == "__main__":
    main()
