"""Examples per second of arguments(schema), valid and invalid, against a hand-written baseline.

The schema is a realistic tool schema (nested objects, arrays, enums, patterns, bounds). The
baseline is the st.fixed_dictionaries strategy a careful person would write by hand for it.
Budget (issue 6): each within 3x the baseline's time per example. Prints figures; exits 1 when
the budget is blown.

    PYTHONPATH=. python benchmarks/bench_strategies.py [--examples 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import time

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

    start = time.perf_counter()
    draw()
    return count / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
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
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
