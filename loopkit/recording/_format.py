"""The cassette file format (``format_version`` 1): a pydantic schema, a strict loader, atomic saves.

One JSON file per cassette, pretty-printed so that a diff reads well (one line per header, per
chunk, per message of a request body or transcript)::

    {"format_version": 1, "meta": {...}, "interactions": [
      {"request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                   "headers": [["content-type", "application/json"], ...], "json": {...}},
       "response": {"status": 200, "headers": [...],
                    "chunks": [{"t": 0.034, "text": "data: {...}\\n\\n"}, ...]},
       "transcript": {"request": {...ModelRequest...}, "message": {...AssistantMessage...}}}]}

Bodies are stored as JSON (``json``), else UTF-8 text (``text``), else ``base64``. A response body
is the list of chunks as they arrived, each with its time offset ``t`` in seconds from the start
of the response. A chunk is ``text``; or ``base64`` when it is not UTF-8 on its own; or, for a
content type with a registered frame codec (Bedrock's event stream), ``frames``: the messages
completed in that chunk, decoded to readable JSON, with ``size`` the chunk's byte length so that
the re-encoded stream is cut at the same places on replay.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import CassetteError
from ..messages import dumps

FORMAT_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RecordedRequest(_Model):
    """An HTTP request as recorded (scrubbed)."""

    method: str
    url: str
    headers: list[tuple[str, str]] = Field(default_factory=list)
    json_body: Any = Field(default=None, alias="json")
    text: str | None = None
    base64: str | None = None

    @model_validator(mode="after")
    def _one_body(self) -> RecordedRequest:
        set_ = [k for k in ("text", "base64") if getattr(self, k) is not None]
        if len(set_) > 1 or (set_ and "json_body" in self.model_fields_set):
            raise ValueError("a request body is one of 'json', 'text' or 'base64'")
        return self

    @property
    def has_json(self) -> bool:
        return "json_body" in self.model_fields_set


class Chunk(_Model):
    """One piece of a response body as it arrived, ``t`` seconds after the response started."""

    t: float = 0.0
    text: str | None = None
    base64: str | None = None
    frames: list[Any] | None = None
    size: int | None = None

    @model_validator(mode="after")
    def _one_payload(self) -> Chunk:
        # Runs once per chunk of every loaded cassette: kept to plain attribute tests.
        text, b64, frames = self.text, self.base64, self.frames
        if (text is not None) + (b64 is not None) + (frames is not None) != 1:
            raise ValueError("a chunk holds exactly one of 'text', 'base64' or 'frames'")
        if (frames is None) != (self.size is None):
            raise ValueError("'size' goes with 'frames' and only with it")
        if self.t < 0:
            raise ValueError("'t' must not be negative")
        return self


class StreamFailure(_Model):
    """How the recorded body ended when it did not end cleanly (a dropped connection)."""

    type: str
    message: str = ""


class RecordedResponse(_Model):
    """An HTTP response as recorded (scrubbed), with its body as the chunks that arrived."""

    status: int
    headers: list[tuple[str, str]] = Field(default_factory=list)
    codec: str | None = None
    chunks: list[Chunk] = Field(default_factory=list)
    tail_base64: str | None = None
    failure: StreamFailure | None = None

    @model_validator(mode="after")
    def _codec_for_frames(self) -> RecordedResponse:
        if self.codec is None and any(c.frames is not None for c in self.chunks):
            raise ValueError("chunks hold 'frames' but the response names no 'codec'")
        return self


class Transcript(_Model):
    """The provider-neutral view of one model call: loopkit.serde data of the ModelRequest and of
    the AssistantMessage it produced."""

    request: dict[str, Any]
    message: dict[str, Any]


class Interaction(_Model):
    """One recorded exchange: HTTP request and response, and/or the transcript."""

    request: RecordedRequest | None = None
    response: RecordedResponse | None = None
    transcript: Transcript | None = None

    @model_validator(mode="after")
    def _something(self) -> Interaction:
        if (self.request is None) != (self.response is None):
            raise ValueError("'request' and 'response' go together")
        if self.request is None and self.transcript is None:
            raise ValueError("an interaction holds an HTTP exchange, a transcript, or both")
        return self


class CassetteFile(_Model):
    """The whole file."""

    format_version: Literal[1] = FORMAT_VERSION
    meta: dict[str, Any] = Field(default_factory=dict)
    interactions: list[Interaction] = Field(default_factory=list)


_MODEL_NAMES = frozenset({"RecordedRequest", "RecordedResponse", "Chunk", "StreamFailure", "Transcript", "Interaction"})


def _field_path(loc: tuple[Any, ...]) -> str:
    """pydantic's error location as ``interactions[0].response.chunks[2]`` (validator and union
    tags left out)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in _MODEL_NAMES or str(part).startswith("function-"):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def _b64(data: str, what: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (ValueError, binascii.Error) as exc:
        raise CassetteError(f"{what}: not valid base64 ({exc})") from None


def check_bodies(file: CassetteFile, source: str) -> None:
    """Decode every stored body now, not at replay: base64 (request bodies, chunks, tails) and
    event-stream frames (re-encoded with their codec; the chunk sizes must add up to the frames).
    Raises :class:`CassetteError` naming the file, interaction, chunk and the problem."""
    from ._codecs import require_codec

    for n, inter in enumerate(file.interactions):
        w = f"{source}: interactions[{n}]"
        if inter.request is not None and inter.request.base64 is not None:
            _b64(inter.request.base64, f"{w}.request.base64")
        resp = inter.response
        if resp is None:
            continue
        codec = None
        if resp.codec is not None:
            codec = require_codec(resp.codec, f"{w}.response")
        total = 0
        for i, c in enumerate(resp.chunks):
            cw = f"{w}.response.chunks[{i}]"
            if c.base64 is not None:
                total += len(_b64(c.base64, f"{cw}.base64"))
            elif c.text is not None:
                total += len(c.text.encode("utf-8", "surrogatepass"))
            if c.frames is not None:
                if codec is None:
                    raise CassetteError(f"{cw}: holds 'frames' but the response names no 'codec'")
                for j, frame in enumerate(c.frames):
                    try:
                        total += len(codec.encode(frame))
                    except Exception as exc:  # a codec says what is wrong in its own exception
                        raise CassetteError(f"{cw}.frames[{j}]: cannot be encoded as {resp.codec} ({type(exc).__name__}: {exc})") from None
        if resp.tail_base64 is not None:
            total += len(_b64(resp.tail_base64, f"{w}.response.tail_base64"))
        if codec is not None:
            sizes = sum(c.size if c.size is not None else 0 for c in resp.chunks if c.frames is not None)
            plain = sum(len(c.text.encode("utf-8")) if c.text is not None else len(_b64(c.base64 or "", "")) for c in resp.chunks if c.frames is None)
            if sizes + plain != total:
                raise CassetteError(
                    f"{w}.response: the chunk sizes add up to {sizes + plain} bytes but the frames and tail encode to {total} "
                    "(a frame was edited: fix 'size', or run `loopkit cassette scrub` on a file it wrote)"
                )


def parse_cassette(text: str | bytes, *, source: str = "<cassette>") -> CassetteFile:
    """Validate cassette JSON text and decode every stored body; raise :class:`CassetteError`
    naming ``source``, the interaction, the chunk and the problem."""
    try:  # the fast path: pydantic parses and validates in one pass
        parsed = CassetteFile.model_validate_json(text)
        if "format_version" in parsed.model_fields_set:
            check_bodies(parsed, source)
            return parsed
    except ValidationError:
        pass  # parse again, slowly, to say exactly what is wrong
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CassetteError(f"{source}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise CassetteError(f"{source}: a cassette is a JSON object, got {type(data).__name__}")
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
            raise CassetteError(
                f"{source}: format_version {version} is newer than this loopkit reads ({FORMAT_VERSION}); upgrade loopkit"
            )
        raise CassetteError(f"{source}: format_version: expected {FORMAT_VERSION}, got {version!r}")
    try:
        parsed = CassetteFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise CassetteError(f"{source}: {_field_path(err['loc'])}: {err['msg']}{more}") from None
    check_bodies(parsed, source)
    return parsed


def load_cassette_file(path: str | os.PathLike[str]) -> CassetteFile:
    """Read and validate a cassette file."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise CassetteError(f"{p}: cannot read cassette ({exc.strerror or exc})") from None
    return parse_cassette(raw, source=str(p))


def dump_cassette(cassette: CassetteFile) -> str:
    """The pretty JSON text of a cassette (2-space indent, keys in schema order, fields left at
    their defaults left out, a final newline)."""
    data: dict[str, Any] = {"format_version": FORMAT_VERSION}
    if cassette.meta:
        data["meta"] = cassette.meta
    if cassette.interactions:
        data["interactions"] = [_interaction_data(i) for i in cassette.interactions]
    return _pretty(data, "") + "\n"


def _interaction_data(inter: Interaction) -> dict[str, Any]:
    # What model_dump(mode="json", by_alias=True, exclude_defaults=True) gives, built directly:
    # pydantic's serializer cost as much as the rest of a save.
    out: dict[str, Any] = {}
    req, resp = inter.request, inter.response
    if req is not None:
        r: dict[str, Any] = {"method": req.method, "url": req.url}
        if req.headers:
            r["headers"] = [list(h) for h in req.headers]
        if req.has_json:
            r["json"] = req.json_body  # a JSON null body is still a JSON body
        if req.text is not None:
            r["text"] = req.text
        if req.base64 is not None:
            r["base64"] = req.base64
        out["request"] = r
    if resp is not None:
        a: dict[str, Any] = {"status": resp.status}
        if resp.headers:
            a["headers"] = [list(h) for h in resp.headers]
        if resp.codec is not None:
            a["codec"] = resp.codec
        if resp.chunks:
            a["chunks"] = [_chunk_data(c) for c in resp.chunks]
        if resp.tail_base64 is not None:
            a["tail_base64"] = resp.tail_base64
        if resp.failure is not None:
            a["failure"] = {"type": resp.failure.type, **({"message": resp.failure.message} if resp.failure.message else {})}
        out["response"] = a
    if inter.transcript is not None:
        out["transcript"] = {"request": inter.transcript.request, "message": inter.transcript.message}
    return out


def _chunk_data(c: Chunk) -> dict[str, Any]:
    out: dict[str, Any] = {"t": c.t} if c.t != 0.0 else {}
    if c.text is not None:
        out["text"] = c.text
    if c.base64 is not None:
        out["base64"] = c.base64
    if c.frames is not None:
        out["frames"] = c.frames
    if c.size is not None:
        out["size"] = c.size
    return out


_INLINE_WIDTH = 100


def _pretty(value: Any, indent: str) -> str:
    """JSON of ``value``: a container whose compact form fits the line stays on one line (a
    header pair, a chunk), others open one line per item; json.dumps(indent=2) would put every
    header pair and chunk over several lines. Top-down: a container that cannot fit (a lower bound
    of its length, with an early exit) is opened without being dumped; one that may fit is dumped
    once by the C encoder."""
    room = _INLINE_WIDTH - len(indent)
    if not isinstance(value, (dict, list)) or not value or not _longer_than(value, room):
        flat = _dumps(value)
        if len(flat) <= room or not isinstance(value, (dict, list)) or not value:
            return flat
    inner = indent + "  "
    if isinstance(value, dict):
        items = ",\n".join(f"{inner}{_encode_str(k)}: {_value(k, v, inner)}" for k, v in value.items())
        return "{\n" + items + "\n" + indent + "}"
    return "[\n" + ",\n".join(inner + _pretty(v, inner) for v in value) + "\n" + indent + "]"


_ONE_LINE_ITEMS = frozenset({"chunks", "headers"})


def _value(key: str, value: Any, indent: str) -> str:
    if key in _ONE_LINE_ITEMS and isinstance(value, list):
        return _lines(value, indent)
    if key == "json":
        return _body(value, indent)
    if key == "transcript" and isinstance(value, dict):
        inner = indent + "  "
        return "{\n" + ",\n".join(f"{inner}{_encode_str(k)}: {_body(v, inner)}" for k, v in value.items()) + "\n" + indent + "}"
    return _pretty(value, indent)


def _body(value: Any, indent: str) -> str:
    """A request body or transcript: its top-level fields one per line, and the items of a list
    field (messages, contents, input, tools) one per line, each item compact. A diff then shows
    the one message that changed."""
    flat = _dumps(value)
    if len(flat) + len(indent) <= _INLINE_WIDTH or not isinstance(value, dict) or not value:
        return flat
    inner = indent + "  "
    lines = []
    for k, v in value.items():
        if isinstance(v, list) and v:
            item = inner + "  "
            lines.append(f"{inner}{_encode_str(k)}: [\n" + ",\n".join(item + _dumps(x) for x in v) + "\n" + inner + "]")
        else:
            lines.append(f"{inner}{_encode_str(k)}: {_dumps(v)}")
    return "{\n" + ",\n".join(lines) + "\n" + indent + "}"


def _lines(items: list[Any], indent: str) -> str:
    """A list with one item per line: each header pair, and each text or base64 chunk, however
    long (a chunk of frames is opened when it does not fit), so a diff shows one line per change."""
    if not items:
        return "[]"
    inner = indent + "  "
    out = []
    for item in items:
        if type(item) is dict and len(item) == 2 and type(item.get("t")) is float and type(item.get("text")) is str:
            out.append(f'{inner}{{"t": {item["t"]!r}, "text": {_encode_str(item["text"])}}}')  # the usual chunk
        elif isinstance(item, dict) and "frames" in item:
            out.append(inner + _pretty(item, inner))
        elif isinstance(item, list) and len(item) == 2 and type(item[0]) is str and type(item[1]) is str:
            out.append(f"{inner}[{_encode_str(item[0])}, {_encode_str(item[1])}]")  # a header pair
        elif isinstance(item, dict) and all(type(v) in (str, float, int) for v in item.values()):
            out.append(inner + "{" + ", ".join(f"{_encode_str(k)}: {_encode_str(v) if type(v) is str else repr(v)}" for k, v in item.items()) + "}")
        else:
            out.append(inner + _dumps(item))
    flat = "[" + ", ".join(o.strip() for o in out) + "]"
    if len(flat) + len(indent) <= _INLINE_WIDTH:
        return flat
    return "[\n" + ",\n".join(out) + "\n" + indent + "]"


def _longer_than(value: Any, room: int) -> bool:
    """Whether the compact JSON of ``value`` is surely longer than ``room`` (a lower bound)."""
    if isinstance(value, str):
        return len(value) + 2 > room
    if isinstance(value, dict):
        room -= 2
        for k, v in value.items():
            room -= len(k) + 6
            if room < 0 or _longer_than(v, room):
                return True
            room -= _min_len(v)
        return room < 0
    if isinstance(value, list):
        room -= 2
        for v in value:
            room -= 2
            if room < 0 or _longer_than(v, room):
                return True
            room -= _min_len(v)
        return room < 0
    return False


def _min_len(value: Any) -> int:
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, (dict, list)):
        return 2 + 4 * len(value)
    return 1


_encode_str = json.encoder.encode_basestring  # type: ignore[attr-defined]
def _dumps(value: Any) -> str:
    return dumps(value, compact=False)  # json.dumps(ensure_ascii=False), with one reused C encoder


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    A reader (or a concurrent pytest-xdist worker) sees the old file or the new one, never a part.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
