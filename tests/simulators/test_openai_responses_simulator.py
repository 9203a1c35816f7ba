"""OpenAIResponsesSimulator on its own: event sequence, ids, validation, faults, determinism."""

from __future__ import annotations

import json

import httpx
import pytest

from loopkit import simulators
from loopkit.script import HttpFault, MidStreamError, Turn, call

BASE = {"model": "gpt-x", "input": [{"role": "user", "content": "hi"}]}


def post(sim, body: dict) -> httpx.Response:
    with httpx.Client(transport=simulators.transport(sim), base_url="http://sim") as client:
        return client.post("/v1/responses", json=body)


def events(resp: httpx.Response) -> list[dict]:
    out = []
    for raw in resp.text.split("\n\n"):
        if raw:
            head, data = raw.split("\n")
            payload = json.loads(data.removeprefix("data: "))
            assert head == f"event: {payload['type']}"
            out.append(payload)
    return out


def test_full_event_sequence():
    sim = simulators.create("openai_responses", [Turn(thinking="think", thinking_signature="enc", text="hello", tool_calls=[call("add", {"a": 1}, id="call_1")], chunk_size=3)])
    evs = events(post(sim, {**BASE, "stream": True}))
    assert [e["sequence_number"] for e in evs] == list(range(len(evs)))
    assert [e["type"] for e in evs] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        *["response.function_call_arguments.delta"] * 4,  # uneven pieces: 3, 1, 1, 2
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    added = [e for e in evs if e["type"] == "response.output_item.added"]
    assert [e["output_index"] for e in added] == [0, 1, 2]
    assert added[0]["item"] == {"id": "rs_sim0002", "type": "reasoning", "summary": [], "encrypted_content": "enc"}
    assert added[2]["item"] == {"id": "fc_sim0004", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": "call_1", "name": "add"}
    deltas = [e for e in evs if e["type"] == "response.function_call_arguments.delta"]
    assert all(d["item_id"] == "fc_sim0004" and d["output_index"] == 2 for d in deltas)
    assert "".join(d["delta"] for d in deltas) == '{"a":1}'
    final = evs[-1]["response"]
    assert final["status"] == "completed" and [i["type"] for i in final["output"]] == ["reasoning", "message", "function_call"]
    assert final["id"] == evs[0]["response"]["id"] and evs[0]["response"]["output"] == []
    assert "[DONE]" not in post(simulators.create("openai_responses", ["x"]), {**BASE, "stream": True}).text


def test_length_is_response_incomplete():
    sim = simulators.create("openai_responses", [Turn(text="cut", stop_reason="length")])
    last = events(post(sim, {**BASE, "stream": True}))[-1]
    assert last["type"] == "response.incomplete" and last["response"]["incomplete_details"] == {"reason": "max_output_tokens"}


def test_turn_error_is_response_failed():
    sim = simulators.create("openai_responses", [Turn(text="x", error="boom")])
    last = events(post(sim, {**BASE, "stream": True}))[-1]
    assert last["type"] == "response.failed" and last["response"]["error"] == {"code": "server_error", "message": "boom"}


def test_mid_stream_error_event_nested_form():
    sim = simulators.create("openai_responses", [Turn(text="abcdef", faults=[MidStreamError(after=3, message="quota", error_type="insufficient_quota")])])
    evs = events(post(sim, {**BASE, "stream": True}))
    assert len(evs) == 4 and evs[-1] == {
        "type": "error",
        "sequence_number": 3,
        "error": {"type": "insufficient_quota", "code": "insufficient_quota", "message": "quota", "param": None},
    }


def test_non_streaming_body():
    sim = simulators.create("openai_responses", [Turn(text="hi", tool_calls=[call("add", "{bad")])])
    body = post(sim, {**BASE, "parallel_tool_calls": False, "tool_choice": "required"}).json()
    assert body["object"] == "response" and body["status"] == "completed"
    assert (body["parallel_tool_calls"], body["tool_choice"]) == (False, "required")
    assert body["output"][1]["arguments"] == "{bad" and body["usage"]["total_tokens"] > 0


def test_function_call_output_must_match_a_call():
    sim = simulators.create("openai_responses", ["ok", "ok"])
    fc = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add", "arguments": "{}"}
    bad = post(sim, {**BASE, "input": [fc, {"type": "function_call_output", "call_id": "call_2", "output": "x"}]})
    assert bad.status_code == 400
    assert bad.json()["error"] == {"message": "No tool call found for function call output with call_id call_2.", "type": "invalid_request_error", "param": "input", "code": None}
    for ref in ("call_1", "fc_1"):  # the item id is accepted too (docs/wire.md §2.6)
        assert post(sim, {**BASE, "input": [fc, {"type": "function_call_output", "call_id": ref, "output": "x"}]}).status_code == 200


def test_input_items_must_be_objects_of_a_known_type():
    sim = simulators.create("openai_responses", ["ok", "ok", "ok"])
    bad = post(sim, {**BASE, "input": [{"role": "user", "content": "hi"}, {"type": "thought", "signature": "x"}]})
    assert bad.status_code == 400
    assert bad.json()["error"]["param"] == "input[1].type"
    assert bad.json()["error"]["message"].startswith("Invalid value: 'thought'. Supported values are: 'message', 'reasoning'")
    scalar = post(sim, {**BASE, "input": [{"role": "user", "content": "hi"}, 42]})
    assert scalar.status_code == 400
    assert scalar.json()["error"]["message"] == "Invalid type for 'input[1]': expected an object, but got a int instead."
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"}
    assert post(sim, {**BASE, "input": [{"role": "user", "content": "hi"}, reasoning, {"type": "message", "role": "user", "content": "go on"}]}).status_code == 200


def test_missing_model_or_input():
    sim = simulators.create("openai_responses", [])
    assert post(sim, {"input": "x"}).json()["error"]["param"] == "model"
    assert post(sim, {"model": "m"}).json()["error"]["param"] == "input"


def test_http_fault():
    sim = simulators.create("openai_responses", [Turn(faults=[HttpFault(status=500)])])
    resp = post(sim, BASE)
    assert resp.status_code == 500 and resp.json()["error"]["type"] == "server_error" and resp.headers["x-request-id"]


def test_deterministic():
    script = [Turn(thinking="t", text="same", tool_calls=[call("add")])]
    a = post(simulators.create("openai_responses", script), {**BASE, "stream": True}).content
    assert a == post(simulators.create("openai_responses", script), {**BASE, "stream": True}).content


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/models"])
def test_other_routes_404(path):
    sim = simulators.create("openai_responses", [])
    with httpx.Client(transport=simulators.transport(sim), base_url="http://sim") as client:
        assert client.post(path, json=BASE).status_code == 404
