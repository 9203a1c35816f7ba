"""The official ``anthropic`` SDK against AnthropicSimulator served on 127.0.0.1.

The SDK parses the simulator's streams with its own helpers and raises its own exception classes
for the simulator's error answers, so the simulator speaks the protocol the SDK expects.
"""

from __future__ import annotations

import pytest

from loopkit import simulators
from loopkit.script import HttpFault, MidStreamError, Turn, call

anthropic = pytest.importorskip("anthropic")

TOOLS = [{"name": "get_weather", "description": "Weather", "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}}}]


def client(served, **kw):
    return anthropic.Anthropic(base_url=served.base_url, api_key="test-key", max_retries=kw.pop("max_retries", 0), **kw)


def test_streamed_text_with_the_stream_helper():
    with simulators.serve("anthropic", [Turn(text="Hello from the simulator, ünïcode ✓")], chunk_size=5) as served:
        with client(served).messages.stream(model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "hi"}]) as stream:
            pieces = list(stream.text_stream)
            final = stream.get_final_message()
        served.assert_complete()
    assert "".join(pieces) == "Hello from the simulator, ünïcode ✓" and len(pieces) > 1
    assert final.content[0].type == "text" and final.content[0].text == "Hello from the simulator, ünïcode ✓"
    assert final.stop_reason == "end_turn" and final.usage.output_tokens > 0
    req = served.requests[0]
    assert req.json["stream"] is True and req.headers.get("anthropic-version")


def test_streamed_tool_call_with_the_stream_helper():
    turn = Turn(text="Checking.", tool_calls=[call("get_weather", {"location": "Paris, FR"}, id="toolu_P"), call("get_weather", {"location": "Oslo"})], chunk_size=3)
    with simulators.serve("anthropic", [turn]) as served:
        with client(served).messages.stream(model="claude-test", max_tokens=100, tools=TOOLS, messages=[{"role": "user", "content": "weather?"}]) as stream:
            final = stream.get_final_message()
    assert final.stop_reason == "tool_use"
    assert [b.type for b in final.content] == ["text", "tool_use", "tool_use"]
    assert final.content[1].id == "toolu_P" and final.content[1].input == {"location": "Paris, FR"}
    assert final.content[2].input == {"location": "Oslo"}


def test_thinking_signature_with_the_stream_helper():
    with simulators.serve("anthropic", [Turn(thinking="step by step", thinking_signature="SIG==", text="42")]) as served:
        with client(served).messages.stream(model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "q"}]) as stream:
            final = stream.get_final_message()
    assert final.content[0].type == "thinking" and final.content[0].thinking == "step by step" and final.content[0].signature == "SIG=="


def test_non_streamed_create():
    with simulators.serve("anthropic", [Turn(tool_calls=[call("get_weather", {"location": "SF"})])]) as served:
        msg = client(served).messages.create(model="claude-test", max_tokens=100, tools=TOOLS, messages=[{"role": "user", "content": "x"}])
    assert msg.stop_reason == "tool_use" and msg.content[0].input == {"location": "SF"}


@pytest.mark.parametrize(
    ("status", "exc_name", "etype"),
    [
        (400, "BadRequestError", "invalid_request_error"),
        (429, "RateLimitError", "rate_limit_error"),
        (500, "InternalServerError", "api_error"),
        (529, "OverloadedError", "overloaded_error"),
    ],
)
def test_http_errors_raise_the_sdk_classes(status, exc_name, etype):
    with simulators.serve("anthropic", [Turn(faults=[HttpFault(status=status)])]) as served:
        with pytest.raises(getattr(anthropic, exc_name)) as info:
            client(served).messages.create(model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "x"}])
    assert info.value.status_code == status
    assert info.value.body["error"]["type"] == etype


def test_orphan_tool_result_raises_bad_request():
    msgs = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01GH", "content": "x"}]}]
    with simulators.serve("anthropic", ["unused"]) as served:
        with pytest.raises(anthropic.BadRequestError, match="unexpected `tool_use_id`"):
            client(served).messages.create(model="claude-test", max_tokens=10, messages=msgs)


def test_sdk_retries_a_429_with_retry_after():
    with simulators.serve("anthropic", [Turn(faults=[HttpFault(status=429, retry_after=0.01)]), "after retry"]) as served:
        msg = client(served, max_retries=2).messages.create(model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "x"}])
        served.assert_complete()
    assert msg.content[0].text == "after retry"
    assert [r.headers.get("x-stainless-retry-count") for r in served.requests] == ["0", "1"]


def test_mid_stream_error_raises_api_status_error():
    turn = Turn(text="partial answer", faults=[MidStreamError(after=3, message="Overloaded", error_type="overloaded_error")])
    with simulators.serve("anthropic", [turn]) as served:
        with pytest.raises(anthropic.APIStatusError) as info:
            with client(served).messages.stream(model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "x"}]) as stream:
                stream.get_final_message()
    assert info.value.type == "overloaded_error"


def test_async_client_stream_and_tool_result_round_trip():
    """AsyncAnthropic streams a tool call, then sends the result back with is_error; the
    simulator (which checks tool_use / tool_result pairing) accepts it."""
    import asyncio

    script = [Turn(tool_calls=[call("get_weather", {"location": "SF"}, id="toolu_S")]), Turn(text="Sorry, the lookup failed.")]

    async def run(served):
        client = anthropic.AsyncAnthropic(base_url=served.base_url, api_key="test-key", max_retries=0)
        messages = [{"role": "user", "content": "weather?"}]
        async with client.messages.stream(model="claude-test", max_tokens=100, tools=TOOLS, messages=messages) as stream:
            first = await stream.get_final_message()
        messages += [
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_S", "content": "RuntimeError('boom')", "is_error": True}]},
        ]
        second = await client.messages.create(model="claude-test", max_tokens=100, tools=TOOLS, messages=messages)
        await client.close()
        return first, second

    with simulators.serve("anthropic", script) as served:
        first, second = asyncio.run(run(served))
        served.assert_complete()
    assert first.content[0].input == {"location": "SF"} and second.content[0].text == "Sorry, the lookup failed."
    sent = served.requests[1].json["messages"][2]["content"][0]
    assert sent == {"type": "tool_result", "tool_use_id": "toolu_S", "content": "RuntimeError('boom')", "is_error": True}
