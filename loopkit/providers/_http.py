"""The thin HTTP half shared by every adapter: send, retry, stream bytes into the codec.

An adapter subclasses :class:`HttpProvider` and writes only its codec: :meth:`build_request`
(ModelRequest -> method, path, headers, JSON body), :meth:`stream_decoder` (wire bytes -> stream
events), :meth:`decode_body` (a non-streaming body -> stream events) and :meth:`map_error` (an
HTTP error -> a :class:`ProviderError`). Everything else (clients, auth, retries with an injected
sleep, abort, truncation) lives here once, for sync and async alike.
"""

from __future__ import annotations

import functools
import json
import json.scanner
import os
import ssl
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from operator import is_
from typing import Any, Protocol, TypeVar

import httpx

from ..errors import ConnectionClosedError, ProviderError, UsageError, WireError, error_class_for_status, harness_cause
from ..events import ErrorEvent, StreamEvent
from ..messages import Message
from ..messages import dumps
from ..provider import BaseProvider, ModelRequest
from ..retry import RetryPolicy, parse_retry_after
from ..script import HARNESS_HEADER, harness_error_from_header


@dataclass(slots=True, kw_only=True)
class HttpCall:
    """One HTTP request an adapter wants sent."""

    method: str
    path: str
    json: Any
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)


class StreamDecoder(Protocol):
    """Turns response bytes into stream events, one chunk at a time."""

    def feed(self, chunk: bytes) -> list[StreamEvent]: ...

    def close(self) -> list[StreamEvent]:
        """End of body. Raises :class:`ConnectionClosedError` when the stream stopped before its
        terminal event, or returns the last events."""
        ...


