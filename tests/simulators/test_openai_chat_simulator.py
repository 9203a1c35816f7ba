"""OpenAIChatSimulator on its own: wire framing, validation errors, faults, determinism."""

from __future__ import annotations

import json

import httpx
import pytest

from loopkit import simulators
from loopkit.errors import IncompleteScript, UsageError
from loopkit.messages import Usage
from loopkit.script import HttpFault, MidStreamError, Truncate, Turn, call


def post(sim, body: dict, path: str = "/v1/chat/completions") -> httpx.Response:
    with httpx.Client(transport=simulators.transport(sim), base_url="http://sim") as client:
        return client.post(path, json=body)


def frames(resp: httpx.Response) -> list:
    out = []
    for event in resp.text.split("\n\n"):
        if event:
            assert event.startswith("data: ") and "\n" not in event, event  # data-only framing, one line each
            payload = event[len("data: ") :]
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


BASE = {"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}]}
TOOLS = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]


def test_tool_call_stream_framing():
    sim = simulators.create("openai_chat", [Turn(tool_calls=[call("add", {"a": 1, "b": "xyz"}, id="call_1"), call("add", {"a": 2})], chunk_size=4)])
    resp = post(sim, {**BASE, "tools": TOOLS, "stream": True, "stream_options": {"include_usage": True}})
    assert resp.headers["content-type"] == "text/event-stream; charset=utf-8" and resp.headers["x-request-id"]
    chunks = frames(resp)
    assert chunks[-1] == "[DONE]"
    data = chunks[:-1]
    assert len({(c["id"], c["created"], c["model"]) for c in data}) == 1
    assert all(c["usage"] is None for c in data[:-1])
    first = data[0]["choices"][0]["delta"]
    assert first == {"role": "assistant", "content": None, "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "add", "arguments": ""}}], "refusal": None}
    fragments = [tc for c in data[1:-2] for tc in c["choices"][0]["delta"]["tool_calls"]]
    headers = [f for f in fragments if "id" in f]
    assert [h["index"] for h in headers] == [1] and headers[0]["id"] == "call_sim0002"
    for f in fragments:
        if "id" not in f:
            assert set(f) == {"index", "function"} and set(f["function"]) == {"arguments"}  # id/name only once
    args = {0: "", 1: ""}
    for f in fragments:
        args[f["index"]] += f["function"]["arguments"]
    assert args == {0: '{"a":1,"b":"xyz"}', 1: '{"a":2}'}
    assert len({len(f["function"]["arguments"]) for f in fragments if f["function"]["arguments"]}) > 1  # uneven splits
    assert data[-2]["choices"] == [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "tool_calls"}]
    assert data[-1]["choices"] == [] and data[-1]["usage"]["prompt_tokens"] > 0


def test_text_stream_without_include_usage_has_no_usage():
    sim = simulators.create("openai_chat", [Turn(text="hello world", chunk_size=5)])
    data = frames(post(sim, {**BASE, "stream": True}))
    assert data[-1] == "[DONE]"
    assert [c["choices"][0]["delta"] for c in data[:-1]] == [
        {"role": "assistant", "content": "", "refusal": None},
        {"content": "hello"},
        {"content": " worl"},
        {"content": "d"},
        {},
    ]
    assert all("usage" not in c for c in data[:-1])


def test_non_streaming_body():
    sim = simulators.create("openai_chat", [Turn(text="hi", tool_calls=[call("add", {"a": 1}, id="call_9")], usage=Usage(input=5, output=2, cache_read=1))])
    body = post(sim, BASE).json()
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["tool_calls"] == [{"id": "call_9", "type": "function", "function": {"name": "add", "arguments": '{"a":1}'}}]
    assert body["choices"][0]["finish_reason"] == "tool_calls"
    assert body["usage"]["prompt_tokens"] == 6 and body["usage"]["prompt_tokens_details"]["cached_tokens"] == 1


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_field_streams_thinking_like_a_compatible_server(field):
    turn = Turn(thinking="Think it over", text="hi there", tool_calls=[call("add", {"a": 1}, id="call_1")], chunk_size=7)
    data = frames(post(simulators.create("openai_chat", [turn], reasoning_field=field), {**BASE, "tools": TOOLS, "stream": True}))
    deltas = [c["choices"][0]["delta"] for c in data[:-1]]
    assert deltas[:4] == [
        {"role": "assistant", "content": None, field: ""},
        {"content": None, field: "Think i"},
        {"content": None, field: "t over"},
        {"content": "", "refusal": None, field: None},
    ]
    assert deltas[4:6] == [{"content": "hi ther", field: None}, {"content": "e", field: None}]
    assert deltas[6]["tool_calls"][0]["id"] == "call_1" and "role" not in deltas[6]
    body = post(simulators.create("openai_chat", [turn], reasoning_field=field), {**BASE, "tools": TOOLS}).json()
    message = body["choices"][0]["message"]
    assert message[field] == "Think it over" and message["content"] == "hi there"
    # a turn without thinking: the field is there, and null
    assert post(simulators.create("openai_chat", ["plain"], reasoning_field=field), BASE).json()["choices"][0]["message"][field] is None


