"""Vertex's streamed function-call arguments (``streamFunctionCallArguments``) become whole calls.

The form (google-genai ``types.FunctionCall.partial_args`` / ``PartialArg``): a
part ``{"functionCall": {"name", "willContinue": true}}`` opens a call, ``partialArgs`` fragments
fill it (``jsonPath`` + one typed value; a string streamed in pieces repeats its path), and a part
without ``willContinue`` (usually ``{"functionCall": {}}``) closes it.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from loopkit.accumulate import accumulate
from loopkit.errors import ConnectionClosedError, WireError
from loopkit.providers.gemini import GeminiStreamDecoder


def sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)


def parts(*ps: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"parts": list(ps), "role": "model"}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    return {"candidates": [cand], "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 7, "totalTokenCount": 12}, "modelVersion": "gemini-3-pro-preview"}


def arg(path: str, **value: Any) -> dict[str, Any]:
    return {"jsonPath": path, **value}


def fc(**fields: Any) -> dict[str, Any]:
    return {"functionCall": fields}


def decode(body: bytes, split: int | None = None):
    ids = itertools.count(1)
    decoder = GeminiStreamDecoder(lambda: f"gcall_{next(ids)}")
    events = []
    pieces = [body] if split is None else [body[i : i + split] for i in range(0, len(body), split)]
    for piece in pieces:
        events += decoder.feed(piece)
    return accumulate(events + decoder.close())


STREAM = sse(
    parts({"text": "Let me look.", "thought": True}),
    parts({**fc(name="read_screen", willContinue=True), "thoughtSignature": "c2lnbmF0dXJl"}),
    parts(fc(partialArgs=[arg("$.id", stringValue="AB", willContinue=True)], willContinue=True)),
    parts(fc(partialArgs=[arg("$.id", stringValue="C"), arg("$.zoom", numberValue=2)], willContinue=True)),
    parts(fc(partialArgs=[arg("$.region.corners[1]", boolValue=True), arg("$.note", nullValue="NULL_VALUE")], willContinue=True)),
    parts(fc()),
    parts(fc(name="read_theme", willContinue=True)),
    parts(fc()),
    parts({"text": ""}, finish="STOP"),
)


@pytest.mark.parametrize("split", [None, 7, 1])
def test_streamed_arguments_assemble_into_whole_named_calls(split):
    msg = decode(STREAM, split)
    calls = msg.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("gcall_1", "read_screen", {"id": "ABC", "zoom": 2, "region": {"corners": [None, True]}, "note": None}),
        ("gcall_2", "read_theme", {}),
    ]
    assert calls[0].thought_signature == "c2lnbmF0dXJl" and calls[0].arguments_ok
    assert msg.stop_reason == "toolUse"


def test_partial_args_may_arrive_with_the_name_and_close_on_will_continue_false():
    body = sse(
        parts(fc(name="f", id="call-9", partialArgs=[arg("$['a key']", stringValue="x", willContinue=True)], willContinue=True)),
        parts(fc(partialArgs=[arg("$['a key']", stringValue="y")], willContinue=False)),
        parts({"text": ""}, finish="STOP"),
    )
    [call] = decode(body).tool_calls
    assert (call.id, call.name, call.arguments) == ("call-9", "f", {"a key": "xy"})


@pytest.mark.parametrize(
    ("chunks", "words"),
    [
        ([parts(fc(partialArgs=[arg("$.a", stringValue="x")], willContinue=True))], "no open call"),
        ([parts(fc(name="f", willContinue=True)), parts(fc(partialArgs=[arg("$.a", stringValue="x", numberValue=1)]))], "exactly one of"),
        ([parts(fc(name="f", willContinue=True)), parts(fc(partialArgs=[arg("$..a", stringValue="x")]))], "does not follow"),
        ([parts(fc(name="f", willContinue=True)), parts({"text": "hello"})], "inside a streamed function call"),
        ([parts(fc(name="f", willContinue=True)), parts(fc(name="g", willContinue=True))], "still open"),
    ],
)
def test_a_form_the_decoder_cannot_assemble_is_a_wire_error_never_a_junk_call(chunks, words):
    with pytest.raises(WireError, match=words):
        decode(sse(*chunks, parts({"text": ""}, finish="STOP")))


def test_a_stream_that_ends_inside_a_streamed_call_is_a_closed_connection():
    body = sse(parts(fc(name="f", willContinue=True)), parts(fc(partialArgs=[arg("$.a", stringValue="x")], willContinue=True), finish="STOP"))
    with pytest.raises(ConnectionClosedError, match="inside the streamed function call 'f'"):
        decode(body)
