"""Bedrock through cassettes: event-stream frames stored readable, replayed byte for byte; the
loopkit adapter and boto3 (through vcrpy) record against the simulator and replay offline."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

import boto3
import httpx
import pytest
from botocore.config import Config

import loopkit
from loopkit import simulators
from loopkit.fakes import ScriptedProvider
from loopkit.providers.bedrock import BedrockProvider
from loopkit.recording import (
    Cassette,
    CassetteTransport,
    RecordingProvider,
    RecordingTransport,
    ReplayProvider,
    ReplayTransport,
    block_network,
    load_cassette_file,
)
from loopkit.recording._vcr import make_vcr
from loopkit.script import Turn, call

from ._servers import Chunked, FakeClock

FIXTURES = Path(__file__).parent.parent / "fixtures" / "bedrock"
RECORDED = base64.b64decode((FIXTURES / "converse_stream_tool_use.bin.b64").read_text())
MODEL = "us.amazon.nova-micro-v1:0"
ES = "application/vnd.amazon.eventstream"


def test_recorded_service_stream_is_stored_as_frames_and_replayed_byte_for_byte(tmp_path):
    """The real 5,150-byte ConverseStream body, cut at random places, comes back identical."""
    rng = random.Random(7)
    cuts = sorted(rng.sample(range(1, len(RECORDED)), 25))
    chunks = [RECORDED[a:b] for a, b in zip([0] + cuts, cuts + [len(RECORDED)])]
    path = tmp_path / "b.json"
    cassette = Cassette(path, record_mode="once")
    server = httpx.MockTransport(lambda r: httpx.Response(200, headers={"content-type": ES}, stream=Chunked(chunks)))
    with httpx.Client(transport=RecordingTransport(server, cassette, clock=FakeClock())) as c:
        with c.stream("POST", f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{MODEL}/converse-stream", json={"messages": []}) as r:
            assert list(r.iter_raw()) == chunks
    cassette.save()
    resp = load_cassette_file(path).interactions[0].response
    frames = [f for c in resp.chunks for f in c.frames]
    view = json.loads((FIXTURES / "converse_stream_tool_use.decoded.json").read_text())
    assert [f["headers"] for f in frames] == [m["headers"] for m in view]
    assert [f["json"] for f in frames] == [m["payload"] for m in view]
    with httpx.Client(transport=ReplayTransport(Cassette(path))) as c:
        with c.stream("POST", f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{MODEL}/converse-stream", json={"messages": []}) as r:
            assert list(r.iter_raw()) == chunks


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


SCRIPT = [
    Turn(text="Let me add.", tool_calls=[call("add", {"a": 2, "b": 3}, id="tooluse_x1")]),
    Turn(text="2 + 3 = 5."),
]


def run_bedrock(transport, recording_cassette=None):
    provider = BedrockProvider(model=MODEL, api_key="ABSK-secret-bearer-token-value", base_url="https://bedrock-runtime.us-east-1.amazonaws.com", transport=transport)
    if recording_cassette is not None:
        provider = RecordingProvider(provider, recording_cassette)
    return loopkit.run(provider, "What is 2+3?", tools=[add], clock=loopkit.TickClock(start=1))


def test_adapter_records_against_the_simulator_and_replays_offline(tmp_path):
    path = tmp_path / "bedrock.json"
    sim = simulators.transport("bedrock", SCRIPT)
    cassette = Cassette(path, record_mode="once")
    live = run_bedrock(CassetteTransport(cassette, sim), cassette)
    cassette.save()
    assert live.reason == "stop" and live.messages[-1].text == "2 + 3 = 5."
    stored = load_cassette_file(path).interactions
    assert [(i.request is not None, i.transcript is not None) for i in stored] == [(True, True)] * 2
    text = path.read_text()
    assert "ABSK-secret" not in text and '":event-type": "contentBlockDelta"' in text
    with block_network():
        replayed = run_bedrock(ReplayTransport(Cassette(path)))
    assert replayed.messages == live.messages
    # the same recording at the loop's level, with no HTTP at all
    replay = ReplayProvider(Cassette(path))
    again = loopkit.run(replay, "What is 2+3?", tools=[add], clock=loopkit.TickClock(start=1))
    replay.assert_complete()
    assert [m.text for m in again.messages] == [m.text for m in live.messages]
    # and as a Script driving another provider
    other = loopkit.run(ScriptedProvider(replay.script()), "What is 2+3?", tools=[add])
    assert [m.text for m in other.messages] == [m.text for m in live.messages]
    assert other.messages[1].tool_calls == live.messages[1].tool_calls


@pytest.fixture
def aws_env(monkeypatch):
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def boto_stream(url):
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="AKIAIOSFODNN7EXAMPLE",
        aws_secret_access_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )
    out = client.converse_stream(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "2+3?"}]}])
    return list(out["stream"])


def test_boto3_records_through_vcrpy_and_replays_without_the_server(tmp_path, aws_env):
    path = str(tmp_path / "boto.json")
    with simulators.serve("bedrock", [Turn(text="Five.", tool_calls=[call("add", {"a": 2}, id="tooluse_b1")])]) as sim:
        url = sim.url
        with make_vcr(record_mode="once").use_cassette(path):
            live = boto_stream(url)
    text = Path(path).read_text()
    assert "AKIAIOSFODNN7EXAMPLE" not in text and "AWS4-HMAC-SHA256" not in text
    resp = load_cassette_file(path).interactions[0].response
    assert resp.codec == ES and all(len(c.frames) == 1 for c in resp.chunks)  # re-chunked per message
    with make_vcr(record_mode="none").use_cassette(path):
        replayed = boto_stream(url)  # the simulator is gone: this can only come from the cassette
    assert replayed == live
    assert [next(iter(e)) for e in live][-2:] == ["messageStop", "metadata"]


def test_async_loop_records_and_replays(tmp_path):
    """arun drives the adapter's async client through the same cassette transport."""
    path = tmp_path / "bedrock_async.json"

    async def go(transport, cassette=None):
        provider = BedrockProvider(model=MODEL, api_key="k", base_url="https://bedrock-runtime.us-east-1.amazonaws.com", transport=transport)
        if cassette is not None:
            provider = RecordingProvider(provider, cassette)
        return await loopkit.arun(provider, "What is 2+3?", tools=[add], clock=loopkit.TickClock(start=1))

    import asyncio

    cassette = Cassette(path, record_mode="once")
    live = asyncio.run(go(CassetteTransport(cassette, simulators.transport("bedrock", SCRIPT)), cassette))
    cassette.save()
    assert [(i.request is not None, i.transcript is not None) for i in load_cassette_file(path).interactions] == [(True, True)] * 2
    replayed = asyncio.run(go(ReplayTransport(Cassette(path))))
    assert replayed.messages == live.messages
