"""GeminiProvider against the Gemini simulator (in process), the shared fixtures, and chunking."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopkit import simulators
from loopkit.accumulate import accumulate
from loopkit.errors import (
    BadRequestError,
    ConnectionClosedError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    StreamError,
    WireError,
)
from loopkit.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    user,
)
from loopkit.provider import ModelRequest, ToolSpec
from loopkit.providers import decode
from loopkit.providers.gemini import GeminiProvider, GeminiStreamDecoder, encode_contents, results_in_call_order
from loopkit.retry import RetryPolicy
from loopkit.script import Delay, HttpFault, MidStreamError, ScriptedCall, Truncate, Turn, call

FIXTURES = Path(__file__).parent.parent / "fixtures" / "gemini"
ADD = ToolSpec(name="add", description="Add two numbers", parameters={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})
WEATHER = ToolSpec(name="weather", description="Weather for a city", parameters={"type": "object", "properties": {"city": {"type": "string"}}})


class Waits:
    """An injected sleep that records the waits."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)

    async def asleep(self, seconds: float) -> None:
        self.waits.append(seconds)


def make(script: list[Any], *, model: str = "gemini-2.5-flash", stream: bool = True, retries: int = 2, **options: Any):
    sim = simulators.create("gemini", script)
    waits = Waits()
    transport = simulators.transport(sim, sleep=waits)
    provider = GeminiProvider(
        model=model, api_key="test-key", transport=transport, stream=stream,
        retry=RetryPolicy(max_retries=retries, base_delay=0.5, sleep=waits, asleep=waits.asleep), **options,
    )  # fmt: skip
    return provider, sim, waits


def ask(provider: GeminiProvider, *messages: Any, **kw: Any) -> AssistantMessage:
    return accumulate(provider.stream(ModelRequest(list(messages) or [user("hi")], **kw)))


def body(sim: Any, n: int = -1) -> dict[str, Any]:
    return json.loads(sim.requests[n].body)


# --- text, calls, ids ---------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
def test_text_answer_streams_and_whole_give_the_same_message(stream: bool) -> None:
    provider, sim, _ = make([Turn(text="Bonjour, ça va ? ünïcødé ✓", usage=Usage(input=12, output=7, total_tokens=19))], stream=stream)
    msg = ask(provider, user("hello"), system="Be brief.")
    assert msg == AssistantMessage(
        content=[TextContent(text="Bonjour, ça va ? ünïcødé ✓")], stop_reason="stop", api="gemini", provider="google",
        model="gemini-2.5-flash", usage=Usage(input=12, output=7, total_tokens=19), response_id="simresp0001",
    )  # fmt: skip
    sent = body(sim)
    assert sent == {"contents": [{"role": "user", "parts": [{"text": "hello"}]}], "systemInstruction": {"parts": [{"text": "Be brief."}]}}
    route = "streamGenerateContent" if stream else "generateContent"
    assert sim.requests[0].path == f"/v1beta/models/gemini-2.5-flash:{route}"
    assert sim.requests[0].query == ({"alt": "sse"} if stream else {})
    assert sim.requests[0].headers["x-goog-api-key"] == "test-key"


def test_api_version_v1_is_routed() -> None:
    provider, sim, _ = make(["ok"], api_version="v1")
    assert ask(provider).text == "ok"
    assert sim.requests[0].path == "/v1/models/gemini-2.5-flash:streamGenerateContent"


@pytest.mark.parametrize("stream", [True, False])
def test_one_tool_call_gets_a_generated_id_and_tool_use(stream: bool) -> None:
    provider, sim, _ = make([Turn(text="Let me add.", tool_calls=[call("add", {"a": 1, "b": 2})])], stream=stream)
    msg = ask(provider, tools=[ADD])
    assert msg.content == [TextContent(text="Let me add."), ToolCall(id="gcall_1", name="add", arguments={"a": 1, "b": 2})]
    assert msg.stop_reason == "toolUse"
    assert body(sim)["tools"] == [{"functionDeclarations": [{"name": "add", "description": "Add two numbers", "parametersJsonSchema": dict(ADD.parameters)}]}]


