"""AnthropicProvider against AnthropicSimulator (in-process transport) and against recorded bytes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopkit import simulators
from loopkit.accumulate import accumulate
from loopkit.errors import (
    AuthenticationError,
    BadRequestError,
    ConnectionClosedError,
    OverloadedError,
    RateLimitError,
    ServerError,
    StreamError,
    UsageError,
)
from loopkit.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    user,
)
from loopkit.provider import ModelRequest, ToolSpec
from loopkit.providers.anthropic import AnthropicProvider, MessagesStreamDecoder, encode_messages, encode_tool_choice
from loopkit.retry import RetryPolicy
from loopkit.script import Delay, HttpFault, MidStreamError, Truncate, Turn, call

FIXTURES = Path(__file__).parent.parent / "fixtures" / "anthropic"
WEATHER = ToolSpec(
    name="get_weather",
    description="Lookup the weather",
    parameters={"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
)
ADD = ToolSpec(name="add", parameters={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})


def setup(turns, *, stream=True, api_key="test-key", max_retries=2, **sim_options):
    """A simulator, a provider on its in-process transport, and the list of retry waits."""
    sim = simulators.create("anthropic", turns, **sim_options)
    waits: list[float] = []
    sleeps: list[float] = []
    provider = AnthropicProvider(
        model="claude-test",
        api_key=api_key,
        transport=simulators.transport(sim, sleep=sleeps.append),
        stream=stream,
        retry=RetryPolicy(max_retries=max_retries, sleep=waits.append),
    )
    return sim, provider, waits, sleeps


def ask(provider, *messages, **kw):
    return accumulate(provider.stream(ModelRequest(list(messages) or [user("hi")], **kw)))


def body(sim, n=-1):
    return sim.requests[n].json


# --- answers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
def test_text_answer(stream):
    sim, p, _, _ = setup([Turn(text="Grüße, world! 👋", usage=Usage(input=12, output=5))], stream=stream)
    msg = ask(p)
    assert msg.content == [TextContent(text="Grüße, world! 👋")]
    assert (msg.stop_reason, msg.api, msg.provider, msg.model) == ("stop", "anthropic-messages", "anthropic", "claude-test")
    assert msg.response_id.startswith("msg_sim")
    assert msg.usage == Usage(input=12, output=5, total_tokens=17)
    sim.assert_complete()


@pytest.mark.parametrize("stream", [True, False])
def test_one_tool_call(stream):
    sim, p, _, _ = setup([Turn(text="Let me check.", tool_calls=[call("get_weather", {"location": "Paris"}, id="toolu_1")])], stream=stream)
    msg = ask(p, tools=[WEATHER])
    assert msg.content == [TextContent(text="Let me check."), ToolCall(id="toolu_1", name="get_weather", arguments={"location": "Paris"})]
    assert msg.stop_reason == "toolUse"


@pytest.mark.parametrize("stream", [True, False])
def test_parallel_tool_calls(stream):
    sim, p, _, _ = setup([Turn(tool_calls=[call("add", {"a": 1, "b": 2}), call("add", {"a": 3, "b": 4}), call("get_weather", {})])], stream=stream)
    msg = ask(p, tools=[ADD, WEATHER])
    calls = msg.tool_calls
    assert [(c.name, c.arguments) for c in calls] == [("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4}), ("get_weather", {})]
    assert len({c.id for c in calls}) == 3 and all(c.id.startswith("toolu_") for c in calls)
    assert all(c.arguments_ok for c in calls)


@pytest.mark.parametrize("raw", ['{"a": 1', '{"a": 1}{"b": 2}', "not json", "[1, 2]"])
def test_malformed_arguments_stay_raw(raw):
    """Broken argument JSON is kept as text for the error result; it never becomes {}."""
    sim, p, _, _ = setup([Turn(tool_calls=[call("add", raw)], chunk_size=3)])
    (tc,) = ask(p, tools=[ADD]).tool_calls
    assert not tc.arguments_ok
    if raw == "[1, 2]":
        assert (tc.arguments, tc.raw_arguments) == ([1, 2], None)
    else:
        assert (tc.arguments, tc.raw_arguments) == (None, raw)


def test_thinking_with_signature_streams_and_is_sent_back():
    sim, p, _, _ = setup([Turn(thinking="Let me think…", thinking_signature="EqQBCkYIBxgCKkDsig==", tool_calls=[call("add", {"a": 1, "b": 1}, id="toolu_9")]), "2"])
    first = ask(p, tools=[ADD])
    assert first.content[0] == ThinkingContent(thinking="Let me think…", thinking_signature="EqQBCkYIBxgCKkDsig==")
    result = ToolResultMessage(tool_call_id="toolu_9", tool_name="add", content=[TextContent(text="2")])
    ask(p, user("hi"), first, result, tools=[ADD])
    assistant = body(sim)["messages"][1]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Let me think…", "signature": "EqQBCkYIBxgCKkDsig=="},
            {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {"a": 1, "b": 1}},
        ],
    }


def test_redacted_thinking_decodes_and_is_sent_back():
    stream = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"OPAQUE=="}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"ok"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    msg = decode(stream)
    assert msg.content == [ThinkingContent(thinking="", thinking_signature="OPAQUE==", redacted=True), TextContent(text="ok")]
    assert encode_messages([msg]) == [{"role": "assistant", "content": [{"type": "redacted_thinking", "data": "OPAQUE=="}, {"type": "text", "text": "ok"}]}]


# --- request mapping ---------------------------------------------------------------------------


CHOICES = [
    (None, None, None),
    (None, True, None),
    (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
    ("auto", None, {"type": "auto"}),
    ("auto", False, {"type": "auto", "disable_parallel_tool_use": True}),
    ("required", None, {"type": "any"}),
    ("required", True, {"type": "any"}),
    ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
    ("none", None, {"type": "none"}),
    ("none", False, {"type": "none"}),  # docs/loop-contract.md checklist 52: no flag with none
    ({"type": "function", "name": "add"}, None, {"type": "tool", "name": "add"}),
    ({"type": "function", "function": {"name": "add"}}, False, {"type": "tool", "name": "add", "disable_parallel_tool_use": True}),
]


@pytest.mark.parametrize(("choice", "parallel", "wire"), CHOICES)
def test_tool_choice_and_parallel_flag_reach_the_wire(choice, parallel, wire):
    sim, p, _, _ = setup(["ok"])
    ask(p, tools=[ADD], tool_choice=choice, parallel_tool_calls=parallel)
    sent = body(sim)
    assert sent["tools"] == [{"name": "add", "input_schema": dict(ADD.parameters)}]
    assert sent.get("tool_choice") == wire
    assert "parallel_tool_calls" not in sent


@pytest.mark.parametrize(("choice", "parallel"), [("required", False), ("none", False), ({"type": "function", "name": "add"}, True)])
def test_no_tools_means_no_tool_choice(choice, parallel):
    sim, p, _, _ = setup(["ok"])
    ask(p, tool_choice=choice, parallel_tool_calls=parallel)
    assert {"tools", "tool_choice"}.isdisjoint(body(sim))


def test_bad_tool_choice_is_a_usage_error():
    with pytest.raises(UsageError, match="tool_choice"):
        encode_tool_choice("sometimes", None)
    with pytest.raises(UsageError, match="tool name"):
        encode_tool_choice({"type": "function"}, None)


def test_request_body_headers_and_system():
    sim, p, _, _ = setup(["ok"])
    ask(p, user("hi"), tools=[WEATHER], system="Be brief.")
    req = sim.requests[0]
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == "test-key"
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert req.json == {
        "model": "claude-test",
        "max_tokens": 4096,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "get_weather", "description": "Lookup the weather", "input_schema": dict(WEATHER.parameters)}],
        "stream": True,
    }


def test_extra_body_overrides_max_tokens():
    sim = simulators.create("anthropic", ["ok"])
    p = AnthropicProvider(model="m", api_key="k", transport=simulators.transport(sim), extra_body={"max_tokens": 77}, stream=False)
    ask(p)
    assert body(sim)["max_tokens"] == 77 and "stream" not in body(sim)


def test_is_error_round_trip():
    """A ToolResultMessage's is_error reaches Anthropic as tool_result.is_error (checklist 56)."""
    sim, p, _, _ = setup([Turn(tool_calls=[call("add", {"a": 1}, id="toolu_a"), call("add", {"a": 2}, id="toolu_b")]), "sorry"])
    first = ask(p, tools=[ADD])
    results = [
        ToolResultMessage(tool_call_id="toolu_a", tool_name="add", content=[TextContent(text="ValueError: b is required")], is_error=True),
        ToolResultMessage(tool_call_id="toolu_b", tool_name="add", content=[TextContent(text="3")]),
    ]
    final = ask(p, user("add"), first, *results, tools=[ADD])
    assert final.text == "sorry"
    assert body(sim)["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "ValueError: b is required", "is_error": True},
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "3"},
        ],
    }
    sim.assert_complete()


