"""OpenAIResponsesProvider against its simulator (in process), the shared fixtures, and re-chunking."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopkit import simulators
from loopkit.accumulate import accumulate
from loopkit.errors import BadRequestError, ConnectionClosedError, RateLimitError, ServerError, StreamError
from loopkit.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, ToolResultMessage, Usage, user
from loopkit.provider import AbortSignal, ModelRequest, ToolSpec
from loopkit.providers.openai_responses import OpenAIResponsesProvider, ResponsesStreamDecoder, build_body, decode_response
from loopkit.retry import RetryPolicy
from loopkit.script import Delay, HttpFault, MidStreamError, Truncate, Turn, call

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openai_responses"
ADD = ToolSpec(name="add", description="Add", parameters={"type": "object", "properties": {"a": {"type": "integer"}}})
META = {"api": "openai_responses", "provider": "openai", "model": "gpt-test"}


def make(script, *, stream=True):
    sim = simulators.create("openai_responses", script)
    waits: list[float] = []
    provider = OpenAIResponsesProvider(
        model="gpt-test", api_key="sk-test", transport=simulators.transport(sim, sleep=waits.append), stream=stream, retry=RetryPolicy(sleep=waits.append)
    )
    return sim, provider, waits


def run(provider, request) -> AssistantMessage:
    return accumulate(provider.stream(request))


def ask(**kw) -> ModelRequest:
    return ModelRequest([user("What is 2+3?")], **kw)


def sent(sim, n: int = 0) -> dict:
    return json.loads(sim.requests[n].body)


def test_text_answer_and_request_body():
    sim, p, _ = make([Turn(text="Five ✓.", usage=Usage(input=7, output=4, total_tokens=11))])
    msg = run(p, ModelRequest([user("hi")], system="Be brief."))
    assert msg == AssistantMessage(content=[TextContent(text="Five ✓.")], usage=Usage(input=7, output=4, total_tokens=11), response_id="resp_sim0001", **META)
    assert sent(sim) == {"model": "gpt-test", "input": [{"role": "user", "content": "hi"}], "instructions": "Be brief.", "stream": True}


def test_one_tool_call_keeps_call_id_and_item_id():
    sim, p, _ = make([Turn(tool_calls=[call("add", {"a": 2}, id="call_abc")])])
    msg = run(p, ask(tools=[ADD]))
    assert msg.content == [ToolCall(id="call_abc", name="add", arguments={"a": 2}, thought_signature="fc_sim0002")]
    assert msg.stop_reason == "toolUse"
    assert sent(sim)["tools"] == [{"type": "function", "name": "add", "description": "Add", "parameters": dict(ADD.parameters), "strict": False}]


def test_parallel_calls_after_text():
    calls = [call("add", {"a": i}, id=f"call_{i}") for i in range(3)]
    _, p, _ = make([Turn(text="Adding.", tool_calls=calls)])
    msg = run(p, ask(tools=[ADD]))
    assert msg.text == "Adding." and [(c.id, c.arguments) for c in msg.tool_calls] == [(f"call_{i}", {"a": i}) for i in range(3)]


@pytest.mark.parametrize(("raw", "arguments", "raw_kept"), [('{"a": 1', None, '{"a": 1'), ("[1]", [1], None), ("", {}, None)])
@pytest.mark.parametrize("stream", [True, False])
def test_malformed_arguments_stay_raw(raw, arguments, raw_kept, stream):
    _, p, _ = make([Turn(tool_calls=[call("add", raw)], chunk_size=2)], stream=stream)
    (tc,) = run(p, ask(tools=[ADD])).tool_calls
    assert (tc.arguments, tc.raw_arguments) == (arguments, raw_kept)


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (None, None),
        ("auto", "auto"),
        ("required", "required"),
        ("none", "none"),
        ({"type": "function", "name": "add"}, {"type": "function", "name": "add"}),
        ({"type": "function", "function": {"name": "add"}}, {"type": "function", "name": "add"}),
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
    sim, p, _ = make(["ok"])
    run(p, ask(tool_choice="required", parallel_tool_calls=False))
    assert set(sent(sim)) == {"model", "input", "stream"}


def test_is_error_round_trip_with_reasoning_item_passed_back():
    sim, p, _ = make([Turn(thinking="add them", thinking_signature="gAAAA-enc", tool_calls=[call("add", {"a": 1}, id="call_x")]), "Sorry."])
    first = run(p, ask(tools=[ADD]))
    assert first.content[0] == ThinkingContent(
        thinking="add them", thinking_signature='{"type":"reasoning","id":"rs_sim0002","summary":[{"type":"summary_text","text":"add them"}],"encrypted_content":"gAAAA-enc"}'
    )
    result = ToolResultMessage(tool_call_id="call_x", tool_name="add", content=[TextContent(text="ValueError: nope")], is_error=True)
    assert run(p, ModelRequest([user("What is 2+3?"), first, result], tools=[ADD])).text == "Sorry."
    assert sent(sim, 1)["input"] == [
        {"role": "user", "content": "What is 2+3?"},
        {"type": "reasoning", "id": "rs_sim0002", "summary": [{"type": "summary_text", "text": "add them"}], "encrypted_content": "gAAAA-enc"},
        {"type": "function_call", "call_id": "call_x", "name": "add", "arguments": '{"a":1}', "id": "fc_sim0003"},
        {"type": "function_call_output", "call_id": "call_x", "output": "ValueError: nope"},
    ]


def test_thinking_from_other_providers_and_failed_messages_are_not_sent():
    foreign = AssistantMessage(content=[ThinkingContent(thinking="t", thinking_signature="anthropic-sig"), TextContent(text="a")])
    failed = AssistantMessage(content=[ToolCall(id="c", name="add")], stop_reason="aborted")
    orphan = ToolResultMessage(tool_call_id="c", tool_name="add", content=[TextContent(text="r")])
    items = build_body(ModelRequest([user("q"), foreign, failed, orphan]), model="m")["input"]
    assert items == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]


@pytest.mark.parametrize(("turn", "reason"), [(Turn(text="a"), "stop"), (Turn(text="a", stop_reason="length"), "length"), (Turn(tool_calls=[call("add")]), "toolUse")])
@pytest.mark.parametrize("stream", [True, False])
def test_stop_reasons(turn, reason, stream):
    _, p, _ = make([turn], stream=stream)
    assert run(p, ask(tools=[ADD])).stop_reason == reason


def test_aborted_stop_reason():
    signal = AbortSignal()
    signal.abort()
    _, p, _ = make(["cut"])
    assert run(p, ModelRequest([user("x")], abort_signal=signal)).stop_reason == "aborted"


def test_usage_with_cache():
    _, p, _ = make([Turn(text="a", usage=Usage(input=10, output=5, cache_read=30, total_tokens=45))])
    assert run(p, ask()).usage == Usage(input=10, output=5, cache_read=30, total_tokens=45)


def test_streaming_and_non_streaming_give_the_same_message():
    turn = Turn(thinking="hmm", text="Two:", tool_calls=[call("add", {"a": 1}, id="c1"), call("add", "{bad", id="c2")], usage=Usage(input=3, output=2, total_tokens=5))
    _, ps, _ = make([turn])
    _, pb, _ = make([turn], stream=False)
    assert run(ps, ask(tools=[ADD])) == run(pb, ask(tools=[ADD]))


def test_async_stream():
    _, p, _ = make([Turn(text="async")])

    async def go():
        return accumulate([e async for e in p.astream(ask())])

    assert asyncio.run(go()).text == "async"


# --- faults ---------------------------------------------------------------------------------


def test_retries_honour_retry_after_then_succeed():
    sim, p, waits = make([Turn(faults=[HttpFault(status=429, retry_after=0.25)]), Turn(faults=[HttpFault(status=502)]), "done"])
    assert run(p, ask()).text == "done"
    assert waits == [0.25, 1.0] and p.attempts == [3]
    sim.assert_complete()


def test_retries_spent():
    _, p, waits = make([Turn(faults=[HttpFault(status=500)])] * 3)
    with pytest.raises(ServerError) as info:
        run(p, ask())
    assert (info.value.status, info.value.error_type) == (500, "server_error") and waits == [0.5, 1.0]


def test_insufficient_quota_429():
    _, p, _ = make([Turn(faults=[HttpFault(status=429, error_type="insufficient_quota", message="You exceeded your current quota", headers={"x-should-retry": "false"})])])
    with pytest.raises(RateLimitError) as info:
        run(p, ask())
    assert (info.value.error_type, info.value.retryable) == ("insufficient_quota", False)


def test_400_not_retried():
    _, p, waits = make([Turn(faults=[HttpFault(status=400, message="Invalid 'temperature'")])])
    with pytest.raises(BadRequestError, match="temperature"):
        run(p, ask())
    assert waits == []


def test_mid_stream_error_event_raises_stream_error():
    _, p, _ = make([Turn(text="partial text here", faults=[MidStreamError(after=5, message="You exceeded your current quota", error_type="insufficient_quota")])])
    with pytest.raises(StreamError) as info:
        run(p, ask())
    assert (info.value.message, info.value.error_type) == ("You exceeded your current quota", "insufficient_quota")


def test_response_failed_raises_stream_error():
    _, p, _ = make([Turn(text="ab", error="The model crashed")])
    with pytest.raises(StreamError) as info:
        run(p, ask())
    assert (info.value.message, info.value.error_type) == ("The model crashed", "server_error")


def test_flat_error_event():
    body = b'event: response.created\ndata: {"type":"response.created","response":{"id":"r"}}\n\nevent: error\ndata: {"type":"error","code":"rate_limit_exceeded","message":"slow down","param":null,"sequence_number":1}\n\n'
    with pytest.raises(StreamError) as info:
        ResponsesStreamDecoder().feed(body)
    assert (info.value.message, info.value.error_type) == ("slow down", "rate_limit_exceeded")


def test_truncation():
    _, p, waits = make([Turn(text="x", faults=[Truncate(after=0)]), Turn(text="abcdefghijkl", faults=[Truncate(after=4)])])
    with pytest.raises(ConnectionClosedError):
        run(p, ask())
    assert waits == [0.5]


def test_stream_without_completed_is_a_truncation():
    decoder = ResponsesStreamDecoder()
    decoder.feed(b'event: response.created\ndata: {"type":"response.created","response":{"id":"r"}}\n\n')
    with pytest.raises(ConnectionClosedError, match="response.completed"):
        decoder.close()


def test_delay():
    _, p, waits = make([Turn(text="slow", faults=[Delay(seconds=2.0, after=3)])])
    assert run(p, ask()).text == "slow" and waits == [2.0]


# --- hand-written wire cases ----------------------------------------------------------------


def _events(*payloads: dict) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def _decode(body: bytes, splits: list[int] | None = None) -> AssistantMessage:
    decoder = ResponsesStreamDecoder()
    events, last = [], 0
    for cut in sorted(splits or []):
        events += decoder.feed(body[last:cut])
        last = cut
    events += decoder.feed(body[last:]) + decoder.close()
    return accumulate(events)


def test_refusal_part_ends_with_error():
    body = _events(
        {"type": "response.created", "response": {"id": "r", "model": "m"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {"id": "msg_1", "type": "message", "content": []}},
        {"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0, "content_index": 0, "part": {"type": "refusal", "refusal": ""}},
        {"type": "response.refusal.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "I can't help with that."},
        {"type": "response.refusal.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "refusal": "I can't help with that."},
        {"type": "response.content_part.done", "item_id": "msg_1", "output_index": 0, "content_index": 0},
        {"type": "response.output_item.done", "output_index": 0, "item": {"id": "msg_1", "type": "message"}},
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    )
    msg = _decode(body)
    assert (msg.stop_reason, msg.error_type, msg.error_message, msg.text) == ("error", "refusal", "I can't help with that.", "I can't help with that.")


def test_content_filter_incomplete_is_error():
    body = _events({"type": "response.created", "response": {"id": "r"}}, {"type": "response.incomplete", "response": {"id": "r", "status": "incomplete", "incomplete_details": {"reason": "content_filter"}}})
    assert (_decode(body).stop_reason, _decode(body).error_type) == ("error", "content_filter")


def test_items_never_closed_keep_what_streamed():
    # a translating proxy that sends no item-level .done event (docs/wire.md §2.7 #5): encrypted
    # reasoning without text must start before the text block after it (it started at the end, out of order)
    body = _events(
        {"type": "response.created", "response": {"id": "r", "model": "m"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "gAAAA-x"}},
        {"type": "response.output_item.added", "output_index": 1, "item": {"id": "msg_1", "type": "message", "content": []}},
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "Sunny."},
        {"type": "response.output_item.added", "output_index": 2, "item": {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f", "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 2, "delta": '{"a": 1}'},
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    )
    msg = _decode(body)
    thinking, text, fc = msg.content
    assert (thinking.thinking, thinking.redacted, json.loads(thinking.thinking_signature)["encrypted_content"]) == ("", True, "gAAAA-x")
    assert text == TextContent(text="Sunny.")
    assert fc == ToolCall(id="call_1", name="f", arguments={"a": 1}, thought_signature="fc_1") and msg.stop_reason == "toolUse"


def test_unknown_events_are_ignored():
    body = _events(
        {"type": "response.created", "response": {"id": "r"}},
        {"type": "response.queued", "response": {"id": "r"}},
        {"type": "keepalive"},
        {"type": "response.output_item.added", "output_index": 0, "item": {"id": "ws_1", "type": "web_search_call"}},
        {"type": "response.output_item.done", "output_index": 0, "item": {"id": "ws_1", "type": "web_search_call"}},
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    )
    assert _decode(body).content == []


# --- fixtures -------------------------------------------------------------------------------


def test_fixture_stream_reasoning_then_function_call():
    msg = _decode((FIXTURES / "stream_function_call_seq.sse").read_bytes())
    thinking, fc = msg.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == ""
    sig = json.loads(thinking.thinking_signature)
    assert sig["id"].startswith("rs_0050471a") and sig["encrypted_content"].startswith("gAAAAABoyXvxI6jwG5j6")  # from output_item.done, not .added
    assert fc == ToolCall(id="call_CWXgs68YprAjp6t0371hiPOI", name="final_result", arguments={"result": 6666}, thought_signature=fc.thought_signature)
    assert fc.thought_signature.startswith("fc_")
    assert (msg.stop_reason, msg.usage, msg.model) == ("toolUse", Usage(input=53, output=469, total_tokens=522), "gpt-5-2025-08-07")
    # the reasoning item goes back unchanged, before its function call
    items = build_body(ModelRequest([user("q"), msg]), model="m")["input"]
    assert [i.get("type") for i in items[1:]] == ["reasoning", "function_call"]
    assert items[1]["encrypted_content"] == sig["encrypted_content"] and items[2]["id"] == fc.thought_signature


def test_fixture_exchange_round_trip_2025_03():
    """A March-2025 stream (no sequence_number) and the recorded follow-up request's shape."""
    exchange = json.loads((FIXTURES / "exchange_function_call_roundtrip.json").read_text())
    first = _decode(exchange[0]["response"]["body"].encode())
    (tc,) = first.tool_calls
    assert (tc.id, tc.name, tc.arguments) == ("call_kL0PCQV7M2WMoVX8V8OtYSAL", "get_capital", {"country": "France"})
    result = ToolResultMessage(tool_call_id=tc.id, tool_name=tc.name, content=[TextContent(text="Paris")])
    items = build_body(ModelRequest([user("What is the capital of France?"), first, result]), model="gpt-4o")["input"]
    recorded = exchange[1]["request"]["body"]["input"]
    strip = lambda i: {k: v for k, v in i.items() if k not in ("call_id", "id")}  # noqa: E731  (the recorder put fc ids in call_id)
    assert [strip(i) for i in items] == [strip(i) for i in recorded]
    second = _decode(exchange[1]["response"]["body"].encode())
    assert second.stop_reason == "stop" and "Paris" in second.text


