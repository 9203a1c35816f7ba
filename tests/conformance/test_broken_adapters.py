"""The suite catches planted bugs, each with the case named for it, and only the right cases fail."""

from __future__ import annotations

import pytest
from broken_adapters import EXPECTED, MAY_ALSO_FAIL, broken

from loopkit.conformance import run_suite


@pytest.mark.parametrize(("bug", "protocol"), list(EXPECTED), ids=[f"{b}-{p}" for b, p in EXPECTED])
def test_planted_bug_fails_exactly_the_right_cases(bug: str, protocol: str) -> None:
    expected = EXPECTED[bug, protocol]
    report = run_suite(broken(bug, protocol), protocol)
    failing = set(report.failing())
    assert expected <= failing <= expected | MAY_ALSO_FAIL.get((bug, protocol), set()), "\n".join(f"{r.case_id}: {r.detail}" for r in report.results if r.status != "pass")
    assert all(r.status == "fail" and r.mismatches for r in report.results if r.case_id in expected), "a failure says what was sent or parsed"