def test_empty_results_are_never_rejected():
    """The API rejects an empty error result (400); loopkit sends '(empty)' there, and omits the
    content of an empty successful result; the simulator (which checks this) accepts both."""
    sim, p, _, _ = setup([Turn(tool_calls=[call("add", {}, id="toolu_a"), call("add", {}, id="toolu_b")]), "ok"])
    first = ask(p, tools=[ADD])
    results = [
        ToolResultMessage(tool_call_id="toolu_a", tool_name="add", content=[TextContent(text="")], is_error=True),
        ToolResultMessage(tool_call_id="toolu_b", tool_name="add", content=[]),
    ]
    assert ask(p, user("x"), first, *results, tools=[ADD]).text == "ok"
    assert body(sim)["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "(empty)", "is_error": True},
        {"type": "tool_result", "tool_use_id": "toolu_b"},
    ]


def test_history_mapping():
    """Broken arguments are echoed as {} (input must be an object); failed assistant turns,
    empty text and unsigned thinking are dropped; same-role messages merge; images go as base64."""
    failed = AssistantMessage(content=[TextContent(text="partial")], stop_reason="error")
    broken = AssistantMessage(
        content=[ThinkingContent(thinking="unsigned"), TextContent(text=""), ToolCall(id="t1", name="add", arguments=None, raw_arguments="{bad")],
        stop_reason="toolUse",
    )
    result = ToolResultMessage(tool_call_id="t1", tool_name="add", content=[TextContent(text="bad JSON")], is_error=True)
    image = user([TextContent(text="look"), ImageContent(data="aGk=", mime_type="image/png")])
    assert encode_messages([user("a"), failed, user("b"), broken, result, image]) == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "add", "input": {}}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "bad JSON", "is_error": True},
                {"type": "text", "text": "look"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}},
            ],
        },
    ]


