"""The suite on adapters that ask for non-streamed answers (single JSON bodies).

The suite reads how an adapter asks from the requests it sends. Cases that only a stream can show
(an error event mid-stream, an abort between events) are not applicable to such an adapter; cases
with a non-streamed form (a dropped or cut body) still check it, and still fail a broken one.
"""

from __future__ import annotations

import copy as copy_module
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest

from loopkit.cli import main
from loopkit.conformance import Suite
from loopkit.errors import StreamError, UsageError
from loopkit.events import StreamEvent
from loopkit.provider import ModelRequest
from loopkit.providers import adapter_class

pytest_plugins = ["pytester"]

NON_STREAMED = "the adapter asked for a non-streamed answer"


def factory_of(cls: type, *, stream: bool) -> Callable[..., Any]:
    def factory(*, transport: Any = None, base_url: str | None = None, retry: Any = None) -> Any:
        kw: dict[str, Any] = {"model": "sim-model", "api_key": "sim-key", "stream": stream}
        kw.update({k: v for k, v in (("transport", transport), ("base_url", base_url), ("retry", retry)) if v is not None})
        return cls(**kw)

    return factory


def run(factory: Callable[..., Any], protocol: str, case_id: str) -> Any:
    suite = Suite(factory, protocol)
    return suite.run_case(suite.case(case_id))


# --- planted bugs ----------------------------------------------------------------------------

ANTHROPIC = adapter_class("anthropic")


class TrustsWhateverArrived(ANTHROPIC):  # type: ignore[misc,valid-type]
    """Reads a non-streamed body up to a dropped connection, and takes a body that is not JSON
    as the answer's text: the partial answer comes back as if complete."""

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        call, url, headers, content = self._prepare(request)
        got = b""
        with httpx.Client(transport=self._transport) as client:
            try:
                with client.stream(call.method, url, headers=headers, content=content) as response:
                    for chunk in response.iter_bytes():
                        got += chunk
            except httpx.TransportError:
                pass
        try:
            data = json.loads(got)
        except ValueError:
            data = {"id": "msg_partial", "type": "message", "role": "assistant", "model": "sim-model", "stop_reason": "end_turn",
                    "content": [{"type": "text", "text": got.decode("utf-8", "replace")}], "usage": {"input_tokens": 0, "output_tokens": 0}}  # fmt: skip
        yield from self.decode_body(data)


class BodyStopIsAlwaysEndTurn(ANTHROPIC):  # type: ignore[misc,valid-type]
    """The non-streaming decoder reads every non-tool stop as ``end_turn`` (a refusal becomes a normal stop)."""

    def decode_body(self, data: Any) -> list[StreamEvent]:
        if isinstance(data, dict) and data.get("stop_reason") != "tool_use":
            data = {**data, "stop_reason": "end_turn"}
        return super().decode_body(data)


class SwallowsStreamErrors(ANTHROPIC):  # type: ignore[misc,valid-type]
    """Ends quietly when the provider's error event arrives mid-stream."""

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        try:
            yield from super().stream(request)
        except StreamError:
            return


def _without_abort(request: ModelRequest) -> ModelRequest:
    copy = copy_module.copy(request)
    copy.abort_signal = None
    return copy


class IgnoresAbort(ANTHROPIC):  # type: ignore[misc,valid-type]
    """Never looks at the abort signal."""

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        yield from super().stream(_without_abort(request))

    async def astream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async for event in super().astream(_without_abort(request)):
            yield event


# --- streamed-only cases -----------------------------------------------------------------------


@pytest.mark.parametrize(("case_id", "broken"), [("failure.mid_stream", SwallowsStreamErrors), ("failure.abort", IgnoresAbort)])
def test_streamed_only_case_is_not_applicable_to_a_non_streamed_adapter_and_still_fails_a_broken_streamed_one(case_id: str, broken: type) -> None:
    result = run(factory_of(ANTHROPIC, stream=False), "anthropic", case_id)
    assert result.status == "not-applicable"
    assert result.reason.startswith(NON_STREAMED) and 'does not set "stream": true' in result.reason
    # the same bug in an adapter that asks for JSON bodies cannot show: not applicable, not passed
    assert run(factory_of(broken, stream=False), "anthropic", case_id).status == "not-applicable"
    assert run(factory_of(ANTHROPIC, stream=True), "anthropic", case_id).status == "pass"
    failed = run(factory_of(broken, stream=True), "anthropic", case_id)
    assert failed.status == "fail" and failed.mismatches


