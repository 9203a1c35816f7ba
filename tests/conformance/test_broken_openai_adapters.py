"""Each planted OpenAI bug fails exactly its cases, and every detail case is proven by a bug."""

from __future__ import annotations

import pytest
from broken_adapters import EXPECTED
from broken_openai_adapters import OPENAI_EXPECTED, ROUND3_EXPECTED, broken_openai, broken_openai_round3

from loopkit.conformance import CASES, run_suite
from loopkit.conformance._detail_cases import DETAIL_CASES
from loopkit.conformance._openai_round2_cases import OPENAI_ROUND2_CASES
from loopkit.conformance._openai_round3_cases import OPENAI_ROUND3_CASES
from loopkit.conformance._suite import Suite, select_cases


@pytest.mark.parametrize(("bug", "protocol"), list(OPENAI_EXPECTED), ids=[f"{b}-{p}" for b, p in OPENAI_EXPECTED])
def test_planted_openai_bug_fails_exactly_the_right_cases(bug: str, protocol: str) -> None:
    report = run_suite(broken_openai(bug, protocol), protocol)
    assert set(report.failing()) == OPENAI_EXPECTED[bug, protocol], "\n".join(f"{r.case_id}: {r.detail}" for r in report.results if r.status != "pass")
    assert all(r.mismatches for r in report.results if r.status == "fail"), "a failure says what was parsed or sent"


def test_every_detail_case_is_registered_and_proven_by_a_bug() -> None:
    assert all(c in CASES for c in DETAIL_CASES)
    assert {c.id for c in DETAIL_CASES} <= set().union(*OPENAI_EXPECTED.values(), *EXPECTED.values())  # text + parallel calls: drops_second_call


def test_every_openai_form_case_is_registered_and_proven_by_a_bug() -> None:
    assert all(c in CASES for c in OPENAI_ROUND2_CASES)
    assert {c.id for c in OPENAI_ROUND2_CASES} <= set().union(*OPENAI_EXPECTED.values())


def test_unknown_bug_is_refused() -> None:
    with pytest.raises(ValueError, match="no planted bug"):
        broken_openai("failed_without_details", "openai_chat")


@pytest.mark.parametrize("protocol", ["openai_chat", "openai_responses"])
@pytest.mark.parametrize(
    ("bug", "failing", "said"),
    [("ends_calls_twice", ["stream.tool_call"], "whose block had already ended"), ("starts_twice", ["stream.text", "stream.tool_call"], "a second 'start' event")],
)
def test_events_out_of_order_break_the_stream_contract(protocol: str, bug: str, failing: list[str], said: str) -> None:
    report = Suite(broken_openai(bug, protocol), protocol, cases=select_cases(["stream.tool_call", "stream.text"])).run()
    assert sorted(report.failing()) == failing
    assert all(said in r.detail for r in report.results if r.status == "fail")


@pytest.mark.parametrize(("bug", "protocol"), list(ROUND3_EXPECTED), ids=[f"{b}-{p}" for b, p in ROUND3_EXPECTED])
def test_round3_openai_bug_fails_exactly_the_right_cases(bug: str, protocol: str) -> None:
    report = run_suite(broken_openai_round3(bug, protocol), protocol)
    assert set(report.failing()) == ROUND3_EXPECTED[bug, protocol], "\n".join(f"{r.case_id}: {r.detail}" for r in report.results if r.status != "pass")
    assert all(r.mismatches for r in report.results if r.status == "fail"), "a failure says what was parsed or sent"


def test_every_round3_openai_case_is_registered_and_proven_by_a_bug() -> None:
    assert all(c in CASES for c in OPENAI_ROUND3_CASES)
    assert {c.id for c in OPENAI_ROUND3_CASES} <= set().union(*ROUND3_EXPECTED.values())