# --- stop reasons and usage --------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(
    ("turn", "reason"),
    [
        (Turn(text="done"), "stop"),
        (Turn(tool_calls=[call("add", {"a": 1})]), "toolUse"),
        (Turn(text="trunc", stop_reason="length"), "length"),
        (Turn(tool_calls=[call("add", {"a": 1})], stop_reason="length"), "length"),
        (Turn(text="I can't help with that.", error="policy"), "error"),
    ],
)
def test_stop_reasons_through_simulator(turn, reason, stream):
    sim, p, _, _ = setup([turn], stream=stream)
    msg = ask(p, tools=[ADD])
    assert msg.stop_reason == reason
    if reason == "error":
        assert msg.error_type == "refusal" and "policy" in msg.error_message


def wire_stream(stop_reason, *, usage='{"output_tokens":9}', extra=b""):
    return (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_x","type":"message","role":"assistant","model":"claude-m","content":[],"stop_reason":null,"usage":{"input_tokens":20,"cache_read_input_tokens":5,"output_tokens":1}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' + extra
        + b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"' + stop_reason.encode() + b'","stop_sequence":null},"usage":' + usage.encode() + b"}\n\n"
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )


def decode(data: bytes):
    dec = MessagesStreamDecoder()
    return accumulate(dec.feed(data) + dec.close())


