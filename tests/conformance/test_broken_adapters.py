"""The suite catches planted bugs, each with the case named for it, and only the right cases fail."""

from __future__ import annotations

import pytest

from loopkit.conformance import run_suite
from broken_adapters import BROKEN


@pytest.mark.parametrize("name", list(BROKEN))
def test_planted_bug_fails_exactly_the_right_cases(name: str) -> None:
    factory, protocol, expected = BROKEN[name]
    report = run_suite(factory, protocol)
    assert set(report.failing()) == expected, "\n".join(f"{r.case_id}: {r.detail}" for r in report.results if r.status != "pass")
    assert all(r.status == "fail" for r in report.results if r.case_id in expected)
    assert all(r.mismatches for r in report.results if r.case_id in expected), "a failure says what was sent or parsed"
