"""Secrets out of cassettes: by name (headers, query parameters, body fields, a hook) and by shape.

By name: the headers of spec/wire.md §0.1 for every provider (secrets, and identifying or volatile
values), cookies, the ``key`` query parameter, body fields the user names, and a user hook. Kept
whatever the configuration: ``retry-after*``, ``x-should-retry`` and ``x-amzn-errortype``, which
change what a client does on replay.

By shape, over header values, URLs, bodies, stream chunks (across chunk boundaries), decoded
frames and transcripts: OpenAI ``sk-…``, Anthropic ``sk-ant-…``, Google ``AIza…``, AWS
``AKIA…``/``ASIA…``, ``Bearer …`` tokens and JWTs. :func:`find_secrets` scans a cassette for any
shape (or named header) that survived; saving refuses a cassette with a finding.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ._bodies import realign_frame_sizes
from ._format import CassetteFile, Interaction, RecordedRequest, RecordedResponse

PLACEHOLDER = "<scrubbed>"

SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key",
    "x-amz-security-token", "x-amz-date", "x-amz-content-sha256", "cookie", "set-cookie",
    "openai-organization", "openai-project", "x-goog-user-project", "anthropic-organization-id",
})  # fmt: skip
"""Headers that carry secrets or identify the account (wire.md §0.1)."""

VOLATILE_HEADERS = frozenset({
    "x-request-id", "request-id", "cf-ray", "x-goog-api-client", "user-agent", "amz-sdk-invocation-id",
    "amz-sdk-request", "x-amzn-requestid", "x-amz-request-id", "date", "openai-processing-ms",
    "x-envoy-upstream-service-time", "server-timing",
})  # fmt: skip
"""Headers that change on every call or identify the client; scrubbed unless ``keep_volatile``."""

VOLATILE_HEADER_PREFIXES = ("anthropic-ratelimit-",)
KEPT_HEADERS = frozenset({"x-should-retry", "x-amzn-errortype", "x-amz-retry-after"})
KEPT_HEADER_PREFIXES = ("retry-after",)
SECRET_QUERY_PARAMS = frozenset({"key", "api_key", "access_token", "x-amz-security-token", "x-amz-signature", "x-amz-credential"})

_SHAPES: tuple[tuple[str, str], ...] = (
    ("anthropic-key", r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_\-]{8,}"),
    ("openai-key", r"(?<![A-Za-z0-9])sk-(?!ant-)[A-Za-z0-9_\-]{16,}"),
    ("google-api-key", r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{30,}"),
    ("aws-access-key-id", r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("jwt", r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}"),
    ("bearer-token", r"(?i:bearer)\s+(?!<scrubbed)[A-Za-z0-9\-._~+/]{8,}=*"),
)
SHAPE_KINDS: tuple[str, ...] = tuple(k for k, _ in _SHAPES)
_SHAPE_RE = re.compile("|".join(f"(?P<{k.replace('-', '_')}>{rx})" for k, rx in _SHAPES))
_ARN_ACCOUNT = re.compile(r"(arn(?::|%3A)aws[\w-]*(?::|%3A)[\w-]*(?::|%3A)[\w-]*(?::|%3A))\d{12}", re.IGNORECASE)


def _replacement(m: re.Match[str]) -> str:
    kind = (m.lastgroup or "").replace("_", "-")
    return "Bearer " + PLACEHOLDER if kind == "bearer-token" else f"<scrubbed:{kind}>"


def _may_hold(text: str) -> bool:
    # Every shape starts with one of these literals; `in` is ~30x cheaper than the full pattern,
    # which matters on the replay hot path (every live request body is checked).
    return (
        "sk-" in text or "AIza" in text or "AKIA" in text or "ASIA" in text or "eyJ" in text or "bearer" in text.lower()
    )


def has_shape(text: str) -> bool:
    """Whether ``text`` holds any secret shape."""
    return _may_hold(text) and _SHAPE_RE.search(text) is not None


def scrub_text(text: str) -> str:
    """``text`` with every secret shape replaced by a placeholder."""
    return _SHAPE_RE.sub(_replacement, text) if _may_hold(text) else text


def _scrub_value(value: Any, fields: Collection[str]) -> Any:
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, list):
        return [_scrub_value(v, fields) for v in value]
    if isinstance(value, dict):
        return {
            scrub_text(k): (PLACEHOLDER if k in fields and v is not None else _scrub_value(v, fields)) for k, v in value.items()
        }
    return value


def _needs_walk(value: Any) -> bool:
    # One C-speed serialisation rules out (almost always) the slow per-string walk.
    return isinstance(value, (dict, list)) and _may_hold(json.dumps(value, ensure_ascii=False)) or isinstance(value, str) and _may_hold(value)


def scrub_json(value: Any) -> Any:
    """A JSON value with every secret shape in its strings (and keys) replaced."""
    return _scrub_value(value, ()) if _needs_walk(value) else value


def scrub_texts(texts: list[str]) -> list[str]:
    """Scrub shapes over the concatenation of ``texts`` (so a key split across two stream chunks
    is caught) and cut the result at the same places; a replaced secret lands in the chunk where
    it started."""
    joined = "".join(texts)
    if not _may_hold(joined):
        return texts
    matches = list(_SHAPE_RE.finditer(joined))
    if not matches:
        return texts
    out_parts, bounds, pos = [], [], 0
    for m in matches:
        out_parts.append(joined[pos : m.start()])
        out_parts.append(_replacement(m))
        pos = m.end()
    out_parts.append(joined[pos:])
    new = "".join(out_parts)

    def new_pos(p: int) -> int:
        shift = 0
        for m in matches:
            if m.end() <= p:
                shift += len(_replacement(m)) - (m.end() - m.start())
            elif m.start() < p:
                return m.start() + shift + len(_replacement(m))
            else:
                break
        return p + shift

    cut = 0
    for t in texts:
        cut += len(t)
        bounds.append(new_pos(cut))
    pieces, start = [], 0
    for b in bounds:
        pieces.append(new[start:b])
        start = b
    return pieces


@dataclass(slots=True)
class Scrubber:
    """What to remove from a recording before it is saved.

    Args:
        headers: more header names to scrub (case-insensitive), on top of :data:`SECRET_HEADERS`.
        query_params: more URL query parameters to scrub, on top of ``key`` and friends.
        body_fields: JSON keys whose values are replaced wherever they occur in a body.
        hook: called with each :class:`Interaction` after the built-in scrubbing; edit it in place
            or return a replacement.
        keep_volatile: keep :data:`VOLATILE_HEADERS` (request ids, user agents, dates).
    """

    headers: Collection[str] = ()
    query_params: Collection[str] = ()
    body_fields: Collection[str] = ()
    hook: Callable[[Interaction], Interaction | None] | None = None
    keep_volatile: bool = False
    _names: frozenset[str] = field(init=False, repr=False)
    _params: frozenset[str] = field(init=False, repr=False)
    _fields: frozenset[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        names = SECRET_HEADERS | {h.lower() for h in self.headers}
        if not self.keep_volatile:
            names |= VOLATILE_HEADERS
        self._names = frozenset(names)
        self._params = SECRET_QUERY_PARAMS | frozenset(self.query_params)
        self._fields = frozenset(self.body_fields)

    def header_value(self, name: str, value: str) -> str:
        """The value to store for one header."""
        low = name.lower()
        if low in KEPT_HEADERS or low.startswith(KEPT_HEADER_PREFIXES):
            return value
        if low in self._names or (not self.keep_volatile and low.startswith(VOLATILE_HEADER_PREFIXES)):
            return PLACEHOLDER
        return scrub_text(value)

    def headers_list(self, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(k, self.header_value(k, v)) for k, v in headers]

    def url(self, url: str) -> str:
        """The URL with secret query parameters and shapes replaced, and ARN account ids zeroed."""
        if "?" not in url and "arn" not in url.lower():
            return scrub_text(url)
        parts = urlsplit(url)
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(k in self._params for k, _ in pairs):
                query = urlencode([(k, PLACEHOLDER if k in self._params else v) for k, v in pairs], safe="<>")
        path = _ARN_ACCOUNT.sub(r"\g<1>000000000000", parts.path)
        return scrub_text(urlunsplit((parts.scheme, parts.netloc, path, query, parts.fragment)))

    def json(self, value: Any) -> Any:
        """A JSON body with named fields and secret shapes replaced."""
        if not self._fields and not _needs_walk(value):
            return value
        return _scrub_value(value, self._fields)

    def request(self, req: RecordedRequest) -> None:
        req.url = self.url(req.url)
        req.headers = self.headers_list(req.headers)
        if req.has_json:
            req.json_body = self.json(req.json_body)
        elif req.text is not None:
            req.text = scrub_text(req.text)

    def response(self, resp: RecordedResponse) -> None:
        resp.headers = self.headers_list(resp.headers)
        text_idx = [i for i, c in enumerate(resp.chunks) if c.text is not None]
        if text_idx:
            new = scrub_texts([resp.chunks[i].text or "" for i in text_idx])
            for i, t in zip(text_idx, new):
                resp.chunks[i].text = t
        changed = False
        for c in resp.chunks:
            if c.frames is not None:
                frames = self.json(c.frames)
                if frames != c.frames:
                    c.frames, changed = frames, True
        if changed:
            realign_frame_sizes(resp)

    def interaction(self, inter: Interaction) -> Interaction:
        """Scrub one interaction in place (and through the hook); returns it."""
        if inter.request is not None:
            self.request(inter.request)
        if inter.response is not None:
            self.response(inter.response)
        if inter.transcript is not None:
            inter.transcript.request = scrub_json(inter.transcript.request)
            inter.transcript.message = scrub_json(inter.transcript.message)
        if self.hook is not None:
            replaced = self.hook(inter)
            if replaced is not None:
                inter = replaced
        return inter

    def cassette(self, cassette: CassetteFile) -> CassetteFile:
        """Scrub every interaction in place; returns the cassette."""
        cassette.interactions = [self.interaction(i) for i in cassette.interactions]
        return cassette


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret that survived: where (a field path) and what shape."""

    where: str
    kind: str
    preview: str

    def __str__(self) -> str:
        return f"{self.where}: {self.kind} ({self.preview})"


