"""Secrets out of cassettes: by name, by shape and by value, everywhere in the file.

A :class:`Scrubber` first *learns* the secrets of an interaction: values of secret headers
(every provider's key and account headers), of secret query parameters and of secret JSON fields (``token``, ``api_key``,
``password``..., also inside JSON held in a string such as tool-call arguments, and inside the
arguments a stream sends in pieces), and every key shape (:mod:`._secrets`) found anywhere,
including in a response stream reassembled per content block. It then *replaces*, in every place
(URL, headers, bodies, every chunk, decoded frames, transcripts, ``meta``), every shape and every
known value: learned ones, the credentials a client signed with, values of ``*KEY*``/``*TOKEN*``/
``*SECRET*``/``*PASSWORD*`` environment variables, and values the user lists. A secret split across
stream chunks or event-stream frames is redacted in each piece, keeping every chunk and frame
valid. Reasoning signatures and encrypted reasoning are kept byte for byte.

Kept whatever the configuration: ``retry-after*``, ``x-should-retry`` and ``x-amzn-errortype``,
which change what a client does on replay.

:func:`find_secrets` runs the same reassembled scan and reports (interaction, place, kind) of
anything that survived, never the secret itself; saving refuses a cassette with a finding.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .._credentials import credentials_count, remembered_credentials
from ..messages import dumps
from ._format import CassetteFile, Interaction, RecordedRequest, RecordedResponse
from ._secrets import (
    MIN_VALUE_LENGTH,
    PLACEHOLDER,
    SHAPE_KINDS,
    Matcher,
    aws_credentials,
    environment_secrets,
    is_secret_field,
    may_hold_field,
    redact,
    redact_pieces,
    usable_value,
)
from ._views import BodyView, Slot, dict_keys, rename_keys, strings

__all__ = ["MIN_VALUE_LENGTH", "PLACEHOLDER", "SHAPE_KINDS", "Finding", "Scrubber", "find_secrets", "scrub_json", "scrub_text"]

SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key",
    "x-amz-security-token", "x-amz-date", "x-amz-content-sha256", "cookie", "set-cookie",
    "openai-organization", "openai-project", "x-goog-user-project", "anthropic-organization-id",
})  # fmt: skip
"""Headers that carry secrets or identify the account, for every provider."""

_LEARNED_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "x-amz-security-token", "cookie", "set-cookie"})

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
_ARN_ACCOUNT = re.compile(r"(arn(?::|%3A)aws[\w-]*(?::|%3A)[\w-]*(?::|%3A)[\w-]*(?::|%3A))\d{12}", re.IGNORECASE)
_SIGV4_PARTS = re.compile(r"(?:Credential=([A-Z0-9]+)/|Signature=([0-9a-f]+))")

_GLOBAL = Matcher(environment_secrets())
_dumps = dumps  # compact JSON through one reused C encoder
# The strings a stream sends in pieces, straight from the raw SSE text (escapes kept), for the
# pre-check of a secret split across events.
_DELTA_STRINGS = re.compile(r'"(?:text|content|delta|partial_json|arguments|thinking|refusal|reasoning_content|reasoning|input)"\s*:\s*"((?:[^"\\]|\\.)*)"')


def scrub_text(text: str) -> str:
    """``text`` with every secret shape (and environment secret value) replaced by a placeholder."""
    return redact(text, _GLOBAL.find(text))


def scrub_texts(texts: list[str]) -> list[str]:
    """Scrub over the concatenation of ``texts`` (a secret split across stream chunks is caught)
    and cut the result at the same places; a placeholder lands in the piece where its secret
    started."""
    return redact_pieces(texts, _GLOBAL.find("".join(texts)))


def _named(value: Any, fields: Collection[str]) -> bool:
    return isinstance(value, str) and value != "" and not value.startswith("<scrubbed")


def scrub_json(value: Any) -> Any:
    """A JSON value with secret shapes, environment secret values and secret fields (``token``,
    ``api_key``, ``password``...) replaced; a copy when anything changed."""
    text = json.dumps(value, ensure_ascii=False)
    if not _GLOBAL.may_hold(text) and not may_hold_field(text):
        return value
    value = json.loads(text)
    _redact_tree(value, "", _GLOBAL, frozenset(), set())
    return value


# --- the shared walk ----------------------------------------------------------------------------


def _secret_headers_values(name: str, value: str) -> Iterator[str]:
    """The secret parts of a header value: the credential after an auth scheme, the SigV4 access
    key id and signature, each cookie value, or the whole value."""
    low = name.lower()
    if low in ("authorization", "proxy-authorization"):
        if value.startswith("AWS4-"):
            for m in _SIGV4_PARTS.finditer(value):
                yield m.group(1) or m.group(2)
            return
        scheme, _, rest = value.partition(" ")
        yield rest.strip() if rest else scheme
        if rest and scheme.lower() == "basic":
            try:
                yield base64.b64decode(rest.strip()).decode("utf-8").partition(":")[2]
            except (ValueError, UnicodeDecodeError):
                pass
        return
    if low in ("cookie", "set-cookie"):
        for part in value.split(";"):
            yield part.partition("=")[2].strip()
        return
    yield value


def _nested_json(text: str) -> Any:
    if len(text) < 2 or text[0] not in "{[" or text[-1] not in "}]":
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None


def _learn_tree(value: Any, where: str, matcher: Matcher, fields: Collection[str], out: set[str]) -> None:
    for slot in strings(value, where):
        _learn_slot(slot, matcher, fields, out)
    for _d, k, _w in dict_keys(value, where):
        for s, e, _kind in matcher.find(k):
            out.add(k[s:e])


def _learn_slot(slot: Slot, matcher: Matcher, fields: Collection[str], out: set[str]) -> None:
    text = slot.value
    if slot.field is not None and (slot.field in fields or is_secret_field(slot.field)) and _named(text, fields):
        out.add(text)
        return
    nested = _nested_json(text) if ("{" in text[:1] or "[" in text[:1]) else None
    if nested is not None:
        _learn_tree(nested, slot.where, matcher, fields, out)
    for s, e, kind in matcher.find(text):
        out.add(text[s:e])


def _redact_tree(value: Any, where: str, matcher: Matcher, fields: Collection[str], learned: set[str]) -> bool:
    changed = False
    for slot in strings(value, where):
        changed |= _redact_slot(slot, matcher, fields)
    if isinstance(value, (dict, list)):
        changed |= rename_keys(value, lambda k: redact(k, matcher.find(k)))
    return changed


def _redact_slot(slot: Slot, matcher: Matcher, fields: Collection[str]) -> bool:
    text = slot.value
    if slot.field is not None and (slot.field in fields or is_secret_field(slot.field)) and _named(text, fields):
        slot.set(PLACEHOLDER)
        return True
    nested = _nested_json(text) if text[:1] in ("{", "[") else None
    if nested is not None and may_hold_field(text):
        if _redact_tree(nested, slot.where, matcher, fields, set()):
            text = json.dumps(nested, ensure_ascii=False, separators=(",", ":"))
            slot.set(text)
    new = redact(text, matcher.find(text))
    if new != slot.value:
        slot.set(new)
        return True
    return text != slot.value


def _group_learn(group: list[Slot], matcher: Matcher, fields: Collection[str], out: set[str]) -> None:
    joined = "".join(s.value for s in group)
    for s, e, kind in matcher.find(joined):
        out.add(joined[s:e])
    nested = _nested_json(joined.strip())
    if nested is not None:
        _learn_tree(nested, "", matcher, fields, out)


def _group_redact(group: list[Slot], matcher: Matcher, fields: Collection[str]) -> None:
    pieces = [s.value for s in group]
    joined = "".join(pieces)
    matches = matcher.find(joined)
    if not matches:
        return
    for slot, new in zip(group, redact_pieces(pieces, matches)):
        slot.set(new)


def _query_pairs(url: str) -> list[tuple[str, str]]:
    return parse_qsl(urlsplit(url).query, keep_blank_values=True) if "?" in url else []


@dataclass(slots=True)
class Scrubber:
    """What to remove from a recording before it is saved.

    Args:
        headers: more header names to scrub (case-insensitive), on top of :data:`SECRET_HEADERS`.
        query_params: more URL query parameters to scrub, on top of ``key`` and friends.
        body_fields: more JSON keys whose values are replaced wherever they occur (``token``,
            ``api_key``, ``password``, ``client_secret``... always are).
        hook: called with each :class:`Interaction` after the built-in scrubbing; edit it in place
            or return a replacement.
        keep_volatile: keep :data:`VOLATILE_HEADERS` (request ids, user agents, dates).
        secrets: values to remove wherever they occur (at least 8 characters).
        environment: also remove values of environment variables whose names contain ``KEY``,
            ``TOKEN``, ``SECRET`` or ``PASSWORD`` (at least 8 characters, not a number or a path).
    """

    headers: Collection[str] = ()
    query_params: Collection[str] = ()
    body_fields: Collection[str] = ()
    hook: Callable[[Interaction], Interaction | None] | None = None
    keep_volatile: bool = False
    secrets: Iterable[str] = ()
    environment: bool = True
    learned: set[str] = field(init=False, repr=False)
    _names: frozenset[str] = field(init=False, repr=False)
    _params: frozenset[str] = field(init=False, repr=False)
    _fields: frozenset[str] = field(init=False, repr=False)
    _base: frozenset[str] = field(init=False, repr=False)
    _matcher: Matcher = field(init=False, repr=False)
    _done: dict[int, tuple[int, int]] = field(init=False, repr=False)
    _aws: bool = field(init=False, repr=False)
    _mkey: tuple[int, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        names = SECRET_HEADERS | {h.lower() for h in self.headers}
        if not self.keep_volatile:
            names |= VOLATILE_HEADERS
        self._names = frozenset(names)
        self._params = SECRET_QUERY_PARAMS | frozenset(self.query_params)
        self._fields = frozenset(self.body_fields)
        base = set(self.secrets) | remembered_credentials()
        if self.environment:
            base |= environment_secrets()
        self._base = frozenset(base)
        self.learned = set()
        self._matcher = Matcher(self._base)
        self._done = {}
        self._aws = False
        self._mkey = (-1, -1)

    # --- values -------------------------------------------------------------------------------

    def matcher(self) -> Matcher:
        """The matcher for every value known now (rebuilt when new values were learned)."""
        key = (len(self.learned), credentials_count())
        if key != self._mkey:
            self._mkey = key
            values = self._base | self.learned | remembered_credentials()
            if values != self._matcher.values:
                self._matcher = Matcher(values)
        return self._matcher

    def learn(self, values: Iterable[str]) -> None:
        """Remove these values too, wherever they occur (from now on and at the next save)."""
        self.learned.update(v for v in values if usable_value(v))

    # --- single places ------------------------------------------------------------------------

    def header_value(self, name: str, value: str) -> str:
        """The value to store for one header."""
        low = name.lower()
        if low in KEPT_HEADERS or low.startswith(KEPT_HEADER_PREFIXES):
            return value
        if low in self._names or (not self.keep_volatile and low.startswith(VOLATILE_HEADER_PREFIXES)):
            return PLACEHOLDER
        m = self.matcher()
        return redact(value, m.find(value))

    def _may_hold(self, m: Matcher, headers: list[tuple[str, str]]) -> bool:
        """One pre-check over the values of the headers that are searched (those not replaced
        whole by name: an ``authorization`` value always looks like a secret, and would send
        every other header through the full search)."""
        names = self._names
        return m.may_hold("\n".join([v for k, v in headers if k.lower() not in names]))

    def headers_list(self, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        m = self.matcher()
        check = self._may_hold(m, headers)
        out = []
        for k, v in headers:
            low = k.lower()
            if low in KEPT_HEADERS or low.startswith(KEPT_HEADER_PREFIXES):
                out.append((k, v))
            elif low in self._names or (not self.keep_volatile and low.startswith(VOLATILE_HEADER_PREFIXES)):
                out.append((k, PLACEHOLDER))
            else:
                out.append((k, redact(v, m.find(v)) if check else v))
        return out

    def url(self, url: str) -> str:
        """The URL with secret query parameters, shapes and known values replaced, and ARN account
        ids zeroed."""
        m = self.matcher()
        if "?" not in url and "arn" not in url.lower():
            return redact(url, m.find(url))
        parts = urlsplit(url)
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(k in self._params or is_secret_field(k) for k, _ in pairs):
                query = urlencode([(k, PLACEHOLDER if k in self._params or is_secret_field(k) else v) for k, v in pairs], safe="<>")
        path = _ARN_ACCOUNT.sub(r"\g<1>000000000000", parts.path)
        out = urlunsplit((parts.scheme, parts.netloc, path, query, parts.fragment))
        return redact(out, m.find(out))

    def json(self, value: Any) -> Any:
        """A JSON body with secret fields, shapes and known values replaced (in place; returned).
        Used on live request bodies before matching, so they compare with the recording."""
        if isinstance(value, str):
            m = self.matcher()
            return redact(value, m.find(value))
        m = self.matcher()
        learned: set[str] = set()
        _learn_tree(value, "", m, self._fields, learned)
        if learned - m.values:
            m = Matcher(m.values | {v for v in learned if usable_value(v)})
        _redact_tree(value, "", m, self._fields, set())
        return value

    def live_text(self, text: str) -> bool:
        """Whether a live request body's text may need :meth:`json` (a fast pre-check)."""
        return bool(self._fields) or self.matcher().may_hold(text) or may_hold_field(text)

    # --- learning -----------------------------------------------------------------------------

    def _learn_headers(self, inter: Interaction) -> None:
        out: set[str] = set()
        m = self.matcher()
        for part in (inter.request, inter.response):
            if part is None:
                continue
            check = self._may_hold(m, part.headers)
            for k, v in part.headers:
                low = k.lower()
                if low in _LEARNED_HEADERS or low in self.headers:
                    out.update(_secret_headers_values(k, v))
                    if not self._aws and v.startswith("AWS4-"):
                        # SigV4: the secret key and session token never travel; ask botocore
                        # (environment and shared files only) which ones signed this request.
                        self._aws = True
                        out.update(aws_credentials())
                elif check and low not in self._names:
                    for s, e, _ in m.find(v):
                        out.add(v[s:e])
        if inter.request is not None:
            for k, v in _query_pairs(inter.request.url):
                if k in self._params or is_secret_field(k):
                    out.add(v)
        self.learn(v for v in out if not v.startswith("<scrubbed"))

    def _learn_interaction(self, inter: Interaction, views: list[BodyView]) -> None:
        self._learn_headers(inter)  # headers and query parameters
        out: set[str] = set()
        m = self.matcher()
        req = inter.request
        if req is not None:
            for s, e, _ in m.find(req.url):
                out.add(req.url[s:e])
            if req.has_json:
                _learn_tree(req.json_body, "", m, self._fields, out)
            elif req.text is not None:
                _learn_tree({"": req.text}, "", m, self._fields, out)
        for view in views:
            for group in view.groups():
                _group_learn(group, m, self._fields, out)
            for slot in view.slots():
                _learn_slot(slot, m, self._fields, out)
        if inter.transcript is not None:
            _learn_tree(inter.transcript.request, "", m, self._fields, out)
            _learn_tree(inter.transcript.message, "", m, self._fields, out)
        self.learn(v for v in out if v != PLACEHOLDER and not v.startswith("<scrubbed"))

    # --- replacing ----------------------------------------------------------------------------

    def request(self, req: RecordedRequest) -> None:
        m = self.matcher()
        req.url = self.url(req.url)
        req.headers = self.headers_list(req.headers)
        if req.has_json:
            _redact_tree(req.json_body, "", m, self._fields, set())
            if isinstance(req.json_body, str):
                req.json_body = redact(req.json_body, m.find(req.json_body))
        elif req.text is not None:
            req.text = redact(req.text, m.find(req.text))
        elif req.base64 is not None:
            raw = base64.b64decode(req.base64).decode("latin-1")
            new = redact(raw, m.find(raw))
            if new != raw:
                req.base64 = base64.b64encode(new.encode("latin-1")).decode("ascii")

    def _response(self, resp: RecordedResponse, view: BodyView) -> None:
        m = self.matcher()
        resp.headers = self.headers_list(resp.headers)
        grouped: set[tuple[int, Any]] = set()
        for group in view.groups():
            _group_redact(group, m, self._fields)
            grouped.update((id(s.obj), s.key) for s in group)
        for slot in view.slots():
            if (id(slot.obj), slot.key) not in grouped:
                _redact_slot(slot, m, self._fields)
        for d in view.docs:
            if not d.raw and rename_keys(d.value, lambda k: redact(k, m.find(k))):
                d.dirty = True
        view.commit()
        if resp.tail_base64:
            raw = base64.b64decode(resp.tail_base64).decode("latin-1")
            new = redact(raw, m.find(raw))
            if new != raw:  # an unfinished last frame: keep its length, blank the secret
                resp.tail_base64 = base64.b64encode(new.encode("latin-1")[: len(raw)].ljust(len(raw), b"*")).decode("ascii")

    def response(self, resp: RecordedResponse) -> None:
        self._response(resp, BodyView(resp, "response"))

    def _transcript(self, inter: Interaction) -> None:
        if inter.transcript is not None:
            m = self.matcher()
            _redact_tree(inter.transcript.request, "", m, self._fields, set())
            _redact_tree(inter.transcript.message, "", m, self._fields, set())

    def _clean(self, inter: Interaction) -> bool:
        """Whether nothing but headers and the URL can need scrubbing (a fast pre-check over the
        serialised bodies, the raw stream and its delta strings joined in stream order: no shape
        can start, no known value, no secret field name). The five protocols stream one content
        block after another; a secret split across two blocks streamed interleaved would be
        joined per block only by the full pass, which this pre-check may skip."""
        m = self.matcher()
        if self._fields:
            return False
        req, resp, tr = inter.request, inter.response, inter.transcript
        texts: list[str] = []
        if req is not None:
            if req.has_json:
                texts.append(_dumps(req.json_body))
            elif req.text is not None or req.base64 is not None:
                return False
        if resp is not None:
            if resp.codec is not None or resp.tail_base64 is not None:
                return False
            body = []
            for c in resp.chunks:
                if c.text is None:
                    return False
                body.append(c.text)
            raw = "".join(body)
            texts.append(raw)
            texts.append("".join(_DELTA_STRINGS.findall(raw)))
        if tr is not None:
            texts.append(_dumps(tr.request))
            texts.append(_dumps(tr.message))
        joined = "\x00".join(texts)  # one pass; no shape or field name spans the separator
        return not m.may_hold(joined) and not may_hold_field(joined)

    def _scrub(self, inter: Interaction) -> None:
        if self._clean(inter):
            self._learn_headers(inter)
            if inter.request is not None:
                inter.request.url = self.url(inter.request.url)
                inter.request.headers = self.headers_list(inter.request.headers)
            if inter.response is not None:
                inter.response.headers = self.headers_list(inter.response.headers)
            return
        views = [BodyView(inter.response, "response")] if inter.response is not None else []
        self._learn_interaction(inter, views)
        if inter.request is not None:
            self.request(inter.request)
        if inter.response is not None:
            self._response(inter.response, views[0])
        self._transcript(inter)

    def interaction(self, inter: Interaction) -> Interaction:
        """Learn this interaction's secrets, then scrub it in place (and through the hook)."""
        self._scrub(inter)
        if self.hook is not None:
            replaced = self.hook(inter)
            if replaced is not None:
                inter = replaced
        self._done[id(inter)] = self._stamp(inter)
        return inter

    def _stamp(self, inter: Interaction) -> tuple[int, int]:
        # What an interaction was scrubbed against: the values known, and its transcript (a
        # RecordingProvider attaches the transcript after the HTTP exchange was scrubbed).
        return (len(self.learned), id(inter.transcript))

    def meta(self, meta: dict[str, Any]) -> None:
        """Scrub a cassette's ``meta`` in place."""
        m = self.matcher()
        learned: set[str] = set()
        _learn_tree(meta, "meta", m, self._fields, learned)
        self.learn(learned)
        _redact_tree(meta, "meta", self.matcher(), self._fields, set())

    def cassette(self, cassette: CassetteFile) -> CassetteFile:
        """Scrub the whole file in place (every interaction and ``meta``): learn the secrets of
        all of it first, so a value found in one place is removed from every other; returns it."""
        for inter in cassette.interactions:
            views = [BodyView(inter.response, "response")] if inter.response is not None else []
            self._learn_interaction(inter, views)
        self.meta(cassette.meta)
        cassette.interactions = [self.interaction(i) for i in cassette.interactions]
        self.meta(cassette.meta)
        return cassette

    def finish(self, cassette: CassetteFile) -> CassetteFile:
        """Before a save: scrub ``meta``, and again every interaction scrubbed before a value it
        may hold was learned (or never scrubbed by this scrubber: loaded from the file)."""
        self.meta(cassette.meta)
        for _ in range(3):  # values learned late reach the interactions scrubbed before them
            stale = [i for i in cassette.interactions if self._done.get(id(i)) != self._stamp(i)]
            if not stale:
                break
            for inter in stale:
                self._scrub(inter)
                self._done[id(inter)] = self._stamp(inter)
        self.meta(cassette.meta)
        return cassette