class HttpProvider(BaseProvider):
    """Base of the HTTP adapters.

    Args:
        model: the model id sent to the provider.
        api_key: the key; defaults to the first set variable of ``api_key_env``.
        base_url: where to send requests (a simulator's ``base_url`` in tests).
        client / async_client: injected httpx clients (their transports decide where bytes go).
        transport: an httpx transport to build clients around (a simulator's in-process transport).
        stream: ask for a streamed answer (default) or a single JSON body.
        extra_body: merged into every request body (provider-specific knobs).
        extra_headers: added to every request.
        retry: the retry policy (retries 429/5xx/529 and early disconnects; injected sleep).
        timeout: seconds for the clients this class builds itself.
    """

    api: str = ""
    provider_name: str = ""
    default_base_url: str = ""
    api_key_env: tuple[str, ...] = ()

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        client: httpx.Client | None = None,
        async_client: httpx.AsyncClient | None = None,
        transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None = None,
        stream: bool = True,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.model = model
        self.api_key = api_key if api_key is not None else _env_key(self.api_key_env)
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self._client = client
        self._async_client = async_client
        self._transport = transport
        self._async_transport: httpx.AsyncBaseTransport | None = None
        self.streaming = stream
        self.extra_body = dict(extra_body or {})
        self.extra_headers = dict(extra_headers or {})
        self.retry = retry if retry is not None else RetryPolicy()
        self.timeout = timeout
        self.attempts: list[int] = []  # HTTP attempts per model call, for assertions
        self.wire_history = WireHistory()  # the codec's conversion of the previous request's history
        self._urls: dict[str, httpx.URL] = {}  # parsed request URLs (a provider uses one or two)

    # --- codec hooks ------------------------------------------------------------------------

    def build_request(self, request: ModelRequest) -> HttpCall:
        raise NotImplementedError

    def stream_decoder(self) -> StreamDecoder:
        raise NotImplementedError

    def decode_body(self, data: Any) -> list[StreamEvent]:
        raise NotImplementedError

    def map_error(self, status: int, headers: httpx.Headers, body: bytes) -> ProviderError:
        """Default mapping: the status's ProviderError class, the body's message if JSON."""
        data = _json_or_none(body)
        message = body.decode("utf-8", "replace")[:500] or f"HTTP {status}"
        error_type = None
        if isinstance(data, Mapping):
            err = data.get("error", data)
            if isinstance(err, Mapping):
                message = str(err.get("message", message))
                error_type = err.get("type") or err.get("status") or err.get("code")
        return error_class_for_status(status)(
            message,
            status=status,
            error_type=None if error_type is None else str(error_type),
            retry_after=parse_retry_after(headers),
            provider=self.provider_name or self.api,
            body=data,
        )

    def auth_headers(self) -> dict[str, str]:
        return {}

    # --- clients ----------------------------------------------------------------------------

    # Without an injected client, requests go straight to a transport: an httpx Client's URL
    # merging, cookie jar and redirect handling cost more than a whole in-process simulator
    # round, and an API call needs none of them.

    def _request(self, method: str, url: str, headers: dict[str, str], content: bytes) -> httpx.Request:
        """The same request ``httpx.Request(method, url, headers=headers, content=content)``
        builds (same headers in the same order, body already read), without parsing the URL
        again every round or normalising the headers twice."""
        urls = self._urls
        parsed = urls.get(url)
        if parsed is None:
            if len(urls) >= 64:
                urls.clear()
            parsed = urls[url] = httpx.URL(url)
        names = {k.lower() for k in headers}
        raw: list[tuple[Any, Any]] = []
        if "host" not in names and parsed.host:
            raw.append((b"Host", parsed.netloc))
        raw += headers.items()
        if "content-length" not in names and "transfer-encoding" not in names:
            if content:
                raw.append((b"Content-Length", str(len(content)).encode()))
            elif method.upper() in ("POST", "PUT", "PATCH"):
                raw.append((b"Content-Length", b"0"))
        t = self.timeout
        request = httpx.Request(
            method, parsed, headers=raw, stream=httpx.ByteStream(content), extensions={"timeout": {"connect": t, "read": t, "write": t, "pool": t}}
        )
        request.read()
        return request

    def _open(self, request: httpx.Request) -> httpx.Response:
        if self._client is not None:
            return self._client.send(request, stream=True)
        if self._transport is None:
            self._transport = httpx.HTTPTransport(verify=default_ssl_context())
        if not isinstance(self._transport, httpx.BaseTransport):
            raise UsageError(f"{type(self).__name__}: the transport {type(self._transport).__name__} is async-only; use astream()/arun()")
        return self._transport.handle_request(request)

    async def _aopen(self, request: httpx.Request) -> httpx.Response:
        if self._async_client is not None:
            return await self._async_client.send(request, stream=True)
        if self._async_transport is None:
            if self._transport is None:
                self._async_transport = httpx.AsyncHTTPTransport(verify=default_ssl_context())
            elif isinstance(self._transport, httpx.AsyncBaseTransport):
                self._async_transport = self._transport
            else:
                raise UsageError(f"{type(self).__name__}: the transport {type(self._transport).__name__} is sync-only; use stream()/run()")
        return await self._async_transport.handle_async_request(request)

    def _prepare(self, request: ModelRequest) -> tuple[HttpCall, str, dict[str, str], bytes]:
        call = self.build_request(request)
        body = call.json
        if self.extra_body and isinstance(body, dict):
            body = {**body, **self.extra_body}
        headers = {"content-type": "application/json", **self.auth_headers(), **self.extra_headers, **call.headers}
        url = self.base_url + call.path
        if call.params:
            url += "?" + "&".join(f"{k}={v}" for k, v in call.params.items())
        content = dumps(body).encode("utf-8")
        return call, url, headers, content

    def _error_from(self, response_status: int, headers: httpx.Headers, body: bytes) -> ProviderError:
        harness = headers.get(HARNESS_HEADER)
        if harness is not None:  # a served simulator's overrun: the test's setup, not the model
            raise harness_error_from_header(harness)
        err = self.map_error(response_status, headers, body)
        should = headers.get("x-should-retry")
        if should == "true":
            err.retryable = True
        elif should == "false":
            err.retryable = False
        return err

    # --- sync -------------------------------------------------------------------------------

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        call, url, headers, content = self._prepare(request)
        attempt = 0
        try:
            while True:
                attempt += 1
                yielded = False
                try:
                    response = self._open(self._request(call.method, url, headers, content))
                    try:
                        if response.status_code >= 400:
                            raise self._error_from(response.status_code, response.headers, response.read())
                        if not self.streaming:
                            events = self.decode_body(_json_body(response.read(), self))
                            yield from events
                            return
                        decoder = self.stream_decoder()
                        signal = request.abort_signal
                        for chunk in response.iter_bytes():
                            for event in decoder.feed(chunk):
                                yielded = True
                                yield event
                            if signal is not None and signal.aborted:
                                yield _aborted()
                                return
                        for event in decoder.close():
                            yielded = True
                            yield event
                        return
                    finally:
                        response.close()
                except ProviderError as err:
                    wait = None if yielded else self.retry.delay(attempt, err)
                    if wait is None:
                        raise
                    self.retry.sleep(wait)
                except httpx.TransportError as exc:
                    err = _transport_error(exc, self)
                    wait = None if yielded else self.retry.delay(attempt, err)
                    if wait is None:
                        raise err from exc
                    self.retry.sleep(wait)
        finally:
            # recorded here, not at each return: the loop closes the stream at its terminal
            # event, so code after the last yield never runs
            self.attempts.append(attempt)

    # --- async ------------------------------------------------------------------------------

    async def astream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        call, url, headers, content = self._prepare(request)
        attempt = 0
        try:
            while True:
                attempt += 1
                yielded = False
                try:
                    response = await self._aopen(self._request(call.method, url, headers, content))
                    try:
                        if response.status_code >= 400:
                            raise self._error_from(response.status_code, response.headers, await response.aread())
                        if not self.streaming:
                            events = self.decode_body(_json_body(await response.aread(), self))
                            for event in events:
                                yield event
                            return
                        decoder = self.stream_decoder()
                        signal = request.abort_signal
                        async for chunk in response.aiter_bytes():
                            for event in decoder.feed(chunk):
                                yielded = True
                                yield event
                            if signal is not None and signal.aborted:
                                yield _aborted()
                                return
                        for event in decoder.close():
                            yielded = True
                            yield event
                        return
                    finally:
                        await response.aclose()
                except ProviderError as err:
                    wait = None if yielded else self.retry.delay(attempt, err)
                    if wait is None:
                        raise
                    await self.retry.asleep(wait)
                except httpx.TransportError as exc:
                    err = _transport_error(exc, self)
                    wait = None if yielded else self.retry.delay(attempt, err)
                    if wait is None:
                        raise err from exc
                    await self.retry.asleep(wait)
        finally:
            # recorded here, not at each return: the loop closes the stream at its terminal
            # event, so code after the last yield never runs
            self.attempts.append(attempt)

    def close(self) -> None:
        """Close what this provider opened itself (injected clients stay open)."""
        if isinstance(self._transport, httpx.HTTPTransport):
            self._transport.close()


