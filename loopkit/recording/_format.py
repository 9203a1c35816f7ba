"""The cassette file format (``format_version`` 1): a pydantic schema, a strict loader, atomic saves.

One JSON file per cassette, pretty-printed so that a diff reads well::

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

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import CassetteError

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


def parse_cassette(text: str | bytes, *, source: str = "<cassette>") -> CassetteFile:
    """Validate cassette JSON text; raise :class:`CassetteError` naming ``source`` and the field."""
    try:  # the fast path: pydantic parses and validates in one pass
        parsed = CassetteFile.model_validate_json(text)
        if "format_version" in parsed.model_fields_set:
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
        return CassetteFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise CassetteError(f"{source}: {_field_path(err['loc'])}: {err['msg']}{more}") from None


def load_cassette_file(path: str | os.PathLike[str]) -> CassetteFile:
    """Read and validate a cassette file."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise CassetteError(f"{p}: cannot read cassette ({exc.strerror or exc})") from None
    return parse_cassette(raw, source=str(p))


def dump_cassette(cassette: CassetteFile) -> str:
    """The pretty JSON text of a cassette (2-space indent, keys in schema order, a final newline)."""
    data = cassette.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data["format_version"] = FORMAT_VERSION
    ordered = {"format_version": FORMAT_VERSION, **{k: v for k, v in data.items() if k != "format_version"}}
    for inter, model in zip(ordered.get("interactions", []), cassette.interactions):
        req = inter.get("request")
        if req is not None and model.request is not None and model.request.has_json:
            req["json"] = model.request.json_body  # a JSON null body is still a JSON body
    return _pretty(ordered, "") + "\n"


_INLINE_WIDTH = 100


def _pretty(value: Any, indent: str) -> str:
    return _render(value, indent)[1]


def _render(value: Any, indent: str) -> tuple[str, str]:
    """(compact, pretty) JSON of ``value``, each node serialised once.

    json.dumps(indent=2) puts every header pair and chunk over several lines; a container whose
    compact form is short stays on one line, which keeps a cassette diff one line per change.
    """
    if isinstance(value, dict) and value:
        if not any(isinstance(v, (dict, list)) for v in value.values()):  # a flat object (a chunk)
            flat = "{" + ", ".join(f"{_encode_str(k)}: {_leaf(v)}" for k, v in value.items()) + "}"
            if len(flat) + len(indent) <= _INLINE_WIDTH:
                return flat, flat
        inner = indent + "  "
        items = [(_encode_str(k), _render(v, inner)) for k, v in value.items()]
        flat = "{" + ", ".join(f"{k}: {f}" for k, (f, _) in items) + "}"
        if len(flat) + len(indent) <= _INLINE_WIDTH:
            return flat, flat
        return flat, "{\n" + ",\n".join(f"{inner}{k}: {p}" for k, (_, p) in items) + "\n" + indent + "}"
    if isinstance(value, list) and value:
        if all(type(v) is str for v in value):  # a header pair
            flat = "[" + ", ".join(map(_encode_str, value)) + "]"
            if len(flat) + len(indent) <= _INLINE_WIDTH:
                return flat, flat
        inner = indent + "  "
        items2 = [_render(v, inner) for v in value]
        flat = "[" + ", ".join(f for f, _ in items2) + "]"
        if len(flat) + len(indent) <= _INLINE_WIDTH:
            return flat, flat
        return flat, "[\n" + ",\n".join(inner + p for _, p in items2) + "\n" + indent + "]"
    flat = _leaf(value)
    return flat, flat


_encode_str = json.encoder.encode_basestring  # type: ignore[attr-defined]


def _leaf(value: Any) -> str:
    # json.dumps per leaf dominated saving large cassettes; strings go through the C escaper.
    if isinstance(value, str):
        return _encode_str(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float) and value - value == 0:  # finite: json writes float.__repr__
        return float.__repr__(value)
    return json.dumps(value, ensure_ascii=False)


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
