"""The Gemini simulator on its own: routes, auth, validation, framing, errors, faults."""

from __future__ import annotations

import json
from typing import Any

import pytest

from loopkit.errors import IncompleteScript
from loopkit.messages import Usage
from loopkit.script import HttpFault, MidStreamError, ScriptedCall, Truncate, Turn, call
from loopkit.simulators import SimRequest
from loopkit.simulators.gemini import GeminiSimulator, gemini_sse

HELLO = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def post(sim: GeminiSimulator, body: Any = HELLO, *, path: str = "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
         query: dict[str, str] | None = None, headers: dict[str, str] | None = None):  # fmt: skip
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    q = {"alt": "sse"} if query is None else query
    h = {"x-goog-api-key": "k", "content-type": "application/json"} if headers is None else headers
    return sim.handle(SimRequest(method="POST", path=path, query=q, headers=h, body=raw))


def events(resp: Any) -> list[dict[str, Any]]:
    out = []
    for chunk in resp.chunks:
        assert chunk.startswith(b"data: ") and chunk.endswith(b"\r\n\r\n") and chunk.count(b"\r\n\r\n") == 1
        out.append(json.loads(chunk[len(b"data: ") : -4]))
    return out


def error_of(resp: Any) -> dict[str, Any]:
    assert resp.headers["content-type"] == "application/json; charset=UTF-8"
    return json.loads(resp.body)["error"]


@pytest.mark.parametrize("version", ["v1", "v1beta"])
@pytest.mark.parametrize("method", ["generateContent", "streamGenerateContent"])
def test_routes_both_versions_and_methods(version: str, method: str) -> None:
    sim = GeminiSimulator(["ok"])
    resp = post(sim, path=f"/{version}/models/gemini-2.5-flash:{method}", query={"alt": "sse"} if method.startswith("stream") else {})
    assert resp.status == 200
    assert resp.streaming == method.startswith("stream")


def test_unknown_path_is_a_google_404() -> None:
    resp = post(GeminiSimulator(["ok"]), path="/v1beta/models/m:countTokens")
    assert resp.status == 404
    assert error_of(resp)["status"] == "NOT_FOUND"


def test_stream_framing_is_crlf_with_one_space_and_google_json_spacing() -> None:
    sim = GeminiSimulator([Turn(text="The capital of France is Paris.", chunk_size=12)])
    resp = post(sim)
    assert resp.headers["content-type"] == "text/event-stream"
    chunks = events(resp)
    assert [c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks] == ["The capital ", "of France is", " Paris."]
    assert [c["candidates"][0].get("finishReason") for c in chunks] == [None, None, "STOP"]
    assert "candidatesTokenCount" not in chunks[0]["usageMetadata"] and "candidatesTokenCount" in chunks[-1]["usageMetadata"]
    assert resp.chunks[0].startswith(b'data: {"candidates": [{"content": {"parts": [{"text": "The capital "}],"role": "model"}')
    assert {c["responseId"] for c in chunks} == {"simresp0001"} and chunks[0]["modelVersion"] == "gemini-2.5-flash"
    assert gemini_sse({"a": 1}) == b'data: {"a": 1}\r\n\r\n'


def test_tool_calls_arrive_whole_in_one_chunk_then_an_empty_stop_chunk() -> None:
    sim = GeminiSimulator([Turn(tool_calls=[call("a", {"x": 1}), ScriptedCall(name="b", arguments='{"y": 2}', id="given", thought_signature="U0lH")])])
    chunks = events(post(sim))
    assert chunks[0]["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "a", "args": {"x": 1}}},
        {"functionCall": {"name": "b", "args": {"y": 2}, "id": "given"}, "thoughtSignature": "U0lH"},
    ]
    assert chunks[1]["candidates"][0] == {"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": "STOP", "index": 0}


