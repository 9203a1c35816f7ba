"""The sans-IO core every simulator shares: requests in, responses with body chunks out.

A protocol module subclasses :class:`Simulator` and writes its wire format only: routing and
request validation, the error body, a non-streaming body, and the stream as a list of complete wire
events. This module consumes the script, logs every request, applies faults (HTTP status, an
in-stream error after N events, a truncated stream, delays) and reports overruns and unused turns.
A non-streamed answer (a JSON body) has no events: :class:`~loopkit.script.Truncate` drops its
connection half-way through the body, and :class:`~loopkit.script.MidStreamError` does not apply.

Only ``loopkit.script``, ``loopkit.messages`` and ``loopkit.errors`` are imported: the encoders are
written independently of ``loopkit.providers`` so a misreading cannot hide on both sides of a test.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlsplit

from loopkit.errors import HarnessError, ScriptError
from loopkit.script import Delay, HttpFault, MidStreamError, Script, Truncate, Turn, UnsupportedTurn, incomplete_script, script_exhausted


@dataclass(slots=True, kw_only=True)
class SimRequest:
    """An HTTP request as the simulator sees it. Header names are lower-case."""

    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    number: int = 0  # 1-based position in the simulator's request log

    @classmethod
    def from_url(cls, method: str, url: str, headers: Mapping[str, str], body: bytes) -> SimRequest:
        parts = urlsplit(url)
        return cls(
            method=method.upper(),
            path=parts.path or "/",
            query=dict(parse_qsl(parts.query, keep_blank_values=True)),
            headers={k.lower(): v for k, v in headers.items()},
            body=body,
        )

    @property
    def json(self) -> Any:
        """The body parsed as JSON (None when it is not JSON)."""
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None


@dataclass(slots=True, kw_only=True)
class SimResponse:
    """A response: status, headers and the body as the chunks the server writes.

    ``delays[i]`` is how long to wait before chunk ``i``; ``truncated`` means the connection is
    dropped after the last chunk, before the body is complete. ``harness_error`` is set on the
    answer to a request that found the script exhausted: the in-process transport raises it, the
    server sends the 500 with the error's text in ``x-loopkit-harness-error``.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    delays: dict[int, float] = field(default_factory=dict)
    truncated: bool = False
    harness_error: HarnessError | None = None

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    @property
    def streaming(self) -> bool:
        return self.headers.get("content-type", "").startswith(("text/event-stream", "application/vnd.amazon.eventstream"))


def json_response(status: int, data: Any, headers: Mapping[str, str] | None = None) -> SimResponse:
    body = json.dumps(data, ensure_ascii=False).encode("utf-8")
    return SimResponse(status=status, headers={"content-type": "application/json", **(headers or {})}, chunks=[body])


