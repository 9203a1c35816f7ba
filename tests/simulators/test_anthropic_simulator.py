"""AnthropicSimulator, sans-IO: request validation with the API's error bodies, stream layout, faults."""

from __future__ import annotations

import json

import pytest

from loopkit import simulators
from loopkit.errors import IncompleteScript
from loopkit.messages import Usage
from loopkit.script import HttpFault, MidStreamError, Truncate, Turn, call
from loopkit.simulators import SimRequest

HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json"}


def request(body=None, *, headers=HEADERS, path="/v1/messages", **fields):
    data = {"model": "claude-test", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}], **fields} if body is None else body
    return SimRequest(method="POST", path=path, headers=dict(headers), body=json.dumps(data).encode())


def events(resp):
    """(event name, data) pairs of a stream body, checking the framing on the way."""
    text = resp.body.decode()
    assert text.endswith("\n\n") and "[DONE]" not in text
    out = []
    for raw in text.split("\n\n")[:-1]:
        lines = raw.split("\n")
        assert lines[0].startswith("event: ") and lines[1].startswith("data: ") and len(lines) == 2
        name, data = lines[0][7:], json.loads(lines[1][6:])
        assert data["type"] == name
        out.append((name, data))
    return out


def error_of(resp):
    data = json.loads(resp.body)
    assert set(data) == {"type", "error", "request_id"} and data["type"] == "error"
    assert data["request_id"].startswith("req_")
    return resp.status, data["error"]["type"], data["error"]["message"]


# --- streams -----------------------------------------------------------------------------------


def test_stream_layout_matches_the_real_service():
    sim = simulators.create("anthropic", [Turn(thinking="hmm", thinking_signature="SIG", text="Hello!", tool_calls=[call("f", {"x": 1}, id="toolu_A")], usage=Usage(input=30, output=12, cache_read=4))], chunk_size=4)
    resp = sim.handle(request(stream=True))
    assert resp.status == 200 and resp.headers["content-type"].startswith("text/event-stream")
    assert resp.headers["request-id"].startswith("req_")
    evs = events(resp)
    names = [n for n, _ in evs]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names[1:3] == ["content_block_start", "ping"]
    start = evs[0][1]["message"]
    assert start["content"] == [] and start["stop_reason"] is None and start["usage"]["output_tokens"] == 1
    assert start["usage"]["input_tokens"] == 30 and start["model"] == "claude-test"
    blocks = [d["content_block"] for n, d in evs if n == "content_block_start"]
    assert blocks == [
        {"type": "thinking", "thinking": "", "signature": ""},
        {"type": "text", "text": ""},
        {"type": "tool_use", "id": "toolu_A", "name": "f", "input": {}},
    ]
    deltas = [(d["index"], d["delta"]) for n, d in evs if n == "content_block_delta"]
    thinking = [d for i, d in deltas if i == 0]
    assert thinking == [{"type": "thinking_delta", "thinking": "hmm"}, {"type": "signature_delta", "signature": "SIG"}]
    assert "".join(d["text"] for i, d in deltas if i == 1) == "Hello!"
    tool = [d["partial_json"] for i, d in deltas if i == 2]
    assert tool[0] == "" and json.loads("".join(tool)) == {"x": 1}
    # signature_delta comes just before the thinking block's stop
    sig_pos = next(k for k, (n, d) in enumerate(evs) if n == "content_block_delta" and d["delta"]["type"] == "signature_delta")
    assert evs[sig_pos + 1] == ("content_block_stop", {"type": "content_block_stop", "index": 0})
    assert evs[-2][1] == {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"input_tokens": 30, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 4, "output_tokens": 12},
    }
    assert [n for n, _ in evs].count("content_block_stop") == 3


def test_max_tokens_inside_a_tool_call_leaves_the_block_open():
    sim = simulators.create("anthropic", [Turn(tool_calls=[call("f", {"x": 1})], stop_reason="length")])
    evs = events(sim.handle(request(stream=True)))
    assert "content_block_stop" not in [n for n, _ in evs]
    assert evs[-2][1]["delta"]["stop_reason"] == "max_tokens"


def test_refusal_carries_stop_details():
    sim = simulators.create("anthropic", [Turn(text="No.", error="unsafe"), Turn(text="No.", error="unsafe")])
    evs = events(sim.handle(request(stream=True)))
    assert evs[-2][1]["delta"]["stop_reason"] == "refusal"
    assert evs[-2][1]["delta"]["stop_details"] == {"type": "refusal", "category": None, "explanation": "unsafe"}
    body = json.loads(sim.handle(request()).body)
    assert body["stop_reason"] == "refusal" and body["stop_details"]["explanation"] == "unsafe"


