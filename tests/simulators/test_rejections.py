"""Simulators reject what the real APIs reject, with each API's own 400 body.

Each case starts from a valid request holding one tool round (two calls of the same tool), breaks
one thing an adapter could get wrong (a field's JSON type, the pairing of results with calls, the
ordering), and checks the status, the body shape and the words of the message.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from loopkit import simulators
from loopkit.script import Turn

ARGS = '{"a": 1}'

CHAT = {
    "model": "m",
    "tools": [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}],
    "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": ARGS}},
            {"id": "call_2", "type": "function", "function": {"name": "add", "arguments": '{"a": 2}'}},
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": "1"},
        {"role": "tool", "tool_call_id": "call_2", "content": "2"},
    ],
}  # fmt: skip
RESPONSES = {
    "model": "m",
    "input": [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": ARGS},
        {"type": "function_call", "call_id": "call_2", "name": "add", "arguments": '{"a": 2}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "1"},
        {"type": "function_call_output", "call_id": "call_2", "output": "2"},
    ],
}
ANTHROPIC = {
    "model": "m",
    "max_tokens": 100,
    "tools": [{"name": "add", "input_schema": {"type": "object"}}],
    "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1}},
            {"type": "tool_use", "id": "toolu_2", "name": "add", "input": {"a": 2}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "2"},
        ]},
    ],
}  # fmt: skip
GEMINI = {
    "tools": [{"functionDeclarations": [{"name": "add", "parametersJsonSchema": {"type": "object"}}]}],
    "contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "add", "args": {"a": 1}}}, {"functionCall": {"name": "add", "args": {"a": 2}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "add", "response": {"output": "1"}}},
            {"functionResponse": {"name": "add", "response": {"output": "2"}}},
        ]},
    ],
}  # fmt: skip
BEDROCK = {
    "toolConfig": {"tools": [{"toolSpec": {"name": "add", "inputSchema": {"json": {"type": "object"}}}}]},
    "messages": [
        {"role": "user", "content": [{"text": "hi"}]},
        {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "tu_1", "name": "add", "input": {"a": 1}}},
            {"toolUse": {"toolUseId": "tu_2", "name": "add", "input": {"a": 2}}},
        ]},
        {"role": "user", "content": [
            {"toolResult": {"toolUseId": "tu_1", "content": [{"text": "1"}]}},
            {"toolResult": {"toolUseId": "tu_2", "content": [{"text": "2"}]}},
        ]},
    ],
}  # fmt: skip
VALID = {"openai_chat": CHAT, "openai_responses": RESPONSES, "anthropic": ANTHROPIC, "gemini": GEMINI, "bedrock": BEDROCK}
PATHS = {
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/gemini-2.5-flash:generateContent",
    "bedrock": "/model/m/converse",
}
HEADERS = {"authorization": "Bearer k", "x-api-key": "k", "anthropic-version": "2023-06-01", "x-goog-api-key": "k"}


def post(protocol: str, body: Any) -> httpx.Response:
    sim = simulators.create(protocol, [Turn(text="ok")])
    with httpx.Client(transport=simulators.transport(sim), base_url="http://sim") as client:
        return client.post(PATHS[protocol], content=json.dumps(body), headers=HEADERS)


def assert_real_400(protocol: str, resp: httpx.Response, words: str) -> None:
    assert resp.status_code == 400, resp.text
    data = resp.json()
    if protocol.startswith("openai"):
        err = data["error"]
        assert set(err) == {"message", "type", "param", "code"} and err["type"] == "invalid_request_error"
        message = err["message"]
    elif protocol == "anthropic":
        assert data["type"] == "error" and data["error"]["type"] == "invalid_request_error" and data["request_id"]
        assert resp.headers["x-should-retry"] == "false"
        message = data["error"]["message"]
    elif protocol == "gemini":
        assert data["error"]["code"] == 400 and data["error"]["status"] == "INVALID_ARGUMENT"
        message = data["error"]["message"]
    else:
        assert resp.headers["x-amzn-errortype"] == "ValidationException" and set(data) == {"message"}
        message = data["message"]
    assert words in message, message


def edit(path: str, value: Any = None, *, delete: bool = False) -> Callable[[dict], None]:
    """Set (or delete) the value at a dotted path; numbers index lists."""

    def apply(body: dict) -> None:
        *head, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        node: Any = body
        for p in head:
            node = node[p]
        if delete:
            del node[last]
        else:
            node[last] = value

    return apply


def drop_last_result(protocol: str) -> Callable[[dict], None]:
    def apply(body: dict) -> None:
        if protocol == "openai_chat":
            body["messages"].pop()
        elif protocol == "openai_responses":
            body["input"].pop()
        elif protocol == "gemini":
            body["contents"][-1]["parts"].pop()
        else:
            body["messages"][-1]["content"].pop()

    return apply


CASES = [
    # arguments echoed with the wrong JSON type
    ("openai_chat", edit("messages.1.tool_calls.0.function.arguments", {"a": 1}), "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, but got an object"),
    ("openai_responses", edit("input.1.arguments", {"a": 1}), "Invalid type for 'input[1].arguments': expected a string, but got an object"),
    ("anthropic", edit("messages.1.content.0.input", ARGS), "messages.1.content.0.tool_use.input: Input should be a valid dictionary"),
    ("gemini", edit("contents.1.parts.0.functionCall.args", ARGS), "contents[1].parts[0].function_call.args"),
    ("bedrock", edit("messages.1.content.0.toolUse.input", ARGS), "messages.1.content.0.toolUse.input is invalid. Provide a json object"),
    ("bedrock", edit("messages.1.content.0.toolUse.input", ""), "Provide a json object"),
    # other field types
    ("openai_chat", edit("messages.1.tool_calls.0.type", "tool"), "Supported values are: 'function'"),
    ("openai_chat", edit("messages.2.content", {"text": "1"}), "Invalid type for 'messages[2].content'"),
    ("openai_chat", edit("messages.1.tool_calls.0.function.name", delete=True), "Missing required parameter: 'messages[1].tool_calls[0].function.name'"),
    ("openai_chat", edit("messages.0.role", "model"), "Invalid value: 'model'"),
    ("openai_responses", edit("input.3.output", {"v": 1}), "Invalid type for 'input[3].output'"),
    ("openai_responses", edit("input.1.call_id", delete=True), "Missing required parameter: 'input[1].call_id'"),
    ("anthropic", edit("tools.0.name", "bad name"), "String should match pattern"),
    ("anthropic", edit("tools.0.input_schema", {"type": "array"}), "input_schema.type: Input should be 'object'"),
    ("anthropic", edit("messages.2.content.0.tool_use_id", 7), "tool_result.tool_use_id: Input should be a valid string"),
    ("anthropic", edit("messages.2.content.0.content", [{"kind": "text", "text": "1"}]), "tool_result.content.0: Input tag None found using 'type' does not match any of the expected tags"),
    ("gemini", edit("contents.2.parts.0.functionResponse.name", ""), "function_response.name: Name cannot be empty"),
    ("bedrock", edit("messages.2.content.0.toolResult.content", [{"json": "1"}]), "Provide a json object"),
    # pairing of results with calls
    ("openai_chat", edit("messages.3.tool_call_id", "call_1"), "must be a response to a preceeding message with 'tool_calls'"),
    ("openai_chat", drop_last_result("openai_chat"), "did not have response messages: call_2"),
    ("openai_responses", drop_last_result("openai_responses"), "No tool output found for function call call_2"),
    ("anthropic", drop_last_result("anthropic"), "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_2"),
    ("anthropic", edit("messages.1.content.1.id", "toolu_1"), "`tool_use` ids must be unique"),
    ("gemini", drop_last_result("gemini"), "number of function response parts is equal to the number of function call parts"),
    ("bedrock", drop_last_result("bedrock"), "Expected toolResult blocks at messages.2.content for the following Ids: tu_2"),
    ("bedrock", edit("messages.2.content.1.toolResult.toolUseId", "tu_9"), "has no toolUse block in the previous turn"),
]  # fmt: skip


@pytest.mark.parametrize("protocol", list(VALID))
def test_the_valid_request_passes(protocol):
    assert post(protocol, VALID[protocol]).status_code == 200


@pytest.mark.parametrize(("protocol", "change", "words"), CASES)
def test_rejected_like_the_api(protocol, change, words):
    body = copy.deepcopy(VALID[protocol])
    change(body)
    assert_real_400(protocol, post(protocol, body), words)


def test_bedrock_results_must_answer_the_previous_turn_not_an_older_one():
    body = copy.deepcopy(BEDROCK)
    body["messages"] += [{"role": "assistant", "content": [{"text": "done"}]}, {"role": "user", "content": [{"toolResult": {"toolUseId": "tu_1", "content": [{"text": "again"}]}}]}]
    assert_real_400("bedrock", post("bedrock", body), "has no toolUse block in the previous turn")


LIMITS = [
    ("openai_chat", {"max_tokens": "100"}, "Invalid type for 'max_tokens': expected an integer"),
    ("openai_chat", {"max_completion_tokens": 0}, "Invalid 'max_completion_tokens': integer below minimum value"),
    ("openai_chat", {"tools": [{"type": "function", "function": {"name": "add me"}}]}, "string does not match pattern"),
    ("openai_chat", {"tools": [{"type": "function", "function": {"name": "add", "parameters": "{}"}}]}, "Invalid type for 'tools[0].function.parameters'"),
    ("openai_responses", {"max_output_tokens": 5}, "Expected a value >= 16, but got 5"),
    # a tool's type, and the parts of a user message
    ("openai_chat", {"tools": [{"function": {"name": "add"}}]}, "Missing required parameter: 'tools[0].type'"),
    ("openai_chat", {"tools": [{"type": "FUNCTION", "function": {"name": "add"}}]}, "Invalid value: 'FUNCTION'. Supported values are: 'function' and 'custom'."),
    ("openai_chat", {"messages": [{"role": "system", "content": None}, {"role": "user", "content": "hi"}]}, "Invalid type for 'messages[0].content': expected one of a string or array of objects, but got null"),
    ("openai_responses", {"tools": [{"name": "add", "parameters": {}}]}, "Missing required parameter: 'tools[0].type'"),
    ("openai_responses", {"tools": [{"type": "functions", "name": "add"}]}, "Invalid value: 'functions'. Supported values are: 'function', "),
    ("openai_responses", {"tools": [{"type": "function", "parameters": {}}]}, "Missing required parameter: 'tools[0].name'"),
    ("openai_responses", {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,AA==", "details": "auto"}]}]}, "Unknown parameter: 'input[0].content[0].details'."),
    ("openai_responses", {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,AA==", "detail": "AUTO"}]}]}, "Invalid value: 'AUTO'. Supported values are: 'low', 'high', 'auto', 'original'."),
    ("anthropic", {"max_tokens": "100"}, "max_tokens: Input should be a valid integer"),
    ("anthropic", {"max_tokens": 0}, "max_tokens: Input should be greater than or equal to 1"),
    ("anthropic", {"model": None}, "model: Input should be a valid string"),
    ("gemini", {"generationConfig": {"maxOutputTokens": "100"}}, "generation_config.max_output_tokens"),
    ("bedrock", {"inferenceConfig": {"maxTokens": 0}}, "at 'inferenceConfig.maxTokens' failed to satisfy constraint"),
]


@pytest.mark.parametrize(("protocol", "extra", "words"), LIMITS)
def test_request_knobs_of_the_wrong_type_or_range_are_rejected(protocol, extra, words):
    assert_real_400(protocol, post(protocol, {**VALID[protocol], **extra}), words)


@pytest.mark.parametrize(("protocol", "extra"), [("openai_chat", {"max_tokens": 1}), ("openai_responses", {"max_output_tokens": 16}), ("anthropic", {"max_tokens": 1}),
                                                 ("openai_responses", {"tools": [{"type": "function", "name": "add"}, {"type": "web_search"}]}),
                                                 ("openai_responses", {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,AA==", "detail": "low"}]}]}),
                                                 ("gemini", {"generationConfig": {"maxOutputTokens": 1}}), ("bedrock", {"inferenceConfig": {"maxTokens": 1}})])  # fmt: skip
def test_the_smallest_accepted_limits_pass(protocol, extra):
    assert post(protocol, {**VALID[protocol], **extra}).status_code == 200
