"""Anthropic through cassettes: loopkit's adapter and the official SDK against the simulator."""

from __future__ import annotations

import anthropic
import httpx2

import loopkit
from loopkit import simulators
from loopkit.providers.anthropic import AnthropicProvider
from loopkit.recording import Cassette, CassetteTransport, RecordingProvider, ReplayTransport, block_network, load_cassette_file
from loopkit.script import Turn, call

from ._servers import FakeClock

KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
SCRIPT = [Turn(text="Adding.", tool_calls=[call("add", {"a": 2, "b": 3}, id="toolu_01")], chunk_size=3), Turn(text="5.")]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def provider(transport):
    return AnthropicProvider(model="claude-test", api_key=KEY, base_url="https://api.anthropic.com", transport=transport)


def test_adapter_records_and_replays(tmp_path):
    path = tmp_path / "a.json"
    cassette = Cassette(path, record_mode="once")
    recording = CassetteTransport(cassette, simulators.transport("anthropic", SCRIPT), clock=FakeClock())
    live = loopkit.run(RecordingProvider(provider(recording), cassette), "2+3?", tools=[add], clock=loopkit.TickClock(start=1))
    cassette.save()
    assert live.messages[-1].text == "5."
    text = path.read_text()
    assert KEY not in text
    first = load_cassette_file(path).interactions[0]
    assert first.transcript is not None and first.response.chunks[0].text.startswith("event: message_start")
    with block_network():
        replayed = loopkit.run(provider(ReplayTransport(Cassette(path))), "2+3?", tools=[add], clock=loopkit.TickClock(start=1))
    assert replayed.messages == live.messages


def test_sdk_records_against_the_simulator_and_replays(tmp_path):
    path = tmp_path / "sdk.json"

    def ask(transport):
        client = anthropic.Anthropic(api_key=KEY, base_url="https://api.anthropic.com", http_client=httpx2.Client(transport=transport), max_retries=0)
        with client.messages.stream(model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "hi"}]) as stream:
            deltas = list(stream.text_stream)
            return deltas, stream.get_final_message().model_dump()

    cassette = Cassette(path, record_mode="once")
    live = ask(CassetteTransport(cassette, simulators.transport("anthropic", [Turn(text="Hello from the simulator", chunk_size=5)]), httpx_module=httpx2))
    cassette.save()
    assert KEY not in path.read_text()
    assert "".join(live[0]) == "Hello from the simulator" and len(live[0]) > 1
    with block_network():
        assert ask(ReplayTransport(Cassette(path), httpx_module=httpx2)) == live


def test_a_retried_overload_replays_with_the_same_waits(tmp_path):
    """429/529 answers are recorded like any other; replay serves the identical retried requests
    in recorded order, and the kept retry-after / x-should-retry headers drive the same waits."""
    from loopkit.retry import RetryPolicy
    from loopkit.script import HttpFault

    script = [Turn(faults=[HttpFault(status=529, retry_after=1.5)]), Turn(faults=[HttpFault(status=429, retry_after=0.25)]), Turn(text="ok")]

    def run(transport, sleeps):
        p = AnthropicProvider(model="claude-test", api_key=KEY, base_url="https://api.anthropic.com", transport=transport, retry=RetryPolicy(max_retries=3, sleep=sleeps.append))
        return loopkit.run(p, "hi", clock=loopkit.TickClock(start=1))

    path = tmp_path / "retry.json"
    cassette = Cassette(path, record_mode="once")
    live_sleeps: list[float] = []
    live = run(CassetteTransport(cassette, simulators.transport("anthropic", script)), live_sleeps)
    cassette.save()
    stored = load_cassette_file(path).interactions
    assert [i.response.status for i in stored] == [529, 429, 200]
    assert [(dict(i.response.headers).get("retry-after"), dict(i.response.headers).get("x-should-retry")) for i in stored[:2]] == [("1.5", "true"), ("0.25", "true")]
    replay_sleeps: list[float] = []
    replayed = run(ReplayTransport(Cassette(path)), replay_sleeps)
    assert replayed.messages == live.messages and replayed.messages[-1].text == "ok"
    assert replay_sleeps == live_sleeps == [1.5, 0.25]