def _preview(s: str) -> str:
    return s[:7] + "…" if len(s) > 7 else s


def _scan(text: str, where: str) -> Iterator[Finding]:
    if not _may_hold(text):
        return
    for m in _SHAPE_RE.finditer(text):
        yield Finding(where, (m.lastgroup or "").replace("_", "-"), _preview(m.group()))


def _walk(value: Any, where: str) -> Iterator[Finding]:
    # One C-speed serialisation tells whether the (usually clean) structure needs the slow walk.
    if not isinstance(value, str) and not _may_hold(json.dumps(value, ensure_ascii=False)):
        return
    yield from _walk_all(value, where)


def _walk_all(value: Any, where: str) -> Iterator[Finding]:
    if isinstance(value, str):
        yield from _scan(value, where)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk_all(v, f"{where}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _scan(str(k), f"{where}.{k}(key)")
            yield from _walk_all(v, f"{where}.{k}")


def _scan_headers(headers: list[tuple[str, str]], where: str) -> Iterator[Finding]:
    for i, (k, v) in enumerate(headers):
        if k.lower() in SECRET_HEADERS and v != PLACEHOLDER:
            yield Finding(f"{where}.headers[{i}] ({k})", "secret-header", _preview(v))
        else:
            yield from _scan(v, f"{where}.headers[{i}] ({k})")


def _scan_b64(data: str, where: str) -> Iterator[Finding]:
    try:
        raw = base64.b64decode(data)
    except ValueError:
        return
    yield from _scan(raw.decode("latin-1"), where)


def _named_only(cassette: CassetteFile) -> list[Finding]:
    out: list[Finding] = []
    for n, inter in enumerate(cassette.interactions):
        for part, name in ((inter.request, "request"), (inter.response, "response")):
            if part is not None:
                for i, (k, v) in enumerate(part.headers):
                    if k.lower() in SECRET_HEADERS and v != PLACEHOLDER:
                        out.append(Finding(f"interactions[{n}].{name}.headers[{i}] ({k})", "secret-header", _preview(v)))
        if inter.request is not None and "?" in inter.request.url:
            for k, v in parse_qsl(urlsplit(inter.request.url).query, keep_blank_values=True):
                if k in ("key", "api_key") and v != PLACEHOLDER:
                    out.append(Finding(f"interactions[{n}].request.url (query {k})", "secret-query-param", _preview(v)))
    return out


def find_secrets(cassette: CassetteFile, *, text: str | None = None) -> list[Finding]:
    """Every secret shape or unscrubbed secret header left in ``cassette``.

    Args:
        text: the cassette's serialised JSON, when the caller has it: if no shape can start
            anywhere in it and it holds no base64, only the named headers and query are checked.
    """
    if text is not None and not _may_hold(text) and '"base64"' not in text and '"tail_base64"' not in text:
        return _named_only(cassette)
    out: list[Finding] = []
    for n, inter in enumerate(cassette.interactions):
        w = f"interactions[{n}]"
        if inter.request is not None:
            req = inter.request
            out += _scan(req.url, f"{w}.request.url")
            query = urlsplit(req.url).query
            for k, v in parse_qsl(query, keep_blank_values=True):
                if k in ("key", "api_key") and v != PLACEHOLDER:
                    out.append(Finding(f"{w}.request.url (query {k})", "secret-query-param", _preview(v)))
            out += _scan_headers(req.headers, f"{w}.request")
            if req.has_json:
                out += _walk(req.json_body, f"{w}.request.json")
            if req.text is not None:
                out += _scan(req.text, f"{w}.request.text")
            if req.base64 is not None:
                out += _scan_b64(req.base64, f"{w}.request.base64")
        if inter.response is not None:
            resp = inter.response
            out += _scan_headers(resp.headers, f"{w}.response")
            texts = [(i, c.text) for i, c in enumerate(resp.chunks) if c.text is not None]
            joined, starts = "", []
            for i, t in texts:
                starts.append((len(joined), i))
                joined += t or ""
            for m in _SHAPE_RE.finditer(joined):
                chunk = max((s for s in starts if s[0] <= m.start()), default=(0, 0))[1]
                out.append(Finding(f"{w}.response.chunks[{chunk}].text", (m.lastgroup or "").replace("_", "-"), _preview(m.group())))
            for i, c in enumerate(resp.chunks):
                if c.frames is not None:
                    out += _walk(c.frames, f"{w}.response.chunks[{i}].frames")
                if c.base64 is not None:
                    out += _scan_b64(c.base64, f"{w}.response.chunks[{i}].base64")
            if resp.tail_base64:
                out += _scan_b64(resp.tail_base64, f"{w}.response.tail_base64")
        if inter.transcript is not None:
            out += _walk(inter.transcript.request, f"{w}.transcript.request")
            out += _walk(inter.transcript.message, f"{w}.transcript.message")
    out += _walk(cassette.meta, "meta")
    return out
