"""Scrubbing: a corpus of key shapes hidden in every place a recording holds them; 0 survivors."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from loopkit.errors import CassetteError
from loopkit.messages import AssistantMessage, TextContent, UserMessage
from loopkit.provider import ModelRequest
from loopkit.recording import (
    Cassette,
    CassetteFile,
    Interaction,
    RecordedRequest,
    RecordedResponse,
    RecordingTransport,
    Scrubber,
    Transcript,
    find_secrets,
    save_cassette,
    scrub_text,
)
from loopkit.recording._format import Chunk
from loopkit.serde import dump_message, dump_request

from ._servers import Chunked, FakeClock

KEYS = {
    "openai-key": "sk-proj-Ab3dEfGhIjKlMnOpQrStUvWxYz0123456789_-abcdEFGH",
    "openai-legacy": "sk-" + "a1B2c3D4e5F6g7H8i9J0" * 2 + "klmnopqr",
    "anthropic-key": "sk-ant-api03-" + "Zx9_" * 20 + "AA",
    "google-api-key": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"[:35],
    "aws-access-key-id": "AKIAIOSFODNN7EXAMPLE",
    "aws-session-key-id": "ASIAY34FZKBOKMUTVV7A",
    "bearer": "Bearer ya29.a0AfH6SMBx-oauth_token_value~xyz",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}
RAW = {k: v.split(" ", 1)[-1] for k, v in KEYS.items()}  # the secret part of each


@pytest.mark.parametrize("kind", sorted(KEYS))
def test_every_shape_is_replaced_in_text(kind):
    out = scrub_text(f"before {KEYS[kind]} after")
    assert RAW[kind] not in out and out.startswith("before ") and out.endswith(" after")


def test_lookalikes_are_left_alone():
    text = "task-abcdefghijklmnopqrstuvw desk-key AKIA123 the bearer of news eyJ.x.y"
    assert scrub_text(text) == text


def _server(keys: dict[str, str]) -> httpx.MockTransport:
    secret_sse = [f"data: {{\"echo\": \"{v}\"}}\n\n".encode() for v in keys.values()]
    # one key split across two chunks, and one inside an SSE comment
    split = f"data: {{\"x\": \"{keys['openai-key']}\"}}\n\n".encode()
    chunks = secret_sse + [split[:20], split[20:], f": {keys['jwt']}\n\n".encode(), b"data: [DONE]\n\n"]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            headers=[
                ("content-type", "text/event-stream"),
                ("set-cookie", "__cf_bm=secretcookie"),
                ("x-debug-echo", keys["anthropic-key"]),
                ("www-authenticate", keys["bearer"]),
                ("retry-after", "3"),
                ("x-should-retry", "true"),
                ("x-amzn-errortype", "ThrottlingException"),
            ],
            stream=Chunked(chunks),
        )

    return httpx.MockTransport(handler)


def test_corpus_in_every_place_leaves_no_survivor(tmp_path):
    """Headers (named and custom), URL query and path, JSON keys and values, text bodies, response
    headers, chunks (including one split across chunks), transcripts: all scrubbed, file saved."""
    path = tmp_path / "c.json"
    cassette = Cassette(path, record_mode="once", scrubber=Scrubber(body_fields=["api_key"]))
    transport = RecordingTransport(_server(KEYS), cassette, clock=FakeClock())
    headers = {
        "authorization": KEYS["bearer"],
        "x-api-key": RAW["anthropic-key"],
        "x-goog-api-key": RAW["google-api-key"],
        "x-amz-security-token": "FwoGZXIvYXdzEJr//////////wEaDOpaque",
        "x-custom-forward": RAW["openai-legacy"],
        "cookie": "session=abc",
    }
    body = {
        "api_key": "not-a-shape-but-named",
        "messages": [{"role": "user", "content": f"my key is {RAW['openai-key']} and {RAW['aws-access-key-id']}"}],
        "metadata": {RAW["aws-session-key-id"]: "key as a key", "token": KEYS["jwt"]},
    }
    with httpx.Client(transport=transport) as c:
        c.post(f"https://api.example.com/v1/x/{RAW['google-api-key']}/y?key={RAW['google-api-key']}&token={RAW['openai-key']}", json=body, headers=headers).read()
        c.post("https://api.example.com/v1/text", content=f"plain {RAW['anthropic-key']} text".encode(), headers={"content-type": "text/plain"}).read()
    req = ModelRequest([UserMessage(content=f"use {RAW['openai-key']}")])
    msg = AssistantMessage(content=[TextContent(text=f"echo {RAW['jwt']}")])
    cassette.interactions[0].transcript = Transcript(request=dump_request(req), message=dump_message(msg))
    cassette.interactions[0] = cassette.scrubber.interaction(cassette.interactions[0])
    cassette.save()  # refuses if anything survived
    text = path.read_text()
    for kind, secret in RAW.items():
        assert secret not in text, kind
    for leftover in ("FwoGZXIvYXdzEJr", "secretcookie", "session=abc", "not-a-shape-but-named"):
        assert leftover not in text
    stored = cassette.interactions[0].response
    kept = dict(stored.headers)
    assert kept["retry-after"] == "3" and kept["x-should-retry"] == "true" and kept["x-amzn-errortype"] == "ThrottlingException"
    assert find_secrets(cassette.file) == []


def test_save_refuses_and_names_where_a_secret_survives(tmp_path):
    """A secret the scrubber could not reach (inside binary) blocks the save, naming the field."""
    leaked = base64.b64encode(b"\x00\xff" + RAW["openai-key"].encode()).decode()
    file = CassetteFile(
        interactions=[
            Interaction(
                request=RecordedRequest(method="GET", url="https://x/?key=abc", headers=[("authorization", "Basic dXNlcjpwYXNz")]),
                response=RecordedResponse(status=200, chunks=[Chunk(text="ok"), Chunk(base64=leaked)]),
            )
        ]
    )
    with pytest.raises(CassetteError) as info:
        save_cassette(file, tmp_path / "c.json")
    msg = str(info.value)
    assert "refusing to save" in msg
    assert "interactions[0].request.headers[0] (authorization): secret-header" in msg
    assert "interactions[0].request.url (query key): secret-query-param" in msg
    assert "interactions[0].response.chunks[0..1]: openai-key" in msg
    assert RAW["openai-key"][:8] not in msg and "dXNlcjpwYXNz" not in msg  # never the secret
    assert not (tmp_path / "c.json").exists()


def test_user_hook_and_named_headers():
    def hook(inter: Interaction) -> None:
        inter.request.url = inter.request.url.replace("tenant-42", "tenant-X")

    s = Scrubber(headers=["X-Tenant"], hook=hook)
    inter = Interaction(
        request=RecordedRequest(method="GET", url="https://x/tenant-42", headers=[("x-tenant", "42"), ("user-agent", "me/1.0")]),
        response=RecordedResponse(status=200),
    )
    s.interaction(inter)
    assert inter.request.url == "https://x/tenant-X"
    assert inter.request.headers == [("x-tenant", "<scrubbed>"), ("user-agent", "<scrubbed>")]
    assert Scrubber(keep_volatile=True).header_value("user-agent", "me/1.0") == "me/1.0"


def test_matching_sees_the_live_request_scrubbed_the_same_way(tmp_path):
    """A key inside a live body matches the scrubbed recording of the same request."""
    path = tmp_path / "c.json"
    cassette = Cassette(path, record_mode="once")
    server = httpx.MockTransport(lambda r: httpx.Response(200, json={"ok": True}))
    body = {"messages": [{"role": "user", "content": f"key {RAW['openai-key']}"}]}
    with httpx.Client(transport=RecordingTransport(server, cassette)) as c:
        c.post(f"https://x/v1/a?key={RAW['google-api-key']}", json=body)
    cassette.save()
    from loopkit.recording import ReplayTransport

    with httpx.Client(transport=ReplayTransport(Cassette(path))) as c:
        assert c.post(f"https://x/v1/a?key={RAW['google-api-key']}", json=body).json() == {"ok": True}
    assert RAW["openai-key"] not in json.dumps(json.loads(path.read_text()))
