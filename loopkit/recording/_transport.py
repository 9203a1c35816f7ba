"""httpx transports that record to and replay from a :class:`Cassette`, chunk for chunk.

:class:`RecordingTransport` wraps any httpx transport: each body chunk goes to the caller the
moment it arrives (the caller sees the stream live) and is recorded with its time offset from an
injected clock. :class:`ReplayTransport` answers from the cassette alone (nothing reaches the
network), one recorded chunk per iteration step, with the recorded delays scaled by ``timing``
(0 by default: no waiting). :class:`CassetteTransport` does either per request, as the cassette's
record mode says. All three work for ``httpx`` and for ``httpx2`` (the fork the official SDKs send
through): pass ``httpx_module=httpx2`` or an ``httpx2`` inner transport.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from types import ModuleType
from typing import Any

import httpx

from ._bodies import chunk_bytes, header, request_body_fields, response_chunks
from ._calls import CURRENT_CALL
from ._cassette import Cassette
from ._format import Interaction, RecordedRequest, RecordedResponse

Clock = Callable[[], float]
Sleep = Callable[[float], None]
AsyncSleep = Callable[[float], Awaitable[None]]

_HOP_HEADERS = ("content-length", "transfer-encoding")


def _stream_classes(mod: ModuleType) -> tuple[type, type]:
    cached = _CLASSES.get(mod.__name__)
    if cached is not None:
        return cached

    class ReplayStream(mod.SyncByteStream, mod.AsyncByteStream):  # type: ignore[name-defined,misc]
        """Recorded chunks, one per step, with scaled delays; then the recorded failure, if any."""

        def __init__(self, chunks: list[bytes], offsets: list[float], timing: float, sleep: Sleep, async_sleep: AsyncSleep, failure: BaseException | None) -> None:
            self._chunks, self._offsets, self._timing = chunks, offsets, timing
            self._sleep, self._async_sleep, self._failure = sleep, async_sleep, failure

        def _delays(self) -> list[float]:
            prev, out = 0.0, []
            for t in self._offsets:
                out.append(max(0.0, t - prev) * self._timing)
                prev = t
            return out

        def __iter__(self) -> Iterator[bytes]:
            if self._timing:
                for delay, chunk in zip(self._delays(), self._chunks):
                    if delay:
                        self._sleep(delay)
                    yield chunk
            else:
                yield from self._chunks
            if self._failure is not None:
                raise self._failure

        async def __aiter__(self) -> AsyncIterator[bytes]:
            delays = self._delays() if self._timing else None
            for i, chunk in enumerate(self._chunks):
                if delays and delays[i]:
                    await self._async_sleep(delays[i])
                yield chunk
            if self._failure is not None:
                raise self._failure

    class RecordingStream(mod.SyncByteStream, mod.AsyncByteStream):  # type: ignore[name-defined,misc]
        """Passes each chunk through as it arrives and records it; commits on close."""

        def __init__(self, inner: Any, clock: Clock, start: float, commit: Callable[[list[tuple[float, bytes]], BaseException | None], None]) -> None:
            self._inner, self._clock, self._start, self._commit = inner, clock, start, commit
            self._pieces: list[tuple[float, bytes]] = []
            self._failure: BaseException | None = None
            self._done = False

        def __iter__(self) -> Iterator[bytes]:
            try:
                for chunk in self._inner:
                    if chunk:
                        self._pieces.append((round(self._clock() - self._start, 6), bytes(chunk)))
                    yield chunk
            except Exception as exc:
                self._failure = exc
                raise

        async def __aiter__(self) -> AsyncIterator[bytes]:
            try:
                async for chunk in self._inner:
                    if chunk:
                        self._pieces.append((round(self._clock() - self._start, 6), bytes(chunk)))
                    yield chunk
            except Exception as exc:
                self._failure = exc
                raise

        def _finish(self) -> None:
            if not self._done:
                self._done = True
                self._commit(self._pieces, self._failure)

        def close(self) -> None:
            try:
                close = getattr(self._inner, "close", None)
                if close is not None:
                    close()
            finally:
                self._finish()

        async def aclose(self) -> None:
            try:
                aclose = getattr(self._inner, "aclose", None)
                if aclose is not None:
                    await aclose()
            finally:
                self._finish()

    _CLASSES[mod.__name__] = (ReplayStream, RecordingStream)
    return ReplayStream, RecordingStream


_CLASSES: dict[str, tuple[type, type]] = {}


def _module_of(inner: Any) -> ModuleType:
    import importlib

    root = type(inner).__module__.split(".", 1)[0]
    return importlib.import_module(root) if root in ("httpx", "httpx2") else httpx


class CassetteTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Replay from ``cassette`` where it has an answer, record through ``inner`` where its record
    mode allows; otherwise raise :class:`~loopkit.errors.NoMatchingInteraction` (a harness error:
    loopkit's adapters let it through as itself). The cassette remembers every miss
    (``cassette.harness_errors``) and :func:`~loopkit.recording.use_cassette` and the pytest
    fixture raise the first one when they close, for clients that swallow a transport's exception.

    Args:
        cassette: the cassette in use.
        inner: the transport that reaches the real server when recording (sync or async; None
            makes an ``HTTPTransport`` of the httpx module on first need).
        timing: multiplier of the recorded delays on replay: 0 (no waiting), 1 (as recorded), N.
        clock: seconds, for recording offsets (injected; ``time.monotonic`` by default).
        sleep: the sync sleep used on replay when ``timing`` is not 0.
        async_sleep: the async sleep used on replay when ``timing`` is not 0.
        httpx_module: ``httpx`` or ``httpx2``; by default that of ``inner``, else ``httpx``.
    """

    _replay_only = False
    _record_only = False

    def __init__(
        self,
        cassette: Cassette,
        inner: Any = None,
        *,
        timing: float = 0.0,
        clock: Clock = time.monotonic,
        sleep: Sleep = time.sleep,
        async_sleep: AsyncSleep = asyncio.sleep,
        httpx_module: ModuleType | None = None,
    ) -> None:
        if timing < 0:
            from ..errors import UsageError

            raise UsageError(f"timing must be 0 or more; got {timing}")
        self.cassette = cassette
        self.inner = inner
        self.timing = timing
        self.clock = clock
        self.sleep = sleep
        self.async_sleep = async_sleep
        self.mod = httpx_module or (_module_of(inner) if inner is not None else httpx)
        self._replay_cls, self._record_cls = _stream_classes(self.mod)
        self._bytes: dict[int, tuple[list[bytes], list[float], list[tuple[str, str]]]] = {}

    # --- replay -------------------------------------------------------------------------------

    def _lookup(self, request: Any, content: bytes) -> Interaction | None:
        if self._record_only or not self.cassette.replays:
            return None
        inter = self.cassette.play(request.method, str(request.url), content)
        if inter is None and self._replay_only:
            raise self.cassette.miss(request.method, str(request.url), content)
        return inter

    def _replay(self, inter: Interaction, request: Any) -> Any:
        resp = inter.response
        assert resp is not None
        cached = self._bytes.get(id(inter))
        if cached is None:
            chunks = chunk_bytes(resp, where=f"{self.cassette.name}: response")
            size = sum(len(c) for c in chunks)
            headers = [(k, v) for k, v in resp.headers if k.lower() not in _HOP_HEADERS]
            if header(resp.headers, "content-length") == str(size):
                headers.append(("content-length", str(size)))
            cached = (chunks, [c.t for c in resp.chunks], headers)
            self._bytes[id(inter)] = cached
        chunks, offsets, headers = cached
        failure = None
        if resp.failure is not None:
            cls = getattr(self.mod, resp.failure.type, None)
            if not (isinstance(cls, type) and issubclass(cls, Exception)):
                cls = self.mod.RemoteProtocolError
            failure = cls(resp.failure.message)
        stream = self._replay_cls(chunks, offsets, self.timing, self.sleep, self.async_sleep, failure)
        return self.mod.Response(resp.status, headers=headers, stream=stream, request=request)

    # --- record -------------------------------------------------------------------------------

    def _prepare_record(self, request: Any, content: bytes) -> tuple[RecordedRequest, float]:
        recorded = RecordedRequest(
            method=request.method,
            url=str(request.url),
            headers=[(k.lower(), v) for k, v in request.headers.multi_items()],
            **request_body_fields(content),
        )
        # A compressed body would be stored as unreadable base64; ask the server for plain bytes.
        request.headers["accept-encoding"] = "identity"
        return recorded, self.clock()

    def _wrap(self, request: Any, response: Any, recorded: RecordedRequest, start: float) -> Any:
        status = response.status_code
        headers = [(k.lower(), v) for k, v in response.headers.multi_items()]
        cassette = self.cassette
        call = CURRENT_CALL.get()
        slot = call.request_started() if call is not None else None

        def commit(pieces: list[tuple[float, bytes]], failure: BaseException | None) -> None:
            chunks, codec, tail = response_chunks(pieces, header(headers, "content-type"))
            data: dict[str, Any] = {"status": status, "headers": headers, "chunks": chunks}
            if codec is not None:
                data["codec"] = codec
            if tail is not None:
                data["tail_base64"] = tail
            if failure is not None:
                data["failure"] = {"type": type(failure).__name__, "message": str(failure)}
            interaction = Interaction(request=recorded, response=RecordedResponse.model_validate(data))
            cassette.add(interaction)
            if call is not None and slot is not None:
                call.request_finished(slot, interaction)

        stream = self._record_cls(response.stream, self.clock, start, commit)
        if type(response) is not self.mod.Response or hasattr(response, "_content") or response.is_stream_consumed or response.is_closed:
            # a response of the other httpx module (an httpx inner transport under an httpx2
            # client), or one whose body the inner transport already read (a handler's
            # Response(content=...): httpx would answer from that copy and never iterate the
            # stream): a new response of the client's module around the recording stream
            return self.mod.Response(status, headers=response.headers, stream=stream, extensions=response.extensions, request=request)
        response.stream = stream  # the inner response itself, unread: no second Response to build
        response.request = request
        return response

    def _inner(self) -> Any:
        if self.inner is None:
            self.inner = self.mod.HTTPTransport()
        return self.inner

    def _ainner(self) -> Any:
        if self.inner is None:
            self.inner = self.mod.AsyncHTTPTransport()
        return self.inner

    # --- httpx entry points -------------------------------------------------------------------

    def handle_request(self, request: Any) -> Any:
        content = request.read()
        inter = self._lookup(request, content)
        if inter is not None:
            return self._replay(inter, request)
        recorded, start = self._prepare_record(request, content)
        response = self._inner().handle_request(request)
        return self._wrap(request, response, recorded, start)

    async def handle_async_request(self, request: Any) -> Any:
        content = await request.aread()
        inter = self._lookup(request, content)
        if inter is not None:
            return self._replay(inter, request)
        recorded, start = self._prepare_record(request, content)
        response = await self._ainner().handle_async_request(request)
        return self._wrap(request, response, recorded, start)

    def close(self) -> None:
        if self.inner is not None and hasattr(self.inner, "close"):
            self.inner.close()

    async def aclose(self) -> None:
        if self.inner is not None and hasattr(self.inner, "aclose"):
            await self.inner.aclose()


