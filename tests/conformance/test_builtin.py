"""Every built-in adapter passes every conformance case that applies to its protocol."""

from __future__ import annotations

import pytest

from loopkit.conformance import CASE_IDS, Suite, run_suite

ANTHROPIC_ONLY = ("stream.block_start_content", "stream.server_tool_blocks")  # wire forms of Anthropic's alone
ANTHROPIC_ONLY += ("stream.spliced_message_start", "failure.error_instead_of_answer", "failure.error_event_first")
RESPONSES_ONLY = ("request.history.call_item_ids", "stream.thinking.summary_parts", "failure.flat_error_event", "stream.items_left_open")  # of the Responses API alone
RESPONSES_ONLY += ("stream.reasoning.bare_item", "stream.reasoning.two_items", "stream.items_never_added", "request.reasoning.foreign_signature")
# what only Bedrock's wire says: typed in-stream exceptions, an untyped error event, other HTTP error forms, server-side tool calls
BEDROCK_ONLY = {"failure.error_forms", "failure.stream_exceptions", "failure.stream_error_event", "stream.server_tool_calls",
                "failure.throttling_any_status", "failure.stream_exception_unknown", "stream.thinking_unsigned",
                "failure.stream_exception_bare", "stream.block_stop_without_delta", "stream.signature_fragments"}
# Gemini's stream forms: Vertex's partialArgs, errors as bare JSON lines, a blocked prompt, which
# in-stream errors are transient (the suite checks the last only where the spec says)
GEMINI_STREAM_ONLY = {"stream.streamed_call_form", "failure.unframed_error", "stop.prompt_blocked", "failure.stream_error_first"}
GEMINI_STREAM_ONLY |= {"failure.stream_error_retry_delay"}  # an in-stream error's own RetryInfo wait
GEMINI_STREAM_ONLY |= {"stream.last_chunk_unterminated"}  # a stream with no terminator whose last blank line never came
GEMINI_STREAM_ONLY |= {"stream.streamed_call_interrupted"}  # a Vertex streamed call another call's opening part interrupts
GEMINI_ONLY = GEMINI_STREAM_ONLY | {"failure.error_body_wrapped"}  # and an error body in a one-element array
# signatures on text and call parts, calls without ids, a total beyond the counts
GEMINI_ONLY |= {"request.history.part_signatures", "stream.ids_resumed", "stream.usage_total"}
# What each protocol cannot express (the suite must say so, never pass it silently).
NOT_APPLICABLE: dict[str, set[str]] = {
    "openai_chat": {"request.parallel.with_none", "request.history.is_error", "request.reasoning.passback", "stream.thinking", "failure.http_529",
                    "kind.pause_turn", "kind.redacted_thinking", "kind.usage_split", *ANTHROPIC_ONLY, *RESPONSES_ONLY, *GEMINI_ONLY},
    "openai_responses": {"request.parallel.with_none", "request.history.is_error", "failure.http_529", "kind.stop_sequence", "kind.pause_turn", "kind.usage_split",
                         "stop.new_reason", *ANTHROPIC_ONLY, *GEMINI_ONLY},
    "anthropic": {*RESPONSES_ONLY, *GEMINI_ONLY},
    "gemini": {
        "request.tools.strict",
        "request.parallel.disabled",
        "request.parallel.default",
        "request.parallel.with_none",
        "stream.arguments.fragmented",
        "stream.arguments.malformed",
        "stream.arguments.non_object",
        "stream.length_mid_call",
        "failure.http_529",
        "kind.refusal",
        "kind.pause_turn",
        "kind.redacted_thinking",
        *ANTHROPIC_ONLY,
        *RESPONSES_ONLY,
    },
    "bedrock": {"request.model", "request.parallel.disabled", "request.parallel.default", "request.parallel.with_none", "failure.http_529", "kind.refusal", "kind.pause_turn", "kind.usage_split",
                "stream.answer_names", "stop.new_reason", *ANTHROPIC_ONLY, *RESPONSES_ONLY, *GEMINI_ONLY},
}
for _protocol in ("openai_chat", "openai_responses", "anthropic", "gemini"):
    NOT_APPLICABLE[_protocol] |= BEDROCK_ONLY
NOT_APPLICABLE["bedrock"].add("stream.last_event_unterminated")  # binary event-stream frames, not server-sent events
CHAT_ONLY = {"stream.thinking.reasoning_fields", "stream.usage.null_details", "stream.tool_call_ids_repeated"}  # forms of OpenAI-compatible Chat servers
CHAT_ONLY |= {"stream.thinking.after_text"}
for _protocol in ("openai_responses", "anthropic", "gemini", "bedrock"):
    NOT_APPLICABLE[_protocol] |= CHAT_ONLY
