"""The suite catches each planted Gemini bug with the case named for it, and only that case."""

from __future__ import annotations

import pytest
from broken_gemini_adapters import GEMINI_EXPECTED, broken_gemini

from loopkit.conformance import run_suite


@pytest.mark.parametrize("bug", list(GEMINI_EXPECTED))
def test_planted_gemini_bug_fails_exactly_the_right_cases(bug: str) -> None:
    report = run_suite(broken_gemini(bug), "gemini")
    assert set(report.failing()) == GEMINI_EXPECTED[bug], "\n".join(f"{r.case_id}: {r.detail}" for r in report.results if r.status != "pass")
    assert all(r.status == "fail" and r.mismatches for r in report.results if r.case_id in GEMINI_EXPECTED[bug]), "a failure says what was sent or parsed"