def test_non_streaming_body():
    sim = simulators.create("anthropic", [Turn(text="Hi", tool_calls=[call("f", {"x": 1}, id="toolu_B")])])
    resp = sim.handle(request())
    assert resp.headers["content-type"] == "application/json"
    data = json.loads(resp.body)
    assert data["type"] == "message" and data["role"] == "assistant" and data["id"].startswith("msg_")
    assert data["content"] == [{"type": "text", "text": "Hi"}, {"type": "tool_use", "id": "toolu_B", "name": "f", "input": {"x": 1}}]
    assert data["stop_reason"] == "tool_use" and data["stop_sequence"] is None
    assert {"input_tokens", "output_tokens"} <= set(data["usage"])


def test_ids_are_deterministic():
    def run():
        sim = simulators.create("anthropic", [Turn(tool_calls=[call("f"), call("g")])])
        return events(sim.handle(request(stream=True)))

    assert run() == run()


# --- validation --------------------------------------------------------------------------------


def test_missing_key_is_401_authentication_error():
    sim = simulators.create("anthropic", ["ok"])
    resp = sim.handle(request(headers={"anthropic-version": "2023-06-01"}))
    assert error_of(resp) == (401, "authentication_error", "x-api-key header is required")
    assert sim.used == 0


def test_bearer_auth_and_any_version_are_accepted():
    sim = simulators.create("anthropic", ["ok"])
    resp = sim.handle(request(headers={"authorization": "Bearer k", "anthropic-version": "2026-10-21"}))
    assert resp.status == 200


def test_missing_version_header_is_400():
    sim = simulators.create("anthropic", ["ok"])
    resp = sim.handle(request(headers={"x-api-key": "k"}))
    assert error_of(resp) == (400, "invalid_request_error", "anthropic-version: header is required")


@pytest.mark.parametrize("field", ["model", "max_tokens", "messages"])
def test_required_body_fields(field):
    body = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "x"}]}
    del body[field]
    resp = simulators.create("anthropic", ["ok"]).handle(request(body))
    assert error_of(resp) == (400, "invalid_request_error", f"{field}: Field required")


def test_orphan_tool_result_is_400_with_the_real_message():
    msgs = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "no tools here"}]},
        {"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "tool_result", "tool_use_id": "toolu_01GH", "content": "1"}]},
    ]
    resp = simulators.create("anthropic", ["ok"]).handle(request(messages=msgs))
    assert error_of(resp) == (
        400,
        "invalid_request_error",
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01GH. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    )
    assert resp.headers["x-should-retry"] == "false"


def test_tool_use_without_result_is_400():
    msgs = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_X", "name": "f", "input": {}}]},
        {"role": "user", "content": "never answered"},
    ]
    status, etype, message = error_of(simulators.create("anthropic", ["ok"]).handle(request(messages=msgs)))
    assert (status, etype) == (400, "invalid_request_error")
    assert message.startswith("messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_X.")


def test_matching_tool_results_are_accepted():
    msgs = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}, {"type": "tool_use", "id": "b", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "boom", "is_error": True}, {"type": "tool_result", "tool_use_id": "b"}]},
    ]
    assert simulators.create("anthropic", ["ok"]).handle(request(messages=msgs)).status == 200


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ([{"type": "text", "text": ""}], "messages: text content blocks must be non-empty"),
        ("", "messages: text content blocks must be non-empty"),
    ],
)
def test_empty_text_is_400(content, message):
    msgs = [{"role": "user", "content": content}, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "x"}]
    assert error_of(simulators.create("anthropic", ["ok"]).handle(request(messages=msgs)))[2] == message


def test_empty_error_result_is_400():
    msgs = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "", "is_error": True}]},
    ]
    assert error_of(simulators.create("anthropic", ["ok"]).handle(request(messages=msgs)))[2] == (
        "messages.2.content.0.tool_result: content cannot be empty if `is_error` is true"
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"tool_choice": {"type": "none", "disable_parallel_tool_use": True}}, "tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted"),
        ({"tool_choice": {"type": "tool"}}, "tool_choice.tool.name: Field required"),
        ({"tool_choice": {"type": "required"}}, "tool_choice: Input tag does not match any of the expected tags: 'auto', 'any', 'tool', 'none'"),
        ({"tool_choice": {"type": "any"}, "thinking": {"type": "enabled", "budget_tokens": 1024}}, "Thinking may not be enabled when tool_choice forces tool use."),
    ],
)
def test_tool_choice_validation(fields, message):
    resp = simulators.create("anthropic", ["ok"]).handle(request(tools=[{"name": "f", "input_schema": {"type": "object"}}], **fields))
    assert error_of(resp) == (400, "invalid_request_error", message)


