"""Cross-provider replay: a recording made with one provider becomes a Script (through
ReplayProvider) that every other protocol's simulator serves to that protocol's adapter, and the
loop ends the same way."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import loopkit
from loopkit import simulators
from loopkit.recording import Cassette, ReplayProvider

CASSETTES = Path(__file__).parent.parent.parent / "cassettes"
QUESTION = "What is 2+3? Use the add tool."


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def adapter(protocol: str, transport):
    """That protocol's loopkit adapter over ``transport`` (skipped while the adapter is not written)."""
    from loopkit.providers import ADAPTERS, adapter_class

    if importlib.util.find_spec(ADAPTERS[protocol].partition(":")[0]) is None:
        pytest.skip(f"no loopkit adapter for {protocol} yet")
    return adapter_class(protocol)(model="sim-model", api_key="k", base_url="https://api.example.com", transport=transport)


RECORDINGS = sorted(p.parent.name for p in CASSETTES.glob("*/adapter_tool_round_trip.json"))
TARGETS = sorted(simulators.PROTOCOLS)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", RECORDINGS)
def test_recording_replays_through_another_adapter_and_simulator(source, target):
    replay = ReplayProvider(Cassette(CASSETTES / source / "adapter_tool_round_trip.json"))
    original = loopkit.run(replay, QUESTION, tools=[add], clock=loopkit.TickClock(start=1))
    replay.assert_complete()
    if importlib.util.find_spec(simulators.PROTOCOLS[target].partition(":")[0]) is None:
        pytest.skip(f"no {target} simulator yet")
    sim = simulators.transport(target, replay.script())
    crossed = loopkit.run(adapter(target, sim), QUESTION, tools=[add], clock=loopkit.TickClock(start=1))
    sim.simulator.assert_complete()
    assert crossed.reason == original.reason == "stop"
    assert [m.role for m in crossed.messages] == [m.role for m in original.messages]
    assert [m.text for m in crossed.messages] == [m.text for m in original.messages]
    assert [(c.name, c.arguments) for c in crossed.messages[1].tool_calls] == [(c.name, c.arguments) for c in original.messages[1].tool_calls]