def test_parallel_calls_with_one_name_get_distinct_ids_never_repeated_across_rounds() -> None:
    script = [
        Turn(tool_calls=[call("weather", {"city": "Paris"}), call("weather", {"city": "Oslo"})]),
        Turn(tool_calls=[call("weather", {"city": "Rome"})]),
        "done",
    ]
    provider, sim, _ = make(script)
    history: list[Any] = [user("weather in Paris and Oslo, then Rome")]
    first = ask(provider, *history, tools=[WEATHER])
    assert [c.id for c in first.tool_calls] == ["gcall_1", "gcall_2"]
    history += [first,
                ToolResultMessage(tool_call_id="gcall_2", tool_name="weather", content=[TextContent(text="cold")]),
                ToolResultMessage(tool_call_id="gcall_1", tool_name="weather", content=[TextContent(text="mild")])]  # fmt: skip
    second = ask(provider, *history, tools=[WEATHER])
    assert [c.id for c in second.tool_calls] == ["gcall_3"]
    # results go back in the order of the calls, without the ids the API never saw
    contents = body(sim)["contents"]
    assert contents[1] == {"role": "model", "parts": [
        {"functionCall": {"name": "weather", "args": {"city": "Paris"}}},
        {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}}]}  # fmt: skip
    assert contents[2] == {"role": "user", "parts": [
        {"functionResponse": {"name": "weather", "response": {"output": "mild"}}},
        {"functionResponse": {"name": "weather", "response": {"output": "cold"}}}]}  # fmt: skip
    history += [second, ToolResultMessage(tool_call_id="gcall_3", tool_name="weather", content=[TextContent(text="warm")])]
    assert ask(provider, *history, tools=[WEATHER]).text == "done"
    sim.assert_complete()


def test_a_new_provider_resuming_a_history_never_reuses_its_ids() -> None:
    provider, _, _ = make([Turn(tool_calls=[call("add", {})])])
    old = AssistantMessage(content=[ToolCall(id="gcall_7", name="add", arguments={})], stop_reason="toolUse")
    history = [user("go"), old, ToolResultMessage(tool_call_id="gcall_7", tool_name="add", content=[TextContent(text="1")])]
    assert [c.id for c in ask(provider, *history, tools=[ADD]).tool_calls] == ["gcall_8"]


def test_ids_the_api_sent_are_kept_and_echoed_on_call_and_response() -> None:
    provider, sim, _ = make([Turn(tool_calls=[ScriptedCall(name="add", arguments={"a": 1}, id="api-id-1")]), "3"])
    msg = ask(provider, tools=[ADD])
    assert msg.tool_calls[0].id == "api-id-1"
    result = ToolResultMessage(tool_call_id="api-id-1", tool_name="add", content=[TextContent(text="3")])
    ask(provider, user("hi"), msg, result, tools=[ADD])
    contents = body(sim)["contents"]
    assert contents[1]["parts"][0]["functionCall"]["id"] == "api-id-1"
    assert contents[2]["parts"][0]["functionResponse"] == {"id": "api-id-1", "name": "add", "response": {"output": "3"}}


def test_results_pair_by_id_only() -> None:
    calls = [ToolCall(id="x1", name="a"), ToolCall(id="x2", name="b"), ToolCall(id="x3", name="a")]
    r_b = ToolResultMessage(tool_call_id="x2", tool_name="b")
    r_a3 = ToolResultMessage(tool_call_id="x3", tool_name="a")
    r_a = ToolResultMessage(tool_call_id="other-1", tool_name="a")  # names a tool of the turn, answers none of its calls
    ordered = results_in_call_order(calls, [r_a, r_a3, r_b])
    assert [(r.tool_call_id, r.tool_name, r.text, r.is_error) for r in ordered] == [
        ("x1", "a", "No result provided", True), ("x2", "b", "", False), ("x3", "a", "", False), ("other-1", "a", "", False)
    ]


def test_missing_args_become_an_empty_object() -> None:
    decoder = GeminiStreamDecoder(lambda: "gcall_1")
    events = decoder.handle({"candidates": [{"content": {"parts": [{"functionCall": {"name": "read_theme"}}]}, "finishReason": "STOP"}]})
    msg = accumulate(events + decoder.close())
    assert msg.content == [ToolCall(id="gcall_1", name="read_theme", arguments={})]
    assert msg.stop_reason == "toolUse"


# --- malformed calls and stop reasons -----------------------------------------------------------


@pytest.mark.parametrize("args", ['{"a": 1', "[1, 2]", "not json"])
@pytest.mark.parametrize("stream", [True, False])
def test_malformed_arguments_end_in_an_error_stop_naming_the_reason(args: str, stream: bool) -> None:
    provider, _, _ = make([Turn(tool_calls=[call("add", args)])], stream=stream)
    msg = ask(provider, tools=[ADD])
    assert msg.stop_reason == "error"
    assert msg.error_type == "MALFORMED_FUNCTION_CALL"
    assert msg.error_message == f"gemini: finishReason MALFORMED_FUNCTION_CALL: Malformed function call: add({args})"
    assert msg.content == []


