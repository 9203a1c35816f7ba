"""The AWS event-stream codec against botocore's vectors, a recorded Bedrock stream and hypothesis."""

from __future__ import annotations

import base64
import json
import struct
import uuid
import zlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopkit.errors import (
    EventStreamChecksumError,
    EventStreamError,
    EventStreamHeaderError,
    EventStreamLengthError,
    EventStreamTruncated,
    WireError,
)
from loopkit.eventstream import (
    EventStreamDecoder,
    Int8,
    Int16,
    Int64,
    Message,
    Timestamp,
    decode,
    encode_message,
    encode_messages,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "bedrock"
VECTORS = json.loads((FIXTURES / "eventstream_test_vectors.json").read_text())
RECORDED = base64.b64decode((FIXTURES / "converse_stream_tool_use.bin.b64").read_text())
RECORDED_VIEW = json.loads((FIXTURES / "converse_stream_tool_use.decoded.json").read_text())

# botocore's exception names (recorded in the vectors) -> loopkit's typed errors
ERROR_CLASSES = {
    "ChecksumMismatch": EventStreamChecksumError,
    "DuplicateHeader": EventStreamHeaderError,
    "InvalidHeadersLength": EventStreamLengthError,
}


def _header_view(value):
    """A header value as the fixture shows it (bytes and UUIDs as hex)."""
    if isinstance(value, uuid.UUID):
        return value.bytes.hex()
    if isinstance(value, bytes):
        return value.hex()
    return value


@pytest.mark.parametrize("vector", [v for v in VECTORS if v["valid"]], ids=lambda v: v["name"])
def test_positive_vector_decodes_and_reencodes(vector):
    raw = base64.b64decode(vector["b64"])
    [message] = decode(raw)
    assert {k: _header_view(v) for k, v in message.headers.items()} == vector["headers"]
    assert message.payload == vector["payload"].encode()
    assert struct.unpack(">I", raw[8:12])[0] == int(vector["prelude_crc"], 16)
    assert encode_message(message.headers, message.payload) == raw


@pytest.mark.parametrize("vector", [v for v in VECTORS if not v["valid"]], ids=lambda v: v["name"])
def test_negative_vector_raises_typed_error(vector):
    raw = base64.b64decode(vector["b64"])
    botocore_name, _, botocore_message = vector["error"].partition(": ")
    with pytest.raises(ERROR_CLASSES[botocore_name]) as info:
        decode(raw)
    assert isinstance(info.value, WireError)
    assert info.value.offset == 0
    if botocore_name == "ChecksumMismatch":
        # same expected/calculated pair as botocore reports
        expected, calculated = botocore_message.removeprefix("Checksum mismatch: expected ").split(", calculated ")
        assert f"expected {expected}, calculated {calculated}" in str(info.value)


def test_all_header_types_keep_their_wire_types():
    raw = base64.b64decode(next(v for v in VECTORS if v["name"] == "ALL_HEADERS_TYPES")["b64"])
    [message] = decode(raw)
    assert [type(v) for v in message.headers.values()] == [bool, bool, Int8, Int16, int, Int64, bytes, str, Timestamp, uuid.UUID]


def test_recorded_bedrock_stream_matches_botocore_view_and_reencodes_byte_for_byte():
    messages = decode(RECORDED)
    assert len(messages) == len(RECORDED_VIEW) == 26
    for message, view in zip(messages, RECORDED_VIEW):
        assert message.headers == view["headers"]
        assert json.loads(message.payload) == view["payload"]
    assert encode_messages(messages) == RECORDED
    assert [m.event_type for m in messages][-2:] == ["messageStop", "metadata"]
    assert {m.message_type for m in messages} == {"event"}


def test_recorded_stream_agrees_with_botocore_buffer():
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    buffer.add_data(RECORDED)
    theirs = [(m.headers, m.payload) for m in buffer]
    assert [(m.headers, m.payload) for m in decode(RECORDED)] == theirs


def test_one_byte_at_a_time():
    decoder = EventStreamDecoder()
    out = []
    for i in range(len(RECORDED)):
        out += decoder.feed(RECORDED[i : i + 1])
    decoder.close()
    assert out == decode(RECORDED)


def test_truncated_stream_raises_at_close_and_names_the_offset():
    first_len = struct.unpack(">I", RECORDED[:4])[0]
    decoder = EventStreamDecoder()
    assert len(decoder.feed(RECORDED[: first_len + 20])) == 1
    assert decoder.buffered == 20
    with pytest.raises(EventStreamTruncated, match=f"at byte {first_len}: stream ended with 20 byte"):
        decoder.close()


def test_short_tail_under_a_prelude_is_truncation():
    decoder = EventStreamDecoder()
    decoder.feed(b"\x00\x00")
    with pytest.raises(EventStreamTruncated):
        decoder.close()


def test_decoder_stays_failed_after_an_error():
    decoder = EventStreamDecoder()
    bad = bytearray(RECORDED[:200])
    bad[20] ^= 0xFF
    with pytest.raises(EventStreamChecksumError):
        decoder.feed(bytes(bad))
    with pytest.raises(EventStreamChecksumError):
        decoder.feed(RECORDED)


def test_total_length_too_small_for_its_headers():
    head = struct.pack(">II", 16, 4)
    raw = head + struct.pack(">I", zlib.crc32(head))
    with pytest.raises(EventStreamLengthError, match="cannot hold"):
        EventStreamDecoder().feed(raw + b"\x00" * 8)


def test_payload_over_limit_is_refused_from_the_prelude():
    head = struct.pack(">II", 25 * 1024 * 1024, 0)
    with pytest.raises(EventStreamLengthError, match="payload length"):
        EventStreamDecoder().feed(head + struct.pack(">I", zlib.crc32(head)))


def _with_valid_crcs(header_block: bytes, payload: bytes = b"") -> bytes:
    """A frame with correct CRCs around an arbitrary header block (an encoder bug, not line noise)."""
    head = struct.pack(">II", 16 + len(header_block) + len(payload), len(header_block))
    body = head + struct.pack(">I", zlib.crc32(head)) + header_block + payload
    return body + struct.pack(">I", zlib.crc32(body))


@pytest.mark.parametrize(
    ("block", "match"),
    [
        (b"\x05ab", "name runs past"),
        (b"\x01a\x0c", "unknown value type 12"),
        (b"\x01a\x07\x00\x09abc", "value runs past"),
        (b"\x01a\x07\x00", "value length runs past"),
        (b"\x01a\x04\x00\x00", "value runs past"),
        (b"\x01\xff\x00", "not UTF-8"),
        (b"\x01a\x07\x00\x01\xff", "string value is not UTF-8"),
        (b"\x01a\x00\x01a\x01", "duplicate header 'a'"),
    ],
)
def test_malformed_header_blocks_raise_header_errors(block, match):
    with pytest.raises(EventStreamHeaderError, match=match):
        decode(_with_valid_crcs(block))


@pytest.mark.parametrize(
    ("headers", "match"),
    [
        ({"": "x"}, "1 to 255"),
        ({"a" * 256: "x"}, "1 to 255"),
        ({"a": Int8(200)}, "does not fit"),
        ({"a": 2**31}, "does not fit"),
        ({"a": "x" * 70000}, "exceeds 65535"),
        ({"a": 1.5}, "cannot encode a float"),
        ([("a", 1), ("a", 2)], "duplicate header"),
    ],
)
def test_encoder_refuses_what_it_cannot_frame(headers, match):
    with pytest.raises(EventStreamHeaderError, match=match):
        encode_message(headers, b"")


# --- properties -------------------------------------------------------------------------------

header_values = st.one_of(
    st.booleans(),
    st.integers(-(2**7), 2**7 - 1).map(Int8),
    st.integers(-(2**15), 2**15 - 1).map(Int16),
    st.integers(-(2**31), 2**31 - 1),
    st.integers(-(2**63), 2**63 - 1).map(Int64),
    st.integers(-(2**63), 2**63 - 1).map(Timestamp),
    st.binary(max_size=40),
    st.text(max_size=40),
    st.uuids(),
)
messages = st.builds(
    Message,
    st.dictionaries(st.text(min_size=1, max_size=20).filter(lambda s: len(s.encode()) < 256), header_values, max_size=6),
    st.binary(max_size=300),
)


@st.composite
def streams_and_cuts(draw):
    msgs = draw(st.lists(messages, min_size=1, max_size=6))
    raw = encode_messages(msgs)
    cuts = sorted(draw(st.sets(st.integers(0, len(raw)), max_size=12)))
    return msgs, raw, cuts


def _feed_in_pieces(raw: bytes, cuts: list[int]) -> list[Message]:
    decoder = EventStreamDecoder()
    out: list[Message] = []
    bounds = [0, *cuts, len(raw)]
    for a, b in zip(bounds, bounds[1:]):
        out += decoder.feed(raw[a:b])
    decoder.close()
    return out


@given(streams_and_cuts())
def test_any_chunking_decodes_to_the_same_messages(case):
    msgs, raw, cuts = case
    out = _feed_in_pieces(raw, cuts)
    assert out == msgs
    assert [type(v) for m in out for v in m.headers.values()] == [type(v) for m in msgs for v in m.headers.values()]
    assert encode_messages(out) == raw


@given(st.data())
def test_any_corrupted_byte_raises_a_typed_error(data):
    raw = bytearray(RECORDED[: data.draw(st.sampled_from([144, 332, 1000, len(RECORDED)]))])
    i = data.draw(st.integers(0, len(raw) - 1))
    raw[i] ^= data.draw(st.integers(1, 255))
    cuts = sorted(data.draw(st.sets(st.integers(0, len(raw)), max_size=5)))
    with pytest.raises(EventStreamError):
        _feed_in_pieces(bytes(raw), cuts)


@given(st.binary(max_size=200), st.binary(max_size=60))
def test_arbitrary_bytes_decode_or_raise_a_typed_error(noise, header_block):
    for raw in (noise, _with_valid_crcs(header_block, noise[:20])):
        try:
            decode(raw)
        except EventStreamError:
            pass


@given(st.data())
def test_cut_streams_raise_truncated(data):
    raw = encode_messages(data.draw(st.lists(messages, min_size=1, max_size=3)))
    cut = data.draw(st.integers(1, len(raw) - 1))
    decoder = EventStreamDecoder()
    decoder.feed(raw[:cut])
    if decoder.buffered:
        with pytest.raises(EventStreamTruncated):
            decoder.close()
    else:
        decoder.close()


def test_decoded_headers_are_fresh_dicts():
    """Header blocks are parsed once and cached; a caller mutating one message's headers must not
    change the next message decoded from the same bytes."""
    first = decode(RECORDED)[0]
    first.headers[":event-type"] = "tampered"
    first.headers["extra"] = 1
    assert decode(RECORDED)[0].headers == RECORDED_VIEW[0]["headers"]
