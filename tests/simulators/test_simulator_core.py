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


def test_a_served_simulator_stops_once_and_a_second_stop_does_nothing() -> None:
    """Stopping closes the listener; stopping again (inside and then at the end of its ``with``
    block) is no error, nor is stopping a simulator that never started."""
    import httpx

    body = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
    with simulators.serve("openai_chat", [Turn(text="hi")]) as served:
        assert httpx.post(served.base_url + "/chat/completions", json=body).status_code == 200
        served.stop()
        with pytest.raises(httpx.ConnectError):
            httpx.post(served.base_url + "/chat/completions", json=body, timeout=1)
    simulators.serve("openai_chat", []).stop()
