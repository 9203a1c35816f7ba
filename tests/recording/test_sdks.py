"""The official SDKs (on httpx2) record through CassetteTransport and replay from the cassette,
chunk for chunk, with their own stream parsers reading the result."""

from __future__ import annotations

import asyncio
import json

import anthropic
import httpx2
import openai
import pytest

from loopkit.errors import NoMatchingInteraction
from loopkit.recording import Cassette, CassetteTransport, ReplayTransport, load_cassette_file

from ._servers import FakeClock

OPENAI_KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
ANTHROPIC_KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"


def _chunk(**delta_and_finish):
    finish = delta_and_finish.pop("finish", None)
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x", "choices": [{"index": 0, "delta": delta_and_finish, "finish_reason": finish}]}


OPENAI_STREAM = [
    _chunk(role="assistant", content=""),
    _chunk(tool_calls=[{"index": 0, "id": "call_1", "type": "function", "function": {"name": "add", "arguments": ""}}]),
    _chunk(tool_calls=[{"index": 0, "function": {"arguments": '{"a": '}}]),
    _chunk(tool_calls=[{"index": 0, "function": {"arguments": "2}"}}]),
    _chunk(finish="tool_calls"),
]
ANTHROPIC_STREAM = [
    ("message_start", {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "lo"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 2}}),
    ("message_stop", {"type": "message_stop"}),
]


class Body(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    def __init__(self, chunks):
        self.chunks = chunks

    def __iter__(self):
        yield from self.chunks

    async def __aiter__(self):
        for c in self.chunks:
            yield c


def openai_server(request):
    chunks = [b"data: " + json.dumps(e).encode() + b"\n\n" for e in OPENAI_STREAM] + [b"data: [DONE]\n\n"]
    return httpx2.Response(200, headers={"content-type": "text/event-stream", "x-request-id": "req_1"}, stream=Body(chunks))


def anthropic_server(request):
    chunks = [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in ANTHROPIC_STREAM]
    return httpx2.Response(200, headers={"content-type": "text/event-stream", "request-id": "req_1"}, stream=Body(chunks))


def openai_calls(transport):
    client = openai.OpenAI(api_key=OPENAI_KEY, base_url="https://api.openai.com/v1", http_client=httpx2.Client(transport=transport), max_retries=0)
    stream = client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "2+?"}], stream=True, tools=[{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}])
    return [c.model_dump() for c in stream]


def test_openai_sdk_records_and_replays(tmp_path):
    path = tmp_path / "openai.json"
    cassette = Cassette(path, record_mode="once")
    live = openai_calls(CassetteTransport(cassette, httpx2.MockTransport(openai_server), clock=FakeClock()))
    cassette.save()
    assert OPENAI_KEY not in path.read_text()
    assert len(load_cassette_file(path).interactions[0].response.chunks) == len(OPENAI_STREAM) + 1
    replayed = openai_calls(ReplayTransport(Cassette(path), httpx_module=httpx2))
    assert replayed == live
    args = "".join(c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] for c in live[1:4])
    assert json.loads(args) == {"a": 2}


def test_anthropic_sdk_records_and_replays_async(tmp_path):
    path = tmp_path / "anthropic.json"

    async def go(transport):
        client = anthropic.AsyncAnthropic(api_key=ANTHROPIC_KEY, base_url="https://api.anthropic.com", http_client=httpx2.AsyncClient(transport=transport), max_retries=0)
        async with client.messages.stream(model="claude-x", max_tokens=10, messages=[{"role": "user", "content": "hi"}]) as stream:
            events = [e.type async for e in stream]
            message = await stream.get_final_message()
        return events, message.model_dump()

    cassette = Cassette(path, record_mode="once")
    live = asyncio.run(go(CassetteTransport(cassette, httpx2.MockTransport(anthropic_server), clock=FakeClock())))
    cassette.save()
    text = path.read_text()
    assert ANTHROPIC_KEY not in text and "req_1" not in text
    replayed = asyncio.run(go(ReplayTransport(Cassette(path), httpx_module=httpx2)))
    assert replayed == live
    assert live[1]["content"][0]["text"] == "Hello"


def test_sdk_drift_fails_with_the_diff(tmp_path):
    path = tmp_path / "openai.json"
    cassette = Cassette(path, record_mode="once")
    openai_calls(CassetteTransport(cassette, httpx2.MockTransport(openai_server)))
    cassette.save()
    client = openai.OpenAI(api_key=OPENAI_KEY, base_url="https://api.openai.com/v1", http_client=httpx2.Client(transport=ReplayTransport(Cassette(path), httpx_module=httpx2)), max_retries=0)
    with pytest.raises(NoMatchingInteraction, match=r"first difference: body messages\[0\].content \(message 0\)"):
        client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "3+?"}], stream=True, tools=[{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}])
