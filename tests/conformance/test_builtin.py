"""Every built-in adapter passes every conformance case that applies to its protocol."""

from __future__ import annotations

import pytest

from loopkit.conformance import CASE_IDS, Suite, run_suite

# What each protocol cannot express (the suite must say so, never pass it silently).
NOT_APPLICABLE: dict[str, set[str]] = {
    "openai_chat": {"request.parallel.with_none", "request.history.is_error", "request.reasoning.passback", "stream.thinking", "failure.http_529",
                    "kind.pause_turn", "kind.redacted_thinking", "kind.usage_split"},
    "openai_responses": {"request.parallel.with_none", "request.history.is_error", "failure.http_529", "kind.stop_sequence", "kind.pause_turn", "kind.usage_split"},
    "anthropic": set(),
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
    },
    "bedrock": {"request.parallel.disabled", "request.parallel.default", "request.parallel.with_none", "failure.http_529", "kind.refusal", "kind.pause_turn", "kind.usage_split"},
}
# what only Bedrock's wire says: typed in-stream exceptions, an untyped error event, other HTTP error forms, server-side tool blocks
for _protocol in ("openai_chat", "openai_responses", "anthropic", "gemini"):
    NOT_APPLICABLE[_protocol] |= {"failure.error_forms", "failure.stream_exceptions", "failure.stream_error_event", "stream.server_tool_blocks"}


# What only a streamed answer can show: not applicable to an adapter asking for JSON bodies.
STREAMED_ONLY = {"failure.mid_stream", "failure.abort"}
STREAMED_ONLY |= {"failure.stream_exceptions", "failure.stream_error_event", "stream.ends_at_terminal"}


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "non-streamed"])
@pytest.mark.parametrize("protocol", list(NOT_APPLICABLE))
def test_builtin_adapter_passes_every_applicable_case(protocol: str, stream: bool) -> None:
    """The five adapters conform, streamed and not, and a case is not-applicable only where the
    protocol cannot say it (or, for a non-streamed adapter, where only a stream can show it)."""
    report = run_suite(protocol, stream=stream)
    problems = [f"{r.case_id} [{r.status}]: {r.detail}" for r in report.results if r.status in ("fail", "error")]
    assert not problems, "\n".join(problems)
    expected = NOT_APPLICABLE[protocol] | (set() if stream else STREAMED_ONLY)
    assert {r.case_id for r in report.results if r.status == "not-applicable"} == expected
    assert [r.case_id for r in report.results] == list(CASE_IDS)
    assert all(r.reason for r in report.results if r.status == "not-applicable")
    assert report.streamed is stream
    for r in report.results:
        if r.case_id in STREAMED_ONLY and not stream and r.case_id not in NOT_APPLICABLE[protocol]:
            assert r.reason.startswith("the adapter asked for a non-streamed answer"), r.reason


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
