"""The strings a cassette holds, as the scrubber and the secret scan see them.

A :class:`Slot` is one string inside a mutable JSON document (a request body, an SSE event's
data, an event-stream frame, a transcript, ``meta``). :class:`BodyView` reassembles a recorded
response: the chunks are joined, split into SSE events (or event-stream frames, or one JSON
document), each event's JSON is parsed, and the **delta strings** (text, tool-call argument,
reasoning pieces) are grouped per content block across events, so a secret streamed in pieces is
seen whole. After slots are edited, :meth:`BodyView.commit` writes the events back and re-cuts the
chunks at the same places (a cut inside an edited event stays inside it), so every chunk and
frame stays valid.

Opaque provider tokens that replay needs byte for byte (reasoning signatures, encrypted reasoning,
thought signatures, redacted thinking) are never yielded.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from typing import Any

from ._codecs import require_codec
from ._format import RecordedResponse

PROTECTED_KEYS = frozenset({
    "signature", "thinking_signature", "text_signature", "thought_signature", "thoughtSignature",
    "encrypted_content", "redactedContent", "redacted_content",
})  # fmt: skip
"""Keys whose string values are opaque provider tokens, kept byte for byte."""

DELTA_KEYS = frozenset({"text", "content", "delta", "partial_json", "arguments", "thinking", "refusal", "reasoning_content", "reasoning", "input"})
"""Keys whose strings arrive in pieces, one per event, to be joined per content block."""

INDEX_FIELDS = ("index", "output_index", "content_index", "summary_index", "contentBlockIndex")


class Slot:
    """One string in a JSON document: ``obj[key]``; ``where`` names it for people."""

    __slots__ = ("doc", "field", "key", "obj", "where")

    def __init__(self, obj: Any, key: Any, where: str, field: str | None, doc: Any = None) -> None:
        self.obj, self.key, self.where, self.field, self.doc = obj, key, where, field, doc

    @property
    def value(self) -> str:
        return self.obj[self.key]

    def set(self, value: str) -> None:
        if value != self.obj[self.key]:
            self.obj[self.key] = value
            if self.doc is not None:
                self.doc.dirty = True


def _protected(obj: dict[str, Any], key: str) -> bool:
    if key in PROTECTED_KEYS:
        return True
    if key == "data" and obj.get("type") == "redacted_thinking":
        return True
    return key == "thinking" and obj.get("redacted") is True


def strings(value: Any, where: str, doc: Any = None, field: str | None = None) -> Iterator[Slot]:
    """Every string slot of a JSON value (dict keys excepted), protected keys left out."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, str):
                if not _protected(value, k):
                    yield Slot(value, k, f"{where}.{k}", k, doc)
            elif isinstance(v, (dict, list)):
                yield from strings(v, f"{where}.{k}", doc, k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, str):
                yield Slot(value, i, f"{where}[{i}]", field, doc)
            elif isinstance(v, (dict, list)):
                yield from strings(v, f"{where}[{i}]", doc, field)


def dict_keys(value: Any, where: str) -> Iterator[tuple[dict[str, Any], str, str]]:
    """(dict, key, where) of every dict key of a JSON value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield value, k, f"{where}.{k}"
            if isinstance(v, (dict, list)):
                yield from dict_keys(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (dict, list)):
                yield from dict_keys(v, f"{where}[{i}]")


def rename_keys(value: Any, rename: Any) -> bool:
    """Apply ``rename(key) -> new key`` to every dict key, in place, keeping the order."""
    changed = False
    if isinstance(value, dict):
        for v in value.values():
            changed |= rename_keys(v, rename)
        new = [(rename(k), v) for k, v in value.items()]
        if any(a != k for (a, _), k in zip(new, value)):
            value.clear()
            value.update(new)
            changed = True
    elif isinstance(value, list):
        for v in value:
            changed |= rename_keys(v, rename)
    return changed


def _delta_key(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any, Any, str]]:
    """(group key, container, key, field) of every delta string in an event's JSON."""
    if isinstance(value, dict):
        idx = tuple((f, value[f]) for f in INDEX_FIELDS if f in value and isinstance(value[f], int))
        base = path + idx
        for k, v in value.items():
            if isinstance(v, str):
                if k in DELTA_KEYS:
                    yield base + (k,), value, k, k
            elif isinstance(v, (dict, list)) and k not in PROTECTED_KEYS:
                yield from _delta_key(v, base + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (dict, list)):
                has_index = isinstance(v, dict) and any(f in v for f in INDEX_FIELDS)
                yield from _delta_key(v, path if has_index else path + (i,))