@pytest.mark.parametrize(
    ("turn", "stop", "error_type", "error_message"),
    [
        (Turn(text="hi"), "stop", None, None),
        (Turn(tool_calls=[call("add", {})]), "toolUse", None, None),
        (Turn(text="cut o", stop_reason="length"), "length", None, None),
        (Turn(text="x", error="SAFETY"), "error", "SAFETY", "gemini: finishReason SAFETY"),
        (Turn(error="RECITATION: quoted a book"), "error", "RECITATION", "gemini: finishReason RECITATION: quoted a book"),
        (Turn(error="UNEXPECTED_TOOL_CALL"), "error", "UNEXPECTED_TOOL_CALL", "gemini: finishReason UNEXPECTED_TOOL_CALL"),
        (Turn(error="model fell over"), "error", "OTHER", "gemini: finishReason OTHER: model fell over"),
    ],
)
@pytest.mark.parametrize("stream", [True, False])
def test_every_stop_reason(turn: Turn, stop: str, error_type: str | None, error_message: str | None, stream: bool) -> None:
    provider, _, _ = make([turn], stream=stream)
    msg = ask(provider, tools=[ADD])
    assert (msg.stop_reason, msg.error_type, msg.error_message) == (stop, error_type, error_message)


def test_blocked_prompt_is_an_error_stop() -> None:
    decoder = GeminiStreamDecoder(lambda: "unused")
    events = decoder.handle({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 5}})
    msg = accumulate(events + decoder.close())
    assert (msg.stop_reason, msg.error_type) == ("error", "PROHIBITED_CONTENT")
    assert "PROHIBITED_CONTENT" in (msg.error_message or "")
    assert msg.usage == Usage(input=5, total_tokens=5)


def test_continuation_and_unspecified_are_stops() -> None:
    for reason in ("CONTINUATION", "FINISH_REASON_UNSPECIFIED"):
        decoder = GeminiStreamDecoder(lambda: "unused")
        events = decoder.handle({"candidates": [{"content": {"parts": [{"text": "a"}]}, "finishReason": reason}]})
        assert accumulate(events + decoder.close()).stop_reason == "stop"


# --- tool_choice and the parallel flag ----------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        (None, None),
        ("auto", {"functionCallingConfig": {"mode": "AUTO"}}),
        ("required", {"functionCallingConfig": {"mode": "ANY"}}),
        ("none", {"functionCallingConfig": {"mode": "NONE"}}),
        ({"type": "function", "name": "weather"}, {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["weather"]}}),
    ],
)
@pytest.mark.parametrize("parallel", [None, True, False])
def test_tool_choice_forms_and_the_parallel_flag_in_the_body(choice: Any, config: Any, parallel: bool | None) -> None:
    provider, sim, _ = make(["ok"])
    ask(provider, tools=[ADD, WEATHER], tool_choice=choice, parallel_tool_calls=parallel)
    sent = body(sim)
    assert sent.get("toolConfig") == config
    assert len(sent["tools"][0]["functionDeclarations"]) == 2
    assert set(sent) <= {"contents", "tools", "toolConfig"}  # no parallel knob exists on this wire
    assert GeminiProvider.supports_parallel_tool_calls is False


@pytest.mark.parametrize("choice", [None, "auto", "required", "none", {"type": "function", "name": "add"}])
def test_no_tools_means_no_tools_and_no_tool_config(choice: Any) -> None:
    provider, sim, _ = make(["ok"])
    ask(provider, tool_choice=choice, parallel_tool_calls=False)
    assert set(body(sim)) == {"contents"}


def test_an_unknown_tool_choice_is_a_typed_error() -> None:
    provider, _, _ = make(["ok"])
    with pytest.raises(WireError, match="tool_choice"):
        ask(provider, tools=[ADD], tool_choice={"type": "bogus"})


# --- results, errors on results, signatures, thinking -------------------------------------------


def test_is_error_round_trips_as_the_error_key() -> None:
    provider, sim, _ = make([Turn(tool_calls=[call("add", {"a": 1}), call("weather", {"city": "X"})]), "sorry"])
    first = ask(provider, tools=[ADD, WEATHER])
    results = [
        ToolResultMessage(tool_call_id="gcall_1", tool_name="add", content=[TextContent(text="2")]),
        ToolResultMessage(tool_call_id="gcall_2", tool_name="weather", content=[TextContent(text="ValueError: no such city")], is_error=True),
    ]
    assert ask(provider, user("hi"), first, *results, tools=[ADD, WEATHER]).text == "sorry"
    assert body(sim)["contents"][2] == {"role": "user", "parts": [
        {"functionResponse": {"name": "add", "response": {"output": "2"}}},
        {"functionResponse": {"name": "weather", "response": {"error": "ValueError: no such city"}}}]}  # fmt: skip