OPENAI_ONLY = {"failure.error_shapes"}  # the shapes of OpenAI's error objects and of the servers that copy them
OPENAI_ONLY |= {"failure.error_shapes.details", "kind.refusal.message", "stream.usage.all_cached"}  # and OpenAI's refusals and cache counts
for _protocol in ("anthropic", "gemini", "bedrock"):
    NOT_APPLICABLE[_protocol] |= OPENAI_ONLY
VARIANT_ONLY = {"request.history.error_in_text"}  # a model family that takes no error flag (Suite(variant=...))
for _protocol in NOT_APPLICABLE:
    NOT_APPLICABLE[_protocol] |= VARIANT_ONLY


# What only a streamed answer can show: not applicable to an adapter asking for JSON bodies.
STREAMED_ONLY = {"failure.mid_stream", "failure.abort", "failure.flat_error_event", "stream.items_left_open", "stream.events.as_they_arrive", "stream.tool_call_ids_repeated", "failure.stream_exceptions", "failure.stream_error_event", "stream.ends_at_terminal",
                 "failure.stream_exception_unknown", "failure.stream_exception_bare", "stream.block_stop_without_delta", "stream.signature_fragments"}
STREAMED_ONLY |= {"stream.spliced_message_start", "stream.last_event_unterminated", "failure.error_event_first", "stream.thinking.after_text", "stream.items_never_added"}


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "non-streamed"])
@pytest.mark.parametrize("protocol", list(NOT_APPLICABLE))
def test_builtin_adapter_passes_every_applicable_case(protocol: str, stream: bool) -> None:
    """The five adapters conform, streamed and not, and a case is not-applicable only where the
    protocol cannot say it (or, for a non-streamed adapter, where only a stream can show it)."""
    report = run_suite(protocol, stream=stream)
    problems = [f"{r.case_id} [{r.status}]: {r.detail}" for r in report.results if r.status in ("fail", "error")]
    assert not problems, "\n".join(problems)
    # forms only a stream has: Anthropic's content in content_block_start, Gemini's stream forms
    streamed_only = STREAMED_ONLY | GEMINI_STREAM_ONLY | ({"stream.block_start_content"} if protocol == "anthropic" else set())
    expected = NOT_APPLICABLE[protocol] | (set() if stream else streamed_only)
    assert {r.case_id for r in report.results if r.status == "not-applicable"} == expected
    assert [r.case_id for r in report.results] == list(CASE_IDS)
    assert all(r.reason for r in report.results if r.status == "not-applicable")
    assert report.streamed is stream
    for r in report.results:
        if r.case_id in streamed_only - NOT_APPLICABLE[protocol] and not stream:
            assert r.reason.startswith("the adapter asked for a non-streamed answer"), r.reason


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "non-streamed"])
def test_builtin_bedrock_adapter_conforms_for_a_model_without_tool_result_status(stream: bool) -> None:
    """Built with error_status=False, the Bedrock adapter passes every case against a model that
    refuses toolResult.status (the variant's simulator), the error-in-text case too."""
    report = run_suite("bedrock", stream=stream, variant="no-tool-result-status")
    problems = [f"{r.case_id} [{r.status}]: {r.detail}" for r in report.results if r.status in ("fail", "error")]
    assert not problems, "\n".join(problems)
    expected = (NOT_APPLICABLE["bedrock"] - VARIANT_ONLY) | (set() if stream else STREAMED_ONLY | GEMINI_STREAM_ONLY)
    assert {r.case_id for r in report.results if r.status == "not-applicable"} == expected
    assert report.to_json()["variant"] == "no-tool-result-status" and report.streamed is stream


def test_an_unknown_variant_is_a_usage_error() -> None:
    from loopkit.errors import UsageError

    with pytest.raises(UsageError, match="no-tool-result-status"):
        Suite("bedrock", variant="no-result-status")
    with pytest.raises(UsageError, match="anthropic has no variant"):
        Suite("anthropic", variant="no-tool-result-status")


SERVED_CASES = ("request.tools.declared", "stream.parallel_calls", "stream.utf8_split", "failure.http_429_retry_after", "failure.truncated", "failure.abort")


def test_served_simulator_when_the_factory_takes_only_base_url() -> None:
    """A factory without ``transport=`` gets a simulator served on 127.0.0.1, and still conforms."""
    from loopkit.providers import adapter_class

    def factory(*, base_url: str, retry=None):
        return adapter_class("bedrock")(model="sim-model", api_key="k", base_url=base_url, retry=retry)

    suite = Suite(factory, "bedrock")
    assert suite.harness.served
    results = [suite.run_case(suite.case(c)) for c in SERVED_CASES]
    assert [(r.case_id, r.status, r.detail) for r in results] == [(c, "pass", "") for c in SERVED_CASES]