def _block_name(key: tuple[Any, ...]) -> str:
    """A content block's group key for people: ``content_block_delta index=0 delta.text``."""
    parts: list[str] = [key[0].lstrip("/")] if key[0] else []
    path: list[str] = []
    for p in key[1:]:
        if isinstance(p, tuple):
            parts.append(f"{p[0]}={p[1]}")
        elif isinstance(p, int):
            path.append(f"[{p}]")
        else:
            path.append(("." if path else "") + p)
    return " ".join([*parts, "".join(path)])


class Doc:
    """One document of a body: an event's JSON data (``value``), or raw text (``value`` is a
    ``{"raw": text}`` holder)."""

    __slots__ = ("dirty", "event", "frame", "newline", "prefix", "raw", "span", "suffix", "value", "where")

    def __init__(self, value: Any, raw: bool, event: str | None, where: str) -> None:
        self.value, self.raw, self.event, self.where, self.dirty = value, raw, event, where, False
        self.span: tuple[int, int] = (0, 0)
        self.frame: dict[str, Any] | None = None
        self.prefix = self.suffix = self.newline = ""


_SSE_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def _chunk_raw(c: Any) -> bytes:
    return c.text.encode("utf-8") if c.text is not None else base64.b64decode(c.base64 or "")


def _chunk_range(cuts: list[int], start: int, end: int) -> str:
    first = next(i for i, c in enumerate(cuts) if c > start) if cuts and start < cuts[-1] else max(0, len(cuts) - 1)
    last = next((i for i, c in enumerate(cuts) if c >= end), len(cuts) - 1)
    return f"chunks[{first}]" if first == last else f"chunks[{first}..{last}]"


