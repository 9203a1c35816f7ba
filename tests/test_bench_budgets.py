"""benchmarks/bench_loop.py names each budget with its figure and limit, and the missed ones."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    spec = importlib.util.spec_from_file_location("bench_loop", ROOT / "benchmarks" / "bench_loop.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_loop"] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


def test_the_verdict_names_every_missed_budget_with_its_figure_and_limit() -> None:
    bench = _bench()
    text = bench.report_budgets(
        [
            bench.Budget("run/bare at R=100", 2.5, 4.0, "x"),
            bench.Budget("cold import loopkit / pydantic+httpx", 1.42, 1.3, ""),
        ]
    )
    assert "  met    run/bare at R=100: 2.50x (budget <= 4x)" in text
    assert "  MISSED cold import loopkit / pydantic+httpx: 1.42 (budget <= 1.3)" in text
    assert text.splitlines()[-1] == "budgets: MISSED 1 of 2: cold import loopkit / pydantic+httpx"


def test_all_met_says_so() -> None:
    bench = _bench()
    assert bench.report_budgets([bench.Budget("a", 1.0, 1.5, "x")]).splitlines()[-1] == "budgets: met"
