"""AWS event-stream framing (``application/vnd.amazon.eventstream``): an incremental decoder and
an encoder (docs/wire.md §5.6).

A message is a 12-byte prelude (total length, headers length, CRC32 of those 8 bytes), a block of
typed headers, a payload, and a CRC32 of everything before it. The decoder takes bytes as they
arrive, split or packed in any way, and returns each whole message once its last byte is in;
every malformed input raises an :class:`~loopkit.errors.EventStreamError` subclass. The encoder
writes the same bytes back, so a decoded stream re-encodes byte for byte (cassettes keep Bedrock
frames as readable JSON and rebuild them on replay).

Header values keep their wire type through a decode/encode round trip: ``bool`` (types 0/1),
:class:`Int8`, :class:`Int16`, ``int`` (int32, type 4), :class:`Int64`, ``bytes`` (6), ``str``
(7), :class:`Timestamp` (8, milliseconds since the epoch) and :class:`uuid.UUID` (9). The int
wrappers are ``int`` subclasses, so they compare equal to plain numbers.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias
from zlib import crc32

from .errors import (
    EventStreamChecksumError,
    EventStreamHeaderError,
    EventStreamLengthError,
    EventStreamTruncated,
)

PRELUDE_LENGTH = 12
MESSAGE_OVERHEAD = 16  # prelude + trailing message CRC
MAX_HEADERS_LENGTH = 128 * 1024  # botocore's limits (eventstream.py _MAX_*_LENGTH)
MAX_PAYLOAD_LENGTH = 24 * 1024 * 1024

_PRELUDE = struct.Struct(">III")
_U32 = struct.Struct(">I")
_U16 = struct.Struct(">H")
_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class Int8(int):
    """A header value sent as int8 (type 2)."""

    __slots__ = ()


class Int16(int):
    """A header value sent as int16 (type 3)."""

    __slots__ = ()


class Int64(int):
    """A header value sent as int64 (type 5)."""

    __slots__ = ()


class Timestamp(int):
    """A header value sent as a timestamp (type 8): milliseconds since the epoch."""

    __slots__ = ()


HeaderValue: TypeAlias = bool | int | bytes | str | uuid.UUID


@dataclass(slots=True)
class Message:
    """One event-stream message: ordered headers and the raw payload."""

    headers: dict[str, HeaderValue] = field(default_factory=dict)
    payload: bytes = b""

    @property
    def message_type(self) -> str | None:
        """``:message-type``: ``event``, ``exception`` or ``error``."""
        v = self.headers.get(":message-type")
        return v if isinstance(v, str) else None

    @property
    def event_type(self) -> str | None:
        """``:event-type`` of an event (``messageStart``, ``contentBlockDelta`` ...)."""
        v = self.headers.get(":event-type")
        return v if isinstance(v, str) else None


# --- decoding ---------------------------------------------------------------------------------


class EventStreamDecoder:
    """Incremental decoder: ``feed(chunk)`` returns the messages completed by that chunk.

    Call :meth:`close` at the end of the stream: it raises :class:`EventStreamTruncated` when a
    message was left unfinished. After an error the decoder is spent; every later call raises.
    """

    __slots__ = ("_buf", "_offset", "_need", "_failed")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._offset = 0  # stream offset of _buf[0], for error messages
        self._need = PRELUDE_LENGTH  # bytes _buf must hold before another message can complete
        self._failed: Exception | None = None

    @property
    def buffered(self) -> int:
        """Bytes received but not yet part of a returned message."""
        return len(self._buf)

    def feed(self, data: bytes | bytearray | memoryview) -> list[Message]:
        """Add bytes from the stream; return every message they complete, in order."""
        if self._failed is not None:
            raise self._failed
        buf = self._buf
        if buf:
            buf += data
            if len(buf) < self._need:
                return []
            src: bytes | bytearray = buf
        else:
            src = data if isinstance(data, bytes) else bytes(data)
            if len(src) < PRELUDE_LENGTH:
                buf += src
                return []
        try:
            out, pos = _decode_from(src, self._offset)
        except Exception as exc:
            self._failed = exc
            raise
        if src is buf:
            del buf[:pos]
        else:
            buf += src[pos:] if pos else src
        self._offset += pos
        self._need = _needed(buf)
        return out

    def close(self) -> None:
        """Declare the end of the stream; raise if a message was left unfinished."""
        if self._failed is not None:
            raise self._failed
        if self._buf:
            n = len(self._buf)
            detail = f"{n} byte(s) of an unfinished message"
            if n >= PRELUDE_LENGTH:
                detail += f" declaring {_U32.unpack_from(self._buf, 0)[0]} bytes"
            self._failed = EventStreamTruncated(f"stream ended with {detail}", offset=self._offset)
            raise self._failed


def decode(data: bytes) -> list[Message]:
    """Decode a whole stream body; raise if it ends part-way through a message."""
    decoder = EventStreamDecoder()
    out = decoder.feed(data)
    decoder.close()
    return out


def _needed(buf: bytearray) -> int:
    if len(buf) < PRELUDE_LENGTH:
        return PRELUDE_LENGTH
    # the prelude was validated when it was first seen
    return _U32.unpack_from(buf, 0)[0]


def _decode_from(buf: bytes | bytearray, base: int) -> tuple[list[Message], int]:
    """Decode whole messages from the front of ``buf``; return them and the bytes consumed."""
    out: list[Message] = []
    pos = 0
    n = len(buf)
    unpack_prelude = _PRELUDE.unpack_from
    unpack_u32 = _U32.unpack_from
    while n - pos >= PRELUDE_LENGTH:
        total, hlen, prelude_crc = unpack_prelude(buf, pos)
        calc = crc32(buf[pos : pos + 8])
        if calc != prelude_crc:
            raise EventStreamChecksumError(
                f"prelude checksum mismatch: expected 0x{prelude_crc:08x}, calculated 0x{calc:08x}",
                offset=base + pos,
            )
        if hlen > MAX_HEADERS_LENGTH:
            raise EventStreamLengthError(
                f"headers length {hlen} exceeds the maximum of {MAX_HEADERS_LENGTH}", offset=base + pos
            )
        if total < MESSAGE_OVERHEAD + hlen:
            raise EventStreamLengthError(
                f"total length {total} cannot hold the prelude, {hlen} header byte(s) and the message CRC",
                offset=base + pos,
            )
        if total - MESSAGE_OVERHEAD - hlen > MAX_PAYLOAD_LENGTH:
            raise EventStreamLengthError(
                f"payload length {total - MESSAGE_OVERHEAD - hlen} exceeds the maximum of {MAX_PAYLOAD_LENGTH}",
                offset=base + pos,
            )
        end = pos + total
        if end > n:
            break
        body_end = end - 4
        (message_crc,) = unpack_u32(buf, body_end)
        calc = crc32(buf[pos + 8 : body_end], prelude_crc)
        if calc != message_crc:
            raise EventStreamChecksumError(
                f"message checksum mismatch: expected 0x{message_crc:08x}, calculated 0x{calc:08x}",
                offset=base + pos,
            )
        headers_end = pos + PRELUDE_LENGTH + hlen
        if hlen:
            # Header blocks repeat (one per event type in a Bedrock stream): parse each once.
            block = bytes(buf[pos + PRELUDE_LENGTH : headers_end])
            cached = _HEADER_CACHE.get(block)
            if cached is None:
                cached = _decode_headers(block, base + pos)
                if len(_HEADER_CACHE) < _HEADER_CACHE_SIZE:
                    _HEADER_CACHE[block] = cached
            headers = dict(cached)
        else:
            headers = {}
        out.append(Message(headers, bytes(buf[headers_end:body_end])))
        pos = end
    return out, pos


_HEADER_CACHE: dict[bytes, dict[str, HeaderValue]] = {}
_HEADER_CACHE_SIZE = 512


def _decode_headers(buf: bytes, offset: int) -> dict[str, HeaderValue]:
    """Parse a whole header block; ``offset`` is the stream offset of its message (for errors)."""
    headers: dict[str, HeaderValue] = {}
    pos = 0
    end = len(buf)
    while pos < end:
        start = pos
        name_end = pos + 1 + buf[pos]
        if name_end >= end:  # the name and at least the type byte must fit
            raise _header_error("header name runs past the header block", start, offset)
        try:
            name = buf[pos + 1 : name_end].decode("utf-8")
        except UnicodeDecodeError:
            raise _header_error("header name is not UTF-8", start, offset) from None
        kind = buf[name_end]
        pos = name_end + 1
        value: HeaderValue
        if kind == 7 or kind == 6:
            if pos + 2 > end:
                raise _header_error(f"header {name!r}: value length runs past the header block", start, offset)
            vend = pos + 2 + _U16.unpack_from(buf, pos)[0]
            if vend > end:
                raise _header_error(f"header {name!r}: value runs past the header block", start, offset)
            raw = bytes(buf[pos + 2 : vend])
            if kind == 7:
                try:
                    value = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise _header_error(f"header {name!r}: string value is not UTF-8", start, offset) from None
            else:
                value = raw
            pos = vend
        elif kind == 0 or kind == 1:
            value = kind == 0
        else:
            spec = _FIXED.get(kind)
            if spec is None:
                raise _header_error(f"header {name!r}: unknown value type {kind}", start, offset)
            size, decode_value = spec
            if pos + size > end:
                raise _header_error(f"header {name!r}: value runs past the header block", start, offset)
            value = decode_value(buf, pos)
            pos += size
        if name in headers:
            raise _header_error(f"duplicate header {name!r}", start, offset)
        headers[name] = value
    return headers


def _header_error(what: str, block_pos: int, offset: int) -> EventStreamHeaderError:
    at = offset + PRELUDE_LENGTH + block_pos
    return EventStreamHeaderError(f"{what} (header at byte {at})", offset=offset)


_FIXED = {
    2: (1, lambda b, p: Int8(_I8.unpack_from(b, p)[0])),
    3: (2, lambda b, p: Int16(_I16.unpack_from(b, p)[0])),
    4: (4, lambda b, p: _I32.unpack_from(b, p)[0]),
    5: (8, lambda b, p: Int64(_I64.unpack_from(b, p)[0])),
    8: (8, lambda b, p: Timestamp(_I64.unpack_from(b, p)[0])),
    9: (16, lambda b, p: uuid.UUID(bytes=bytes(b[p : p + 16]))),
}


# --- encoding ---------------------------------------------------------------------------------


def encode_message(headers: Mapping[str, HeaderValue] | Iterable[tuple[str, HeaderValue]] = (), payload: bytes = b"") -> bytes:
    """Encode one message; header order is kept, and each value's Python type picks its wire type.

    Raises:
        EventStreamHeaderError: a name or value cannot be encoded (too long, wrong type, out of range).
        EventStreamLengthError: the headers or payload exceed the limits a decoder accepts.
    """
    items = headers.items() if isinstance(headers, Mapping) else headers
    block = bytearray()
    seen: set[str] = set()
    for name, value in items:
        if name in seen:
            raise EventStreamHeaderError(f"duplicate header {name!r}")
        seen.add(name)
        raw_name = name.encode("utf-8")
        if not 0 < len(raw_name) < 256:
            raise EventStreamHeaderError(f"header name {name!r} must be 1 to 255 UTF-8 bytes")
        block.append(len(raw_name))
        block += raw_name
        _encode_value(block, name, value)
    if len(block) > MAX_HEADERS_LENGTH:
        raise EventStreamLengthError(f"headers take {len(block)} bytes; the maximum is {MAX_HEADERS_LENGTH}")
    if len(payload) > MAX_PAYLOAD_LENGTH:
        raise EventStreamLengthError(f"payload is {len(payload)} bytes; the maximum is {MAX_PAYLOAD_LENGTH}")
    total = MESSAGE_OVERHEAD + len(block) + len(payload)
    head = struct.pack(">II", total, len(block))
    prelude = head + _U32.pack(crc32(head))
    body = prelude + block + payload
    return body + _U32.pack(crc32(body))


def encode_messages(messages: Iterable[Message]) -> bytes:
    """Encode messages back to back, as one stream body."""
    return b"".join(encode_message(m.headers, m.payload) for m in messages)


_INT_RANGES = {Int8: (2, _I8), Int16: (3, _I16), Int64: (5, _I64), Timestamp: (8, _I64)}


def _encode_value(block: bytearray, name: str, value: HeaderValue) -> None:
    if value is True or value is False:
        block.append(0 if value else 1)
    elif isinstance(value, str):
        raw = value.encode("utf-8")
        _encode_sized(block, name, 7, raw)
    elif isinstance(value, (bytes, bytearray)):
        _encode_sized(block, name, 6, bytes(value))
    elif isinstance(value, uuid.UUID):
        block.append(9)
        block += value.bytes
    elif isinstance(value, int):
        kind, packer = _INT_RANGES.get(type(value), (4, _I32))
        try:
            packed = packer.pack(value)
        except struct.error:
            raise EventStreamHeaderError(f"header {name!r}: {value} does not fit wire type {kind}") from None
        block.append(kind)
        block += packed
    else:
        raise EventStreamHeaderError(f"header {name!r}: cannot encode a {type(value).__name__} value")


def _encode_sized(block: bytearray, name: str, kind: int, raw: bytes) -> None:
    if len(raw) > 0xFFFF:
        raise EventStreamHeaderError(f"header {name!r}: value of {len(raw)} bytes exceeds 65535")
    block.append(kind)
    block += _U16.pack(len(raw))
    block += raw


__all__ = [
    "EventStreamDecoder",
    "HeaderValue",
    "Int16",
    "Int64",
    "Int8",
    "Message",
    "Timestamp",
    "decode",
    "encode_message",
    "encode_messages",
]