@pytest.mark.parametrize(
    ("wire", "reason"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("pause_turn", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("tool_use", "toolUse"),
        ("refusal", "error"),
        ("some_future_reason", "stop"),
    ],
)
def test_every_wire_stop_reason(wire, reason):
    msg = decode(wire_stream(wire))
    assert msg.stop_reason == reason
    assert msg.text == "hi"


def test_usage_is_cumulative_and_overwrites():
    """message_delta usage overwrites message_start's counts; fields it lacks are kept."""
    msg = decode(wire_stream("end_turn", usage='{"input_tokens":21,"output_tokens":9}'))
    assert msg.usage == Usage(input=21, output=9, cache_read=5, total_tokens=35)
    msg = decode(wire_stream("end_turn"))
    assert msg.usage == Usage(input=20, output=9, cache_read=5, total_tokens=34)


def test_unknown_blocks_deltas_and_fields_are_ignored():
    extra = (
        b'event: ping\ndata: {"type": "ping"}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n'
        b'event: some_new_event\ndata: {"type":"some_new_event","x":1}\n\n'
        b": a comment\n\n"
    )
    assert decode(wire_stream("end_turn", extra=extra)).content == [TextContent(text="hi")]


def test_stream_without_message_stop_is_a_closed_connection():
    data = wire_stream("end_turn").rsplit(b"event: message_stop", 1)[0]
    dec = MessagesStreamDecoder()
    dec.feed(data)
    with pytest.raises(ConnectionClosedError):
        dec.close()


# --- faults and retries ------------------------------------------------------------------------


def test_429_is_retried_honouring_retry_after():
    sim, p, waits, _ = setup([Turn(faults=[HttpFault(status=429, retry_after=3)]), Turn(faults=[HttpFault(status=429, headers={"retry-after-ms": "250"})]), "ok"])
    assert ask(p).text == "ok"
    assert waits == [3.0, 0.25]
    assert p.attempts == [3]
    sim.assert_complete()


def test_529_overloaded_is_retried_with_backoff():
    sim, p, waits, _ = setup([Turn(faults=[HttpFault(status=529)]), Turn(faults=[HttpFault(status=529)]), "ok"])
    assert ask(p).text == "ok"
    assert waits == [0.5, 1.0]


def test_retries_spent_raise_the_typed_error():
    sim, p, waits, _ = setup([Turn(faults=[HttpFault(status=529)])] * 3)
    with pytest.raises(OverloadedError) as info:
        ask(p)
    err = info.value
    assert (err.status, err.error_type, err.message, err.provider) == (529, "overloaded_error", "Overloaded", "anthropic")
    assert waits == [0.5, 1.0]


def test_500_is_a_server_error():
    sim, p, waits, _ = setup([Turn(faults=[HttpFault(status=500, message="boom")])], max_retries=0)
    with pytest.raises(ServerError) as info:
        ask(p)
    assert (info.value.status, info.value.error_type, info.value.message) == (500, "api_error", "boom")


@pytest.mark.parametrize(("status", "error_type", "cls"), [(500, "api_error", ServerError), (503, "overloaded_error", ServerError), (529, "overloaded_error", OverloadedError)])
def test_the_error_class_follows_the_status_alone(status, error_type, cls):
    """As the official SDK maps it: only a 529 is an OverloadedError, whatever error.type says."""
    sim, p, _, _ = setup([Turn(faults=[HttpFault(status=status, error_type=error_type)])], max_retries=0)
    with pytest.raises(ServerError) as info:
        ask(p)
    assert type(info.value) is cls and info.value.error_type == error_type


def test_rate_limit_error_carries_retry_after():
    sim, p, _, _ = setup([Turn(faults=[HttpFault(status=429, retry_after=7)])], max_retries=0)
    with pytest.raises(RateLimitError) as info:
        ask(p)
    assert (info.value.status, info.value.error_type, info.value.retry_after) == (429, "rate_limit_error", 7.0)


def test_orphan_tool_result_is_a_bad_request_and_not_retried():
    sim, p, waits, _ = setup(["never used"])
    orphan = ToolResultMessage(tool_call_id="toolu_ghost", tool_name="add", content=[TextContent(text="1")])
    with pytest.raises(BadRequestError) as info:
        ask(p, user("hi"), orphan)
    assert info.value.error_type == "invalid_request_error"
    assert "unexpected `tool_use_id` found in `tool_result` blocks: toolu_ghost" in info.value.message
    assert waits == [] and sim.used == 0


def test_missing_key_is_an_authentication_error():
    sim, p, _, _ = setup(["ok"], api_key=None)
    p.api_key = None
    with pytest.raises(AuthenticationError) as info:
        ask(p)
    assert (info.value.status, info.value.error_type) == (401, "authentication_error")


def test_mid_stream_error_after_events_is_not_retried():
    sim, p, waits, _ = setup([Turn(text="a long answer", faults=[MidStreamError(after=3, message="Overloaded", error_type="overloaded_error")]), "unused"])
    with pytest.raises(StreamError) as info:
        ask(p)
    assert (info.value.status, info.value.error_type, info.value.message) == (None, "overloaded_error", "Overloaded")
    assert waits == [] and sim.used == 1


def test_mid_stream_error_before_any_event_is_retried():
    sim, p, waits, _ = setup([Turn(text="x", faults=[MidStreamError(after=0, error_type="overloaded_error")]), "ok"])
    assert ask(p).text == "ok"
    assert waits == [0.5]


def test_truncated_stream():
    sim, p, waits, _ = setup([Turn(text="hello there", faults=[Truncate(after=4)])], max_retries=0)
    with pytest.raises(ConnectionClosedError):
        ask(p)
    sim, p, waits, _ = setup([Turn(text="x", faults=[Truncate(after=0)]), "ok"])
    assert ask(p).text == "ok" and waits == [0.5]


def test_delay_uses_the_injected_sleep():
    sim, p, _, sleeps = setup([Turn(text="slow", faults=[Delay(seconds=2.5, after=2)])])
    assert ask(p).text == "slow"
    assert sleeps == [2.5]


def test_async_stream():
    sim, p, _, _ = setup([Turn(text="async ok", tool_calls=[call("add", {"a": 1})])])

    async def run():
        return [e async for e in p.astream(ModelRequest([user("hi")], tools=[ADD]))]

    msg = accumulate(asyncio.run(run()))
    assert msg.text == "async ok" and msg.tool_calls[0].arguments == {"a": 1}


# --- chunking independence ---------------------------------------------------------------------


def _sim_stream_bytes() -> bytes:
    sim = simulators.create("anthropic", [Turn(thinking="ß∑ thoughts", thinking_signature="sig==", text="héllo 世界 🎉", tool_calls=[call("add", {"a": "ünï"}), call("add", '{"a": 1')], chunk_size=2)])
    req = simulators.SimRequest(method="POST", path="/v1/messages", headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
                                body=json.dumps({"model": "m", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "x"}]}).encode())  # fmt: skip
    return sim.handle(req).body