class BodyView:
    """A recorded response body reassembled into documents (see the module docstring)."""

    def __init__(self, response: RecordedResponse, where: str) -> None:
        self.response = response
        self.where = where
        self.docs: list[Doc] = []
        self.frames = response.codec is not None
        if self.frames:
            self._frames()
        else:
            self._text()

    # --- building -----------------------------------------------------------------------------

    def _frames(self) -> None:
        codec = require_codec(self.response.codec or "", self.where)
        self._old_lens = []
        for i, c in enumerate(self.response.chunks):
            for j, f in enumerate(c.frames or []):
                if not isinstance(f, dict):
                    continue
                self._old_lens.append(len(codec.encode(f)))
                headers = f.get("headers") if isinstance(f.get("headers"), dict) else {}
                name = headers.get(":event-type") or headers.get(":exception-type")
                doc = Doc(f, False, name if isinstance(name, str) else None, f"{self.where}.chunks[{i}].frames[{j}]")
                doc.frame = f
                self.docs.append(doc)

    def _text(self) -> None:
        raws = [_chunk_raw(c) for c in self.response.chunks]
        self._raws = raws
        body = b"".join(raws)
        self._body = body
        cuts, pos = [], 0
        for r in raws:
            pos += len(r)
            cuts.append(pos)
        self._cuts = cuts
        ctype = ""
        for k, v in self.response.headers:
            if k.lower() == "content-type":
                ctype = v.split(";", 1)[0].strip().lower()
                break
        spans: list[tuple[int, int]] = []
        if ctype == "text/event-stream" or (not ctype and body.startswith((b"data:", b"event:"))):
            pos = 0
            for m in _SSE_EVENT_END.finditer(body):
                spans.append((pos, m.end()))
                pos = m.end()
            if pos < len(body):
                spans.append((pos, len(body)))
            sse = True
        else:
            spans = [(0, len(body))] if body else []
            sse = False
        for start, end in spans:
            block = body[start:end].decode("utf-8", "surrogateescape")
            where = f"{self.where}.{_chunk_range(cuts, start, end)}"
            doc = self._sse_doc(block, where) if sse else self._json_doc(block, where)
            doc.span = (start, end)
            self.docs.append(doc)

    @staticmethod
    def _json_doc(block: str, where: str) -> Doc:
        stripped = block.strip()
        if stripped[:1] in ("{", "["):
            try:
                value = json.loads(stripped)
            except ValueError:
                pass
            else:
                doc = Doc(value, False, None, where)
                doc.prefix, doc.suffix = block[: len(block) - len(block.lstrip())], block[len(block.rstrip()) :]
                return doc
        return Doc({"raw": block}, True, None, where)

    @staticmethod
    def _sse_doc(block: str, where: str) -> Doc:
        lines = block.splitlines(keepends=True)
        data = [n for n, line in enumerate(lines) if line.startswith("data:")]
        if len(data) == 1:
            line = lines[data[0]]
            body = line[5:]
            lead = " " if body.startswith(" ") else ""
            payload = body[len(lead) :].rstrip("\r\n")
            if payload[:1] in ("{", "["):
                try:
                    value = json.loads(payload)
                except ValueError:
                    value = None
                if isinstance(value, (dict, list)):
                    event = next((ln[6:].strip() for ln in lines if ln.startswith("event:")), None)
                    kind = value.get("type") if isinstance(value, dict) else None
                    if isinstance(kind, str) and kind != event:
                        event = f"{event}/{kind}" if event else kind
                    doc = Doc(value, False, event, where)
                    doc.prefix = "".join(lines[: data[0]]) + "data:" + lead
                    doc.suffix = line[len(line.rstrip("\r\n")) :] + "".join(lines[data[0] + 1 :])
                    return doc
        return Doc({"raw": block}, True, None, where)

    # --- reading ------------------------------------------------------------------------------

    def slots(self) -> list[Slot]:
        """Every string slot of every document (delta strings included)."""
        out: list[Slot] = []
        for d in self.docs:
            if d.raw:
                out.append(Slot(d.value, "raw", d.where, None, d))
            else:
                out.extend(strings(d.value, d.where, d))
        return out

    def groups(self) -> list[list[Slot]]:
        """The delta strings of each content block, in stream order, across events."""
        by_key: dict[tuple[Any, ...], list[Slot]] = {}
        for d in self.docs:
            if d.raw:
                continue
            for key, obj, k, field in _delta_key(d.value, (d.event,)):
                by_key.setdefault(key, []).append(Slot(obj, k, f"{d.where} {_block_name(key)}", field, d))
        return list(by_key.values())

    # --- writing ------------------------------------------------------------------------------

    def commit(self) -> bool:
        """Write edited documents back into the response's chunks; True when anything changed."""
        if not any(d.dirty for d in self.docs):
            return False
        if self.frames:
            self._commit_frames()
        else:
            self._commit_text()
        return True

    def _commit_text(self) -> None:
        body, pieces, old_spans, new_lens = self._body, [], [], []
        for d in self.docs:
            s, e = d.span
            if d.dirty:
                if d.raw:
                    text = d.value["raw"]
                else:
                    text = d.prefix + json.dumps(d.value, ensure_ascii=False, separators=(",", ":")) + d.suffix
                new = text.encode("utf-8", "surrogateescape")
            else:
                new = body[s:e]
            pieces.append(new)
            old_spans.append((s, e))
            new_lens.append(len(new))
        new_body = b"".join(pieces)
        new_cuts = _map_cuts(self._cuts, old_spans, new_lens)
        chunks, prev = self.response.chunks, 0
        for c, cut in zip(chunks, new_cuts):
            data = new_body[prev:cut]
            prev = cut
            try:
                c.text, c.base64 = data.decode("utf-8"), None
            except UnicodeDecodeError:
                c.text, c.base64 = None, base64.b64encode(data).decode("ascii")

    def _commit_frames(self) -> None:
        resp = self.response
        codec = require_codec(resp.codec or "", self.where)
        new_lens = [len(codec.encode(f)) for c in resp.chunks for f in (c.frames or []) if isinstance(f, dict)]
        old_spans, pos = [], 0
        for n in self._old_lens:
            old_spans.append((pos, pos + n))
            pos += n
        tail = len(base64.b64decode(resp.tail_base64)) if resp.tail_base64 else 0
        old_spans.append((pos, pos + tail))
        new_lens.append(tail)
        cuts, total = [], 0
        for c in resp.chunks:
            total += c.size if c.size is not None else len(_chunk_raw(c))
            cuts.append(total)
        new_cuts = _map_cuts(cuts, old_spans, new_lens)
        prev = 0
        for c, cut in zip(resp.chunks, new_cuts):
            if c.frames is not None:
                c.size = cut - prev
            prev = cut


def _map_cuts(cuts: list[int], old_spans: list[tuple[int, int]], new_lens: list[int]) -> list[int]:
    """Chunk end positions after each span ``old_spans[i]`` became ``new_lens[i]`` bytes long: a
    cut at offset ``o`` inside a span stays inside it (at ``min(o, new length)``)."""
    out, i, new_start = [], 0, 0
    starts = []
    for (s, e), n in zip(old_spans, new_lens):
        starts.append(new_start)
        new_start += n
    total_new = new_start
    for cut in cuts:
        while i < len(old_spans) and old_spans[i][1] <= cut and not (old_spans[i][1] == cut and i == len(old_spans) - 1):
            i += 1
        if i >= len(old_spans):
            out.append(total_new)
            continue
        s, e = old_spans[i]
        if cut <= s:
            out.append(starts[i])
        else:
            out.append(starts[i] + min(cut - s, new_lens[i]))
    if out:
        out[-1] = total_new
    return out
