"""Matching a live request to a recorded one: a canonical key, a dict index, and a diff on a miss.

The canonical request is (method, normalised path, sorted query, body). A JSON body is compared as
a structure with volatile fields removed (:data:`VOLATILE_BODY_FIELDS`), serialised with sorted
keys, so key order and whitespace never matter. Headers are never matched: they carry retry
counters, signatures and dates that change on every call. Lookup is one dict access; only a miss
scans the cassette, to find the nearest recorded request for the error message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ._format import RecordedRequest

VOLATILE_BODY_FIELDS: tuple[str, ...] = ("metadata.user_id", "user", "safety_identifier", "prompt_cache_key")
"""JSON body fields (dotted paths from the top) left out of matching by default."""

_PROJECT = re.compile(r"/projects/[^/]+/locations/[^/]+")
_MESSAGE_LISTS = ("messages", "input", "contents")

Key = tuple[str, str, str, str]


def normalise_path(path: str) -> str:
    """The path with per-account parts replaced (Vertex project and location)."""
    return _PROJECT.sub("/projects/_/locations/_", path)


def _drop(value: Any, dotted: Collection[str]) -> Any:
    if not dotted or not isinstance(value, dict):
        return value
    out = dict(value)
    for path in dotted:
        head, _, rest = path.partition(".")
        if head in out:
            if rest:
                out[head] = _drop(out[head], [rest])
            else:
                del out[head]
    return out


def _sorted_encoder() -> Any:
    # the C encoder itself, made once: json.dumps builds a new encoder on every call with these
    # arguments, which cost as much as the encoding of a request body
    from json.encoder import c_make_encoder, encode_basestring

    if c_make_encoder is None:  # pragma: no cover - Python builds without the _json accelerator
        return None

    def default(o: Any) -> Any:
        raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")

    return c_make_encoder(None, default, encode_basestring, None, ":", ",", True, False, True)


_SORTED = _sorted_encoder()


def canonical_body(body: Any, volatile: Collection[str]) -> str:
    """A JSON body as one string: volatile fields removed, keys sorted, no whitespace (what
    ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` gives)."""
    value = _drop(body, volatile)
    if _SORTED is None or not isinstance(value, (dict, list)):  # pragma: no cover
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "".join(_SORTED(value, 0))


def request_key(method: str, url: str, body_kind: str, body: Any, volatile: Collection[str]) -> Key:
    """The canonical key of a (scrubbed) request. ``body_kind`` is json, text, base64 or none."""
    parts = urlsplit(url)
    query = "&".join(f"{k}={v}" for k, v in sorted(parse_qsl(parts.query, keep_blank_values=True)))
    if body_kind == "json":
        canon = "j:" + canonical_body(body, volatile)
    elif body_kind == "none":
        canon = ""
    else:
        canon = body_kind[0] + ":" + body
    return (method.upper(), normalise_path(parts.path), query, canon)


def recorded_key(req: RecordedRequest, volatile: Collection[str]) -> Key:
    """The canonical key of a recorded request."""
    if req.has_json:
        return request_key(req.method, req.url, "json", req.json_body, volatile)
    if req.text is not None:
        return request_key(req.method, req.url, "text", req.text, volatile)
    if req.base64 is not None:
        return request_key(req.method, req.url, "base64", req.base64, volatile)
    return request_key(req.method, req.url, "none", None, volatile)


# --- explaining a miss ------------------------------------------------------------------------


def first_difference(recorded: Any, live: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first place (a JSON path) where two JSON values differ, with both values there."""
    if type(recorded) is not type(live):
        return (path or "(body)", recorded, live)
    if isinstance(recorded, dict):
        for k in list(recorded) + [k for k in live if k not in recorded]:
            sub = f"{path}.{k}" if path else k
            if k not in live:
                return (sub, recorded[k], _MISSING)
            if k not in recorded:
                return (sub, _MISSING, live[k])
            d = first_difference(recorded[k], live[k], sub)
            if d is not None:
                return d
        return None
    if isinstance(recorded, list):
        for i, (a, b) in enumerate(zip(recorded, live)):
            d = first_difference(a, b, f"{path}[{i}]")
            if d is not None:
                return d
        if len(recorded) != len(live):
            i = min(len(recorded), len(live))
            return (
                f"{path}[{i}]",
                recorded[i] if i < len(recorded) else _MISSING,
                live[i] if i < len(live) else _MISSING,
            )
        return None
    return None if recorded == live else (path or "(body)", recorded, live)


class _Missing:
    def __repr__(self) -> str:
        return "<absent>"


_MISSING = _Missing()


def message_index(path: str) -> int | None:
    """The message number a body path points into (``messages[3].content`` -> 3), if any."""
    m = re.match(r"(?:" + "|".join(_MESSAGE_LISTS) + r")\[(\d+)\]", path)
    return int(m.group(1)) if m else None


def short(value: Any, other: Any = None, width: int = 60) -> str:
    """A one-line rendering of ``value``, at most about ``width`` characters: when it is longer,
    a window around the first character where it differs from ``other`` (so the part that
    differs is always shown)."""
    if isinstance(value, _Missing):
        return repr(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(other, _Missing) or other is None:
        other_text = ""
    else:
        other_text = other if isinstance(other, str) else json.dumps(other, ensure_ascii=False, sort_keys=True)
    render = repr if isinstance(value, str) else str
    if len(text) <= width:
        return render(text)
    i = next((n for n, (a, b) in enumerate(zip(text, other_text)) if a != b), min(len(text), len(other_text)))
    start = max(0, min(i - width // 3, len(text) - width))
    piece = text[start : start + width]
    return ("…" if start else "") + render(piece) + ("…" if start + width < len(text) else "")


def _body_of(req: RecordedRequest) -> Any:
    if req.has_json:
        return req.json_body
    return req.text if req.text is not None else req.base64


def nearest(
    recorded: Sequence[tuple[int, RecordedRequest]], method: str, path: str, body: Any, volatile: Collection[str], position: int | None = None
) -> tuple[int, tuple[str, Any, Any] | None] | None:
    """The recorded request closest to the live one, and where they first differ.

    Closest: same method, then same path, then an identical body, then the interaction at the
    live request's ``position`` in the sequence (the n-th request of a session is compared with
    the n-th recording: a hand edit of interaction 0 is reported against interaction 0), then the
    body whose first difference lies furthest into the conversation.
    """
    best: tuple[tuple[int, ...], int, tuple[str, Any, Any] | None] | None = None
    live = _drop(body, volatile)
    for n, req in recorded:
        rec_path = normalise_path(urlsplit(req.url).path)
        diff = first_difference(_drop(_body_of(req), volatile), live)
        idx = message_index(diff[0]) if diff else None
        score = (
            req.method.upper() == method.upper(),
            rec_path == path,
            diff is None,
            n == position,
            idx is None and diff is not None,
            idx if idx is not None else -1,
        )
        if best is None or score > best[0]:
            best = (score, n, diff)  # type: ignore[assignment]
    return None if best is None else (best[1], best[2])