def fixture_stream(name: str) -> bytes:
    """A hand-kept SDK fixture; it lacks the final blank line (PROVENANCE.md), so add it."""
    return (FIXTURES / name).read_bytes() + b"\n\n"


STREAMS = [
    _sim_stream_bytes(),
    fixture_stream("stream_text.sse"),
    fixture_stream("stream_text_then_tool_use.sse"),
    wire_stream("end_turn").replace(b"\n", b"\r\n"),
]


@settings(max_examples=60, deadline=None)
@given(which=st.sampled_from(range(len(STREAMS))), cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=40))
def test_any_rechunking_gives_the_same_message(which, cuts):
    data = STREAMS[which]
    whole = decode(data)
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]
    dec = MessagesStreamDecoder()
    events = [e for piece in pieces for e in dec.feed(piece)] + dec.close()
    assert accumulate(events) == whole


def test_byte_by_byte_equals_whole():
    for data in STREAMS:
        dec = MessagesStreamDecoder()
        events = [e for i in range(len(data)) for e in dec.feed(data[i : i + 1])] + dec.close()
        assert accumulate(events) == decode(data)


# --- recorded fixtures -------------------------------------------------------------------------


def test_fixture_stream_text():
    msg = decode(fixture_stream("stream_text.sse"))
    assert msg.content == [TextContent(text="Hello there!")]
    assert (msg.stop_reason, msg.model, msg.response_id) == ("stop", "claude-3-opus-latest", "msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK")
    assert msg.usage == Usage(input=11, output=6, total_tokens=17)


def test_fixture_stream_text_then_tool_use():
    msg = decode(fixture_stream("stream_text_then_tool_use.sse"))
    assert msg.content == [
        TextContent(text="I'll check the current weather in Paris for you."),
        ToolCall(id="toolu_01NRLabsLyVHZPKxbKvkfSMn", name="get_weather", arguments={"location": "Paris"}),
    ]
    assert msg.stop_reason == "toolUse"
    assert msg.usage == Usage(input=377, output=65, total_tokens=442)


