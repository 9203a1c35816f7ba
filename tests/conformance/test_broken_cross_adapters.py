"""The cases every protocol shares each fail on an adapter that gets them wrong, and only they
fail; the shipped adapters pass them."""

from __future__ import annotations

import pytest
from broken_cross_adapters import CROSS_EXPECTED, broken_cross

from loopkit.conformance import CASES, run_suite
from loopkit.conformance._cross_cases import CROSS_CASES


@pytest.mark.parametrize(("bug", "protocol"), list(CROSS_EXPECTED), ids=[f"{b}-{p}" for b, p in CROSS_EXPECTED])
def test_cross_bug_fails_exactly_the_right_cases(bug: str, protocol: str) -> None:
    report = run_suite(broken_cross(bug, protocol), protocol)
    assert set(report.failing()) == CROSS_EXPECTED[bug, protocol], "\n".join(f"{r.case_id}: {r.detail}" for r in report.results if r.status != "pass")
    assert all(r.mismatches for r in report.results if r.status == "fail"), "a failure says what was parsed or sent"


def test_every_cross_case_is_registered_and_proven_by_a_bug() -> None:
    assert all(c in CASES for c in CROSS_CASES)
    assert {c.id for c in CROSS_CASES} <= set().union(*CROSS_EXPECTED.values())