def test_fixture_nonstream_text():
    msg = accumulate(decode_response(json.loads((FIXTURES / "nonstream_text.json").read_text())))
    assert msg.text.startswith("I can't provide real-time updates") and msg.stop_reason == "stop"
    assert msg.usage == Usage(input=14, output=50, total_tokens=64) and msg.response_id == "resp_689a0b2545288193953c892439b42e2800b2e36c65a1fd4b"


def test_fixture_error_400_through_the_simulator():
    """The spec's recorded 400 body (docs/wire.md §2.5; the file itself was not shipped)."""
    recorded = {
        "error": {"code": "decimal_below_min_value", "message": "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1 instead.", "param": "temperature", "type": "invalid_request_error"}
    }
    _, p, _ = make([Turn(faults=[HttpFault(status=400, body=recorded)])])
    with pytest.raises(BadRequestError) as info:
        run(p, ask())
    assert info.value.error_type == "invalid_request_error" and "temperature" in info.value.message


# --- chunking independence ------------------------------------------------------------------


def _sim_bytes(turn: Turn) -> bytes:
    sim = simulators.create("openai_responses", [turn])
    req = simulators.SimRequest(method="POST", path="/v1/responses", body=json.dumps(build_body(ask(tools=[ADD]), model="m")).encode())
    return sim.handle(req).body