def default_ssl_context() -> ssl.SSLContext:
    """httpx's default TLS context (certifi's CA bundle, or ``SSL_CERT_FILE``/``SSL_CERT_DIR``),
    made once per process for each value of those variables and shared by the transports
    providers open themselves: making one reads and parses the whole CA bundle (tens of ms of
    CPU), which every provider used to pay on its first request, to a simulator on plain HTTP too."""
    return _ssl_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.lru_cache(maxsize=4)
def _ssl_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx.create_ssl_context()


def _aborted() -> ErrorEvent:
    return ErrorEvent(reason="aborted", error_message="Request was aborted")


def _transport_error(exc: httpx.TransportError, provider: HttpProvider) -> ProviderError:
    """The provider error for a transport failure; a harness error under it (the network guard's
    :class:`~loopkit.errors.NetworkBlocked`, which httpcore wraps as ``ConnectError``) is raised
    as itself instead, never retried."""
    harness = harness_cause(exc)
    if harness is not None:
        raise harness
    return ConnectionClosedError(
        f"connection failed or closed before the response finished: {type(exc).__name__}: {exc}",
        provider=provider.provider_name or provider.api,
    )


def _env_key(names: tuple[str, ...]) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def _json_or_none(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _json_body(body: bytes, provider: HttpProvider) -> Any:
    try:
        return json.loads(body)
    except ValueError as exc:
        raise WireError(f"{provider.api}: response body is not JSON: {body[:200]!r}") from exc


_scan_json = json.scanner.make_scanner(json.JSONDecoder())  # the scanner json.loads runs, called directly


def json_or_wire_error(text: str, where: str) -> Any:
    """Parse one JSON payload from a stream, or raise :class:`WireError` naming ``where``.

    A payload that is one JSON value with no surrounding whitespace (every event a provider
    writes) goes straight to the scanner ``json.loads`` uses; anything else takes ``json.loads``
    itself, so results and errors are the same, only cheaper per event.
    """
    try:
        try:
            value, end = _scan_json(text, 0)
        except StopIteration:
            return json.loads(text)
        return value if end == len(text) else json.loads(text)
    except ValueError as exc:
        raise WireError(f"{where}: payload is not JSON: {text[:200]!r}") from exc


S = TypeVar("S")
R = TypeVar("R")


class WireHistory:
    """The wire form of the previous request's history, extended by the new messages only.

    The loop resends its whole append-only history on every call and never edits a message once
    it was sent, so converting the messages that were already in the previous request again is
    wasted work. An adapter describes its conversion as a fold over the messages: ``start()``
    makes an empty state, ``step(state, message)`` adds one message to it (converting it, merging
    it into the previous wire message, remembering calls to drop ...) and ``finish(state)`` builds
    the wire list from the state without changing it. When the previous call's messages are the
    first messages of this one (the same objects, in order) and ``key`` is unchanged, the fold goes
    on from the state it left; otherwise it starts again, so another run, a shortened or edited
    history or a changed option never sees stale entries.

    Rules for ``step``: never change a wire object it put into the state earlier (earlier request
    bodies share them; build a new one, e.g. to merge into the last message), and keep everything
    it needs in the state. Thread-safe: a call that finds the history busy in another thread folds
    from scratch instead of waiting.
    """

    __slots__ = ("_messages", "_key", "_state", "_lock")

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._key: Any = None
        self._state: Any = None
        self._lock = threading.Lock()

    def fold(
        self,
        messages: Sequence[Message],
        start: Callable[[], S],
        step: Callable[[S, Message], object],
        finish: Callable[[S], R],
        key: Any = None,
    ) -> R:
        """``finish`` of the state after ``step`` over every message of ``messages``.

        Args:
            messages: the history, oldest first.
            start / step / finish: the conversion (see the class docstring).
            key: what else the conversion depends on (an option); a change starts again.
        """
        messages = list(messages)
        if not self._lock.acquire(blocking=False):
            state = start()
            for m in messages:
                step(state, m)
            return finish(state)
        try:
            old, state = self._messages, self._state
            n = len(old)
            if state is None or key != self._key or n > len(messages) or not all(map(is_, old, messages)):
                state, n = start(), 0
            self._state = None  # a step that raises leaves no half-folded state behind
            for m in islice(messages, n, None):
                step(state, m)
            self._messages, self._key, self._state = messages, key, state
            return finish(state)
        finally:
            self._lock.release()
