"""Each case that reads Bedrock's error forms, in-stream exceptions, cache usage or unusable echoed
arguments fails on an adapter that gets it wrong, and only that case; the shipped adapter passes."""

from __future__ import annotations

import pytest
from broken_bedrock_adapters import (
    BEDROCK_EXPECTED,
    CHECKED,
    VARIANT_CHECKED,
    VARIANT_EXPECTED,
    broken_bedrock,
    variant_bedrock,
)

from loopkit.conformance import CASE_IDS
from loopkit.conformance._suite import Suite, select_cases

NEW_CASES = {
    "request.user_content",
    "request.history.unparsed_arguments",
    "stream.usage_cache",
    "stream.model_named",
    "failure.error_forms",
    "failure.stream_exceptions",
    "failure.stream_error_event",
    "stream.blocks_ended",
    "stream.ends_at_terminal",
    "stream.server_tool_calls",
    "failure.throttling_any_status",
    "failure.stream_exception_unknown",
    "stream.thinking_unsigned",
    "failure.stream_exception_bare",
    "failure.proxy_error_untyped",
    "request.user_text_blank",
    "stream.block_stop_without_delta",
    "stream.signature_fragments",
    "request.history.empty_result",
}
VARIANT = "no-tool-result-status"  # a model family that refuses toolResult.status


@pytest.mark.parametrize("bug", list(BEDROCK_EXPECTED))
def test_bedrock_bug_fails_exactly_the_right_cases(bug: str) -> None:
    report = Suite(broken_bedrock(bug), "bedrock", cases=select_cases(CHECKED)).run()
    assert set(report.failing()) == BEDROCK_EXPECTED[bug], "\n".join(f"{r.case_id}: {r.detail}" for r in report.results if r.status != "pass")
    assert all(r.mismatches for r in report.results if r.status == "fail"), "a failure says what was parsed or sent"


def test_every_new_case_is_registered_and_proven_by_a_bug() -> None:
    assert NEW_CASES <= set(CASE_IDS) and NEW_CASES <= set(CHECKED)
    # every new case, stop.reasons and kind.content_filter for what they check of an error stop
    # (error_type, usage), a cut-off stream for the provider its error names, and a length stop
    # for the blocks it leaves unended
    assert set().union(*BEDROCK_EXPECTED.values()) == NEW_CASES | {"stop.reasons", "kind.content_filter", "failure.ends_early", "stream.blocks_ended.length_stop"}


def test_shipped_bedrock_adapter_passes_the_checked_cases() -> None:
    report = Suite("bedrock", cases=select_cases(CHECKED)).run()
    assert report.ok, [(r.case_id, r.detail) for r in report.results if r.status in ("fail", "error")]


@pytest.mark.parametrize("bug", list(VARIANT_EXPECTED))
def test_bedrock_bug_against_a_model_without_tool_result_status(bug: str) -> None:
    """Against a model that refuses toolResult.status: sending it anyway, dropping it with nothing
    in its place, marking every result, or sending the error's text twice each fail their cases."""
    report = Suite(variant_bedrock(bug), "bedrock", cases=select_cases(VARIANT_CHECKED), variant=VARIANT).run()
    assert set(report.failing()) == VARIANT_EXPECTED[bug], "\n".join(f"{r.case_id}: {r.detail}" for r in report.results if r.status != "pass")
    assert all(r.mismatches for r in report.results if r.status == "fail"), "a failure says what was parsed or sent"


def test_the_variants_case_is_proven_by_a_bug() -> None:
    assert set().union(*VARIANT_EXPECTED.values()) <= set(VARIANT_CHECKED) <= set(CASE_IDS)
    assert "request.history.error_in_text" in VARIANT_EXPECTED["error_text_twice"]
