"""An incremental server-sent-events decoder (the WHATWG event-stream rules).

Bytes may be split anywhere, even inside a UTF-8 sequence or a CRLF pair: only complete lines are
decoded, and a line cannot end inside a multi-byte character. Lines end with LF, CRLF or CR.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import WireError


RAW_LINE = ":raw-line"
"""The ``event`` of what :class:`SSEDecoder` returns for a line that is no SSE field when it was
built with ``raw_lines=True`` (google-genai accepts bare JSON lines in a Gemini stream)."""


@dataclass(slots=True)
class SSEEvent:
    event: str
    data: str
    id: str | None = None


class SSEDecoder:
    """``feed(bytes) -> [SSEEvent]``; ``close()`` reports whether an event was cut off.

    Args:
        raw_lines: return each line that is not an SSE field (``data``, ``event``, ``id``,
            ``retry``, a comment or a blank line) as ``SSEEvent(RAW_LINE, line)``, in order,
            instead of ignoring it.
    """

    __slots__ = ("_buf", "_data", "_event", "_id", "_pending_cr", "_raw_lines")

    def __init__(self, *, raw_lines: bool = False) -> None:
        self._raw_lines = raw_lines
        self._buf = b""
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._pending_cr = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if self._pending_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._pending_cr = False
        buf = self._buf + chunk if self._buf else chunk
        out: list[SSEEvent] = []
        lines = buf.splitlines(keepends=True)
        if lines and not lines[-1].endswith((b"\n", b"\r")):
            self._buf = lines.pop()
        else:
            self._buf = b""
        if lines and lines[-1].endswith(b"\r"):
            self._pending_cr = True  # a CRLF may be split across chunks
        for raw in lines:
            try:
                line = raw.rstrip(b"\r\n").decode("utf-8")
            except UnicodeDecodeError as exc:
                raise WireError(f"server-sent event line is not UTF-8: {raw[:80]!r}") from exc
            if not line:
                if self._data or self._event:
                    out.append(SSEEvent(self._event or "message", "\n".join(self._data), self._id))
                self._data = []
                self._event = ""
                continue
            if line[0] == ":":
                continue
            name, sep, value = line.partition(":")
            if sep and value.startswith(" "):
                value = value[1:]
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value
            elif name == "id":
                self._id = value
            elif self._raw_lines and name != "retry":
                out.append(SSEEvent(RAW_LINE, line))
        return out

    @property
    def has_partial(self) -> bool:
        """True when bytes or fields of an unfinished event are buffered."""
        return bool(self._buf.strip() or self._data or self._event)

    def close(self) -> list[SSEEvent]:
        """End of stream: dispatch a final event whose fields were complete but whose blank line
        never came (some recorded fixtures end that way); drop a half-written line (with
        ``raw_lines``, a last unterminated line that is no SSE field is returned as raw)."""
        out = []
        if self._data:
            out.append(SSEEvent(self._event or "message", "\n".join(self._data), self._id))
        if self._raw_lines and self._buf.strip():
            line = self._buf.decode("utf-8", "replace").rstrip("\r\n")
            if not line.startswith(":") and line.partition(":")[0] not in ("data", "event", "id", "retry"):
                out.append(SSEEvent(RAW_LINE, line))
        self._data, self._event, self._buf = [], "", b""
        return out
