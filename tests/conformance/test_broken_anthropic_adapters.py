"""The cases of unusual wire forms and histories each fail on an adapter that gets them wrong,
and only they fail; the shipped adapters pass them."""

from __future__ import annotations

import pytest
from broken_anthropic_adapters import FORM_EXPECTED, ROUND3_EXPECTED, broken_anthropic_round3, broken_form

from loopkit.conformance import CASES, run_suite
from loopkit.conformance._anthropic_round3_cases import ANTHROPIC_ROUND3_CASES
from loopkit.conformance._form_cases import FORM_CASES


@pytest.mark.parametrize(("bug", "protocol"), list(FORM_EXPECTED), ids=[f"{b}-{p}" for b, p in FORM_EXPECTED])
def test_form_bug_fails_exactly_the_right_cases(bug: str, protocol: str) -> None:
    report = run_suite(broken_form(bug, protocol), protocol)
    assert set(report.failing()) == FORM_EXPECTED[bug, protocol], "\n".join(f"{r.case_id}: {r.detail}" for r in report.results if r.status != "pass")
    assert all(r.mismatches for r in report.results if r.status == "fail"), "a failure says what was parsed or sent"


def test_every_form_case_is_registered_and_proven_by_a_bug() -> None:
    assert all(c in CASES for c in FORM_CASES)
    assert {c.id for c in FORM_CASES} <= set().union(*FORM_EXPECTED.values())


@pytest.mark.parametrize("bug", list(ROUND3_EXPECTED))
def test_round3_bug_fails_exactly_the_right_cases(bug: str) -> None:
    report = run_suite(broken_anthropic_round3(bug), "anthropic")
    assert set(report.failing()) == ROUND3_EXPECTED[bug], "\n".join(f"{r.case_id}: {r.detail}" for r in report.results if r.status != "pass")
    assert all(r.mismatches for r in report.results if r.status == "fail"), "a failure says what was parsed or sent"


def test_every_round3_case_is_registered_and_proven_by_a_bug() -> None:
    assert all(c in CASES for c in ANTHROPIC_ROUND3_CASES)
    assert {c.id for c in ANTHROPIC_ROUND3_CASES} <= set().union(*ROUND3_EXPECTED.values())
