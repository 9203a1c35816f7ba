"""The planted-bug corpus: every bug is found within the default budget (200 examples) with a
fixed seed, and the correct controls give no finding. ``benchmarks/bench_fuzz.py`` measures the hit
rate over many seeds.

Each bug's run stops at its planted finding (``until``): the examples before it are those of a
whole default run, so "found within 200" is checked without running the rest."""

from __future__ import annotations

import pytest
from fuzz_corpus import controls, planted

from loopkit.fuzz import fuzz, fuzz_tools


@pytest.mark.parametrize("name", sorted(planted.BUGS))
def test_each_planted_bug_is_found_at_the_default_budget(name):
    kind, word = planted.BUGS[name]
    report = fuzz(getattr(planted, name), seed=1, shrink=False, database=None, until=lambda f: f.kind == kind and word in f.message)
    assert report.examples <= 200
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


@pytest.mark.parametrize("name", ["alarm", "order"])  # stopped among the edge cases; among the generated ones
def test_until_ends_the_run_at_the_first_finding_it_accepts_and_changes_nothing_before(name):
    """A run with ``until`` sends the same examples as a whole run, up to the finding it stops
    at, and reports only the examples that ran."""
    tool = getattr(planted, name)
    whole = fuzz(tool, examples=40, seed=1, shrink=False, database=None)
    assert whole.examples == 40 and len(whole.findings) >= 2
    same = {(f.kind, f.bucket): f.example for f in whole.findings}
    target = whole.findings[-1]
    cut = fuzz(tool, examples=40, seed=1, shrink=False, database=None, until=lambda f: (f.kind, f.bucket) == (target.kind, target.bucket))
    assert cut.examples < whole.examples
    assert (cut.examples > cut.edge_examples) == (name == "order")
    assert (target.kind, target.bucket) in {(f.kind, f.bucket) for f in cut.findings}
    assert all(same.get((f.kind, f.bucket)) == f.example for f in cut.findings)  # found by the same examples
    never = fuzz(tool, examples=40, seed=1, shrink=False, database=None, until=lambda f: False)
    assert never.examples == 40 and [f.example for f in never.findings] == [f.example for f in whole.findings]
