"""Examples per second of arguments(schema), valid and invalid, against a hand-written baseline,
and on every schema the tests use.

Part 1: a realistic tool schema (nested objects, arrays, enums, patterns, bounds); the baseline is
the st.fixed_dictionaries strategy a careful person would write by hand for it. Budget: each
within 3x the baseline's time per example.

Part 2: arguments(schema) on each schema of tests/ (the strategy catalogue and the fuzz corpus's
tools), with the aggregate rate. Budget: at least 1,000 examples/s in CPU time (process time, so
that other work on a shared machine counts less; the wall-clock rate is printed too).

Prints figures; exits 1 when a budget is blown.

    PYTHONPATH=. python benchmarks/bench_strategies.py [--examples 2000] [--repeats 3] [--per-schema 300]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from loopkit.strategies import arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 200},
        "filters": {
            "type": "object",
            "properties": {
                "category": {"enum": ["books", "music", "film", "games"]},
                "price": {
                    "type": "object",
                    "properties": {"min": {"type": "number", "minimum": 0}, "max": {"type": "number", "maximum": 10000}},
                    "additionalProperties": False,
                },
                "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
            },
            "additionalProperties": False,
        },
        "sort": {"enum": ["relevance", "price_asc", "price_desc"]},
        "page": {"type": "integer", "minimum": 1, "maximum": 100},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 5},
    },
    "required": ["query"],
    "additionalProperties": False,
}

BASELINE = st.fixed_dictionaries(
    {"query": st.text(min_size=1, max_size=200)},
    optional={
        "filters": st.fixed_dictionaries(
            {},
            optional={
                "category": st.sampled_from(["books", "music", "film", "games"]),
                "price": st.fixed_dictionaries(
                    {},
                    optional={
                        "min": st.integers(min_value=0) | st.floats(min_value=0, allow_nan=False, allow_infinity=False),
                        "max": st.integers(max_value=10000) | st.floats(max_value=10000, allow_nan=False, allow_infinity=False),
                    },
                ),
                "sku": st.from_regex(r"^[A-Z]{3}-[0-9]{4}$"),
            },
        ),
        "sort": st.sampled_from(["relevance", "price_asc", "price_desc"]),
        "page": st.integers(min_value=1, max_value=100),
        "tags": st.lists(st.text(max_size=20), max_size=5),
    },
)


def rate(strategy: st.SearchStrategy, examples: int) -> float:
    """Examples per second hypothesis draws from ``strategy`` (generation only, no shrinking)."""
    return timed(strategy, examples)[0]


def timed(strategy: st.SearchStrategy, examples: int) -> tuple[float, int, float, float]:
    """``(wall rate, count, wall seconds, cpu seconds)`` of drawing ``examples`` values."""
    count = 0

    @settings(
        max_examples=examples,
        database=None,
        derandomize=True,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def draw(value):
        nonlocal count
        count += 1

    start, cpu = time.perf_counter(), time.process_time()
    draw()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return count / wall, count, wall, cpu


def test_schemas() -> dict[str, object]:
    """Every schema the tests generate arguments for: the catalogue and the fuzz corpus's tools."""
    root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(root / "tests" / "strategies"), str(root / "tests")]
    from fuzz_corpus import controls, planted
    from strategy_schemas import CATALOGUE

    schemas: dict[str, object] = dict(CATALOGUE)
    for module in (planted, controls):
        for name in module.__all__:
            schemas[f"{module.__name__.split('.')[-1]}.{name}"] = getattr(module, name).parameters
    return schemas


def per_schema(examples: int) -> bool:
    total = wall_total = cpu_total = 0.0
    print(f"\n{'schema of tests/':34} {'examples/s (cpu)':>17} {'(wall)':>9}")
    for name, schema in test_schemas().items():
        _, count, wall, cpu = timed(arguments(schema), examples)
        total, wall_total, cpu_total = total + count, wall_total + wall, cpu_total + cpu
        print(f"{name:34} {count / cpu:17.0f} {count / wall:9.0f}")
    cpu_rate, wall_rate = total / cpu_total, total / wall_total
    ok = cpu_rate >= 1000
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{'all (' + str(int(total)) + ' examples)':34} {cpu_rate:17.0f} {wall_rate:9.0f}  budget >= 1000/s (cpu): {'met' if ok else 'MISSED'}")
    # the machine's yardstick: hypothesis's own cheapest strategy, drawn the same way
    _, count, _, cpu = timed(st.integers(), examples * 5)
    floor = count / cpu
    print(f"{'yardstick: st.integers()':34} {floor:17.0f}  (arguments on tests/ schemas: {cpu_rate / floor:.0%} of it)")
    print(f"load average {load:.1f} on {os.cpu_count()} cores while measuring")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--per-schema", type=int, default=300, metavar="N", help="examples per schema of tests/ (0 skips part 2)")
    args = parser.parse_args(argv)
    cases = {
        "baseline (fixed_dictionaries)": BASELINE,
        "arguments(schema)": arguments(SCHEMA),
        "arguments(schema, valid=False)": arguments(SCHEMA, valid=False),
    }
    best = {name: max(rate(s, args.examples) for _ in range(args.repeats)) for name, s in cases.items()}
    base = best["baseline (fixed_dictionaries)"]
    ok = True
    print(f"{'strategy':34} {'examples/s':>11} {'time vs baseline':>17}")
    for name, r in best.items():
        ratio = base / r
        flag = "" if ratio <= 3.0 else "  OVER BUDGET (3x)"
        ok = ok and ratio <= 3.0
        print(f"{name:34} {r:11.0f} {ratio:16.2f}x{flag}")
    if args.per_schema:
        ok = per_schema(args.per_schema) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
