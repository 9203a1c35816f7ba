"""Re-record the example cassettes in this folder against loopkit's simulators.

Run from the repository root: ``PYTHONPATH=. python cassettes/record_examples.py``. Recording is
deterministic (a ticking clock, scripted simulators), so re-running gives the same files; the
tests in ``tests/recording/test_examples.py`` replay them offline.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import boto3
from botocore.config import Config

import loopkit
from loopkit import simulators
from loopkit.recording import Cassette, CassetteTransport, Interaction, RecordingProvider, Scrubber
from loopkit.recording._vcr import make_vcr
from loopkit.script import Turn, call

HERE = Path(__file__).parent
MODEL = "us.amazon.nova-micro-v1:0"
QUESTION = "What is 2+3? Use the add tool."
SCRIPT = [
    Turn(text="<thinking>I should add.</thinking>", tool_calls=[call("add", {"a": 2, "b": 3}, id="tooluse_ex1")], chunk_size=6),
    Turn(text="2 + 3 = 5.", chunk_size=4),
]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Ticks:
    """A clock that advances 15 ms per reading, so recorded offsets are the same on every run."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.015
        return self.now


MODELS = {"anthropic": "claude-test", "bedrock": MODEL, "gemini": "gemini-2.5-flash", "openai_chat": "gpt-test", "openai_responses": "gpt-test"}


def available() -> list[str]:
    """Protocols with both a loopkit adapter and a simulator written so far."""
    from loopkit.providers import ADAPTERS

    return [p for p in sorted(ADAPTERS) if all(importlib.util.find_spec(t.partition(":")[0]) for t in (ADAPTERS[p], simulators.PROTOCOLS[p]))]


def adapter_round_trip(protocol: str, path: Path) -> None:
    """loopkit's adapter for ``protocol`` runs the tool loop against that protocol's simulator."""
    from loopkit.providers import adapter_class

    cassette = Cassette(path, record_mode="all")
    transport = CassetteTransport(cassette, simulators.transport(protocol, SCRIPT), clock=Ticks())
    provider = adapter_class(protocol)(model=MODELS[protocol], api_key=f"example-{protocol}-key", transport=transport)
    loopkit.run(RecordingProvider(provider, cassette), QUESTION, tools=[add], clock=loopkit.TickClock(start=1))
    cassette.save()


def as_service_host(inter: Interaction) -> None:
    """Record the simulator's random loopback port as the service's host (stable files)."""
    if inter.request is not None:
        _, _, rest = inter.request.url.partition("://")
        inter.request.url = "https://bedrock-runtime.us-east-1.amazonaws.com/" + rest.partition("/")[2]


def bedrock_boto3(path: Path) -> None:
    os.environ.pop("AWS_BEARER_TOKEN_BEDROCK", None)
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    path.unlink(missing_ok=True)
    with simulators.serve("bedrock", SCRIPT[:1]) as sim:
        client = boto3.client(
            "bedrock-runtime", endpoint_url=sim.url, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x",
            config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
        )  # fmt: skip
        with make_vcr(record_mode="all", scrubber=Scrubber(hook=as_service_host)).use_cassette(str(path)):
            out = client.converse_stream(modelId=MODEL, messages=[{"role": "user", "content": [{"text": QUESTION}]}])
            list(out["stream"])


def gemini_sdk(path: Path) -> None:
    import httpx2
    from google import genai
    from google.genai import types

    cassette = Cassette(path, record_mode="all")
    transport = CassetteTransport(cassette, simulators.transport("gemini", [Turn(text="The capital of France is Paris.", chunk_size=7)]), clock=Ticks(), httpx_module=httpx2)
    client = genai.Client(api_key="example-gemini-key", http_options=types.HttpOptions(base_url="https://generativelanguage.googleapis.com", httpx_client=httpx2.Client(transport=transport)))
    list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="What is the capital of France?"))
    cassette.save()


def anthropic_sdk(path: Path) -> None:
    import anthropic
    import httpx2

    cassette = Cassette(path, record_mode="all")
    transport = CassetteTransport(cassette, simulators.transport("anthropic", [Turn(text="Hello from the simulator.", chunk_size=5)]), clock=Ticks(), httpx_module=httpx2)
    client = anthropic.Anthropic(api_key="example-anthropic-key", base_url="https://api.anthropic.com", http_client=httpx2.Client(transport=transport), max_retries=0)
    with client.messages.stream(model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "Say hello."}]) as stream:
        stream.get_final_message()
    cassette.save()


def openai_sdk(path: Path, protocol: str) -> None:
    import httpx2
    import openai

    cassette = Cassette(path, record_mode="all")
    script = [Turn(text="Hello from the simulator.", chunk_size=5)]
    transport = CassetteTransport(cassette, simulators.transport(protocol, script), clock=Ticks(), httpx_module=httpx2)
    client = openai.OpenAI(api_key="example-openai-key", base_url="https://api.openai.com/v1", http_client=httpx2.Client(transport=transport), max_retries=0)
    if protocol == "openai_chat":
        with client.chat.completions.stream(model="gpt-test", messages=[{"role": "user", "content": "Say hello."}]) as stream:
            stream.get_final_completion()
    else:
        with client.responses.stream(model="gpt-test", input="Say hello.") as stream:
            stream.get_final_response()
    cassette.save()


if __name__ == "__main__":
    for protocol in available():
        adapter_round_trip(protocol, HERE / protocol / "adapter_tool_round_trip.json")
    bedrock_boto3(HERE / "bedrock" / "boto3_converse_stream.json")
    gemini_sdk(HERE / "gemini" / "google_genai_stream.json")
    anthropic_sdk(HERE / "anthropic" / "sdk_messages_stream.json")
    openai_sdk(HERE / "openai_chat" / "sdk_chat_stream.json", "openai_chat")
    openai_sdk(HERE / "openai_responses" / "sdk_responses_stream.json", "openai_responses")
    print("recorded:", *sorted(str(p.relative_to(HERE)) for p in HERE.rglob("*.json")), sep="\n  ")