BODIES = [
    (FIXTURES / "stream_function_call_seq.sse").read_bytes(),
    _sim_bytes(Turn(thinking="pensée ✓", text="héllo ✓ " * 3, tool_calls=[call("add", {"a": "é"}), call("add", '{"x": ')], chunk_size=3)),
    _sim_bytes(Turn(text="crlf")).replace(b"\n", b"\r\n"),
]


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(range(len(BODIES))), st.data())
def test_any_rechunking_gives_the_same_message(which, data):
    body = BODIES[which]
    splits = data.draw(st.lists(st.integers(min_value=1, max_value=len(body) - 1), max_size=40))
    assert _decode(body, splits) == _decode(body)


def test_text_sent_only_in_done_events_is_kept():
    """A server that skips output_text.delta still delivers the text in output_text.done."""
    at = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    body = _events(
        {"type": "response.created", "response": {"id": "r"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {"id": "msg_1", "type": "message", "content": []}},
        {"type": "response.output_text.done", **at, "text": "whole text"},
        {"type": "response.content_part.done", **at},
        {"type": "response.output_item.done", "output_index": 0, "item": {"id": "msg_1", "type": "message"}},
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    )
    assert _decode(body).content == [TextContent(text="whole text")]


@pytest.mark.parametrize("which", range(len(BODIES)))
def test_one_byte_at_a_time_gives_the_same_message(which):
    """Every split point at once: inside UTF-8 sequences, CRLF pairs, field names and JSON."""
    body = BODIES[which]
    assert _decode(body, list(range(1, len(body)))) == _decode(body)
