"""OpenAIChatProvider against its simulator (in process), the shared fixtures, and re-chunking."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopkit import simulators
from loopkit.accumulate import accumulate
from loopkit.errors import (
    BadRequestError,
    ConnectionClosedError,
    RateLimitError,
    ServerError,
    StreamError,
    UsageError,
)
from loopkit.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    user,
)
from loopkit.provider import AbortSignal, ModelRequest, ToolSpec
from loopkit.providers.openai_chat import ChatStreamDecoder, OpenAIChatProvider, build_body, decode_completion
from loopkit.retry import RetryPolicy
from loopkit.script import Delay, HttpFault, MidStreamError, Truncate, Turn, call

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openai_chat"
ADD = ToolSpec(name="add", description="Add two numbers", parameters={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})
META = {"api": "openai_chat", "provider": "openai", "model": "gpt-test"}


def make(script, *, stream=True, **kw):
    sim = simulators.create("openai_chat", script)
    waits: list[float] = []
    provider = OpenAIChatProvider(
        model="gpt-test", api_key="sk-test", transport=simulators.transport(sim, sleep=waits.append), stream=stream,
        retry=RetryPolicy(max_retries=kw.pop("max_retries", 2), sleep=waits.append),
    )
    return sim, provider, waits


def run(provider, request) -> AssistantMessage:
    return accumulate(provider.stream(request))


def ask(**kw) -> ModelRequest:
    return ModelRequest([user("What is 2+3?")], **kw)


def sent(sim, n: int = 0) -> dict:
    return json.loads(sim.requests[n].body)


def test_text_answer_and_request_body():
    sim, p, _ = make([Turn(text="It is five, ünïcode ✓.", usage=Usage(input=7, output=4, total_tokens=11))])
    msg = run(p, ModelRequest([user("hi")], system="Be brief."))
    assert msg == AssistantMessage(
        content=[TextContent(text="It is five, ünïcode ✓.")], stop_reason="stop", usage=Usage(input=7, output=4, total_tokens=11),
        response_id="chatcmpl-sim0001", **META,
    )
    assert sent(sim) == {
        "model": "gpt-test",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert sim.requests[0].headers["authorization"] == "Bearer sk-test"


def test_one_tool_call():
    sim, p, _ = make([Turn(tool_calls=[call("add", {"a": 2, "b": 3}, id="call_abc")])])
    msg = run(p, ask(tools=[ADD]))
    assert msg.content == [ToolCall(id="call_abc", name="add", arguments={"a": 2, "b": 3})]
    assert msg.stop_reason == "toolUse"
    assert sent(sim)["tools"] == [{"type": "function", "function": {"name": "add", "description": "Add two numbers", "parameters": dict(ADD.parameters)}}]


def test_parallel_calls_and_text_before_them():
    calls = [call("add", {"a": i, "b": i}, id=f"call_{i}") for i in range(3)]
    _, p, _ = make([Turn(text="Let me add.", tool_calls=calls)])
    msg = run(p, ask(tools=[ADD]))
    assert msg.content == [TextContent(text="Let me add.")] + [ToolCall(id=f"call_{i}", name="add", arguments={"a": i, "b": i}) for i in range(3)]


@pytest.mark.parametrize(
    ("raw", "arguments", "raw_kept"),
    [('{"a": 1, "b"', None, '{"a": 1, "b"'), ("[1, 2]", [1, 2], None), ("", {}, None), ('{"s": "\\u00e9\\"q"}', {"s": 'é"q'}, None)],
)
@pytest.mark.parametrize("stream", [True, False])
def test_malformed_arguments_stay_raw(raw, arguments, raw_kept, stream):
    _, p, _ = make([Turn(tool_calls=[call("add", raw, id="call_1")], chunk_size=3)], stream=stream)
    (tc,) = run(p, ask(tools=[ADD])).tool_calls
    assert (tc.arguments, tc.raw_arguments) == (arguments, raw_kept)


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (None, None),
        ("auto", "auto"),
        ("required", "required"),
        ("none", "none"),
        ({"type": "function", "name": "add"}, {"type": "function", "function": {"name": "add"}}),
        ({"type": "function", "function": {"name": "add"}}, {"type": "function", "function": {"name": "add"}}),
    ],
)
@pytest.mark.parametrize(("parallel", "flag"), [(None, None), (True, None), (False, False)])
def test_tool_choice_and_parallel_flag(choice, wire, parallel, flag):
    sim, p, _ = make(["ok"])
    run(p, ask(tools=[ADD], tool_choice=choice, parallel_tool_calls=parallel))
    body = sent(sim)
    assert body.get("tool_choice") == wire and ("tool_choice" in body) == (wire is not None)
    assert body.get("parallel_tool_calls") == flag and ("parallel_tool_calls" in body) == (flag is not None)


def test_no_tools_omits_choice_and_flag():
    """Both knobs are dropped without tools; the API would answer 400 to parallel_tool_calls."""
    sim, p, _ = make(["ok"])
    run(p, ask(tool_choice="required", parallel_tool_calls=False))
    assert set(sent(sim)) == {"model", "messages", "stream", "stream_options"}


def test_bad_tool_choice_is_a_usage_error():
    _, p, _ = make(["ok"])
    with pytest.raises(UsageError, match="tool_choice"):
        run(p, ask(tools=[ADD], tool_choice={"type": "tool"}))


def test_is_error_round_trip_echoes_calls_with_ids():
    sim, p, _ = make([Turn(tool_calls=[call("add", {"a": 1}, id="call_x"), call("add", '{"a":', id="call_y")]), "Sorry."])
    first = run(p, ask(tools=[ADD]))
    results = [
        ToolResultMessage(tool_call_id="call_x", tool_name="add", content=[TextContent(text="ValueError: b is required")], is_error=True),
        ToolResultMessage(tool_call_id="call_y", tool_name="add", content=[TextContent(text="invalid JSON")], is_error=True),
    ]
    second = run(p, ModelRequest([user("What is 2+3?"), first, *results], tools=[ADD]))
    assert second.text == "Sorry."
    assert sent(sim, 1)["messages"] == [
        {"role": "user", "content": "What is 2+3?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_x", "type": "function", "function": {"name": "add", "arguments": '{"a":1}'}},
                {"id": "call_y", "type": "function", "function": {"name": "add", "arguments": '{"a":'}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_x", "content": "ValueError: b is required"},
        {"role": "tool", "tool_call_id": "call_y", "content": "invalid JSON"},
    ]


def test_failed_assistant_messages_are_not_sent_back():
    failed = AssistantMessage(content=[ToolCall(id="call_z", name="add", arguments={})], stop_reason="error")
    orphan = ToolResultMessage(tool_call_id="call_z", tool_name="add", content=[TextContent(text="x")])
    messages = build_body(ModelRequest([user("a"), failed, orphan, user("b")]), model="m")["messages"]
    assert messages == [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]


@pytest.mark.parametrize(("turn", "reason"), [(Turn(text="a"), "stop"), (Turn(text="a", stop_reason="length"), "length"), (Turn(tool_calls=[call("add")]), "toolUse")])
@pytest.mark.parametrize("stream", [True, False])
def test_stop_reasons(turn, reason, stream):
    _, p, _ = make([turn], stream=stream)
    assert run(p, ask(tools=[ADD])).stop_reason == reason


def test_forced_call_with_finish_stop_is_tool_use():
    body = _chunks({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{}"}}]}, finish="stop")
    assert _decode(body).stop_reason == "toolUse"


def test_aborted_stop_reason():
    signal = AbortSignal()
    signal.abort()
    _, p, _ = make(["a long answer that is cut"])
    msg = run(p, ModelRequest([user("x")], abort_signal=signal))
    assert msg.stop_reason == "aborted"


def test_usage_with_cache():
    _, p, _ = make([Turn(text="a", usage=Usage(input=10, output=5, cache_read=30, total_tokens=45))])
    assert run(p, ask()).usage == Usage(input=10, output=5, cache_read=30, total_tokens=45)


def test_streaming_and_non_streaming_give_the_same_message():
    turn = Turn(text="Two calls:", tool_calls=[call("add", {"a": 1}, id="c1"), call("add", "{bad", id="c2")], usage=Usage(input=3, output=2, total_tokens=5))
    _, ps, _ = make([turn])
    _, pb, _ = make([turn], stream=False)
    assert run(ps, ask(tools=[ADD])) == run(pb, ask(tools=[ADD]))


def test_async_stream():
    _, p, _ = make([Turn(text="async", tool_calls=[call("add", {"a": 1}, id="c1")])])

    async def go():
        return accumulate([e async for e in p.astream(ask(tools=[ADD]))])

    msg = asyncio.run(go())
    assert msg.text == "async" and msg.tool_calls == [ToolCall(id="c1", name="add", arguments={"a": 1})]


# --- faults and retries ---------------------------------------------------------------------


def test_429_retry_after_is_honoured_then_success():
    sim, p, waits = make([Turn(faults=[HttpFault(status=429, retry_after=2.5)]), Turn(faults=[HttpFault(status=500)]), "done"])
    assert run(p, ask()).text == "done"
    assert waits == [2.5, 1.0]  # retry-after-ms wins; then the schedule (0.5 * 2)
    assert p.attempts == [3]
    sim.assert_complete()


def test_429_retries_spent_raises_rate_limit_error():
    _, p, waits = make([Turn(faults=[HttpFault(status=429, retry_after=1)])] * 3)
    with pytest.raises(RateLimitError) as info:
        run(p, ask())
    err = info.value
    assert (err.status, err.error_type, err.retry_after) == (429, "requests", 1.0)
    assert "Rate limit reached" in err.message
    assert waits == [1.0, 1.0]


def test_400_is_not_retried_and_carries_the_error_body():
    _, p, waits = make([Turn(faults=[HttpFault(status=400, message="Unsupported value: 'x'", error_type="invalid_request_error")])])
    with pytest.raises(BadRequestError) as info:
        run(p, ask())
    assert (info.value.status, info.value.error_type, info.value.message) == (400, "invalid_request_error", "Unsupported value: 'x'")
    assert waits == []


def test_x_should_retry_false_stops_retries():
    _, p, waits = make([Turn(faults=[HttpFault(status=503, headers={"x-should-retry": "false"})])])
    with pytest.raises(ServerError):
        run(p, ask())
    assert waits == []


def test_mid_stream_error_raises_stream_error():
    _, p, waits = make([Turn(text="partial answer here", faults=[MidStreamError(after=2, message="overloaded", error_type="server_error")])])
    with pytest.raises(StreamError) as info:
        run(p, ask())
    assert (info.value.message, info.value.error_type, info.value.status) == ("overloaded", "server_error", None)
    assert waits == []  # events were already delivered: never retried


def test_truncated_before_any_event_is_retried():
    sim, p, waits = make([Turn(text="x", faults=[Truncate(after=0)]), "whole"])
    assert run(p, ask()).text == "whole"
    assert waits == [0.5]


def test_truncated_after_events_raises_connection_closed():
    _, p, _ = make([Turn(text="abcdefghijklmnop", faults=[Truncate(after=3)])])
    with pytest.raises(ConnectionClosedError):
        run(p, ask())


def test_missing_done_is_a_truncation():
    decoder = ChatStreamDecoder()
    decoder.feed(_chunks({"content": "hi"}).rsplit(b"data: [DONE]", 1)[0])
    with pytest.raises(ConnectionClosedError, match=r"\[DONE\]"):
        decoder.close()


def test_delay_uses_the_injected_sleep():
    _, p, waits = make([Turn(text="slow", faults=[Delay(seconds=3.0, after=1)])])
    assert run(p, ask()).text == "slow"
    assert waits == [3.0]


# --- wire behaviours seen in real traffic ---------------------------------------------------


def _chunks(*deltas: dict, finish: str = "stop", usage: dict | None = None, repeat_head: bool = False) -> bytes:
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x"}
    out = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}], "obfuscation": "pad"} for d in deltas]
    out.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if usage:
        out.append({**head, "choices": [], "usage": usage})
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in out) + b"data: [DONE]\n\n"


def _decode(body: bytes, splits: list[int] | None = None) -> AssistantMessage:
    decoder = ChatStreamDecoder()
    events = []
    last = 0
    for cut in sorted(splits or []):
        events += decoder.feed(body[last:cut])
        last = cut
    events += decoder.feed(body[last:])
    events += decoder.close()
    return accumulate(events)


def test_repeated_id_and_name_on_every_fragment_are_not_concatenated():
    """OpenAI-compatible servers resend id/name on each fragment; the first one wins."""
    frag = lambda args: {"tool_calls": [{"index": 0, "id": "call_x", "type": "function", "function": {"name": "add", "arguments": args}}]}  # noqa: E731
    msg = _decode(_chunks(frag('{"a"'), frag(":1}"), finish="tool_calls"))
    assert msg.tool_calls == [ToolCall(id="call_x", name="add", arguments={"a": 1})]


def test_refusal_ends_with_error_and_keeps_the_text():
    msg = _decode(_chunks({"role": "assistant", "content": None, "refusal": ""}, {"refusal": "I can't "}, {"refusal": "help."}))
    assert (msg.stop_reason, msg.error_type, msg.error_message, msg.text) == ("error", "refusal", "I can't help.", "I can't help.")


def test_content_filter_is_an_error_stop():
    msg = _decode(_chunks({"content": "par"}, finish="content_filter"))
    assert (msg.stop_reason, msg.error_type) == ("error", "content_filter")


def test_reasoning_content_from_compatible_servers_is_thinking():
    msg = _decode(_chunks({"reasoning_content": "think"}, {"content": "answer"}))
    assert [b.type for b in msg.content] == ["thinking", "text"] and msg.content[0].thinking == "think"


def test_tgi_bare_error_message_keeps_its_error_type():
    # Hugging Face TGI: {"error": "<message>", "error_type": "<type>"}; the type was dropped
    decoder = ChatStreamDecoder()
    with pytest.raises(StreamError) as info:
        decoder.feed(b'data: {"error": "Input validation error: too long", "error_type": "validation"}\n\n')
    assert (str(info.value.args[0]), info.value.error_type, info.value.body) == ("Input validation error: too long", "validation", "Input validation error: too long")


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_of_a_non_streamed_answer_is_thinking_in_either_field(field):
    # vLLM >= 0.9 and OpenRouter name the field `reasoning`; it was dropped from non-streamed answers
    body = {"id": "c1", "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "answer", field: "think"}, "finish_reason": "stop"}]}
    msg = accumulate(decode_completion(body))
    assert [(b.type, getattr(b, "thinking", None) or getattr(b, "text", None)) for b in msg.content] == [("thinking", "think"), ("text", "answer")]


# --- fixtures (real recorded traffic) -------------------------------------------------------


def test_fixture_stream_tool_call_single():
    msg = _decode((FIXTURES / "stream_tool_call_single.sse").read_bytes())
    assert msg == AssistantMessage(
        content=[ToolCall(id="call_4XzlGBLtUe9dy3GVNV4jhq7h", name="get_weather", arguments={"city": "New York City"})],
        stop_reason="toolUse", api="openai_chat", provider="openai", model="gpt-4o-2024-08-06",
        usage=Usage(input=44, output=16, total_tokens=60), response_id="chatcmpl-ABfwERreu9s99xXsVuOWtIB2UOx62",
    )


def test_fixture_stream_text():
    msg = _decode((FIXTURES / "stream_text.sse").read_bytes())
    assert msg.stop_reason == "stop" and msg.usage == Usage(input=14, output=30, total_tokens=44)
    assert msg.text.startswith("I'm") and msg.text.endswith("weather app.")


def test_fixture_nonstream_tool_call_and_text():
    msg = accumulate(decode_completion(json.loads((FIXTURES / "nonstream_tool_call.json").read_text())))
    assert msg.content == [ToolCall(id="call_Y6qJ7ofLgOrBnMD5WbVAeiRV", name="GetWeatherArgs", arguments={"city": "Edinburgh", "country": "UK", "units": "c"})]
    assert (msg.stop_reason, msg.usage) == ("toolUse", Usage(input=76, output=24, total_tokens=100))
    text = accumulate(decode_completion(json.loads((FIXTURES / "nonstream_text.json").read_text())))
    assert text.stop_reason == "stop" and text.text


def test_fixture_exchange_round_trip():
    """The recorded second request is what build_body makes from the first answer + a result."""
    exchange = json.loads((FIXTURES / "exchange_tool_roundtrip_stream.json").read_text())
    first = _decode(exchange[0]["response"]["body"].encode())
    (tc,) = first.tool_calls
    assert (tc.name, tc.arguments) == ("get_capital", {"country": "UK"})
    recorded = exchange[1]["request"]["body"]
    result_msg = recorded["messages"][2]
    tool = ToolSpec(name="get_capital", parameters=recorded["tools"][0]["function"]["parameters"])
    request = ModelRequest([user(recorded["messages"][0]["content"]), first, ToolResultMessage(tool_call_id=tc.id, tool_name=tc.name, content=[TextContent(text=result_msg["content"])])], tools=[tool], tool_choice="auto")
    body = build_body(request, model="gpt-4o-mini")
    assert body["messages"] == recorded["messages"]
    assert _decode(exchange[1]["response"]["body"].encode()).stop_reason == "stop"


def test_fixture_error_400_maps_to_bad_request():
    """The recorded 400 body, served by the simulator, becomes a typed error with its fields."""
    recorded = json.loads((FIXTURES / "error_400_unsupported_value.json").read_text())["response"]["body"]
    _, p, waits = make([Turn(faults=[HttpFault(status=400, body=recorded)])])
    with pytest.raises(BadRequestError) as info:
        run(p, ask())
    err = info.value
    assert (err.status, err.error_type, err.body) == (400, "invalid_request_error", recorded)
    assert err.message == "Unsupported value: 'messages[0].role' does not support 'developer' with this model."
    assert waits == []


# --- chunking independence ------------------------------------------------------------------


def _sim_bytes(turn: Turn) -> bytes:
    sim = simulators.create("openai_chat", [turn])
    req = simulators.SimRequest(method="POST", path="/v1/chat/completions", body=json.dumps(build_body(ask(tools=[ADD]), model="m")).encode())
    return sim.handle(req).body


BODIES = [
    (FIXTURES / "stream_tool_call_single.sse").read_bytes(),
    (FIXTURES / "stream_text.sse").read_bytes(),
    _sim_bytes(Turn(text="héllo ✓ wörld " * 3, tool_calls=[call("add", {"a": "é✓", "b": 2}), call("add", '{"broken": ')], chunk_size=3)),
    _sim_bytes(Turn(text="crlf", usage=Usage(input=1, output=2, total_tokens=3))).replace(b"\n", b"\r\n"),
]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(range(len(BODIES))), st.data())
def test_any_rechunking_gives_the_same_message(which, data):
    body = BODIES[which]
    splits = data.draw(st.lists(st.integers(min_value=1, max_value=len(body) - 1), max_size=40))
    assert _decode(body, splits) == _decode(body)


def test_wire_history_reuses_converted_messages_and_matches_a_fresh_build():
    """A growing history converts only new messages; the body equals one built from scratch."""
    from loopkit.providers._http import WireHistory

    history = WireHistory()
    a = AssistantMessage(content=[ToolCall(id="c1", name="add", arguments={"a": 1})], stop_reason="toolUse")
    r = ToolResultMessage(tool_call_id="c1", tool_name="add", content=[TextContent(text="1")])
    q = user("q")
    first = build_body(ModelRequest([q, a]), model="m", history=history)
    second = build_body(ModelRequest([q, a, r, user("more")]), model="m", history=history)
    assert second == build_body(ModelRequest([q, a, r, user("more")]), model="m")
    assert second["messages"][1] is first["messages"][1]  # converted once
    assert first["messages"] == build_body(ModelRequest([q, a]), model="m")["messages"]  # earlier bodies untouched
    other = build_body(ModelRequest([user("other"), a]), model="m", history=history)
    assert other["messages"][0] == {"role": "user", "content": "other"}


def test_parallel_calls_all_numbered_zero_are_told_apart_by_id():
    """Some OpenAI-compatible servers give every parallel call index 0; a new id starts a new call."""
    head = lambda cid: {"tool_calls": [{"index": 0, "id": cid, "type": "function", "function": {"name": "add", "arguments": ""}}]}  # noqa: E731
    args = lambda a: {"tool_calls": [{"index": 0, "function": {"arguments": a}}]}  # noqa: E731
    msg = _decode(_chunks(head("call_a"), args('{"a":1}'), head("call_b"), args('{"a":2}'), finish="tool_calls"))
    assert [(c.id, c.arguments) for c in msg.tool_calls] == [("call_a", {"a": 1}), ("call_b", {"a": 2})]


@pytest.mark.parametrize("which", range(len(BODIES)))
def test_one_byte_at_a_time_gives_the_same_message(which):
    """Every split point at once: inside UTF-8 sequences, CRLF pairs, 'data:' prefixes and JSON."""
    body = BODIES[which]
    assert _decode(body, list(range(1, len(body)))) == _decode(body)