def test_thought_signatures_round_trip_and_gemini_3_requires_them() -> None:
    script = [Turn(thinking="Need the weather.", thinking_signature="c2lnLXRoaW5r", tool_calls=[call("weather", {"city": "Paris"})]), "Sunny.", "again"]
    provider, sim, _ = make(script, model="gemini-3-pro-preview")
    first = ask(provider, tools=[WEATHER])
    signature = first.tool_calls[0].thought_signature
    assert signature is not None
    assert first.content[0] == ThinkingContent(thinking="Need the weather.", thinking_signature="c2lnLXRoaW5r")
    result = ToolResultMessage(tool_call_id=first.tool_calls[0].id, tool_name="weather", content=[TextContent(text="sunny")])
    assert ask(provider, user("hi"), first, result, tools=[WEATHER]).text == "Sunny."
    assert body(sim)["contents"][1] == {"role": "model", "parts": [
        {"text": "Need the weather.", "thought": True, "thoughtSignature": "c2lnLXRoaW5r"},
        {"functionCall": {"name": "weather", "args": {"city": "Paris"}}, "thoughtSignature": signature}]}  # fmt: skip
    first.tool_calls[0].thought_signature = None  # a history that lost its signature is refused
    with pytest.raises(BadRequestError, match="thought_signature") as info:
        ask(provider, user("hi"), first, result, tools=[WEATHER])
    assert info.value.error_type == "INVALID_ARGUMENT"


def test_text_signature_is_kept_and_echoed() -> None:
    decoder = GeminiStreamDecoder(lambda: "unused")
    events = decoder.handle({"candidates": [{"content": {"parts": [{"text": "Hel"}]}}]})
    events += decoder.handle({"candidates": [{"content": {"parts": [{"text": "lo", "thoughtSignature": "U0lH"}]}, "finishReason": "STOP"}]})
    msg = accumulate(events + decoder.close())
    assert msg.content == [TextContent(text="Hello", text_signature="U0lH")]
    assert encode_contents([msg]) == [{"role": "model", "parts": [{"text": "Hello", "thoughtSignature": "U0lH"}]}]


def test_a_non_object_argument_from_another_provider_is_echoed_as_an_empty_object() -> None:
    # args must be an object; the loop's error result for such a call quotes the text the model sent
    bad = AssistantMessage(content=[ToolCall(id="call_1", name="add", arguments=None, raw_arguments='{"a": 1'), ToolCall(id="call_2", name="add", arguments=[1, 2])])
    parts = encode_contents([bad])[0]["parts"]
    assert [p["functionCall"] for p in parts] == [{"name": "add", "args": {}, "id": "call_1"}, {"name": "add", "args": {}, "id": "call_2"}]


# --- usage --------------------------------------------------------------------------------------


def test_usage_maps_cache_and_thoughts() -> None:
    provider, _, _ = make([Turn(text="hi", usage=Usage(input=100, output=20, cache_read=30, total_tokens=150))])
    assert ask(provider).usage == Usage(input=100, output=20, cache_read=30, total_tokens=150)
    decoder = GeminiStreamDecoder(lambda: "unused")
    events = decoder.handle({"candidates": [{"content": {"parts": [{"text": "a"}]}, "finishReason": "STOP"}],
                             "usageMetadata": {"promptTokenCount": 29, "candidatesTokenCount": 15, "thoughtsTokenCount": 893, "cachedContentTokenCount": 9, "totalTokenCount": 937}})  # fmt: skip
    assert accumulate(events + decoder.close()).usage == Usage(input=20, output=908, cache_read=9, total_tokens=937)


# --- faults and retries -------------------------------------------------------------------------


def test_429_with_retry_info_is_retried_after_the_asked_delay() -> None:
    provider, sim, waits = make([Turn(faults=[HttpFault(status=429, retry_after=34.4)]), "ok"])
    assert ask(provider).text == "ok"
    assert waits.waits == [34.4]
    assert provider.attempts == [2]
    sim.assert_complete()


def test_5xx_are_retried_with_backoff_then_fail_typed() -> None:
    provider, sim, waits = make([Turn(faults=[HttpFault(status=500)]), Turn(faults=[HttpFault(status=503)]), Turn(faults=[HttpFault(status=500)])])
    with pytest.raises(ServerError) as info:
        ask(provider)
    assert waits.waits == [0.5, 1.0]
    err = info.value
    assert (err.status, err.error_type, err.provider) == (500, "INTERNAL", "google")
    assert err.body["error"]["code"] == 500
    sim.assert_complete()


