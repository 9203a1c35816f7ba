"""The per-protocol wire readers, on bodies written from each provider's documented format."""

from __future__ import annotations

import pytest

from loopkit.scenario.wire import ABSENT, WireResult, parallel_tool_calls, tool_choice, tool_names, tool_results

BODIES = {
    "anthropic": {
        "tools": [{"name": "add", "input_schema": {}}],
        "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "3"},
                {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "bo"}, {"type": "text", "text": "om"}], "is_error": True},
            ]},
        ],
    },
    "bedrock": {
        "toolConfig": {"tools": [{"toolSpec": {"name": "add"}}], "toolChoice": {"tool": {"name": "add"}}},
        "messages": [{"role": "user", "content": [
            {"toolResult": {"toolUseId": "t1", "content": [{"text": "3"}]}},
            {"toolResult": {"toolUseId": "t2", "content": [{"text": "boom"}], "status": "error"}},
        ]}],
    },
    "openai_chat": {
        "tools": [{"type": "function", "function": {"name": "add"}}],
        "tool_choice": {"type": "function", "function": {"name": "add"}},
        "parallel_tool_calls": False,
        "messages": [{"role": "tool", "tool_call_id": "t1", "content": "3"}, {"role": "tool", "tool_call_id": "t2", "content": [{"type": "text", "text": "boom"}]}],
    },
    "openai_responses": {
        "tools": [{"type": "function", "name": "add"}],
        "tool_choice": "required",
        "input": [{"type": "function_call_output", "call_id": "t1", "output": "3"}, {"type": "function_call_output", "call_id": "t2", "output": "boom"}],
    },
    "gemini": {
        "tools": [{"functionDeclarations": [{"name": "add"}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "NONE"}},
        "contents": [{"role": "user", "parts": [
            {"functionResponse": {"name": "add", "response": {"output": "3"}}},
            {"functionResponse": {"id": "t2", "name": "add", "response": {"error": "boom"}}},
        ]}],
    },
}
ERROR_FLAG = {"anthropic": True, "bedrock": True, "gemini": True, "openai_chat": None, "openai_responses": None}


@pytest.mark.parametrize("protocol", sorted(BODIES))
def test_tool_results_in_each_convention(protocol: str) -> None:
    got = tool_results(protocol, BODIES[protocol])
    assert [(r.text, r.is_error) for r in got] == [("3", False if ERROR_FLAG[protocol] else None), ("boom", ERROR_FLAG[protocol])]
    assert got[1].call_id == "t2"


def test_gemini_results_without_ids_carry_the_name() -> None:
    assert tool_results("gemini", BODIES["gemini"])[0] == WireResult(None, "add", "3", False)


@pytest.mark.parametrize(
    ("protocol", "choice", "parallel"),
    [
        ("anthropic", "required", False),
        ("bedrock", {"type": "function", "name": "add"}, ABSENT),
        ("openai_chat", {"type": "function", "name": "add"}, False),
        ("openai_responses", "required", None),
        ("gemini", "none", ABSENT),
    ],
)
def test_knobs_in_loopkit_terms(protocol: str, choice: object, parallel: object) -> None:
    body = BODIES[protocol]
    assert tool_choice(protocol, body) == choice
    assert parallel_tool_calls(protocol, body) == parallel if parallel is not ABSENT else parallel_tool_calls(protocol, body) is ABSENT
    assert tool_names(protocol, body) == ["add"]


def test_bedrock_without_tool_config_reads_as_none() -> None:
    assert tool_choice("bedrock", {"messages": []}) == "none"
    assert tool_choice("bedrock", {"toolConfig": {"tools": []}}) is None
    assert tool_choice("gemini", {}) is None and tool_choice("anthropic", {}) is None
