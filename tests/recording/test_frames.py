"""Framed binary bodies through a registered frame codec: readable frames, exact bytes on replay."""

from __future__ import annotations

import json
import struct

import httpx
import pytest

from loopkit.errors import CassetteError
from loopkit.recording import (
    Cassette,
    RecordingTransport,
    ReplayTransport,
    load_cassette_file,
    register_frame_codec,
    unregister_frame_codec,
)
from loopkit.recording._bodies import rechunk

from ._servers import Chunked, FakeClock

CTYPE = "application/x-test-frames"


class LengthPrefixed:
    """A toy framing: 4-byte big-endian length, then a UTF-8 JSON payload."""

    content_type = CTYPE

    class _Decoder:
        def __init__(self):
            self.buf = b""

        def feed(self, data):
            self.buf += data
            out = []
            while len(self.buf) >= 4 and len(self.buf) >= 4 + struct.unpack(">I", self.buf[:4])[0]:
                n = struct.unpack(">I", self.buf[:4])[0]
                out.append({"json": json.loads(self.buf[4 : 4 + n])})
                self.buf = self.buf[4 + n :]
            return out

        @property
        def buffered(self):
            return len(self.buf)

    def decoder(self):
        return self._Decoder()

    def encode(self, frame):
        payload = json.dumps(frame["json"], separators=(",", ":")).encode()
        return struct.pack(">I", len(payload)) + payload


@pytest.fixture
def codec():
    register_frame_codec(LengthPrefixed())
    yield
    unregister_frame_codec(CTYPE)


def frames(*payloads):
    return b"".join(LengthPrefixed().encode({"json": p}) for p in payloads)


def _record(path, chunks):
    cassette = Cassette(path, record_mode="once")
    server = httpx.MockTransport(lambda r: httpx.Response(200, headers={"content-type": CTYPE}, stream=Chunked(chunks)))
    with httpx.Client(transport=RecordingTransport(server, cassette, clock=FakeClock())) as c:
        with c.stream("POST", "https://bedrock/model/m/converse-stream", json={"messages": []}) as r:
            list(r.iter_raw())
    cassette.save()


def _replay(path):
    with httpx.Client(transport=ReplayTransport(Cassette(path))) as c:
        with c.stream("POST", "https://bedrock/model/m/converse-stream", json={"messages": []}) as r:
            return list(r.iter_raw())


def test_frames_split_and_packed_arbitrarily_replay_byte_exact(tmp_path, codec):
    body = frames({"a": 1}, {"delta": "hello"}, {"stop": True})
    chunks = [body[:3], body[3:20], body[20:]]  # a prelude split, then two frames packed together
    path = tmp_path / "c.json"
    _record(path, chunks)
    resp = load_cassette_file(path).interactions[0].response
    assert resp.codec == CTYPE
    assert [c.frames for c in resp.chunks] == [[], [{"json": {"a": 1}}], [{"json": {"delta": "hello"}}, {"json": {"stop": True}}]]
    assert [c.size for c in resp.chunks] == [len(c) for c in chunks]
    assert _replay(path) == chunks


def test_truncated_last_frame_is_kept_as_tail(tmp_path, codec):
    body = frames({"a": 1}, {"b": 2})
    chunks = [body[:-3]]
    path = tmp_path / "c.json"
    _record(path, chunks)
    resp = load_cassette_file(path).interactions[0].response
    assert resp.tail_base64 is not None and resp.chunks[0].frames == [{"json": {"a": 1}}]
    assert _replay(path) == chunks


def test_secret_in_a_frame_is_scrubbed_and_sizes_realigned(tmp_path, codec):
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123"
    body = frames({"text": f"key {key}"}, {"x": 1})
    path = tmp_path / "c.json"
    _record(path, [body[:10], body[10:]])
    assert key not in path.read_text()
    replayed = b"".join(_replay(path))
    assert replayed == frames({"text": "key <scrubbed:openai-key>"}, {"x": 1})


def test_replaying_frames_without_a_codec_says_how_to_register(tmp_path, codec):
    path = tmp_path / "c.json"
    _record(path, [frames({"a": 1})])
    unregister_frame_codec(CTYPE)
    with pytest.raises(CassetteError, match="no frame codec is registered for it; call loopkit.recording.register_frame_codec"):
        _replay(path)
    register_frame_codec(LengthPrefixed())


def test_without_a_codec_binary_is_recorded_as_base64_chunks(tmp_path):
    body = b"\x00\x00\x00\x07\xff" + b"abcdef"
    path = tmp_path / "c.json"
    _record(path, [body[:5], body[5:]])
    resp = load_cassette_file(path).interactions[0].response
    assert resp.codec is None and resp.chunks[0].base64 is not None
    assert _replay(path) == [body[:5], body[5:]]


def test_rechunk_per_sse_event_and_per_frame(codec):
    assert rechunk(b"data: 1\n\ndata: 2\r\n\r\nevent: x\ndata: 3\n\n", "text/event-stream; charset=utf-8") == [b"data: 1\n\n", b"data: 2\r\n\r\n", b"event: x\ndata: 3\n\n"]
    assert rechunk(frames({"a": 1}, {"b": 2}), CTYPE) == [frames({"a": 1}), frames({"b": 2})]
    assert rechunk(b'{"x": 1}', "application/json") == [b'{"x": 1}']
