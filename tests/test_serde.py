"""Round trips and typed errors of loopkit.serde."""

from __future__ import annotations

import json

import pytest

from loopkit.errors import SerdeError
from loopkit.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UsageCost,
    UserMessage,
)
from loopkit.provider import ModelRequest, ToolSpec
from loopkit.serde import (
    dump_message,
    dump_request,
    dump_tool_spec,
    load_message,
    load_request,
    load_tool_spec,
)

MESSAGES = [
    UserMessage(content="hi", timestamp=5),
    UserMessage(content=[TextContent(text="look"), ImageContent(data="aGk=", mime_type="image/png")]),
    AssistantMessage(
        content=[
            ThinkingContent(thinking="hmm", thinking_signature="sig", redacted=True),
            TextContent(text="ok", text_signature="ts"),
            ToolCall(id="c1", name="add", arguments={"a": 1, "b": [2, None]}, thought_signature="th"),
            ToolCall(id="c2", name="bad", arguments=None, raw_arguments='{"a": 1'),
            ToolCall(id="c3", name="list", arguments=[1, 2]),
        ],
        stop_reason="toolUse",
        api="anthropic-messages",
        provider="anthropic",
        model="claude",
        usage=Usage(input=3, output=4, total_tokens=7, cost=UsageCost(input=0.5, total=0.5)),
        response_id="msg_1",
        timestamp=9,
    ),
    AssistantMessage(stop_reason="error", error_message="boom", error_type="overloaded_error"),
    ToolResultMessage(tool_call_id="c1", tool_name="add", content=[TextContent(text="3")], details={"x": 1}, is_error=True),
    ToolResultMessage(tool_call_id="c2", tool_name="bad"),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: m.role)
def test_message_round_trip_through_json(message):
    """Every field survives dump -> JSON text -> load."""
    data = json.loads(json.dumps(dump_message(message)))
    assert load_message(data) == message


def test_defaults_are_left_out():
    """A default-valued field is not written; the tag always is."""
    assert list(dump_message(UserMessage(content="x")).items()) == [("role", "user"), ("content", "x")]
    assert dump_message(AssistantMessage()) == {"role": "assistant"}


def test_request_round_trip():
    """A whole ModelRequest (tools, choice, flags) round-trips."""
    req = ModelRequest(
        MESSAGES,
        tools=[ToolSpec(name="add", description="Add.", parameters={"type": "object", "properties": {"a": {"type": "integer"}}})],
        tool_choice={"type": "function", "name": "add"},
        parallel_tool_calls=False,
        model="m",
        system="be brief",
        call_number=3,
    )
    data = json.loads(json.dumps(dump_request(req)))
    back = load_request(data)
    assert back == req
    assert back.call_number == 3
    assert load_request(dump_request(ModelRequest([]))) == ModelRequest([])


def test_tool_spec_round_trip():
    spec = ToolSpec(name="t", description="d", parameters={"type": "object"})
    assert load_tool_spec(dump_tool_spec(spec)) == spec


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"role": "robot"}, "message.role"),
        ({"role": "user"}, "missing required field 'content'"),
        ({"role": "user", "content": 3}, "message.content: expected a list"),
        ({"role": "user", "content": [{"type": "toolCall", "id": "a", "name": "b"}]}, "message.content[0].type"),
        ({"role": "assistant", "content": [{"type": "text", "text": 1}]}, "message.content[0].text: expected a string"),
        ({"role": "assistant", "stop_reason": "done"}, "message.stop_reason"),
        ({"role": "assistant", "usage": {"input": True}}, "message.usage.input: expected an integer, got bool"),
        ({"role": "assistant", "usage": {"cost": {"total": "1"}}}, "message.usage.cost.total"),
        ({"role": "assistant", "colour": "red"}, "unknown field(s) ['colour']"),
        ({"role": "toolResult", "tool_name": "x"}, "missing required field 'tool_call_id'"),
    ],
)
def test_bad_message_data_names_the_path(data, where):
    with pytest.raises(SerdeError, match=None) as info:
        load_message(data)
    assert where in str(info.value)


def test_bad_request_data_names_the_path():
    with pytest.raises(SerdeError) as info:
        load_request({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": [{"type": "text"}]}]})
    assert "request.messages[1].content[0]: missing required field 'text'" in str(info.value)
    with pytest.raises(SerdeError, match=r"request.tool_choice"):
        load_request({"messages": [], "tool_choice": "always"})
    with pytest.raises(SerdeError, match=r"request.tools\[0\].parameters"):
        load_request({"messages": [], "tools": [{"name": "x", "parameters": []}]})
    with pytest.raises(SerdeError, match=r"unknown field\(s\) \['temperature'\]"):
        load_request({"messages": [], "temperature": 1})


def test_any_generated_tool_calls_round_trip():
    """Every kind of (mal)formed tool call the strategies make survives dump -> JSON -> load."""
    from hypothesis import given, settings

    from loopkit.strategies import tool_calls

    spec = ToolSpec(name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]})

    @settings(max_examples=60)
    @given(tool_calls([spec], max_size=4))
    def check(calls):
        message = AssistantMessage(content=[TextContent(text="calling"), *calls], stop_reason="toolUse")
        assert load_message(json.loads(json.dumps(dump_message(message), ensure_ascii=False))) == message

    check()
