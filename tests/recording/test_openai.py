"""OpenAI Chat and Responses through cassettes: loopkit's adapters and the official SDK against
the simulators, recorded then replayed offline."""

from __future__ import annotations

import httpx2
import openai
import pytest

import loopkit
from loopkit import simulators
from loopkit.providers import adapter_class
from loopkit.recording import Cassette, CassetteTransport, RecordingProvider, ReplayProvider, ReplayTransport, block_network, load_cassette_file
from loopkit.script import Turn, call

from ._servers import FakeClock

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
SCRIPT = [Turn(text="Adding.", tool_calls=[call("add", {"a": 2, "b": 3}, id="call_1")], chunk_size=3), Turn(text="5.")]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.mark.parametrize("protocol", ["openai_chat", "openai_responses"])
def test_adapter_records_and_replays(tmp_path, protocol):
    path = tmp_path / f"{protocol}.json"
    cassette = Cassette(path, record_mode="once")
    recording = CassetteTransport(cassette, simulators.transport(protocol, SCRIPT), clock=FakeClock())
    provider = adapter_class(protocol)(model="gpt-test", api_key=KEY, transport=recording)
    live = loopkit.run(RecordingProvider(provider, cassette), "2+3?", tools=[add], clock=loopkit.TickClock(start=1))
    cassette.save()
    assert live.messages[-1].text == "5."
    assert KEY not in path.read_text()
    stored = load_cassette_file(path).interactions
    assert [(i.request is not None, i.transcript is not None, len(i.response.chunks) > 1) for i in stored] == [(True, True, True)] * 2
    with block_network():
        replayed = loopkit.run(adapter_class(protocol)(model="gpt-test", api_key="other", transport=ReplayTransport(Cassette(path))), "2+3?", tools=[add], clock=loopkit.TickClock(start=1))
    assert replayed.messages == live.messages
    assert loopkit.run(ReplayProvider(Cassette(path)), "2+3?", tools=[add], clock=loopkit.TickClock(start=1)).messages == live.messages


def _client(transport):
    return openai.OpenAI(api_key=KEY, base_url="https://api.openai.com/v1", http_client=httpx2.Client(transport=transport), max_retries=0)


def test_sdk_chat_stream_records_and_replays(tmp_path):
    path = tmp_path / "chat.json"

    def ask(transport):
        with _client(transport).chat.completions.stream(model="gpt-x", messages=[{"role": "user", "content": "hi"}]) as stream:
            deltas = [e.delta for e in stream if e.type == "content.delta"]
            return deltas, stream.get_final_completion().model_dump()

    cassette = Cassette(path, record_mode="once")
    live = ask(CassetteTransport(cassette, simulators.transport("openai_chat", [Turn(text="Hello from the simulator", chunk_size=4)]), httpx_module=httpx2))
    cassette.save()
    assert "".join(live[0]) == "Hello from the simulator" and len(live[0]) > 1
    with block_network():
        assert ask(ReplayTransport(Cassette(path), httpx_module=httpx2)) == live


def test_sdk_responses_stream_records_and_replays(tmp_path):
    path = tmp_path / "responses.json"

    def ask(transport):
        with _client(transport).responses.stream(model="gpt-x", input="Weather?") as stream:
            kinds = [e.type for e in stream]
            return kinds, stream.get_final_response().model_dump()

    cassette = Cassette(path, record_mode="once")
    live = ask(CassetteTransport(cassette, simulators.transport("openai_responses", [Turn(text="Sunny, 21°C.", chunk_size=3)]), httpx_module=httpx2))
    cassette.save()
    assert live[0][0] == "response.created" and live[0][-1] == "response.completed"
    with block_network():
        assert ask(ReplayTransport(Cassette(path), httpx_module=httpx2)) == live