def test_reasoning_field_is_off_by_default_and_checked():
    turn = Turn(thinking="Think it over", text="hi")
    data = frames(post(simulators.create("openai_chat", [turn]), {**BASE, "stream": True}))
    assert not any("reasoning" in k for c in data[:-1] for k in c["choices"][0]["delta"])
    assert "Think" not in post(simulators.create("openai_chat", [turn]), BASE).text
    with pytest.raises(UsageError, match="reasoning_field 'thoughts'"):
        simulators.create("openai_chat", [turn], reasoning_field="thoughts")


@pytest.mark.parametrize(
    ("extra", "param", "fragment"),
    [
        ({"parallel_tool_calls": False}, "parallel_tool_calls", "parallel_tool_calls is only allowed when 'tools' are specified"),
        ({"tool_choice": "auto"}, "tool_choice", "'tool_choice' is only allowed when 'tools' are specified"),
        ({"stream_options": {"include_usage": True}}, "stream_options", "only allowed when 'stream' is enabled"),
    ],
)
def test_rejects_like_the_api(extra, param, fragment):
    sim = simulators.create("openai_chat", ["never used"])
    resp = post(sim, {**BASE, **extra})
    assert resp.status_code == 400
    err = resp.json()["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert (err["type"], err["param"]) == ("invalid_request_error", param) and fragment in err["message"]
    assert sim.used == 0


def test_rejects_orphan_tool_message_and_unanswered_call():
    sim = simulators.create("openai_chat", [])
    orphan = post(sim, {**BASE, "messages": [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "call_1", "content": "r"}]})
    assert orphan.status_code == 400 and "must be a response to a preceeding message" in orphan.json()["error"]["message"]
    assistant = {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{}"}}]}
    unanswered = post(sim, {**BASE, "messages": [{"role": "user", "content": "x"}, assistant, {"role": "user", "content": "y"}]})
    assert unanswered.status_code == 400 and "did not have response messages: call_1" in unanswered.json()["error"]["message"]


def test_http_fault_has_real_headers_and_body():
    sim = simulators.create("openai_chat", [Turn(faults=[HttpFault(status=429, retry_after=1.5)])])
    resp = post(sim, BASE)
    assert resp.status_code == 429
    assert (resp.headers["retry-after"], resp.headers["retry-after-ms"], resp.headers["x-ratelimit-remaining-requests"]) == ("1.5", "1500", "0")
    assert resp.json()["error"]["code"] == "rate_limit_exceeded"


def test_mid_stream_error_frame_and_no_done():
    sim = simulators.create("openai_chat", [Turn(text="abcdefghij", chunk_size=2, faults=[MidStreamError(after=2, message="boom")])])
    data = frames(post(sim, {**BASE, "stream": True}))
    assert len(data) == 3 and data[-1] == {"error": {"message": "boom", "type": "server_error", "param": None, "code": None}}


def test_turn_error_is_an_in_stream_error():
    sim = simulators.create("openai_chat", [Turn(text="ab", error="model crashed")])
    data = frames(post(sim, {**BASE, "stream": True}))
    assert data[-1]["error"]["message"] == "model crashed" and "[DONE]" not in data


def test_truncate_cuts_the_connection():
    sim = simulators.create("openai_chat", [Turn(text="abcdefgh", chunk_size=2, faults=[Truncate(after=2)])])
    with pytest.raises(httpx.RemoteProtocolError):
        post(sim, {**BASE, "stream": True})


def test_overrun_and_unused_turns_are_reported():
    sim = simulators.create("openai_chat", ["one"])
    assert post(sim, BASE).status_code == 200
    over = sim.handle(simulators.SimRequest(method="POST", path="/v1/chat/completions", headers={"content-type": "application/json"}, body=json.dumps(BASE).encode()))
    assert over.status == 500 and "script exhausted: request #2" in json.loads(over.body)["error"]["message"]
    with pytest.raises(IncompleteScript, match="#2"):
        sim.assert_complete()
    unused = simulators.create("openai_chat", ["a", "b"])
    post(unused, BASE)
    with pytest.raises(IncompleteScript, match="turns 2..2"):
        unused.assert_complete()


def test_unknown_route_is_404():
    sim = simulators.create("openai_chat", [])
    assert post(sim, BASE, path="/v1/embeddings").status_code == 404


def test_output_is_deterministic():
    script = [Turn(text="same", tool_calls=[call("add", {"a": 1})])]
    body = {**BASE, "tools": TOOLS, "stream": True, "stream_options": {"include_usage": True}}
    assert post(simulators.create("openai_chat", script), body).content == post(simulators.create("openai_chat", script), body).content
