"""``loopkit.providers.decode``: one recorded response body -> the assistant message it encodes."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from loopkit import simulators
from loopkit.accumulate import accumulate
from loopkit.errors import ConnectionClosedError, UsageError, WireError
from loopkit.messages import ToolCall, user
from loopkit.provider import ModelRequest
from loopkit.providers import ADAPTERS, adapter_class, decode
from loopkit.script import Turn, call

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TURN = Turn(text="Checking Zürich 🏔️ and Oslo.", tool_calls=(call("get_weather", {"city": "Zürich"}), call("get_weather", {"city": "Oslo"})), stop_reason="length")


def recorded(protocol: str, *, stream: bool) -> tuple[bytes, object]:
    """The body a simulator answered with, and the message the adapter built from it live."""
    sim = simulators.create(protocol, [TURN])
    bodies: list[bytes] = []
    handle = sim.handle

    def keep(request):
        resp = handle(request)
        bodies.append(resp.body)
        return resp

    sim.handle = keep
    adapter = adapter_class(protocol)(model="sim-model", api_key="k", transport=simulators.transport(sim), stream=stream)
    message = accumulate(adapter.stream(ModelRequest([user("Weather?")])))
    return bodies[0], message


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "single-body"])
@pytest.mark.parametrize("protocol", list(ADAPTERS))
def test_decode_gives_the_message_the_adapter_builds_live(protocol: str, stream: bool) -> None:
    body, live = recorded(protocol, stream=stream)
    for streaming in (None, stream):  # detected from the body, and said explicitly
        m = decode(protocol, body, streaming=streaming)
        assert m.content == live.content and m.stop_reason == live.stop_reason == "length"
        assert m.usage == live.usage
    calls = [b for b in m.content if isinstance(b, ToolCall)]
    assert [(c.name, c.arguments, c.raw_arguments) for c in calls][0] == ("get_weather", {"city": "Zürich"}, None)


@pytest.mark.parametrize(
    ("protocol", "path", "stop", "kinds"),
    [
        ("openai_chat", "openai_chat/stream_tool_call_single.sse", "toolUse", ["toolCall"]),
        ("openai_chat", "openai_chat/nonstream_text.json", "stop", ["text"]),
        ("openai_responses", "openai_responses/stream_function_call_seq.sse", "toolUse", ["thinking", "toolCall"]),
        ("gemini", "gemini/stream_text.sse", "stop", ["text"]),
        ("gemini", "gemini/nonstream_function_call.json", "toolUse", ["toolCall"]),
    ],
)
def test_decode_real_recordings(protocol: str, path: str, stop: str, kinds: list[str]) -> None:
    m = decode(protocol, (FIXTURES / path).read_bytes())
    assert m.stop_reason == stop and [b.type for b in m.content] == kinds


def test_decode_a_real_bedrock_event_stream_and_anthropic_sse() -> None:
    m = decode("bedrock", base64.b64decode((FIXTURES / "bedrock/converse_stream_tool_use.bin.b64").read_bytes()))
    assert m.stop_reason == "toolUse" and [b.type for b in m.content] == ["text", "toolCall"]
    assert m.content[1].arguments == {"city": "Paris"} and m.usage.input == 471
    # the SDK's hand-kept fixture lacks the blank line after message_stop (PROVENANCE.md)
    m = decode("anthropic", (FIXTURES / "anthropic/stream_text_then_tool_use.sse").read_text() + "\n\n")
    assert m.stop_reason == "toolUse" and [b.type for b in m.content] == ["text", "toolCall"]


def test_decode_errors_say_what_is_wrong() -> None:
    with pytest.raises(UsageError, match="decode: unknown protocol 'anthropc'"):
        decode("anthropc", b"")
    with pytest.raises(WireError, match="not JSON"):
        decode("anthropic", b"event: message_start", streaming=False)
    body, _ = recorded("anthropic", stream=True)
    with pytest.raises(ConnectionClosedError, match="before message_stop"):
        decode("anthropic", body[: len(body) // 2])
    with pytest.raises(WireError, match="the body is empty"):
        decode("openai_chat", b"")
