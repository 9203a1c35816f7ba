"""Gemini through cassettes: loopkit's adapter and google-genai against the simulator."""

from __future__ import annotations

import httpx2
import pytest

import loopkit
from loopkit import simulators
from loopkit.providers.gemini import GeminiProvider
from loopkit.recording import Cassette, CassetteTransport, RecordingProvider, ReplayTransport, block_network, load_cassette_file
from loopkit.script import Turn, call

from ._servers import FakeClock

genai = pytest.importorskip("google.genai")
from google.genai import types  # noqa: E402

MODEL = "gemini-2.5-flash"
KEY = "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def gemini(transport) -> GeminiProvider:
    return GeminiProvider(model=MODEL, api_key=KEY, base_url="https://generativelanguage.googleapis.com", transport=transport)


def test_adapter_records_and_replays(tmp_path):
    path = tmp_path / "g.json"
    script = [Turn(text="Adding.", tool_calls=[call("add", {"a": 2, "b": 3})]), Turn(text="5.")]
    cassette = Cassette(path, record_mode="once")
    live = loopkit.run(RecordingProvider(gemini(CassetteTransport(cassette, simulators.transport("gemini", script), clock=FakeClock())), cassette), "2+3?", tools=[add], clock=loopkit.TickClock(start=1))
    cassette.save()
    assert KEY not in path.read_text()
    chunks = load_cassette_file(path).interactions[0].response.chunks
    assert len(chunks) > 1 and all(c.text.endswith("\r\n\r\n") for c in chunks)  # Gemini's framing, kept
    with block_network():
        replayed = loopkit.run(gemini(ReplayTransport(Cassette(path))), "2+3?", tools=[add], clock=loopkit.TickClock(start=1))
    assert replayed.messages == live.messages


def test_google_genai_sdk_records_and_replays(tmp_path):
    path = tmp_path / "sdk.json"

    def ask(transport):
        client = genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url="https://generativelanguage.googleapis.com", httpx_client=httpx2.Client(transport=transport)))
        return [c.text for c in client.models.generate_content_stream(model=MODEL, contents="capital of France?")]

    cassette = Cassette(path, record_mode="once")
    live = ask(CassetteTransport(cassette, simulators.transport("gemini", [Turn(text="The capital of France is Paris.", chunk_size=7)]), httpx_module=httpx2))
    cassette.save()
    assert KEY not in path.read_text()
    assert "".join(live) == "The capital of France is Paris."
    with block_network():
        assert ask(ReplayTransport(Cassette(path), httpx_module=httpx2)) == live