@pytest.mark.parametrize(
    ("status", "cls", "status_name"),
    [(400, BadRequestError, "INVALID_ARGUMENT"), (403, PermissionDeniedError, "PERMISSION_DENIED"), (404, NotFoundError, "NOT_FOUND")],
)
def test_client_errors_are_not_retried(status: int, cls: type, status_name: str) -> None:
    provider, _, waits = make([Turn(faults=[HttpFault(status=status, message="nope")])])
    with pytest.raises(cls) as info:
        ask(provider)
    assert (info.value.status, info.value.error_type, info.value.message) == (status, status_name, "nope")
    assert waits.waits == []


def test_rate_limit_after_retries_keeps_retry_after() -> None:
    provider, _, waits = make([Turn(faults=[HttpFault(status=429, retry_after=2)])] * 2, retries=1)
    with pytest.raises(RateLimitError) as info:
        ask(provider)
    assert info.value.retry_after == 2.0
    assert waits.waits == [2.0]


def test_a_retry_after_header_wins_over_retry_info() -> None:
    provider, _, waits = make([Turn(faults=[HttpFault(status=429, retry_after=30, headers={"retry-after": "1"})]), "ok"])
    ask(provider)
    assert waits.waits == [1.0]


def test_mid_stream_error_raises_stream_error() -> None:
    provider, _, _ = make([Turn(text="abcdefghijklmnop", faults=[MidStreamError(after=1, message="overloaded", error_type="UNAVAILABLE")])])
    events = []
    with pytest.raises(StreamError) as info:
        for event in provider.stream(ModelRequest([user("hi")])):
            events.append(event)
    assert (info.value.message, info.value.error_type, info.value.status) == ("overloaded", "UNAVAILABLE", None)
    assert info.value.body == {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}
    assert [e.type for e in events] == ["start", "text_start", "text_delta"]


def test_an_error_event_before_any_output_is_retried() -> None:
    provider, sim, waits = make([Turn(text="x", faults=[MidStreamError(after=0)]), "ok"])
    assert ask(provider).text == "ok"
    assert waits.waits == [0.5]
    sim.assert_complete()


def test_truncated_stream_after_output_raises_connection_closed() -> None:
    provider, _, waits = make([Turn(text="abcdefghijklmnop", faults=[Truncate(after=1)])])
    with pytest.raises(ConnectionClosedError):
        ask(provider)
    assert waits.waits == []


def test_truncated_stream_before_output_is_retried() -> None:
    provider, _, waits = make([Turn(text="abc", faults=[Truncate(after=0)]), "ok"])
    assert ask(provider).text == "ok"
    assert waits.waits == [0.5]


def test_stream_without_finish_reason_is_connection_closed() -> None:
    decoder = GeminiStreamDecoder(lambda: "unused")
    decoder.feed(b'data: {"candidates": [{"content": {"parts": [{"text": "a"}]}}]}\r\n\r\n')
    with pytest.raises(ConnectionClosedError, match="finishReason"):
        decoder.close()


def test_delay_fault_sleeps_through_the_injected_sleep() -> None:
    provider, _, waits = make([Turn(text="abcdefghijkl", faults=[Delay(seconds=1.5, after=1)])])
    assert ask(provider).text == "abcdefghijkl"
    assert waits.waits == [1.5]


def test_bad_json_in_a_stream_is_a_wire_error() -> None:
    decoder = GeminiStreamDecoder(lambda: "unused")
    with pytest.raises(WireError, match="not JSON"):
        decoder.feed(b"data: {oops\r\n\r\n")


def test_async_stream_with_retry() -> None:
    provider, _, waits = make([Turn(faults=[HttpFault(status=429, retry_after=1)]), Turn(tool_calls=[call("add", {"a": 1})])])

    async def run() -> AssistantMessage:
        return accumulate([e async for e in provider.astream(ModelRequest([user("hi")], tools=[ADD]))])

    msg = asyncio.run(run())
    assert msg.tool_calls == [ToolCall(id="gcall_1", name="add", arguments={"a": 1})]
    assert waits.waits == [1.0]


# --- shared fixtures ----------------------------------------------------------------------------


def test_fixture_stream_text_parses() -> None:
    decoder = GeminiStreamDecoder(lambda: "unused")
    events = decoder.feed((FIXTURES / "stream_text.sse").read_bytes()) + decoder.close()
    msg = accumulate(events)
    assert msg == AssistantMessage(
        content=[TextContent(text="The capital of France is Paris.\n")], stop_reason="stop", api="gemini", provider="google",
        model="gemini-2.0-flash-exp", usage=Usage(input=13, output=8, total_tokens=21), response_id="w1peaMz6INOvnvgPgYfPiQY",
    )  # fmt: skip


def _roundtrip() -> list[dict[str, Any]]:
    return json.loads((FIXTURES / "exchange_stream_function_roundtrip.json").read_text())


