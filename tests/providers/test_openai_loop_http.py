"""A multi-round loop run end to end through each OpenAI adapter and its simulator over real HTTP
(127.0.0.1), including a parallel round, a malformed call answered with an error result, a 429
retry and a loop that ends with reason ``error`` when retries are spent."""

from __future__ import annotations

import json

import pytest

import loopkit
from loopkit import simulators
from loopkit.providers.openai_chat import OpenAIChatProvider
from loopkit.providers.openai_responses import OpenAIResponsesProvider
from loopkit.retry import RetryPolicy
from loopkit.script import HttpFault, Turn, call

PROVIDERS = {"openai_chat": OpenAIChatProvider, "openai_responses": OpenAIResponsesProvider}


@loopkit.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script() -> list[Turn]:
    return [
        Turn(tool_calls=[call("add", {"a": 1, "b": 2}, id="call_1"), call("add", {"a": 3, "b": 4}, id="call_2")]),
        Turn(faults=[HttpFault(status=429, retry_after=0.5)]),
        Turn(tool_calls=[call("add", '{"a": 1, "b":', id="call_3")]),
        Turn(tool_calls=[call("add", {"a": 3, "b": 7}, id="call_4")]),
        Turn(text="The sums are 3, 7 and 10."),
    ]


def tool_results(body: dict, protocol: str) -> list[tuple[str, str]]:
    if protocol == "openai_chat":
        return [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]
    return [(i["call_id"], i["output"]) for i in body["input"] if i.get("type") == "function_call_output"]


@pytest.mark.parametrize("protocol", sorted(PROVIDERS))
def test_multi_round_loop_over_http(protocol):
    waits: list[float] = []
    with simulators.serve(protocol, script()) as sim:
        provider = PROVIDERS[protocol](model="gpt-test", api_key="sk-test", base_url=sim.base_url, retry=RetryPolicy(sleep=waits.append))
        result = loopkit.run(provider, "Add some numbers.", tools=[add], system="Use the tool.")
        sim.assert_complete()
    assert (result.reason, result.model_calls, result.text) == ("stop", 4, "The sums are 3, 7 and 10.")
    assert waits == [0.5]
    bodies = [json.loads(r.body) for r in sim.requests]
    assert len(bodies) == 5  # four model calls, one of them retried
    last = tool_results(bodies[-1], protocol)
    assert [cid for cid, _ in last] == ["call_1", "call_2", "call_3", "call_4"]
    assert [text for _, text in last][:2] == ["3", "7"] and last[3][1] == "10"
    assert last[2][1]  # the broken-JSON call was answered with a non-empty error text
    errors = [m for m in result.messages if getattr(m, "role", "") == "toolResult" and m.is_error]
    assert [m.tool_call_id for m in errors] == ["call_3"]


@pytest.mark.parametrize("protocol", sorted(PROVIDERS))
def test_loop_ends_with_error_when_retries_are_spent(protocol):
    waits: list[float] = []
    with simulators.serve(protocol, [Turn(faults=[HttpFault(status=500)])] * 2) as sim:
        provider = PROVIDERS[protocol](model="gpt-test", api_key="sk-test", base_url=sim.base_url, retry=RetryPolicy(max_retries=1, sleep=waits.append))
        result = loopkit.run(provider, "hi", tools=[add])
    assert result.reason == "error" and result.model_calls == 1 and waits == [0.5]
