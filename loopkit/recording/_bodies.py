"""Bodies between bytes and the cassette's readable forms (JSON, text, chunks, frames)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Any

from ..errors import CassetteError
from ._codecs import codec_for, require_codec
from ._format import Chunk, RecordedRequest, RecordedResponse


def request_body_fields(content: bytes) -> dict[str, Any]:
    """The request body as ``{"json": value}``, ``{"text": str}``, ``{"base64": str}`` or ``{}``."""
    if not content:
        return {}
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(content).decode("ascii")}
    try:
        return {"json": json.loads(text)}
    except ValueError:
        return {"text": text}


def request_body_bytes(request: RecordedRequest) -> bytes:
    """The bytes to send for a recorded request body (JSON is re-encoded compactly)."""
    if request.has_json:
        return json.dumps(request.json_body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if request.text is not None:
        return request.text.encode("utf-8")
    if request.base64 is not None:
        return base64.b64decode(request.base64)
    return b""


def header(headers: Sequence[tuple[str, str]], name: str) -> str | None:
    """The first value of header ``name`` (case-insensitive), or None."""
    name = name.lower()
    for k, v in headers:
        if k.lower() == name:
            return v
    return None


def response_chunks(pieces: Sequence[tuple[float, bytes]], content_type: str | None) -> tuple[list[dict[str, Any]], str | None, str | None]:
    """Turn the body pieces that arrived (offset, bytes) into chunk data; returns (chunks, codec, tail).

    With a frame codec for ``content_type``, each chunk holds the frames it completed and its byte
    size; the bytes of an unfinished last frame become the base64 ``tail``. A body the codec cannot
    decode is kept as base64 chunks. Otherwise each chunk is text, or base64 when not UTF-8.
    """
    codec = codec_for(content_type)
    if codec is not None:
        decoder = codec.decoder()
        try:
            out = [{"t": t, "frames": decoder.feed(data), "size": len(data)} for t, data in pieces]
        except Exception:  # a malformed stream is recorded as it came, byte for byte
            out = None
        if out is not None:
            body = b"".join(data for _, data in pieces)
            tail = body[len(body) - decoder.buffered :] if decoder.buffered else b""
            return out, codec.content_type, base64.b64encode(tail).decode("ascii") if tail else None
    # Plain dicts: the caller validates the whole response in one pydantic call (a hot path).
    chunks: list[dict[str, Any]] = []
    for t, data in pieces:
        try:
            chunks.append({"t": t, "text": data.decode("utf-8")})
        except UnicodeDecodeError:
            chunks.append({"t": t, "base64": base64.b64encode(data).decode("ascii")})
    return chunks, None, None


def chunk_bytes(response: RecordedResponse, *, where: str = "response") -> list[bytes]:
    """The body bytes of each recorded chunk, exactly as they arrived."""
    if response.codec is None:
        return [_plain(c) for c in response.chunks]
    codec = require_codec(response.codec, where)
    parts: list[bytes] = []
    for c in response.chunks:
        if c.frames is not None:
            parts.extend(codec.encode(f) for f in c.frames)
        else:
            parts.append(_plain(c))
    stream = b"".join(parts) + (base64.b64decode(response.tail_base64) if response.tail_base64 else b"")
    sizes = [c.size if c.frames is not None else len(_plain(c)) for c in response.chunks]
    if sum(sizes) != len(stream):
        raise CassetteError(f"{where}: chunk sizes add up to {sum(sizes)} bytes but the frames encode to {len(stream)}")
    out, pos = [], 0
    for n in sizes:
        out.append(stream[pos : pos + n])
        pos += n
    return out


def _plain(c: Chunk) -> bytes:
    return c.text.encode("utf-8") if c.text is not None else base64.b64decode(c.base64 or "")


def realign_frame_sizes(response: RecordedResponse) -> None:
    """After frames were edited (scrubbed), cut the chunks at frame boundaries again."""
    if response.codec is None:
        return
    codec = require_codec(response.codec, "response")
    tail = len(base64.b64decode(response.tail_base64)) if response.tail_base64 else 0
    kept = []
    for c in response.chunks:
        if c.frames is None:
            kept.append(c)
            continue
        c.size = sum(len(codec.encode(f)) for f in c.frames)
        if c.size or c.frames:
            kept.append(c)
    last = next((c for c in reversed(kept) if c.frames is not None), None)
    if last is not None:
        last.size = (last.size or 0) + tail
    response.chunks = kept


_SSE_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def rechunk(body: bytes, content_type: str | None) -> list[bytes]:
    """Split a whole body into the pieces a live stream sends: one per SSE event, one per
    event-stream message; any other body stays one piece. Used where a body was stored whole
    (vcrpy)."""
    ctype = (content_type or "").split(";", 1)[0].strip().lower()
    codec = codec_for(ctype)
    if codec is not None:
        decoder = codec.decoder()
        try:
            frames = decoder.feed(body)
        except Exception:
            return [body]
        pieces = [codec.encode(f) for f in frames]
        rest = body[len(body) - decoder.buffered :] if decoder.buffered else b""
        return pieces + ([rest] if rest else [])
    if ctype == "text/event-stream":
        pieces, pos = [], 0
        for m in _SSE_EVENT_END.finditer(body):
            pieces.append(body[pos : m.end()])
            pos = m.end()
        if pos < len(body):
            pieces.append(body[pos:])
        return pieces or [body]
    return [body] if body else []