def test_fixture_streamed_function_call_with_signature_parses_and_echoes() -> None:
    exchange = _roundtrip()
    raw = exchange[0]["response"]["body"].encode("utf-8")
    decoder = GeminiStreamDecoder(lambda: "gcall_1")
    msg = accumulate(decoder.feed(raw) + decoder.close())
    signature = json.loads(raw.split(b"\r\n\r\n")[0][len(b"data: "):])["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    assert msg.content == [ToolCall(id="gcall_1", name="get_country", arguments={}, thought_signature=signature)]
    assert (msg.stop_reason, msg.usage) == ("toolUse", Usage(input=29, output=212, total_tokens=241))
    # the echo has the recorded request's shape: functionCall + thoughtSignature, then functionResponse
    result = ToolResultMessage(tool_call_id="gcall_1", tool_name="get_country", content=[TextContent(text="Mexico")])
    contents = encode_contents([user("What is the capital of the user country? Call the tool"), msg, result])
    recorded = exchange[1]["request"]["body"]["contents"]
    assert contents[0] == recorded[0]
    assert contents[1]["parts"][0]["functionCall"] == {k: v for k, v in recorded[1]["parts"][0]["functionCall"].items() if k != "id"}
    assert contents[1]["parts"][0]["thoughtSignature"] == signature
    assert contents[2]["parts"][0]["functionResponse"]["name"] == recorded[2]["parts"][0]["functionResponse"]["name"]


def test_fixture_text_after_function_response_parses() -> None:
    raw = _roundtrip()[1]["response"]["body"].encode("utf-8")
    decoder = GeminiStreamDecoder(lambda: "unused")
    msg = accumulate(decoder.feed(raw) + decoder.close())
    assert msg.stop_reason == "stop"
    assert "Mexico City" in msg.text


def test_fixture_nonstream_function_call_parses() -> None:
    provider = GeminiProvider(model="gemini-3-pro-preview", api_key="k")
    msg = accumulate(provider.decode_body(json.loads((FIXTURES / "nonstream_function_call.json").read_text())))
    assert msg.content == [ToolCall(id="gcall_1", name="weather", arguments={"location": "San Francisco"},
                                    thought_signature="EskgCsYgAb4+9vtF7/499YQS2bjZs3xcQI+iAl+ILn29nK1j0Kg6su7QsUUUk3nrAAfnS2w5WiVvlcCqu9fAebJ2cvfaEyBahEt5")]  # fmt: skip
    assert (msg.stop_reason, msg.usage, msg.model) == ("toolUse", Usage(input=29, output=908, total_tokens=937), "gemini-3-pro-preview")


def test_fixture_429_maps_retry_info_to_retry_after() -> None:
    provider = GeminiProvider(model="m", api_key="k")
    err = provider.map_error(429, httpx.Headers(), (FIXTURES / "error_429_resource_exhausted.json").read_bytes())
    assert isinstance(err, RateLimitError)
    assert (err.status, err.error_type, err.retry_after, err.retryable) == (429, "RESOURCE_EXHAUSTED", 34.4, True)
    assert err.message == "You exceeded your current quota, please check your plan."


def test_unknown_fields_are_ignored() -> None:
    decoder = GeminiStreamDecoder(lambda: "unused")
    chunk = {"candidates": [{"content": {"parts": [{"text": "a", "futurePart": 1}, {"inlineData": {"mimeType": "image/png", "data": ""}}], "role": "model"},
                             "finishReason": "STOP", "safetyRatings": [], "citationMetadata": {}}], "futureTop": {"x": 1}}  # fmt: skip
    assert accumulate(decoder.handle(chunk) + decoder.close()).content == [TextContent(text="a")]


# --- chunking independence ----------------------------------------------------------------------


def _sim_stream_bytes() -> bytes:
    sim = simulators.create("gemini", [Turn(thinking="Ünïcode thoughts…", thinking_signature="U0lH", text="Grüße, 世界! 🎉 ok", tool_calls=[call("add", {"a": 1, "b": "ß"}), call("add", {})], chunk_size=3)])
    request = simulators.SimRequest(method="POST", path="/v1beta/models/gemini-2.5-flash:streamGenerateContent", query={"alt": "sse"},
                                    headers={"x-goog-api-key": "k"}, body=json.dumps({"contents": [{"role": "user", "parts": [{"text": "x"}]}]}).encode())  # fmt: skip
    return sim.handle(request).body


STREAMS = [_sim_stream_bytes(), (FIXTURES / "stream_text.sse").read_bytes(), _roundtrip()[0]["response"]["body"].encode("utf-8")]


def _parse(chunks: list[bytes]) -> AssistantMessage:
    decoder = GeminiStreamDecoder(iter(f"gcall_{i}" for i in range(1, 100)).__next__)
    events = []
    for c in chunks:
        events += decoder.feed(c)
    return accumulate(events + decoder.close())


@settings(max_examples=60, deadline=None)
@given(which=st.integers(0, len(STREAMS) - 1), cuts=st.lists(st.integers(0, 10_000), max_size=30))
def test_any_rechunking_gives_the_same_message(which: int, cuts: list[int]) -> None:
    raw = STREAMS[which]
    points = sorted({c % (len(raw) + 1) for c in cuts})
    pieces = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)])]
    assert _parse(pieces) == _parse([raw])