# --- the scan ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret that survived: the interaction (None for ``meta``), the place (a field path, or
    chunk range of a stream) and the kind (a shape, ``value``, ``secret-field``, ``secret-header``,
    ``secret-query-param``). Never the secret itself."""

    where: str
    kind: str
    interaction: int | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.kind}"


def _scan(text: str, where: str, m: Matcher, n: int | None) -> Iterator[Finding]:
    for _s, _e, kind in m.find(text):
        yield Finding(where, kind, n)


def _scan_tree(value: Any, where: str, m: Matcher, n: int | None) -> Iterator[Finding]:
    yield from _scan_slots(strings(value, where), m, n)
    for _d, k, w in dict_keys(value, where):
        for _s, _e, kind in m.find(k):
            yield Finding(w + " (a key)", kind, n)


def _scan_slots(slots: Iterable[Slot], m: Matcher, n: int | None, fields: Collection[str] = ()) -> Iterator[Finding]:
    for slot in slots:
        text = slot.value
        if slot.field is not None and (slot.field in fields or is_secret_field(slot.field)) and _named(text, fields):
            yield Finding(slot.where, "secret-field", n)
            continue
        nested = _nested_json(text) if text[:1] in ("{", "[") else None
        if nested is not None:
            for f in _scan_slots(strings(nested, slot.where + "(json)"), m, n, fields):
                if f.kind == "secret-field":
                    yield f
        yield from _scan(text, slot.where, m, n)


def _scan_headers(headers: list[tuple[str, str]], where: str, m: Matcher, n: int | None) -> Iterator[Finding]:
    for i, (k, v) in enumerate(headers):
        if k.lower() in SECRET_HEADERS and v != PLACEHOLDER:
            yield Finding(f"{where}.headers[{i}] ({k})", "secret-header", n)
        else:
            yield from _scan(v, f"{where}.headers[{i}] ({k})", m, n)


def _named_only(cassette: CassetteFile) -> list[Finding]:
    out: list[Finding] = []
    for n, inter in enumerate(cassette.interactions):
        for part, name in ((inter.request, "request"), (inter.response, "response")):
            if part is not None:
                for i, (k, v) in enumerate(part.headers):
                    if k.lower() in SECRET_HEADERS and v != PLACEHOLDER:
                        out.append(Finding(f"interactions[{n}].{name}.headers[{i}] ({k})", "secret-header", n))
        if inter.request is not None:
            for k, v in _query_pairs(inter.request.url):
                if k in ("key", "api_key") and v != PLACEHOLDER:
                    out.append(Finding(f"interactions[{n}].request.url (query {k})", "secret-query-param", n))
    return out


def find_secrets(cassette: CassetteFile, *, text: str | None = None, values: Iterable[str] = ()) -> list[Finding]:
    """Every secret left in ``cassette``: a key shape, a listed or environment secret value, a
    secret field (``token``, ``api_key``...) or header that was not scrubbed, in any place,
    including response streams reassembled per content block and decoded frames.

    Args:
        text: the cassette's serialised JSON, when the caller has it: if nothing can start
            anywhere in it, only the named headers and query are checked (a fast path for saves).
        values: more secret values to look for.
    """
    m = Matcher(_GLOBAL.values | set(values)) if values else _GLOBAL
    if text is not None and not m.may_hold(text) and not may_hold_field(text) and '"base64"' not in text and '"tail_base64"' not in text:
        return _named_only(cassette)
    out: list[Finding] = []
    for n, inter in enumerate(cassette.interactions):
        w = f"interactions[{n}]"
        if inter.request is not None:
            req = inter.request
            out += _scan(req.url, f"{w}.request.url", m, n)
            for k, v in _query_pairs(req.url):
                if (k in SECRET_QUERY_PARAMS or is_secret_field(k)) and v != PLACEHOLDER:
                    out.append(Finding(f"{w}.request.url (query {k})", "secret-query-param", n))
            out += _scan_headers(req.headers, f"{w}.request", m, n)
            if req.has_json:
                if isinstance(req.json_body, str):
                    out += _scan(req.json_body, f"{w}.request.json", m, n)
                out += _scan_tree(req.json_body, f"{w}.request.json", m, n)
            if req.text is not None:
                out += _scan(req.text, f"{w}.request.text", m, n)
            if req.base64 is not None:
                out += _scan(base64.b64decode(req.base64).decode("latin-1"), f"{w}.request.base64", m, n)
        if inter.response is not None:
            resp = inter.response
            out += _scan_headers(resp.headers, f"{w}.response", m, n)
            view = BodyView(resp, f"{w}.response")
            seen: set[tuple[str, str]] = set()
            for group in view.groups():
                joined = "".join(s.value for s in group)
                for s, e, kind in m.find(joined):
                    start = _slot_at(group, s)
                    f = Finding(f"{group[start].where} (stream block, {len(group)} piece(s))", kind, n)
                    seen.add((group[start].where, kind))
                    out.append(f)
                nested = _nested_json(joined.strip())
                if nested is not None:
                    out += [f for f in _scan_slots(strings(nested, f"{group[0].where} (joined)"), m, n) if f.kind == "secret-field"]
            for f in _scan_slots(view.slots(), m, n):
                if (f.where, f.kind) not in seen:
                    out.append(f)
            for d in view.docs:
                if not d.raw:
                    out += [f for f in _scan_tree(d.value, d.where, m, n) if f.where.endswith("(a key)")]
            if resp.tail_base64:
                out += _scan(base64.b64decode(resp.tail_base64).decode("latin-1"), f"{w}.response.tail_base64", m, n)
        if inter.transcript is not None:
            out += _scan_tree(inter.transcript.request, f"{w}.transcript.request", m, n)
            out += _scan_tree(inter.transcript.message, f"{w}.transcript.message", m, n)
    out += _scan_tree(cassette.meta, "meta", m, None)
    return out


def _slot_at(group: list[Slot], pos: int) -> int:
    at = 0
    for i, s in enumerate(group):
        at += len(s.value)
        if pos < at:
            return i
    return len(group) - 1
