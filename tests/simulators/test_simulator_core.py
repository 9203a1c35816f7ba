"""What every simulator does the same way, whatever its protocol."""

from __future__ import annotations

import pytest
from loopkit import simulators

from loopkit.errors import ScriptError
from loopkit.script import Turn


@pytest.mark.parametrize("protocol", ["openai_chat", "openai_responses", "anthropic", "gemini", "bedrock"])
def test_a_simulator_refuses_an_aborted_turn(protocol: str) -> None:
    """An aborted stop is the caller's doing: no simulator renders it as some other ending."""
    with pytest.raises(ScriptError, match="turn 2 is scripted as aborted"):
        simulators.create(protocol, ["hi", Turn(aborted=True)])