def test_gemini_3_models_sign_the_first_call() -> None:
    sim = GeminiSimulator([Turn(tool_calls=[call("a"), call("a")])])
    parts = events(post(sim, path="/v1beta/models/gemini-3-pro-preview:streamGenerateContent"))[0]["candidates"][0]["content"]["parts"]
    assert "thoughtSignature" in parts[0] and "thoughtSignature" not in parts[1]


def test_nonstream_body_merges_text_and_keeps_finish() -> None:
    sim = GeminiSimulator([Turn(text="Hello, world", tool_calls=[call("f", {})], usage=Usage(input=3, output=4, total_tokens=7))])
    resp = post(sim, path="/v1beta/models/m:generateContent", query={})
    data = json.loads(resp.body)
    assert data["candidates"] == [{"content": {"parts": [{"text": "Hello, world"}, {"functionCall": {"name": "f", "args": {}}}], "role": "model"},
                                   "finishReason": "STOP", "index": 0}]  # fmt: skip
    assert data["usageMetadata"]["totalTokenCount"] == 7


def test_stream_endpoint_without_alt_sse_answers_a_json_array() -> None:
    resp = post(GeminiSimulator(["ab"]), query={})
    data = json.loads(resp.body)
    assert isinstance(data, list) and data[-1]["candidates"][0]["finishReason"] == "STOP"


@pytest.mark.parametrize(
    ("turn", "finish", "message"),
    [
        (Turn(text="x", stop_reason="length"), "MAX_TOKENS", None),
        (Turn(error="SAFETY"), "SAFETY", None),
        (Turn(error="SPII: personal data"), "SPII", "personal data"),
        (Turn(error="oops"), "OTHER", "oops"),
        (Turn(tool_calls=[call("f", "{bad")]), "MALFORMED_FUNCTION_CALL", "Malformed function call: f({bad)"),
    ],
)
def test_finish_reasons(turn: Turn, finish: str, message: str | None) -> None:
    last = events(post(GeminiSimulator([turn])))[-1]["candidates"][0]
    assert last["finishReason"] == finish
    assert last.get("finishMessage") == message
    if finish not in ("STOP", "MAX_TOKENS"):
        assert "content" not in last


# --- auth and validation ------------------------------------------------------------------------


def test_missing_key_is_403_and_query_key_is_accepted() -> None:
    sim = GeminiSimulator(["ok"])
    denied = post(sim, headers={})
    assert (denied.status, error_of(denied)["status"]) == (403, "PERMISSION_DENIED")
    assert post(sim, headers={}, query={"alt": "sse", "key": "k"}).status == 200


def test_empty_key_is_400_api_key_invalid() -> None:
    resp = post(GeminiSimulator(["ok"]), headers={"x-goog-api-key": ""})
    err = error_of(resp)
    assert (resp.status, err["status"], err["details"][0]["reason"]) == (400, "INVALID_ARGUMENT", "API_KEY_INVALID")


def _decl(name: str = "f") -> dict[str, Any]:
    return {"name": name, "description": "", "parametersJsonSchema": {"type": "object", "properties": {}}}


