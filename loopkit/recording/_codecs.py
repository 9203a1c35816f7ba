"""Frame codecs: how a binary framed body (Bedrock's event stream) is stored as readable frames.

A small registry keyed by content type. The AWS event-stream codec lives at L1
(:mod:`loopkit.eventstream`, shared with the Bedrock adapter), so it is registered here by default
through :class:`EventStreamFrameCodec`; other framings can be added with
:func:`register_frame_codec`. With no codec for a content type, a framed body is recorded as base64
chunks: still chunk-faithful, only less readable. A cassette that stores frames for a content type
with no codec registered fails on replay with a message saying how to register one.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable
from types import ModuleType
from typing import Any, Protocol

from .. import eventstream
from ..errors import CassetteError


class FrameDecoder(Protocol):
    """Incremental decoder: ``feed(chunk)`` returns the frames (as JSON data) the chunk completes."""

    def feed(self, data: bytes) -> list[Any]: ...

    @property
    def buffered(self) -> int: ...


class FrameCodec(Protocol):
    """Turns a framed byte stream into JSON frames and each frame back into its exact bytes."""

    content_type: str

    def decoder(self) -> FrameDecoder: ...

    def encode(self, frame: Any) -> bytes: ...


_CODECS: dict[str, FrameCodec] = {}


def register_frame_codec(codec: FrameCodec) -> None:
    """Use ``codec`` for responses whose content type is ``codec.content_type``."""
    _CODECS[codec.content_type.lower()] = codec


def unregister_frame_codec(content_type: str) -> None:
    """Forget the codec for ``content_type`` (tests use this)."""
    _CODECS.pop(content_type.lower(), None)


def codec_for(content_type: str | None) -> FrameCodec | None:
    """The registered codec for a Content-Type header value (parameters ignored), or None."""
    if not content_type:
        return None
    return _CODECS.get(content_type.split(";", 1)[0].strip().lower())


def require_codec(name: str, where: str) -> FrameCodec:
    """The codec named by a cassette, or a :class:`CassetteError` saying how to register one."""
    codec = _CODECS.get(name.lower())
    if codec is None:
        raise CassetteError(
            f"{where}: the body is stored as {name} frames but no frame codec is registered for it; "
            "call loopkit.recording.register_frame_codec(...) with a codec for it"
        )
    return codec


class EventStreamFrameCodec:
    """AWS event-stream messages as ``{"headers": {...}, "json"|"text"|"base64": payload}``.

    Header values keep their wire type: strings, booleans and int32 stay plain JSON; the other
    types are tagged (``{"int64": 5}``, ``{"bytes": "<base64>"}``, ``{"uuid": "..."}``). A payload
    is stored as ``json`` only when compact re-encoding gives back the same bytes, so replay is
    byte-exact.

    Args:
        module: the event-stream module (:mod:`loopkit.eventstream`).
    """

    content_type = "application/vnd.amazon.eventstream"

    def __init__(self, module: ModuleType) -> None:
        self._m = module
        self._tagged: dict[type, str] = {module.Int8: "int8", module.Int16: "int16", module.Int64: "int64", module.Timestamp: "timestamp"}
        self._untag: dict[str, Callable[[Any], Any]] = {
            "int8": module.Int8, "int16": module.Int16, "int64": module.Int64, "timestamp": module.Timestamp,
            "bytes": lambda v: base64.b64decode(v), "uuid": uuid.UUID,
        }  # fmt: skip

    def decoder(self) -> FrameDecoder:
        return _EventStreamDecoder(self._m.EventStreamDecoder(), self._frame)

    def _frame(self, message: Any) -> dict[str, Any]:
        headers: dict[str, Any] = {}
        for name, value in message.headers.items():
            tag = self._tagged.get(type(value))
            if tag is not None:
                headers[name] = {tag: int(value)}
            elif isinstance(value, (bytes, bytearray)):
                headers[name] = {"bytes": base64.b64encode(bytes(value)).decode("ascii")}
            elif isinstance(value, uuid.UUID):
                headers[name] = {"uuid": str(value)}
            else:
                headers[name] = value
        frame: dict[str, Any] = {"headers": headers}
        payload: bytes = message.payload
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            frame["base64"] = base64.b64encode(payload).decode("ascii")
            return frame
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        else:
            if json.dumps(value, ensure_ascii=False, separators=(",", ":")) == text:
                frame["json"] = value
                return frame
        frame["text"] = text
        return frame

    def encode(self, frame: Any) -> bytes:
        if not isinstance(frame, dict) or not isinstance(frame.get("headers", {}), dict):
            raise CassetteError(f"an event-stream frame is an object with 'headers'; got {frame!r:.80}")
        headers = {}
        for name, value in frame.get("headers", {}).items():
            if isinstance(value, dict):
                (tag, raw), = value.items()
                headers[name] = self._untag[tag](raw)
            else:
                headers[name] = value
        if "json" in frame:
            payload = json.dumps(frame["json"], ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        elif "text" in frame:
            payload = frame["text"].encode("utf-8")
        else:
            payload = base64.b64decode(frame.get("base64", ""))
        return self._m.encode_message(headers, payload)


class _EventStreamDecoder:
    __slots__ = ("_decoder", "_frame")

    def __init__(self, decoder: Any, frame: Callable[[Any], dict[str, Any]]) -> None:
        self._decoder = decoder
        self._frame = frame

    def feed(self, data: bytes) -> list[Any]:
        return [self._frame(m) for m in self._decoder.feed(data)]

    @property
    def buffered(self) -> int:
        return self._decoder.buffered


register_frame_codec(EventStreamFrameCodec(eventstream))
