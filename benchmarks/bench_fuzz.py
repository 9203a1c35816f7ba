"""``loopkit fuzz``: hit rate on the planted-bug corpus, and the time of one command.

Part 1 fuzzes every tool of tests/fuzz_corpus/planted.py at the default budget (200 examples, no
shrinking) under several seeds and prints, per tool, how many seeds found its planted bug; the
controls (tests/fuzz_corpus/controls.py) must give no finding under any seed.

Part 2 times ``loopkit fuzz <tool>`` with default settings as a user runs it (a fresh process:
start-up, imports, 200 examples, shrinking), in wall-clock and CPU time of the child process.
Budget: under 3 s. On a shared machine the wall time includes waiting for a core, so the CPU time
is printed too and the load average with it.

    PYTHONPATH=. python benchmarks/bench_fuzz.py [--seeds 5] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOL = '''
from loopkit.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first addend.
        b: the second addend.
    """
    return int(a) + int(b)
'''


def hit_rate(seeds: int) -> bool:
    sys.path.insert(0, str(ROOT / "tests"))
    from fuzz_corpus import controls, planted

    from loopkit.fuzz import fuzz

    print(f"{'planted bug':20} {'found':>7}  {'seconds/run':>11}")
    hits = total = 0
    for name in sorted(planted.BUGS):
        kind, word = planted.BUGS[name]
        found = 0
        start = time.perf_counter()
        for seed in range(1, seeds + 1):
            report = fuzz(getattr(planted, name), seed=seed, shrink=False, database=None)
            found += any(f.kind == kind and word in f.message for f in report.findings)
        hits, total = hits + found, total + seeds
        print(f"{name:20} {found:>3}/{seeds:<3}  {(time.perf_counter() - start) / seeds:11.2f}")
    print(f"{'hit rate':20} {hits}/{total} = {hits / total:.0%} at the default budget (200 examples)")
    false = 0
    for name in controls.__all__:
        for seed in range(1, seeds + 1):
            report = fuzz(getattr(controls, name), seed=seed, shrink=False, database=None, expect_errors=controls.EXPECTED.get(name))
            false += len(report.findings)
    print(f"{'controls':20} {false} finding(s) over {len(controls.__all__)} tools x {seeds} seeds (must be 0)")
    return hits == total and false == 0


def command_time(runs: int) -> bool:
    script = Path(sys.executable).with_name("loopkit")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "loopkit"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "bench_tools.py").write_text(TOOL)
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run([*command, "fuzz", "bench_tools:add", "--no-database"], check=False, cwd=tmp, env=env, capture_output=True, text=True)
            walls.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            if done.returncode != 0:
                print(done.stdout, done.stderr)
                return False
    wall, cpu = min(walls), min(cpus)
    load = os.getloadavg()[0]
    print(f"\nloopkit fuzz bench_tools:add (defaults, fresh process), best of {runs}: {wall:.2f} s wall, {cpu:.2f} s CPU")
    print(f"budget < 3 s: {'met' if cpu < 3 else 'MISSED'} in CPU time, {'met' if wall < 3 else 'missed'} in wall time (load average {load:.1f} on {os.cpu_count()} cores)")
    return cpu < 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    ok = hit_rate(args.seeds)
    ok = command_time(args.runs) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
