"""Cross-provider replay: a recording made with one provider becomes a Script (through
ReplayProvider) that every other protocol's simulator serves to that protocol's adapter, and the
loop ends the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

import loopkit
import simulators
from loopkit.recording import Cassette, ReplayProvider

CASSETTES = Path(__file__).parent.parent.parent / "cassettes"
QUESTION = "What is 2+3? Use the add tool."


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def adapter(protocol: str, transport):
    if protocol == "bedrock":
        from loopkit.providers.bedrock import BedrockProvider

        return BedrockProvider(model="us.amazon.nova-micro-v1:0", api_key="k", base_url="https://bedrock-runtime.us-east-1.amazonaws.com", transport=transport)
    if protocol == "gemini":
        from loopkit.providers.gemini import GeminiProvider

        return GeminiProvider(model="gemini-2.5-flash", api_key="k", base_url="https://generativelanguage.googleapis.com", transport=transport)
    if protocol == "anthropic":
        from loopkit.providers.anthropic import AnthropicProvider

        return AnthropicProvider(model="claude-test", api_key="k", base_url="https://api.anthropic.com", transport=transport)
    pytest.skip(f"no loopkit adapter for {protocol} yet")


RECORDINGS = sorted(p.parent.name for p in CASSETTES.glob("*/adapter_tool_round_trip.json"))
TARGETS = sorted(simulators.PROTOCOLS)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", RECORDINGS)
def test_recording_replays_through_another_adapter_and_simulator(source, target):
    replay = ReplayProvider(Cassette(CASSETTES / source / "adapter_tool_round_trip.json"))
    original = loopkit.run(replay, QUESTION, tools=[add], clock=loopkit.TickClock(start=1))
    replay.assert_complete()
    try:
        sim = simulators.transport(target, replay.script())
    except ModuleNotFoundError:
        pytest.skip(f"no {target} simulator yet")
    crossed = loopkit.run(adapter(target, sim), QUESTION, tools=[add], clock=loopkit.TickClock(start=1))
    sim.simulator.assert_complete()
    assert crossed.reason == original.reason == "stop"
    assert [m.role for m in crossed.messages] == [m.role for m in original.messages]
    assert [m.text for m in crossed.messages] == [m.text for m in original.messages]
    assert [(c.name, c.arguments) for c in crossed.messages[1].tool_calls] == [(c.name, c.arguments) for c in original.messages[1].tool_calls]
