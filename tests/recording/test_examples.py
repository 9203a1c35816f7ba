"""The example cassettes shipped in cassettes/ (recorded against the simulators by
cassettes/record_examples.py) verify clean and replay offline."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import boto3
import pytest
from botocore.config import Config

import loopkit
from loopkit.cli import cassette as cassette_cli
from loopkit.providers import adapter_class
from loopkit.recording import Cassette, ReplayProvider, ReplayTransport, block_network, use_cassette
from loopkit.recording._vcr import make_vcr

CASSETTES = Path(__file__).parent.parent.parent / "cassettes"
EXAMPLES = sorted(CASSETTES.rglob("*.json"))
QUESTION = "What is 2+3? Use the add tool."


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_examples_exist_and_verify_clean():
    assert {p.relative_to(CASSETTES).as_posix() for p in EXAMPLES} >= {
        "bedrock/adapter_tool_round_trip.json",
        "bedrock/boto3_converse_stream.json",
        "gemini/adapter_tool_round_trip.json",
        "gemini/google_genai_stream.json",
        "anthropic/adapter_tool_round_trip.json",
        "anthropic/sdk_messages_stream.json",
        "openai_chat/adapter_tool_round_trip.json",
        "openai_chat/sdk_chat_stream.json",
        "openai_responses/adapter_tool_round_trip.json",
        "openai_responses/sdk_responses_stream.json",
    }
    parser = argparse.ArgumentParser()
    cassette_cli.add_parser(parser.add_subparsers())
    out = io.StringIO()
    assert cassette_cli.run(parser.parse_args(["cassette", "verify", *map(str, EXAMPLES)]), out=out) == 0, out.getvalue()


MODELS = {"anthropic": "claude-test", "bedrock": "us.amazon.nova-micro-v1:0", "gemini": "gemini-2.5-flash", "openai_chat": "gpt-test", "openai_responses": "gpt-test"}
ROUND_TRIPS = sorted(p.parent.name for p in CASSETTES.glob("*/adapter_tool_round_trip.json"))


@pytest.mark.parametrize("protocol", ROUND_TRIPS)
def test_adapter_example_replays_through_the_loop(protocol):
    path = CASSETTES / protocol / "adapter_tool_round_trip.json"
    with block_network(), use_cassette(path) as cassette:
        provider = adapter_class(protocol)(model=MODELS[protocol], api_key="any", transport=ReplayTransport(cassette))
        result = loopkit.run(provider, QUESTION, tools=[add], clock=loopkit.TickClock(start=1))
    assert result.reason == "stop"
    assert result.messages[1].tool_calls[0].arguments == {"a": 2, "b": 3}
    assert result.messages[2].text == "5"
    assert result.messages[-1].text == "2 + 3 = 5."
    replay = ReplayProvider(Cassette(path))
    again = loopkit.run(replay, QUESTION, tools=[add], clock=loopkit.TickClock(start=1))
    replay.assert_complete()
    assert again.messages == result.messages


@pytest.fixture
def aws_env(monkeypatch):
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_boto3_example_replays_offline(aws_env):
    client = boto3.client(
        "bedrock-runtime", endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com", region_name="us-east-1",
        aws_access_key_id="x", aws_secret_access_key="x", config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )  # fmt: skip
    with block_network(), make_vcr(record_mode="none").use_cassette(str(CASSETTES / "bedrock" / "boto3_converse_stream.json")):
        out = client.converse_stream(modelId="us.amazon.nova-micro-v1:0", messages=[{"role": "user", "content": [{"text": QUESTION}]}])
        events = list(out["stream"])
    text = "".join(e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e)
    assert text == "<thinking>I should add.</thinking>"
    assert events[-2]["messageStop"]["stopReason"] == "tool_use"


def test_google_genai_example_replays_offline():
    import httpx2
    from google import genai
    from google.genai import types

    with block_network(), use_cassette(CASSETTES / "gemini" / "google_genai_stream.json") as cassette:
        transport = ReplayTransport(cassette, httpx_module=httpx2)
        client = genai.Client(api_key="any", http_options=types.HttpOptions(base_url="https://generativelanguage.googleapis.com", httpx_client=httpx2.Client(transport=transport)))
        chunks = [c.text for c in client.models.generate_content_stream(model="gemini-2.5-flash", contents="What is the capital of France?")]
    assert "".join(chunks) == "The capital of France is Paris." and len(chunks) > 1


def test_anthropic_sdk_example_replays_offline():
    import anthropic
    import httpx2

    with block_network(), use_cassette(CASSETTES / "anthropic" / "sdk_messages_stream.json") as cassette:
        http = httpx2.Client(transport=ReplayTransport(cassette, httpx_module=httpx2))
        client = anthropic.Anthropic(api_key="any", base_url="https://api.anthropic.com", http_client=http, max_retries=0)
        with client.messages.stream(model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "Say hello."}]) as stream:
            deltas = list(stream.text_stream)
    assert "".join(deltas) == "Hello from the simulator." and len(deltas) > 1


@pytest.mark.parametrize("protocol", ["openai_chat", "openai_responses"])
def test_openai_sdk_examples_replay_offline(protocol):
    import httpx2
    import openai

    name = "sdk_chat_stream.json" if protocol == "openai_chat" else "sdk_responses_stream.json"
    with block_network(), use_cassette(CASSETTES / protocol / name) as cassette:
        http = httpx2.Client(transport=ReplayTransport(cassette, httpx_module=httpx2))
        client = openai.OpenAI(api_key="any", base_url="https://api.openai.com/v1", http_client=http, max_retries=0)
        if protocol == "openai_chat":
            with client.chat.completions.stream(model="gpt-test", messages=[{"role": "user", "content": "Say hello."}]) as stream:
                deltas = [e.delta for e in stream if e.type == "content.delta"]
        else:
            with client.responses.stream(model="gpt-test", input="Say hello.") as stream:
                deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
    assert "".join(deltas) == "Hello from the simulator." and len(deltas) > 1
