"""vcrpy with loopkit's serializer, persister, matchers and scrubber: same format, re-chunked replay."""

from __future__ import annotations

import base64

import json

import httpx
import httpx2
import pytest
from vcr.errors import CannotOverwriteExistingCassetteException

from loopkit.recording import load_cassette_file
from loopkit.recording._vcr import make_vcr

EVENTS = [f'data: {{"n": {i}}}\n\n'.encode() for i in range(4)] + [b"data: [DONE]\n\n"]
KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123"


def _handler(request):
    return {"status_code": 200, "headers": {"content-type": "text/event-stream", "x-request-id": "req_9"}, "content": b"".join(EVENTS)}


def _streamed(mod):
    class Body(mod.SyncByteStream):
        def __iter__(self):
            yield from EVENTS

    return Body()


@pytest.mark.parametrize("mod", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_vcr_records_loopkit_format_and_replays_per_event(tmp_path, mod):
    calls = []

    def handler(request):
        calls.append(request)
        return mod.Response(200, headers={"content-type": "text/event-stream", "x-request-id": "req_9"}, stream=_streamed(mod))

    path = str(tmp_path / "v.json")
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with make_vcr(record_mode="once").use_cassette(path):
        with mod.Client(transport=mod.MockTransport(handler)) as c:
            with c.stream("POST", "https://api.openai.com/v1/chat/completions", json=body, headers={"authorization": f"Bearer {KEY}"}) as r:
                recorded = list(r.iter_raw())
    assert len(calls) == 1
    file = load_cassette_file(path)
    inter = file.interactions[0]
    assert [c.text for c in inter.response.chunks] == [e.decode() for e in EVENTS]
    assert dict(inter.request.headers)["authorization"] == "<scrubbed>"
    assert KEY not in open(path).read()
    assert inter.request.json_body == body
    # replay: events come back one at a time, key order in the body does not matter
    live = json.dumps({"stream": True, "messages": [{"content": "hi", "role": "user"}], "model": "m"})
    with make_vcr(record_mode="none").use_cassette(path):
        with mod.Client(transport=mod.MockTransport(handler)) as c:
            with c.stream("POST", "https://api.openai.com/v1/chat/completions", content=live, headers={"authorization": f"Bearer {KEY}"}) as r:
                replayed = list(r.iter_raw())
    assert len(calls) == 1
    assert replayed == EVENTS
    assert b"".join(recorded) == b"".join(EVENTS)


def test_vcr_refuses_a_changed_body(tmp_path):
    path = str(tmp_path / "v.json")
    with make_vcr(record_mode="once").use_cassette(path):
        with httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(**_handler(r)))) as c:
            c.post("https://x/v1/chat", json={"messages": [{"content": "a"}]})
    with make_vcr(record_mode="none").use_cassette(path):
        with httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(**_handler(r)))) as c:
            with pytest.raises(CannotOverwriteExistingCassetteException) as info:
                c.post("https://x/v1/chat", json={"messages": [{"content": "b"}]})
    (_, _, failed), = info.value.similar_requests
    assert [m for _, m in failed] == ["body messages[0].content: recorded 'a' != live 'b'"]


def test_vcr_scrubs_a_secret_in_a_binary_body(tmp_path):
    """A secret inside a body that is not UTF-8 is scrubbed too (bytes kept around it)."""
    path = tmp_path / "v.json"
    leak = b"\xff\x00" + KEY.encode()
    with make_vcr(record_mode="once").use_cassette(str(path)):
        with httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, content=leak))) as c:
            c.get("https://x/v1/blob")
    file = load_cassette_file(path)
    body = b"".join(base64.b64decode(ch.base64) if ch.base64 else ch.text.encode() for ch in file.interactions[0].response.chunks)
    assert KEY.encode() not in body and body.startswith(b"\xff\x00<scrubbed:openai-key>")
