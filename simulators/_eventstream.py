"""The simulator's own AWS event-stream encoder (docs/wire.md §5.6), string headers only.

Written apart from ``loopkit/providers/_eventstream.py`` on purpose: a misreading of the framing
must not hide on both sides of a test. Bedrock only ever sends string headers (type 7).
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Sequence
from typing import Any

_STRING = 7


_BLOCKS: dict[tuple[tuple[str, str], ...], bytes] = {}  # encoded header blocks: a stream repeats a few


def frame(headers: Sequence[tuple[str, str]], payload: bytes) -> bytes:
    """One message: prelude (lengths + CRC), string headers in order, payload, message CRC."""
    key = tuple(headers)
    block = _BLOCKS.get(key)
    if block is None:
        block = b"".join(_header(name, value) for name, value in headers)
        if len(_BLOCKS) < 256:
            _BLOCKS[key] = block
    total = 4 + 4 + 4 + len(block) + len(payload) + 4
    lengths = total.to_bytes(4, "big") + len(block).to_bytes(4, "big")
    prelude = lengths + binascii.crc32(lengths).to_bytes(4, "big")
    message = prelude + block + payload
    return message + binascii.crc32(message).to_bytes(4, "big")


def _header(name: str, value: str) -> bytes:
    n = name.encode()
    v = value.encode()
    return bytes((len(n),)) + n + bytes((_STRING,)) + len(v).to_bytes(2, "big") + v


def json_bytes(data: Any) -> bytes:
    """Compact JSON as the service writes it."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def event(event_type: str, payload: bytes) -> bytes:
    """A Bedrock ``event`` message, headers in the order the service sends them."""
    return frame(
        ((":event-type", event_type), (":content-type", "application/json"), (":message-type", "event")),
        payload,
    )


def exception(exception_type: str, payload: bytes) -> bytes:
    """A Bedrock in-stream ``exception`` message (``throttlingException`` ...)."""
    return frame(
        ((":exception-type", exception_type), (":content-type", "application/json"), (":message-type", "exception")),
        payload,
    )
