"""Defects found against real recordings: each simulator now answers as the real API does."""

from __future__ import annotations

import json

import httpx
import pytest

from loopkit import simulators
from loopkit.accumulate import accumulate
from loopkit.messages import UserMessage
from loopkit.provider import ModelRequest, ToolSpec
from loopkit.providers import adapter_class
from loopkit.script import Turn, call

ADD = ToolSpec(name="add", description="Add.", parameters={"type": "object", "properties": {"a": {"type": "integer"}}})


def chat_finish(body: dict, stream: bool) -> str:
    sim = simulators.create("openai_chat", [Turn(tool_calls=[call("add", {"a": 1})])])
    with httpx.Client(transport=simulators.transport(sim), base_url="http://sim") as client:
        resp = client.post("/v1/chat/completions", json={**body, "stream": stream})
    if not stream:
        return resp.json()["choices"][0]["finish_reason"]
    chunks = [json.loads(line[6:]) for line in resp.text.splitlines() if line.startswith("data: {")]
    return next(c["choices"][0]["finish_reason"] for c in chunks if c["choices"] and c["choices"][0]["finish_reason"])


BASE = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function": {"name": "add", "parameters": {}}}]}


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(("choice", "finish"), [(None, "tool_calls"), ("auto", "tool_calls"), ("required", "tool_calls"), ({"type": "function", "function": {"name": "add"}}, "stop")])
def test_chat_forced_named_tool_choice_ends_with_stop(choice, finish, stream):
    body = BASE if choice is None else {**BASE, "tool_choice": choice}
    assert chat_finish(body, stream) == finish


@pytest.mark.parametrize("stream", [True, False])
def test_chat_adapter_still_reports_tool_use_under_a_forced_choice(stream):
    sim = simulators.create("openai_chat", [Turn(tool_calls=[call("add", {"a": 1})])])
    provider = adapter_class("openai_chat")(model="m", api_key="k", base_url="http://sim/v1", transport=simulators.transport(sim), stream=stream)
    msg = accumulate(provider.stream(ModelRequest([UserMessage(content="hi")], tools=[ADD], tool_choice={"type": "function", "name": "add"})))
    assert msg.stop_reason == "toolUse" and [(c.name, c.arguments) for c in msg.tool_calls] == [("add", {"a": 1})]


def test_bedrock_converse_body_sends_an_empty_argument_call_as_an_object():
    sim = simulators.create("bedrock", [Turn(tool_calls=[call("add", "")])])
    with httpx.Client(transport=simulators.transport(sim), base_url="http://sim") as client:
        resp = client.post("/model/m/converse", json={"messages": [{"role": "user", "content": [{"text": "hi"}]}]}, headers={"authorization": "x"})
    [block] = resp.json()["output"]["message"]["content"]
    assert block["toolUse"]["input"] == {}