@pytest.mark.parametrize("name", ["exchange_tool_result_is_error.json", "exchange_tool_roundtrip.json"])
def test_fixture_exchange_requests_and_responses(name):
    """loopkit encodes the recorded second request's history the way the SDK did (minus the
    echoed ``caller`` field, which the API does not require) and decodes both recorded bodies."""
    first, second = json.loads((FIXTURES / name).read_text())
    req1 = first["request"]["body"]
    transport = httpx.MockTransport(lambda r: httpx.Response(200, json=first["response"]["body"]))
    p = AnthropicProvider(model=req1["model"], api_key="k", transport=transport, stream=False)
    tool = req1["tools"][0]
    spec = ToolSpec(name=tool["name"], description=tool["description"], parameters=tool["input_schema"])
    assistant = accumulate(p.stream(ModelRequest([user(req1["messages"][0]["content"])], tools=[spec])))
    recorded_result = second["request"]["body"]["messages"][2]["content"][0]
    result = ToolResultMessage(
        tool_call_id=assistant.tool_calls[0].id,
        tool_name=tool["name"],
        content=[TextContent(text=recorded_result["content"])],
        is_error=recorded_result.get("is_error", False),
    )
    expected = json.loads(json.dumps(second["request"]["body"]["messages"]))
    for block in expected[1]["content"]:
        block.pop("caller", None)
    assert encode_messages([user(req1["messages"][0]["content"]), assistant, result]) == expected
    transport2 = httpx.MockTransport(lambda r: httpx.Response(200, json=second["response"]["body"]))
    p2 = AnthropicProvider(model=req1["model"], api_key="k", transport=transport2, stream=False)
    final = accumulate(p2.stream(ModelRequest([user("x")])))
    assert final.text == second["response"]["body"]["content"][0]["text"]
    assert final.stop_reason == "stop"


def test_fixture_429_then_200_is_retried_per_x_should_retry():
    exchanges = json.loads((FIXTURES / "exchange_429_then_200.json").read_text())
    responses = iter(exchanges)

    def handler(request: httpx.Request) -> httpx.Response:
        r = next(responses)["response"]
        headers = {k: v for k, v in r["headers"].items() if k != "content-length"}
        return httpx.Response(r["status_code"], headers=headers, content=json.dumps(r["body"]).encode())

    waits: list[float] = []
    p = AnthropicProvider(model="claude-sonnet-4-5", api_key="k", transport=httpx.MockTransport(handler), stream=False, retry=RetryPolicy(sleep=waits.append))
    msg = accumulate(p.stream(ModelRequest([user("Extract order")])))
    assert msg.text.startswith('{"items":[{"product_name":"Green Tea"')
    assert waits == [0.5, 1.0] and p.attempts == [len(exchanges)]


def test_fixture_429_body_maps_to_rate_limit_error():
    r = json.loads((FIXTURES / "exchange_429_then_200.json").read_text())[0]["response"]
    p = AnthropicProvider(model="m", api_key="k", transport=httpx.MockTransport(lambda q: httpx.Response(429, headers={"x-should-retry": "false"}, json=r["body"])), retry=RetryPolicy(max_retries=2, sleep=lambda s: None))
    with pytest.raises(RateLimitError) as info:
        ask(p)
    assert info.value.error_type == "rate_limit_error" and info.value.message.startswith("This request would exceed")
    assert info.value.retryable is False and p.attempts == [1]


# --- the loop, end to end ----------------------------------------------------------------------


def _loop_script():
    return [
        Turn(text="Working on it.", tool_calls=[call("add", {"a": 1, "b": 2}, id="toolu_add"), call("divide", {"a": 1, "b": 0}, id="toolu_div")]),
        Turn(tool_calls=[call("add", '{"a": 1,', id="toolu_bad")]),
        Turn(text="1 + 2 = 3; 1 / 0 failed."),
    ]


def _loop_tools():
    from loopkit import tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool
    def divide(a: int, b: int) -> float:
        """Divide a by b."""
        return a / b

    return [add, divide]