def test_byte_at_a_time_matches_whole() -> None:
    for raw in STREAMS:
        assert _parse([raw[i : i + 1] for i in range(len(raw))]) == _parse([raw])


# --- the loop over real HTTP --------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
def test_multi_round_loop_over_real_http_with_parallel_calls_errors_and_signatures(stream: bool) -> None:
    """Three rounds through loopkit.run, GeminiProvider and the served simulator on 127.0.0.1:
    parallel calls with one name, a tool that raises (sent back under "error"), signatures echoed."""
    import loopkit
    from loopkit.runtime import TickClock

    @loopkit.tool
    def weather(city: str) -> str:
        """Weather for a city."""
        if city == "Atlantis":
            raise ValueError("no such city")
        return {"Paris": "sunny", "Oslo": "cold"}[city]

    script = [
        Turn(thinking="Two cities.", thinking_signature="dGhpbms=", tool_calls=[call("weather", {"city": "Paris"}), call("weather", {"city": "Oslo"})]),
        Turn(text="One more.", tool_calls=[call("weather", {"city": "Atlantis"})]),
        Turn(text="Paris is sunny, Oslo is cold, Atlantis is unknown."),
    ]
    with simulators.serve("gemini", script, sleep=lambda s: None) as sim:
        provider = GeminiProvider(model="gemini-3-pro-preview", api_key="k", base_url=sim.url, stream=stream, retry=RetryPolicy(max_retries=0))
        try:
            result = loopkit.run(provider, "Weather in Paris, Oslo, Atlantis?", tools=[weather], system="Be brief.", clock=TickClock())
        finally:
            provider.close()
        sim.assert_complete()
        sent = [json.loads(r.body) for r in sim.requests]
    assert (result.reason, result.model_calls) == ("stop", 3)
    assert result.messages[-1].text == "Paris is sunny, Oslo is cold, Atlantis is unknown."
    calls = [c for m in result.messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    assert [c.id for c in calls] == ["gcall_1", "gcall_2", "gcall_3"]
    results = [m for m in result.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.is_error) for r in results] == [("gcall_1", False), ("gcall_2", False), ("gcall_3", True)]
    third = sent[2]["contents"]
    assert [c["role"] for c in third] == ["user", "model", "user", "model", "user"]
    assert third[1]["parts"][0] == {"text": "Two cities.", "thought": True, "thoughtSignature": "dGhpbms="}
    assert "thoughtSignature" in third[1]["parts"][1] and "id" not in third[1]["parts"][1]["functionCall"]
    assert [p["functionResponse"]["response"] for p in third[2]["parts"]] == [{"output": "sunny"}, {"output": "cold"}]
    error = third[4]["parts"][0]["functionResponse"]
    assert error["name"] == "weather" and set(error["response"]) == {"error"} and "no such city" in error["response"]["error"]
    assert all(s["systemInstruction"] == {"parts": [{"text": "Be brief."}]} for s in sent)


def test_a_call_left_without_result_gets_a_synthetic_error_response() -> None:
    """Gemini rejects a call turn whose responses do not match it one for one."""
    turn = AssistantMessage(content=[ToolCall(id="gcall_1", name="a"), ToolCall(id="gcall_2", name="b")], stop_reason="toolUse")
    only_b = ToolResultMessage(tool_call_id="gcall_2", tool_name="b", content=[TextContent(text="ok")])
    contents = encode_contents([user("go"), turn, only_b, user("and now?")])
    assert contents[2] == {"role": "user", "parts": [
        {"functionResponse": {"name": "a", "response": {"error": "No result provided"}}},
        {"functionResponse": {"name": "b", "response": {"output": "ok"}}}]}  # fmt: skip
    assert encode_contents([user("go"), turn, user("never mind")])[2]["parts"][1] == {"functionResponse": {"name": "b", "response": {"error": "No result provided"}}}