class Simulator:
    """Base of the protocol simulators.

    Args:
        script: the turns to answer with, one per request that reaches the model.
        model: the model name reported when a request names none.
        chunk_size: characters per streamed text or argument fragment.
    """

    protocol: str = ""
    base_path: str = ""  # what an official SDK's base_url needs after the host (e.g. "/v1")
    unsupported_kinds: ClassVar[Mapping[str, str]] = {}
    """Turn kinds (:data:`loopkit.script.KINDS`) this API has no form for, with the reason."""
    wire_stop_values: ClassVar[frozenset[str]] = frozenset()
    """The values of the protocol's stop field, which ``Turn.wire_stop_reason`` may name."""

    def __init__(self, script: Script | list[Turn | str], *, model: str = "sim-model", chunk_size: int = 8) -> None:
        self.script = Script.coerce(script)
        for i, turn in enumerate(self.script):
            if turn.aborted or turn.stop_reason == "aborted":
                # an aborted stop is the caller's own doing; rendering it as some other ending
                # would let a test pass for the wrong reason
                raise ScriptError(
                    f"{self.protocol} simulator: turn {i + 1} is scripted as aborted, which no wire protocol "
                    "can send (the caller aborts); abort the run with abort_signal instead"
                )
            problem = self.cannot_send(turn)
            if problem is not None:
                raise UnsupportedTurn(self.protocol, problem[0], problem[1], turn=i + 1)
        self.model = model
        self.chunk_size = chunk_size
        self.requests: list[SimRequest] = []
        self.overruns: list[int] = []  # request numbers that found the script exhausted
        self.harness_errors: list[HarnessError] = []  # the ScriptExhausted of each overrun, first first
        self._next = 0
        self._ids = 0
        self._lock = threading.Lock()

    @classmethod
    def cannot_send(cls, turn: Turn) -> tuple[str, str] | None:
        """``(kind, reason)`` when this API has no form for something ``turn`` scripts, else None
        (the scenario runner skips such a scenario on this protocol with the reason)."""
        if cls.unsupported_kinds:
            for kind in turn.kinds:
                reason = cls.unsupported_kinds.get(kind)
                if reason is not None:
                    return kind, reason
        wire = turn.wire_stop_reason
        if wire is not None and wire not in cls.wire_stop_values:
            return "wire_stop_reason", f"{wire!r} is not one of its stop values ({', '.join(sorted(cls.wire_stop_values))})"
        return None

    # --- what a protocol module writes ----------------------------------------------------

    def route(self, request: SimRequest) -> str | None:
        """Return a route name for a request this protocol serves, else None (404)."""
        raise NotImplementedError

    def validate(self, request: SimRequest, route: str) -> SimResponse | None:
        """Return an error response for a request the real API would reject, else None."""
        return None

    def wants_stream(self, request: SimRequest, route: str) -> bool:
        raise NotImplementedError

    def error_response(
        self, status: int, message: str | None = None, error_type: str | None = None, *, retry_after: float | None = None
    ) -> SimResponse:
        """The provider's real error body and headers for ``status``."""
        raise NotImplementedError

    def render_body(self, request: SimRequest, route: str, turn: Turn) -> SimResponse:
        """A complete non-streaming answer."""
        raise NotImplementedError

    def render_stream(self, request: SimRequest, route: str, turn: Turn) -> tuple[dict[str, str], list[bytes]]:
        """Headers and the stream as complete wire events (each becomes one chunk)."""
        raise NotImplementedError

    def stream_error_event(self, fault: MidStreamError) -> bytes:
        """The provider's in-stream error event."""
        raise NotImplementedError

    # --- shared behaviour -----------------------------------------------------------------

    def new_id(self, prefix: str) -> str:
        """A deterministic id unique within this simulator: ``<prefix>_sim<n>``."""
        self._ids += 1
        return f"{prefix}{self._ids:04d}"

    def chunks_of(self, text: str, size: int | None = None) -> list[str]:
        """Split ``text`` into fragments of ``size`` characters (at least one fragment)."""
        n = size or self.chunk_size
        return [text[i : i + n] for i in range(0, len(text), n)] or [""]

    def handle(self, request: SimRequest) -> SimResponse:
        """Answer one request (thread-safe)."""
        with self._lock:
            self.requests.append(request)
            request.number = len(self.requests)
            route = self.route(request)
            if route is None:
                return self.error_response(404, f"loopkit simulator ({self.protocol}): no route for {request.method} {request.path}", None)
            invalid = self.validate(request, route)
            if invalid is not None:
                return invalid
            if self._next >= len(self.script):
                err = script_exhausted(f"{self.protocol} simulator", request.number, len(self.script))
                self.overruns.append(request.number)
                self.harness_errors.append(err)
                resp = self.error_response(500, f"loopkit {err}", None)
                # the same answer every time: the official SDKs read this header and do not
                # retry (with a backoff of real seconds) what no retry can change
                resp.headers["x-should-retry"] = "false"
                resp.harness_error = err
                return resp
            turn = self.script[self._next]
            self._next += 1
            return self._answer(request, route, turn)

    def _answer(self, request: SimRequest, route: str, turn: Turn) -> SimResponse:
        http = turn.fault(HttpFault)
        if http is not None:
            resp = self.error_response(http.status, http.message, http.error_type, retry_after=http.retry_after)
            resp.headers.update(http.headers)
            if http.body is not None:
                resp.chunks = [json.dumps(http.body).encode() if not isinstance(http.body, (bytes, str)) else (http.body.encode() if isinstance(http.body, str) else http.body)]
            _apply_delays(resp, turn)
            return resp
        if not self.wants_stream(request, route):
            resp = self.render_body(request, route, turn)
            cut = turn.fault(Truncate)
            if cut is not None:  # a JSON body has no events to count: the connection drops half-way
                body = resp.body
                resp.chunks, resp.truncated = [body[: max(1, len(body) // 2)]], True
            _apply_delays(resp, turn)
            return resp
        headers, events = self.render_stream(request, route, turn)
        resp = SimResponse(status=200, headers=headers, chunks=list(events))
        # a fault never lets the stream finish: an ``after`` at or past the last wire event acts
        # on that last event (a protocol that sends a whole tool call in one event has few)
        mid = turn.fault(MidStreamError)
        if mid is not None:
            resp.chunks = resp.chunks[: min(mid.after, len(resp.chunks) - 1)] + [self.stream_error_event(mid)]
        cut = turn.fault(Truncate)
        if cut is not None and resp.chunks:
            at = min(cut.after, len(resp.chunks) - 1)
            nxt = resp.chunks[at]
            resp.chunks = resp.chunks[:at] + ([nxt[: max(1, len(nxt) // 2)]] if nxt else [])
            resp.truncated = True
        _apply_delays(resp, turn)
        return resp

    @property
    def used(self) -> int:
        """How many turns were consumed."""
        return self._next

    def assert_complete(self) -> None:
        """Raise :class:`~loopkit.errors.IncompleteScript` when turns are unused or requests
        arrived after the script was exhausted (``ScriptedProvider.assert_complete`` says the same)."""
        err = incomplete_script(f"{self.protocol} simulator", len(self.script), self._next, self.overruns)
        if err is not None:
            raise err


def _apply_delays(resp: SimResponse, turn: Turn) -> None:
    for f in turn.faults:
        if isinstance(f, Delay):
            index = min(f.after, max(len(resp.chunks) - 1, 0))
            resp.delays[index] = resp.delays.get(index, 0.0) + f.seconds


def _no_default(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


try:  # the C encoder object itself: JSONEncoder.encode builds a new one on every call
    from json.encoder import c_make_encoder as _c_make_encoder, encode_basestring as _encode_basestring

    _COMPACT = _c_make_encoder(None, _no_default, _encode_basestring, None, ":", ",", False, False, True) if _c_make_encoder else None
except ImportError:  # pragma: no cover - Python builds without the _json accelerator
    _COMPACT = None


def compact_json(data: Any) -> str:
    """``json.dumps(data, ensure_ascii=False, separators=(",", ":"))``, about twice as fast."""
    if _COMPACT is None:  # pragma: no cover
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return "".join(_COMPACT(data, 0))


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event with LF framing (OpenAI, Anthropic)."""
    payload = data if isinstance(data, str) else compact_json(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode("utf-8")