CALL_TURN = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}, {"functionCall": {"name": "f", "args": {}}}]}


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"{not json", "Invalid JSON payload"),
        ({**HELLO, "parallelToolCalls": False}, 'Unknown name "parallelToolCalls"'),
        ({"contents": []}, "contents is not specified"),
        ({"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]}, "valid role"),
        ({"contents": [{"role": "user", "parts": []}]}, "must not be empty"),
        ({**HELLO, "tools": [{"functionDeclarations": [_decl("bad name!")]}]}, "Invalid function name"),
        ({**HELLO, "tools": [{"functionDeclarations": [_decl()]}], "toolConfig": {"functionCallingConfig": {"mode": "SOMETIMES"}}}, "mode"),
        ({**HELLO, "tools": [{"functionDeclarations": [_decl()]}], "toolConfig": {"functionCallingConfig": {"mode": "AUTO", "allowedFunctionNames": ["f"]}}}, "only allowed when mode is ANY"),
        ({**HELLO, "tools": [{"functionDeclarations": [_decl()]}], "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["g"]}}}, "not declared"),
        ({**HELLO, "toolConfig": {"functionCallingConfig": {"mode": "ANY"}}}, "no function declarations"),
        ({"contents": [HELLO["contents"][0], CALL_TURN, {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"output": "1"}}}]}]}, "number of function response parts"),
        ({"contents": [HELLO["contents"][0], {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}]}, "immediately after a function call turn"),
        ({"contents": [HELLO["contents"][0], CALL_TURN, {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": "1"}}] * 2}]}, "google.protobuf.Struct"),
        ({"contents": [{"role": "user", "parts": [{"functionCall": {"name": "f", "args": {}}}]}]}, "function call turn"),
        # the JSON parser knows each message's fields (google.ai.generativelanguage.v1beta Content, Part, ...)
        ({"contents": [{"role": "user", "parts": [{"txt": "hi"}]}]}, 'Unknown name "txt" at \'contents[0].parts[0]\''),
        ({"contents": [{"role": "user", "author": "me", "parts": [{"text": "hi"}]}]}, 'Unknown name "author" at \'contents[0]\''),
        ({"contents": [HELLO["contents"][0], {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}, "callId": "c1"}}]}]},
         'Unknown name "callId" at \'contents[1].parts[0].function_call\''),
        ({"contents": [HELLO["contents"][0], CALL_TURN, {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}, "isError": True}}] * 2}]},
         'Unknown name "isError"'),
        ({"contents": [{"role": "user", "parts": [{"inlineData": {"mime": "image/png", "data": ""}}]}]}, 'Unknown name "mime"'),
        ({**HELLO, "systemInstruction": {"parts": [{"txt": "Be brief."}]}}, 'Unknown name "txt" at \'system_instruction.parts[0]\''),
        ({**HELLO, "systemInstruction": "Be brief."}, "system_instruction"),
    ],
)
def test_invalid_requests_are_400_invalid_argument_and_consume_no_turn(body: Any, needle: str) -> None:
    sim = GeminiSimulator(["ok"])
    resp = post(sim, body)
    err = error_of(resp)
    assert (resp.status, err["code"], err["status"]) == (400, 400, "INVALID_ARGUMENT")
    assert needle in err["message"]
    assert sim.used == 0


def test_both_spellings_of_known_fields_are_accepted() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}, {"inline_data": {"mime_type": "image/png", "data": ""}}]},
                         {"role": "model", "parts": [{"text": "x", "thought": True, "thought_signature": "c2ln"}, {"function_call": {"name": "f", "args": {}, "id": "c1"}}]},
                         {"role": "user", "parts": [{"function_response": {"id": "c1", "name": "f", "response": {}}}]}],
            "system_instruction": {"role": "user", "parts": [{"text": "Be brief."}]}}  # fmt: skip
    assert post(GeminiSimulator(["ok"]), body).status == 200


def test_a_valid_tool_round_is_accepted() -> None:
    body = {"contents": [HELLO["contents"][0], CALL_TURN, {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"output": "1"}}}] * 2}],
            "tools": [{"functionDeclarations": [_decl()]}], "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["f"]}}}  # fmt: skip
    assert post(GeminiSimulator(["ok"]), body).status == 200


def test_gemini_3_rejects_an_unsigned_call_in_history_unless_skipped() -> None:
    path = "/v1beta/models/gemini-3-pro-preview:streamGenerateContent"
    unsigned = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}
    body = {"contents": [HELLO["contents"][0], unsigned, {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}]}
    resp = post(GeminiSimulator(["ok"]), body, path=path)
    assert resp.status == 400 and "missing a thought_signature" in error_of(resp)["message"]
    unsigned["parts"][0]["thoughtSignature"] = "skip_thought_signature_validator"
    assert post(GeminiSimulator(["ok"]), body, path=path).status == 200


