"""The planted-bug corpus: every bug is found at the default budget (200 examples) with a fixed
seed, and the correct controls give no finding. ``benchmarks/bench_fuzz.py`` measures the hit rate
over many seeds."""

from __future__ import annotations

import pytest
from fuzz_corpus import controls, planted

from loopkit.fuzz import fuzz, fuzz_tools


@pytest.mark.parametrize("name", sorted(planted.BUGS))
def test_each_planted_bug_is_found_at_the_default_budget(name):
    kind, word = planted.BUGS[name]
    report = fuzz(getattr(planted, name), seed=1, shrink=False, database=None)
    assert report.examples == 200
    hits = [f for f in report.findings if f.kind == kind and word in f.message]
    assert hits, f"{name}: expected a {kind} finding mentioning {word!r}, got {[(f.kind, f.message) for f in report.findings]}"


def test_the_corpus_is_large_enough():
    assert len(planted.BUGS) >= 15
    assert set(planted.BUGS) == set(planted.__all__)


def test_correct_tools_give_no_findings():
    report = fuzz_tools(controls, examples=120, seed=1, expect_errors=controls.EXPECTED, database=None)
    assert sorted(r.target for r in report.reports) == sorted(controls.__all__)
    assert report.ok, [(f.tool, f.kind, f.message) for f in report.findings]
    (calc,) = [r for r in report.reports if r.target == "calculate"]
    assert calc.expected_errors > 0  # the deliberate refusals happened, and were not findings