def test_empty_texts_are_not_sent_because_the_api_refuses_a_part_that_is_only_empty_text() -> None:
    signed = AssistantMessage(content=[TextContent(text="Hi."), TextContent(text="", text_signature="U0lH")], stop_reason="stop")
    messages = [user("go"), UserMessage(content=[]), user(""), AssistantMessage(content=[TextContent(text="")], stop_reason="stop"),
                UserMessage(content=[TextContent(text=""), TextContent(text="more")]), signed, user("end")]  # fmt: skip
    assert encode_contents(messages) == [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "user", "parts": [{"text": "more"}]},
        {"role": "model", "parts": [{"text": "Hi."}, {"text": "", "thoughtSignature": "U0lH"}]},
        {"role": "user", "parts": [{"text": "end"}]},
    ]


def test_the_stream_endpoint_json_array_form_decodes_like_the_stream() -> None:
    sim = simulators.create("gemini", [Turn(text="Hello there", tool_calls=[call("add", {"a": 1})])])
    request = simulators.SimRequest(method="POST", path="/v1beta/models/m:streamGenerateContent", headers={"x-goog-api-key": "k"},
                                    body=json.dumps({"contents": [{"role": "user", "parts": [{"text": "x"}]}]}).encode())  # fmt: skip
    body = sim.handle(request).body
    assert isinstance(json.loads(body), list)
    msg = decode("gemini", body)  # not one JSON object, so read as a stream: bare JSON lines
    assert msg.content == [TextContent(text="Hello there"), ToolCall(id="gcall_1", name="add", arguments={"a": 1})]
    assert msg.stop_reason == "toolUse"
    with pytest.raises(WireError, match="must be a JSON object, got list"):  # decode_body reads generateContent's one object
        GeminiProvider(model="m", api_key="k").decode_body(json.loads(body))


BARE_ERROR = b'data: {"candidates": [{"content": {"parts": [{"text": "Hel"}],"role": "model"}}]}\r\n\r\n{\n  "error": {\n    "code": 500,\n    "message": "Error with \\"quotes\\" and {braces}",\n    "status": "INTERNAL"\n  }\n}\n'


def test_a_bare_multi_line_json_error_in_a_stream_raises_stream_error() -> None:
    """google-genai accepts error objects written as bare JSON lines; so does loopkit."""
    for chunks in ([BARE_ERROR], [BARE_ERROR[i : i + 1] for i in range(len(BARE_ERROR))], [BARE_ERROR[:-1], b""]):
        decoder = GeminiStreamDecoder(lambda: "unused")
        with pytest.raises(StreamError) as info:
            for c in chunks:
                decoder.feed(c)
            decoder.close()
        assert (info.value.message, info.value.error_type) == ('Error with "quotes" and {braces}', "INTERNAL")


def test_a_stream_cut_inside_a_bare_json_object_is_connection_closed() -> None:
    decoder = GeminiStreamDecoder(lambda: "unused")
    decoder.feed(BARE_ERROR[:-30])
    with pytest.raises(ConnectionClosedError, match="bare JSON"):
        decoder.close()


def test_sse_decoder_raw_lines_keep_order_and_default_ignores_them() -> None:
    from loopkit.providers._sse import RAW_LINE, SSEDecoder

    raw = b'data: 1\r\n\r\n{"a":\r\n: comment\r\nretry: 5\r\n 2}\r\ndata: 3\r\n\r\n'
    assert [(e.event, e.data) for e in SSEDecoder(raw_lines=True).feed(raw)] == [("message", "1"), (RAW_LINE, '{"a":'), (RAW_LINE, " 2}"), ("message", "3")]
    assert [e.data for e in SSEDecoder().feed(raw)] == ["1", "3"]


def test_a_signature_on_an_empty_text_part_is_kept_to_round_trip() -> None:
    decoder = GeminiStreamDecoder(lambda: "gcall_1")
    events = decoder.handle({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": {}}}]}}]})
    events += decoder.handle({"candidates": [{"content": {"parts": [{"text": "", "thoughtSignature": "U0lH"}]}, "finishReason": "STOP"}]})
    msg = accumulate(events + decoder.close())
    assert msg.content == [ToolCall(id="gcall_1", name="f", arguments={}), TextContent(text="", text_signature="U0lH")]
    assert encode_contents([msg])[0]["parts"][1] == {"text": "", "thoughtSignature": "U0lH"}


def test_a_last_event_without_its_blank_line_still_counts_but_a_cut_line_does_not() -> None:
    whole = (FIXTURES / "stream_text.sse").read_bytes()
    assert _parse([whole.rstrip(b"\r\n") + b"\r\n"]) == _parse([whole])
    with pytest.raises(ConnectionClosedError):  # a line with no end may be cut anywhere: truncated
        _parse([whole.rstrip(b"\r\n")])


def test_api_key_from_the_environment_with_google_genai_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key")
    assert GeminiProvider(model="m").auth_headers() == {"x-goog-api-key": "gemini-key"}
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    assert GeminiProvider(model="m").auth_headers() == {"x-goog-api-key": "google-key"}