@pytest.mark.parametrize("part", [{"text": ""}, {"text": "", "thought": True}, {}])
def test_a_part_holding_no_data_is_rejected_as_the_api_does(part: dict[str, Any]) -> None:
    """The API's JSON parser leaves an empty text unset, so such a part has no data at all."""
    body = {"contents": [HELLO["contents"][0], {"role": "model", "parts": [{"text": "ok"}]}, {"role": "user", "parts": [part]}]}
    err = error_of(post(GeminiSimulator(["ok"]), body))
    assert err["message"] == "* GenerateContentRequest.contents[2].parts[0].data: required oneof field 'data' must have one initialized field"
    assert err["status"] == "INVALID_ARGUMENT"


def test_an_empty_text_part_with_its_signature_is_accepted() -> None:
    """Gemini itself sends a signature on an empty text part, and wants it back."""
    body = {"contents": [HELLO["contents"][0], {"role": "model", "parts": [{"text": "ok"}, {"text": "", "thoughtSignature": "U0lH"}]}, HELLO["contents"][0]]}
    assert post(GeminiSimulator(["ok"]), body).status == 200


# --- errors and faults --------------------------------------------------------------------------


def test_http_fault_429_has_quota_failure_and_retry_info() -> None:
    resp = post(GeminiSimulator([Turn(faults=[HttpFault(status=429, retry_after=34.4)])]))
    err = error_of(resp)
    assert (resp.status, err["code"], err["status"]) == (429, 429, "RESOURCE_EXHAUSTED")
    assert err["details"][-1] == {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34.4s"}
    assert err["details"][0]["@type"] == "type.googleapis.com/google.rpc.QuotaFailure"


@pytest.mark.parametrize(("status", "name"), [(400, "INVALID_ARGUMENT"), (500, "INTERNAL"), (503, "UNAVAILABLE"), (504, "DEADLINE_EXCEEDED")])
def test_http_fault_statuses(status: int, name: str) -> None:
    err = error_of(post(GeminiSimulator([Turn(faults=[HttpFault(status=status)])])))
    assert (err["code"], err["status"]) == (status, name)
    assert "details" not in err


def test_mid_stream_error_is_a_data_error_event_first_key_error() -> None:
    resp = post(GeminiSimulator([Turn(text="abcdefghijklmnopqrstuvwxyz", faults=[MidStreamError(after=2, message="boom", error_type="UNAVAILABLE")])]))
    assert len(resp.chunks) == 3
    assert resp.chunks[-1] == b'data: {"error": {"code": 503,"message": "boom","status": "UNAVAILABLE"}}\r\n\r\n'


def test_truncate_cuts_the_next_event() -> None:
    resp = post(GeminiSimulator([Turn(text="abcdefghijklmnopqrstuvwxyz", faults=[Truncate(after=1)])]))
    assert resp.truncated and len(resp.chunks) == 2 and not resp.chunks[1].endswith(b"\r\n\r\n")


def test_script_exhaustion_is_a_500_and_assert_complete_reports_it() -> None:
    sim = GeminiSimulator(["one"])
    assert post(sim).status == 200
    resp = post(sim)
    assert resp.status == 500 and "script exhausted" in error_of(resp)["message"]
    with pytest.raises(IncompleteScript, match="#2 arrived after the script was exhausted"):
        sim.assert_complete()
    unused = GeminiSimulator(["one", "two"])
    post(unused)
    with pytest.raises(IncompleteScript, match="1 of 2"):
        unused.assert_complete()


def test_answers_are_deterministic() -> None:
    script = [Turn(text="héllo wörld", tool_calls=[call("f", {"a": 1})])]
    assert post(GeminiSimulator(script)).chunks == post(GeminiSimulator(script)).chunks


def test_string_arguments_that_are_a_json_object_or_empty_render_as_args() -> None:
    parts = events(post(GeminiSimulator([Turn(tool_calls=[call("f", '{"a": [1, 2]}'), call("g", "")])])))[0]["candidates"][0]["content"]["parts"]
    assert [p["functionCall"]["args"] for p in parts] == [{"a": [1, 2]}, {}]
