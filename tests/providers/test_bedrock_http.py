"""The Bedrock adapter over real HTTP: loopkit's httpx client against the simulator on 127.0.0.1."""

from __future__ import annotations

import pytest

from loopkit import simulators
from loopkit.accumulate import accumulate
from loopkit.errors import ConnectionClosedError, RateLimitError
from loopkit.messages import TextContent, ToolCall, ToolResultMessage, user
from loopkit.provider import ModelRequest, ToolSpec
from loopkit.providers.bedrock import BedrockProvider
from loopkit.retry import RetryPolicy
from loopkit.script import HttpFault, MidStreamError, Truncate, Turn, call

ADD = ToolSpec(name="add", parameters={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}})


def provider_for(sim, sleeps, *, stream=True):
    return BedrockProvider(
        model="anthropic.claude-sonnet-4-v1:0", api_key="k", base_url=sim.url, stream=stream, retry=RetryPolicy(max_retries=2, sleep=sleeps.append)
    )


@pytest.mark.parametrize("stream", [True, False])
def test_tool_round_trip_with_a_throttle_over_a_socket(stream):
    script = [
        Turn(faults=[HttpFault(status=429, retry_after=0.25)]),
        Turn(text="Adding.", tool_calls=[call("add", {"a": 1, "b": 2}, id="tooluse_h1"), call("add", {"a": 3, "b": 4}, id="tooluse_h2")]),
        Turn(text="3 and 7."),
    ]
    sleeps: list[float] = []
    with simulators.serve("bedrock", script) as sim:
        provider = provider_for(sim, sleeps, stream=stream)
        first = accumulate(provider.stream(ModelRequest([user("sums?")], tools=[ADD], tool_choice="required")))
        results = [ToolResultMessage(tool_call_id=c.id, tool_name="add", content=[TextContent(text=t)]) for c, t in zip(first.tool_calls, ("3", "7"))]
        final = accumulate(provider.stream(ModelRequest([user("sums?"), first, *results], tools=[ADD])))
        sim.assert_complete()
        bodies = [r.json for r in sim.requests]
    assert first.tool_calls == [ToolCall(id="tooluse_h1", name="add", arguments={"a": 1, "b": 2}), ToolCall(id="tooluse_h2", name="add", arguments={"a": 3, "b": 4})]
    assert final.text == "3 and 7." and final.stop_reason == "stop"
    assert sleeps == [0.25] and provider.attempts == [2, 1]
    assert bodies[0] == bodies[1] and bodies[1]["toolConfig"]["toolChoice"] == {"any": {}}
    assert [len(m["content"]) for m in bodies[2]["messages"]] == [1, 3, 2]


def test_truncated_socket_and_mid_stream_throttle():
    script = [
        Turn(text="abcdefghijklmnopqrstuvwxyz", faults=[Truncate(after=4)]),
        Turn(text="abcdefghijklmnopqrstuvwxyz", faults=[MidStreamError(after=4, error_type="throttlingException", message="slow")]),
    ]
    sleeps: list[float] = []
    with simulators.serve("bedrock", script) as sim:
        provider = provider_for(sim, sleeps)
        with pytest.raises(ConnectionClosedError):
            list(provider.stream(ModelRequest([user("hi")])))
        with pytest.raises(RateLimitError, match="slow"):
            list(provider.stream(ModelRequest([user("hi")])))
        sim.assert_complete()
    assert sleeps == []


def test_multi_round_loop_over_real_http():
    """loopkit.run drives three model calls through the adapter and the served simulator: a
    parallel round, a round whose tool fails (status "error" goes back), then the answer."""
    import loopkit
    from loopkit.runtime import TickClock

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    def divide(a: int, b: int) -> float:
        """Divide a by b."""
        return a / b

    script = [
        Turn(tool_calls=[call("add", {"a": 1, "b": 2}, id="tooluse_r1a"), call("add", {"a": 3, "b": 4}, id="tooluse_r1b")]),
        Turn(text="Now dividing.", tool_calls=[call("divide", {"a": 1, "b": 0}, id="tooluse_r2")]),
        Turn(text="3, 7, and division by zero failed."),
    ]
    sleeps: list[float] = []
    with simulators.serve("bedrock", script) as sim:
        provider = provider_for(sim, sleeps)
        result = loopkit.run(provider, "Compute.", tools=[add, divide], system="Be brief.", clock=TickClock())
        sim.assert_complete()
        bodies = [r.json for r in sim.requests]
    assert result.reason == "stop" and result.model_calls == 3
    assert result.last_assistant.text == "3, 7, and division by zero failed."
    assert [m["role"] for m in bodies[2]["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    assert bodies[2]["system"] == [{"text": "Be brief."}]
    assert [sorted(t["toolSpec"]["name"] for t in b["toolConfig"]["tools"]) for b in bodies] == [["add", "divide"]] * 3
    round1 = [b["toolResult"] for b in bodies[1]["messages"][2]["content"]]
    assert [(r["toolUseId"], r["content"], "status" in r) for r in round1] == [
        ("tooluse_r1a", [{"text": "3"}], False),
        ("tooluse_r1b", [{"text": "7"}], False),
    ]
    [failed] = [b["toolResult"] for b in bodies[2]["messages"][4]["content"]]
    assert failed["toolUseId"] == "tooluse_r2" and failed["status"] == "error"
    assert "division by zero" in failed["content"][0]["text"]