@pytest.mark.parametrize(("protocol", "switch"), [("gemini", ":generateContent"), ("bedrock", "/converse")])
def test_the_reason_names_how_the_request_asked(protocol: str, switch: str) -> None:
    result = run(factory_of(adapter_class(protocol), stream=False), protocol, "failure.mid_stream")
    assert result.status == "not-applicable" and switch in result.reason


# --- cases with a non-streamed form ----------------------------------------------------------


@pytest.mark.parametrize("case_id", ["failure.truncated", "failure.ends_early"])
def test_a_cut_body_still_checks_a_non_streamed_adapter(case_id: str) -> None:
    assert run(factory_of(ANTHROPIC, stream=False), "anthropic", case_id).status == "pass"
    failed = run(factory_of(TrustsWhateverArrived, stream=False), "anthropic", case_id)
    assert failed.status == "fail", failed.detail
    assert "JSON body" in failed.detail


def test_a_non_streaming_decoder_that_loses_a_refusal_fails_stop_reasons() -> None:
    assert run(factory_of(ANTHROPIC, stream=False), "anthropic", "stop.reasons").status == "pass"
    failed = run(factory_of(BodyStopIsAlwaysEndTurn, stream=False), "anthropic", "stop.reasons")
    assert failed.status == "fail"
    assert "stop_reason for wire stop reason 'refusal': expected 'error', got 'stop'" in failed.detail


# --- how the suite knows, and how to ask for it -------------------------------------------------


def test_the_suite_reads_streaming_from_the_request_not_from_the_adapter() -> None:
    """An adapter built with streaming off but claiming otherwise is still seen as non-streamed."""

    class ClaimsToStream(ANTHROPIC):  # type: ignore[misc,valid-type]
        supports_streaming = True

    assert Suite(factory_of(ClaimsToStream, stream=False), "anthropic").harness.streams() is False
    assert Suite(factory_of(ANTHROPIC, stream=True), "anthropic").harness.streams() is True


def test_stream_false_builds_a_non_streamed_builtin_adapter_and_is_refused_for_a_factory() -> None:
    suite = Suite("bedrock", stream=False)
    assert suite.harness.streams() is False
    assert Suite("bedrock").harness.streams() is True
    with pytest.raises(UsageError, match="decides that itself"):
        Suite(factory_of(ANTHROPIC, stream=False), "anthropic", stream=False)


def test_cli_no_stream(capsys) -> None:
    assert main(["conformance", "gemini", "--no-stream", "--json", "--case", "failure.abort", "--case", "failure.truncated", "--case", "stop.reasons"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["streamed"] is False
    assert [(r["id"], r["status"]) for r in data["results"]] == [("stop.reasons", "pass"), ("failure.truncated", "pass"), ("failure.abort", "not-applicable")]
    assert main(["conformance", "gemini", "--json", "--case", "failure.abort"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["streamed"] is True and data["results"][0]["status"] == "pass"
    assert main(["conformance", "broken_adapters:required_to_auto_factory", "--protocol", "bedrock", "--no-stream"]) == 2
    assert "decides that itself" in capsys.readouterr().err


def test_pytest_plugin_no_stream(pytester: pytest.Pytester) -> None:
    from test_conformance_plugin import BEDROCK_NOT_APPLICABLE, PLUGIN_ARGS

    from loopkit.conformance import CASE_IDS

    skipped = BEDROCK_NOT_APPLICABLE + 10  # failure.mid_stream, failure.abort, stream.events.as_they_arrive, Bedrock's in-stream exceptions (known, unknown, without a message), error event and missing metadata, a lone contentBlockStop and a signature in two deltas
    result = pytester.runpytest(*PLUGIN_ARGS, "--loopkit-adapter=bedrock", "--loopkit-protocol=bedrock", "--loopkit-no-stream", "-rs")
    result.assert_outcomes(passed=len(CASE_IDS) - skipped, skipped=skipped)
    result.stdout.fnmatch_lines(["*not applicable: the adapter asked for a non-streamed answer (its request calls /converse*"])