@pytest.mark.parametrize("choice", [{"type": "auto", "disable_parallel_tool_use": True}, {"type": "any"}, {"type": "tool", "name": "f", "disable_parallel_tool_use": False}, {"type": "none"}])
def test_valid_tool_choices_are_accepted(choice):
    resp = simulators.create("anthropic", ["ok"]).handle(request(tools=[{"name": "f", "input_schema": {"type": "object"}}], tool_choice=choice))
    assert resp.status == 200


def test_unknown_path_is_404():
    resp = simulators.create("anthropic", ["ok"]).handle(request(path="/v1/complete"))
    assert error_of(resp)[:2] == (404, "not_found_error")


# --- faults and the script ---------------------------------------------------------------------


def test_429_fault_has_the_real_body_and_headers():
    sim = simulators.create("anthropic", [Turn(faults=[HttpFault(status=429, retry_after=2)])])
    resp = sim.handle(request())
    assert error_of(resp)[:2] == (429, "rate_limit_error")
    assert resp.headers["retry-after"] == "2" and resp.headers["x-should-retry"] == "true"


@pytest.mark.parametrize(("status", "etype", "message"), [(529, "overloaded_error", "Overloaded"), (500, "api_error", "Internal server error"), (400, "invalid_request_error", "Invalid request")])
def test_http_fault_defaults(status, etype, message):
    resp = simulators.create("anthropic", [Turn(faults=[HttpFault(status=status)])]).handle(request())
    assert error_of(resp) == (status, etype, message)
    assert resp.headers["x-should-retry"] == ("false" if status == 400 else "true")


def test_mid_stream_error_event():
    sim = simulators.create("anthropic", [Turn(text="hello world", faults=[MidStreamError(after=2, message="Overloaded", error_type="overloaded_error")])])
    evs = events(sim.handle(request(stream=True)))
    assert [n for n, _ in evs] == ["message_start", "content_block_start", "error"]
    assert evs[-1][1] == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def test_truncate_cuts_inside_an_event():
    resp = simulators.create("anthropic", [Turn(text="hello world", faults=[Truncate(after=3)])]).handle(request(stream=True))
    assert resp.truncated and not resp.body.endswith(b"\n\n")


def test_script_overrun_and_assert_complete():
    sim = simulators.create("anthropic", ["one", "two"])
    assert sim.handle(request()).status == 200
    with pytest.raises(IncompleteScript, match="1 of 2 turn"):
        sim.assert_complete()
    assert sim.handle(request()).status == 200
    resp = sim.handle(request())
    status, etype, message = error_of(resp)
    assert (status, etype) == (500, "api_error") and "script exhausted: request #3" in message
    with pytest.raises(IncompleteScript, match="#3"):
        sim.assert_complete()
    assert [r.number for r in sim.requests] == [1, 2, 3]


def test_validation_after_a_repeated_history_still_checks_everything_that_changed():
    """The simulator re-checks only the tail of a history it already accepted; a changed early
    message or a bad new tail is still rejected."""
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]}
    ok = [{"role": "user", "content": "hi"}, use, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "1"}]}]
    sim = simulators.create("anthropic", ["r1", "r2"])
    assert sim.handle(request(messages=ok)).status == 200
    orphan_tail = ok + [{"role": "assistant", "content": "fine"}, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz", "content": "x"}]}]
    assert error_of(sim.handle(request(messages=orphan_tail)))[2].startswith("messages.4.content.0: unexpected `tool_use_id`")
    changed_head = [{"role": "user", "content": [{"type": "text", "text": ""}]}, *ok[1:], {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]
    assert error_of(sim.handle(request(messages=changed_head)))[2] == "messages: text content blocks must be non-empty"
    answered_late = ok[:2] + [{"role": "user", "content": "no result"}]
    assert error_of(sim.handle(request(messages=answered_late)))[2].startswith("messages.1: `tool_use` ids were found without")
    assert sim.handle(request(messages=ok + [{"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}])).status == 200


def test_delta_frames_are_byte_identical_to_the_generic_encoder():
    from loopkit.simulators._core import sse
    from loopkit.simulators.anthropic import _delta

    for kind, field, value in [("text_delta", "text", 'a "q" \\ ü 👋\n'), ("input_json_delta", "partial_json", '{"a": 1'), ("signature_delta", "signature", "")]:
        assert _delta(7, kind, field, value) == sse({"type": "content_block_delta", "index": 7, "delta": {"type": kind, field: value}}, "content_block_delta")