def _check_loop(result, sim):
    assert (result.reason, result.model_calls, result.text) == ("stop", 3, "1 + 2 = 3; 1 / 0 failed.")
    sim.assert_complete()
    second, third = sim.requests[1].json, sim.requests[2].json
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    results = second["messages"][2]["content"]
    assert [(r["tool_use_id"], r.get("is_error", False)) for r in results] == [("toolu_add", False), ("toolu_div", True)]
    assert results[0]["content"] == "3" and "division by zero" in results[1]["content"]
    assert third["messages"][3] == {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_bad", "name": "add", "input": {}}]}
    bad = third["messages"][4]["content"][0]
    assert bad["tool_use_id"] == "toolu_bad" and bad["is_error"] is True and bad["content"]
    assert all(r.json["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True} for r in sim.requests)


def test_multi_round_loop_over_real_http():
    import loopkit

    with simulators.serve("anthropic", _loop_script()) as served:
        provider = AnthropicProvider(model="claude-test", api_key="k", base_url=served.base_url, retry=RetryPolicy(sleep=lambda s: None))
        result = loopkit.run(provider, "Add 1 and 2, then divide 1 by 0.", tools=_loop_tools(), tool_choice="auto", parallel_tool_calls=False)
        provider.close()
    _check_loop(result, served.simulator)


def test_multi_round_loop_async_in_process():
    import loopkit

    sim, p, _, _ = setup(_loop_script())
    result = asyncio.run(loopkit.arun(p, "Add 1 and 2, then divide 1 by 0.", tools=_loop_tools(), tool_choice="auto", parallel_tool_calls=False))
    _check_loop(result, sim)


def test_loop_ends_with_error_when_retries_are_spent():
    import loopkit

    sim, p, waits, _ = setup([Turn(faults=[HttpFault(status=529)])] * 3)
    result = loopkit.run(p, "hi")
    assert result.reason == "error" and isinstance(result.error, OverloadedError)
    assert waits == [0.5, 1.0] and result.model_calls == 1


def test_wire_history_gives_the_same_body_and_never_goes_stale():
    """Growing, shrunk and unrelated histories through one WireHistory encode exactly as a fresh
    encode does, and a merge into the last message never changes a body returned earlier."""
    from loopkit.providers._http import WireHistory

    a1 = AssistantMessage(content=[ToolCall(id="t1", name="add", arguments={"a": 1}), ToolCall(id="t2", name="add", arguments={"a": 2})], stop_reason="toolUse")
    r1 = ToolResultMessage(tool_call_id="t1", tool_name="add", content=[TextContent(text="1")])
    r2 = ToolResultMessage(tool_call_id="t2", tool_name="add", content=[TextContent(text="2")])
    history = [user("go"), a1, r1, r2, user("steer"), AssistantMessage(content=[TextContent(text="done")])]
    cache = WireHistory()
    bodies = []
    for n in range(1, len(history) + 1):
        bodies.append(encode_messages(history[:n], cache))
        assert bodies[-1] == encode_messages(history[:n])
    for n, body in enumerate(bodies, start=1):  # r2 and "steer" merged into r1's user message later
        assert body == encode_messages(history[:n])
    assert encode_messages(history[:2], cache) == encode_messages(history[:2])
    other = [user("go"), AssistantMessage(content=[TextContent(text="other")])]
    assert encode_messages(other, cache) == encode_messages(other)
    assert encode_messages(history, cache) == encode_messages(history)


def test_spliced_message_start_appends_blocks():
    """A second message_start in one stream (docs/wire.md §3.7.5) restarts wire indexes at 0;
    its blocks are appended after the first ones instead of clobbering them."""
    first = wire_stream("end_turn").split(b"event: message_delta")[0]
    spliced = first + first.replace(b"hi", b"again") + b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'
    msg = decode(spliced)
    assert msg.content == [TextContent(text="hi"), TextContent(text="again")]
    # a block the first message left open gets its end event before the second one starts
    unclosed = first.rsplit(b"event: content_block_stop", 1)[0]
    dec = MessagesStreamDecoder()
    events = dec.feed(unclosed + spliced[len(first):]) + dec.close()
    kinds = [(e.type, getattr(e, "content_index", None)) for e in events if e.type.startswith("text_") and e.type != "text_delta"]
    assert kinds == [("text_start", 0), ("text_end", 0), ("text_start", 1), ("text_end", 1)]
    assert accumulate(events).content == [TextContent(text="hi"), TextContent(text="again")]
    assert msg.response_id == "msg_x"


def test_delta_for_a_block_never_started_is_a_protocol_error():
    from loopkit.errors import StreamProtocolError

    bad = b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":1,"output_tokens":1}}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}\n\n'
    with pytest.raises(StreamProtocolError, match="index 3"):
        MessagesStreamDecoder().feed(bad)


def test_forced_tool_with_thinking_surfaces_the_api_400():
    """The adapter does not second-guess the API (docs/loop-contract.md §7.1 note): the API's 400 comes
    back as a BadRequestError with its message."""
    sim = simulators.create("anthropic", ["unused"])
    p = AnthropicProvider(model="m", api_key="k", transport=simulators.transport(sim), extra_body={"thinking": {"type": "enabled", "budget_tokens": 1024}})
    with pytest.raises(BadRequestError, match="Thinking may not be enabled when tool_choice forces tool use."):
        ask(p, tools=[ADD], tool_choice="required")
    assert body(sim)["tool_choice"] == {"type": "any"} and sim.used == 0
