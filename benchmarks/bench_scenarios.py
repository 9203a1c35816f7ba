"""The whole scenario library on every provider: scenario-runs per second.

Budget: the library × 6 providers (scripted + the five wire protocols, each adapter over its
in-process simulator) in under 10 s on a 2-core machine. Also times the library under pytest
(the scenario plugin's items for the sync driver, the library test module for the async one),
serially and with ``-n 2`` (pytest-xdist): the items share
no state. The xdist figure includes starting the workers, which costs seconds in a venv with many
pytest plugins.

Run: ``PYTHONPATH=. python benchmarks/bench_scenarios.py [--rounds 3] [--no-pytest]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BUDGET_S = 10.0


def run_library(rounds: int) -> None:
    from loopkit.scenario import available, load_all
    from loopkit.scenario.model import PROVIDER_NAMES

    t0 = time.perf_counter()
    scenarios = load_all([ROOT / "scenarios"])
    load_s = time.perf_counter() - t0
    print(f"library: {len(scenarios)} scenarios, loaded and validated in {load_s:.2f} s")
    print(f"providers available: {', '.join(available())} ({len(available())} of {len(PROVIDER_NAMES)})")
    best = None
    for r in range(rounds):
        # a fresh Scenario per round, so each round pays for building its tools, as a test session does
        fresh = load_all([ROOT / "scenarios"])
        statuses: Counter[str] = Counter()
        per_provider: Counter[str] = Counter()
        t = time.perf_counter()
        for s in fresh:
            for p in PROVIDER_NAMES:
                result = s.run(p)
                statuses[result.status] += 1
                if result.record is not None:
                    per_provider[p] += 1
        elapsed = time.perf_counter() - t
        executed = sum(per_provider.values())
        best = elapsed if best is None else min(best, elapsed)
        print(
            f"round {r + 1}: {len(fresh) * len(PROVIDER_NAMES)} scenario × provider pairs in {elapsed:.2f} s "
            f"({executed} runs executed, {executed / elapsed:.0f} runs/s); {dict(sorted(statuses.items()))}"
        )
    assert best is not None
    verdict = "within" if best < BUDGET_S else "OVER"
    print(f"best: {best:.2f} s for the library × {len(PROVIDER_NAMES)} providers — {verdict} the {BUDGET_S:.0f} s budget")
    fresh = load_all([ROOT / "scenarios"])
    t = time.perf_counter()
    for s in fresh:
        s.run_all(driver="async")
    print(f"async driver (loopkit.arun, astream): {time.perf_counter() - t:.2f} s for the same {len(fresh) * len(PROVIDER_NAMES)} pairs")


def run_pytest() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    targets = ["scenarios", "tests/scenario/test_scenario_library.py"]
    for extra in ([], ["-n", "2"]):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *targets, *extra], cwd=ROOT, env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - t
        last = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr.strip()[-200:]
        label = "pytest -n 2" if extra else "pytest (serial)"
        print(f"{label:16}: {elapsed:.2f} s wall, including interpreter start and collection — {last}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-pytest", action="store_true", help="skip the pytest timings")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    run_library(args.rounds)
    if not args.no_pytest:
        run_pytest()


if __name__ == "__main__":
    main()
