"""Record then replay through the httpx transports: chunks, timing, modes, misses."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from loopkit.errors import CassetteError, NoMatchingInteraction, UnplayedInteractions
from loopkit.recording import (
    Cassette,
    CassetteTransport,
    RecordingTransport,
    ReplayTransport,
    load_cassette_file,
    use_cassette,
)

from ._servers import FakeClock, chat_body, chat_server, sse

EVENTS = [{"choices": [{"delta": {"content": w}}]} for w in ("Hel", "lo", " wor", "ld")]
AUTH = {"authorization": "Bearer sk-proj-abcdefghijklmnopqrstuvwxyz012345"}


def record(path, answers, *, bodies, clock=None, mode="once"):
    cassette = Cassette(path, record_mode=mode)
    transport = RecordingTransport(chat_server(answers), cassette, clock=clock or FakeClock())
    got = []
    with httpx.Client(transport=transport, base_url="https://api.openai.com") as client:
        for body in bodies:
            with client.stream("POST", "/v1/chat/completions", json=body, headers=AUTH) as r:
                got.append(list(r.iter_raw()))
    cassette.save()
    return got


def replay_chunks(path, bodies, **kw):
    cassette = Cassette(path)
    transport = ReplayTransport(cassette, **kw)
    out = []
    with httpx.Client(transport=transport, base_url="https://api.openai.com") as client:
        for body in bodies:
            with client.stream("POST", "/v1/chat/completions", json=body) as r:
                out.append((r.status_code, list(r.iter_raw())))
    return cassette, out


def test_chunk_boundaries_survive_record_and_replay(tmp_path):
    """Chunks cut at odd byte offsets come back with exactly the same boundaries."""
    chunks = sse(*EVENTS, split=7)
    path = tmp_path / "c.json"
    got = record(path, {"hi": chunks}, bodies=[chat_body("hi")])
    assert got == [chunks]
    _, out = replay_chunks(path, [chat_body("hi")])
    assert out == [(200, chunks)]
    data = json.loads(path.read_text())
    stored = data["interactions"][0]["response"]["chunks"]
    assert [c["text"] for c in stored] == [c.decode() for c in chunks]
    assert [c["t"] for c in stored] == [round(0.01 * (i + 1), 6) for i in range(len(chunks))]


def test_recording_passes_each_chunk_on_as_it_arrives(tmp_path):
    """The caller gets chunk i before the server produces chunk i+1 (no buffering)."""
    log = []
    cassette = Cassette(tmp_path / "c.json", record_mode="once")
    server = chat_server({"hi": sse(*EVENTS)}, on_chunk=lambda i: log.append(("sent", i)))
    with httpx.Client(transport=RecordingTransport(server, cassette)) as client:
        with client.stream("POST", "https://x/v1/chat/completions", json=chat_body("hi")) as r:
            for i, _ in enumerate(r.iter_raw()):
                log.append(("got", i))
    assert log == [(k, i) for i in range(5) for k in ("sent", "got")]


def test_secrets_never_reach_the_file(tmp_path):
    path = tmp_path / "c.json"
    record(path, {"hi": sse(*EVENTS)}, bodies=[chat_body("hi")])
    text = path.read_text()
    assert "sk-proj" not in text and "__cf_bm" not in text and "req_123" not in text
    headers = dict(load_cassette_file(path).interactions[0].request.headers)
    assert headers["authorization"] == "<scrubbed>"


def test_timing_scales_recorded_delays_with_injected_sleep(tmp_path):
    path = tmp_path / "c.json"
    record(path, {"hi": sse(*EVENTS)}, bodies=[chat_body("hi")], clock=FakeClock(step=0.5))
    offsets = [c.t for c in load_cassette_file(path).interactions[0].response.chunks]
    for timing in (0.0, 1.0, 3.0):
        slept = []
        replay_chunks(path, [chat_body("hi")], timing=timing, sleep=slept.append)
        expected = [] if timing == 0 else [round((b - a) * timing, 6) for a, b in zip([0.0] + offsets, offsets)]
        assert [round(s, 6) for s in slept] == expected


def test_async_record_and_replay(tmp_path):
    path = tmp_path / "c.json"
    chunks = sse(*EVENTS, split=11)

    async def go():
        cassette = Cassette(path, record_mode="once")
        async with httpx.AsyncClient(transport=CassetteTransport(cassette, chat_server({"hi": chunks}), clock=FakeClock())) as c:
            async with c.stream("POST", "https://x/v1/chat/completions", json=chat_body("hi")) as r:
                first = [b async for b in r.aiter_raw()]
        cassette.save()
        slept = []

        async def asleep(s):
            slept.append(s)

        replay = ReplayTransport(Cassette(path), timing=1.0, async_sleep=asleep)
        async with httpx.AsyncClient(transport=replay) as c:
            async with c.stream("POST", "https://x/v1/chat/completions", json=chat_body("hi")) as r:
                second = [b async for b in r.aiter_raw()]
        return first, second, slept

    first, second, slept = asyncio.run(go())
    assert first == second == chunks
    assert len(slept) == len(chunks)


def test_changed_request_names_message_field_and_mode(tmp_path):
    """A drifted request fails with the nearest recording, the message index, field and a diff."""
    path = tmp_path / "c.json"
    convo = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "What is 2+2?"}]
    body = {"model": "gpt-x", "stream": True, "messages": convo}
    cassette = Cassette(path, record_mode="once")
    server = httpx.MockTransport(lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"data: [DONE]\n\n"))
    with httpx.Client(transport=RecordingTransport(server, cassette)) as c:
        c.post("https://api.openai.com/v1/chat/completions", json=body)
        c.post("https://api.openai.com/v1/models", json={"x": 1})
    cassette.save()
    drifted = {**body, "messages": [convo[0], {"role": "user", "content": "What is 2+3?"}]}
    with httpx.Client(transport=ReplayTransport(Cassette(path))) as c:
        with pytest.raises(NoMatchingInteraction) as info:
            c.post("https://api.openai.com/v1/chat/completions", json=drifted)
    msg = str(info.value)
    assert str(path) in msg
    assert "nearest recorded: interactions[0] POST /v1/chat/completions" in msg
    assert "first difference: body messages[1].content (message 1)" in msg
    assert "- recorded: 'What is 2+2?'" in msg and "+ live:     'What is 2+3?'" in msg
    assert "record_mode='new_episodes'" in msg


def test_key_order_whitespace_and_volatile_fields_do_not_matter(tmp_path):
    path = tmp_path / "c.json"
    record(path, {"hi": sse(*EVENTS)}, bodies=[chat_body("hi", user="alice")])
    cassette = Cassette(path)
    live = json.dumps({"messages": [{"content": "hi", "role": "user"}], "stream": True, "model": "gpt-x", "user": "bob"}, indent=4)
    with httpx.Client(transport=ReplayTransport(cassette)) as c:
        r = c.post("https://elsewhere.example/v1/chat/completions", content=live.encode())
    assert r.status_code == 200 and r.text.endswith("data: [DONE]\n\n")


def test_identical_requests_replay_in_recorded_order(tmp_path):
    path = tmp_path / "c.json"
    answers = iter([sse({"n": 1}), sse({"n": 2})])
    server = httpx.MockTransport(lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"".join(next(answers))))
    cassette = Cassette(path, record_mode="once")
    with httpx.Client(transport=RecordingTransport(server, cassette)) as c:
        c.post("https://x/v1/chat/completions", json=chat_body("same"))
        c.post("https://x/v1/chat/completions", json=chat_body("same"))
    cassette.save()
    with httpx.Client(transport=ReplayTransport(Cassette(path))) as c:
        texts = [c.post("https://x/v1/chat/completions", json=chat_body("same")).text for _ in range(2)]
        assert [json.loads(t.split("\n")[0][6:])["n"] for t in texts] == [1, 2]
        with pytest.raises(NoMatchingInteraction, match=r"recorded 2 time\(s\) and has now been requested once more"):
            c.post("https://x/v1/chat/completions", json=chat_body("same"))


def test_record_modes(tmp_path):
    path = tmp_path / "c.json"
    log = []
    server = chat_server({"a": sse({"x": "a"}), "b": sse({"x": "b"})}, log=log)
    with pytest.raises(CassetteError, match="cassette not found and record_mode is 'none'"):
        Cassette(path)

    def run(mode, texts):
        with use_cassette(path, record_mode=mode, fail_unplayed=False) as cassette:
            with httpx.Client(transport=CassetteTransport(cassette, server)) as c:
                for t in texts:
                    c.post("https://x/v1/chat/completions", json=chat_body(t))
        return len(load_cassette_file(path).interactions)

    assert run("once", ["a"]) == 1 and len(log) == 1
    assert run("once", ["a"]) == 1 and len(log) == 1  # the file exists: replay only
    with pytest.raises(NoMatchingInteraction):
        run("once", ["b"])
    assert run("new_episodes", ["a", "b"]) == 2 and len(log) == 2  # only "b" reached the server
    assert run("all", ["b"]) == 2 and len(log) == 3  # "b" re-recorded in place, "a" kept (vcrpy's all)
    assert run("rewrite", ["b"]) == 1 and len(log) == 4  # only what this run recorded
    assert run("none", ["b"]) == 1 and len(log) == 4


def test_unplayed_interactions_fail_at_teardown(tmp_path):
    path = tmp_path / "c.json"
    record(path, {"a": sse({"x": 1}), "b": sse({"x": 2})}, bodies=[chat_body("a"), chat_body("b")])
    with pytest.raises(UnplayedInteractions, match=r"1 recorded interaction\(s\) were never requested: \[1\] POST /v1/chat/completions"):
        with use_cassette(path) as cassette:
            with httpx.Client(transport=ReplayTransport(cassette)) as c:
                c.post("https://x/v1/chat/completions", json=chat_body("a"))
    with use_cassette(path, fail_unplayed=False) as cassette:
        with httpx.Client(transport=ReplayTransport(cassette)) as c:
            c.post("https://x/v1/chat/completions", json=chat_body("a"))


def test_dropped_connection_is_recorded_and_replayed(tmp_path):
    """A stream that dies part-way replays its chunks, then the same transport error."""

    class Dying(httpx.SyncByteStream):
        def __iter__(self):
            yield b"data: {\"a\": 1}\n\n"
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    path = tmp_path / "c.json"
    cassette = Cassette(path, record_mode="once")
    server = httpx.MockTransport(lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Dying()))
    with httpx.Client(transport=RecordingTransport(server, cassette)) as c:
        with c.stream("POST", "https://x/v1/chat/completions", json=chat_body("a")) as r:
            with pytest.raises(httpx.RemoteProtocolError):
                list(r.iter_raw())
    cassette.save()
    with httpx.Client(transport=ReplayTransport(Cassette(path))) as c:
        with c.stream("POST", "https://x/v1/chat/completions", json=chat_body("a")) as r:
            got = []
            with pytest.raises(httpx.RemoteProtocolError, match="peer closed"):
                for b in r.iter_raw():
                    got.append(b)
    assert got == [b"data: {\"a\": 1}\n\n"]


def test_non_utf8_chunk_is_stored_as_base64_and_replayed_exactly(tmp_path):
    """A chunk boundary inside a UTF-8 character keeps both halves byte for byte."""
    text = "data: {\"t\": \"héllo\"}\n\n".encode()
    cut = text.index("é".encode()) + 1
    chunks = [text[:cut], text[cut:]]
    path = tmp_path / "c.json"
    record(path, {"hi": chunks}, bodies=[chat_body("hi")])
    stored = load_cassette_file(path).interactions[0].response.chunks
    assert stored[0].base64 is not None and stored[1].base64 is not None
    assert replay_chunks(path, [chat_body("hi")])[1] == [(200, chunks)]


def test_a_body_the_inner_transport_already_read_is_recorded_and_the_request_is_set():
    # httpx.MockTransport handlers often answer Response(content=...), which httpx reads at once;
    # recording must not hand that response back with its stream swapped (httpx would serve the
    # read copy and the recording would see no chunk)
    cassette = Cassette(record_mode="all")
    transport = RecordingTransport(httpx.MockTransport(lambda r: httpx.Response(200, content=b'{"ok": true}')), cassette)
    with httpx.Client(transport=transport) as client:
        assert client.post("https://x/v1/a", json={"n": 1}).json() == {"ok": True}
        with client.stream("POST", "https://x/v1/a", json={"n": 2}) as r:
            assert b"".join(r.iter_raw()) == b'{"ok": true}'
    request = httpx.Request("POST", "https://x/v1/a", json={"n": 3})
    direct = transport.handle_request(request)  # no client: the transport sets the request itself
    assert direct.request is request
    assert direct.read() == b'{"ok": true}'
    direct.close()
    assert [[c.text for c in i.response.chunks] for i in cassette.interactions] == [['{"ok": true}']] * 3
    # and a streamed inner response is recorded chunk by chunk
    streamed = Cassette(record_mode="all")
    with httpx.Client(transport=RecordingTransport(chat_server({"hi": sse(*EVENTS)}), streamed)) as client:
        with client.stream("POST", "https://x/v1/chat/completions", json=chat_body("hi")) as r:
            assert r.request.url == "https://x/v1/chat/completions"
            pieces = list(r.iter_raw())
    assert [c.text.encode() for c in streamed.interactions[0].response.chunks] == pieces