class ReplayTransport(CassetteTransport):
    """Answer only from the cassette; never reach the network, whatever the record mode.

    Args:
        cassette: the cassette to replay.
        timing: multiplier of the recorded delays (0: none, 1: as recorded).
        sleep / async_sleep: injected sleeps used when ``timing`` is not 0.
        httpx_module: ``httpx`` (default) or ``httpx2``.
    """

    _replay_only = True

    def __init__(self, cassette: Cassette, *, timing: float = 0.0, sleep: Sleep = time.sleep, async_sleep: AsyncSleep = asyncio.sleep, httpx_module: ModuleType | None = None) -> None:
        super().__init__(cassette, None, timing=timing, sleep=sleep, async_sleep=async_sleep, httpx_module=httpx_module)

    def _lookup(self, request: Any, content: bytes) -> Interaction | None:
        inter = self.cassette.play(request.method, str(request.url), content)
        if inter is None or inter.response is None:
            raise self.cassette.miss(request.method, str(request.url), content)
        return inter


class RecordingTransport(CassetteTransport):
    """Send every request through ``inner`` and record it into ``cassette`` (never replays).

    Args:
        inner: the transport that reaches the server (httpx or httpx2, sync or async).
        cassette: where interactions are added (save it when done).
        clock: seconds, for the chunks' time offsets.
    """

    _record_only = True

    def __init__(self, inner: Any, cassette: Cassette, *, clock: Clock = time.monotonic, httpx_module: ModuleType | None = None) -> None:
        super().__init__(cassette, inner, clock=clock, httpx_module=httpx_module)
