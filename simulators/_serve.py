"""Two ways to run a simulator: an in-process httpx transport and a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import selectors
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl

import httpx

from loopkit.errors import raise_first
from loopkit.script import HARNESS_HEADER

from ._core import SimRequest, SimResponse, Simulator

_TRUNCATED = "peer closed connection without sending complete message body (loopkit simulator: Truncate fault)"


class _SyncChunks(httpx.SyncByteStream):
    def __init__(self, resp: SimResponse, sleep: Callable[[float], None]) -> None:
        self._resp, self._sleep = resp, sleep

    def __iter__(self) -> Iterator[bytes]:
        delays = self._resp.delays
        for i, chunk in enumerate(self._resp.chunks):
            if i in delays:
                self._sleep(delays[i])
            yield chunk
        if self._resp.truncated:
            raise httpx.RemoteProtocolError(_TRUNCATED)


class _AsyncChunks(httpx.AsyncByteStream):
    def __init__(self, resp: SimResponse, asleep: Callable[[float], object]) -> None:
        self._resp, self._asleep = resp, asleep

    async def __aiter__(self) -> AsyncIterator[bytes]:
        delays = self._resp.delays
        for i, chunk in enumerate(self._resp.chunks):
            if i in delays:
                await self._asleep(delays[i])  # type: ignore[misc]
            yield chunk
        if self._resp.truncated:
            raise httpx.RemoteProtocolError(_TRUNCATED)


class SimulatorTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """An httpx transport that answers from a simulator in process: no socket, chunks kept.

    A request that finds the script exhausted raises :class:`~loopkit.errors.ScriptExhausted`
    from the transport (a harness error: loopkit's adapters let it through unwrapped). An official
    SDK wraps a transport's exception into its own connection error and may retry, so the
    simulator remembers every overrun (``simulator.harness_errors``), and :meth:`assert_complete`
    reports them, as :func:`serve` and the ``loopkit_simulator`` fixture do when they close.

    Args:
        simulator: the simulator to answer with.
        sleep / asleep: how scripted delays wait (inject a fake to keep tests instant).
    """

    def __init__(
        self,
        simulator: Simulator,
        *,
        sleep: Callable[[float], None] = time.sleep,
        asleep: Callable[[float], object] = asyncio.sleep,
    ) -> None:
        self.simulator = simulator
        self._sleep, self._asleep = sleep, asleep

    def _sim_request(self, request: httpx.Request, body: bytes) -> SimRequest:
        # what SimRequest.from_url(method, str(url), ...) gives, read from the parsed URL
        path, _, query = request.url.raw_path.decode("ascii").partition("?")
        return SimRequest(
            method=request.method.upper(),
            path=path or "/",
            query=dict(parse_qsl(query, keep_blank_values=True)) if query else {},
            headers={k.decode("latin-1").lower(): v.decode("latin-1") for k, v in request.headers.raw},
            body=body,
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        resp = self.simulator.handle(self._sim_request(request, request.read()))
        if resp.harness_error is not None:
            raise resp.harness_error
        return httpx.Response(resp.status, headers=resp.headers, stream=_SyncChunks(resp, self._sleep), request=request)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        resp = self.simulator.handle(self._sim_request(request, await request.aread()))
        if resp.harness_error is not None:
            raise resp.harness_error
        return httpx.Response(resp.status, headers=resp.headers, stream=_AsyncChunks(resp, self._asleep), request=request)

    @property
    def requests(self) -> list[SimRequest]:
        return self.simulator.requests

    def assert_complete(self) -> None:
        """Raise :class:`~loopkit.errors.IncompleteScript` when turns are unused or requests
        arrived after the script was exhausted (see :meth:`Simulator.assert_complete`)."""
        self.simulator.assert_complete()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes: avoid the 40 ms ACK wait
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet: tests read sim.requests
        pass

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        body = self._read_body()
        host = self.headers.get("host", "127.0.0.1")
        request = SimRequest.from_url(self.command, f"http://{host}{self.path}", dict(self.headers.items()), body)
        resp = self.server.simulator.handle(request)
        self.send_response(resp.status)
        if resp.harness_error is not None:  # loopkit's adapters raise it as itself
            self.send_header(HARNESS_HEADER, str(resp.harness_error).encode("ascii", "replace").decode("ascii"))
        for name, value in resp.headers.items():
            if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(name, value)
        chunked = resp.streaming or resp.truncated or bool(resp.delays)
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        else:
            self.send_header("content-length", str(len(resp.body)))
        self.end_headers()
        sleep = self.server.sleep
        if not chunked:
            self.wfile.write(resp.body)
            self.wfile.flush()
            return
        for i, chunk in enumerate(resp.chunks):
            if i in resp.delays:
                sleep(resp.delays[i])
            if chunk:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
        if resp.truncated:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    do_GET = do_POST = do_PUT = do_DELETE = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, simulator: Simulator, port: int, sleep: Callable[[float], None]) -> None:
        self.simulator = simulator
        self.sleep = sleep
        super().__init__(("127.0.0.1", port), _Handler)

    def handle_error(self, request: object, client_address: object) -> None:
        # a client that hangs up mid-response (a truncation test, an aborted stream) is normal here
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class ServedSimulator:
    """A simulator listening on 127.0.0.1. Use it as a context manager (see :func:`serve`).

    A request that finds the script exhausted gets the provider's 500 error (with the text of
    the :class:`~loopkit.errors.ScriptExhausted` in the ``x-loopkit-harness-error`` header, which
    loopkit's adapters raise as itself, and ``x-should-retry: false``, which keeps the official
    SDKs from retrying it); leaving the ``with`` block raises the first overrun, so a client that
    swallowed the 500 still fails the test.

    Attributes:
        url: ``http://127.0.0.1:<port>``.
        base_url: ``url`` plus the path an official SDK expects as its base URL.
        simulator: the sans-IO simulator (its ``requests`` log, ``assert_complete()``).
    """

    def __init__(self, simulator: Simulator, *, port: int = 0, sleep: Callable[[float], None] = time.sleep) -> None:
        self.simulator = simulator
        self._server = _Server(simulator, port, sleep)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.base_url = self.url + simulator.base_path
        self._server.timeout = 0.05  # bounds handle_request's own wait, should a ready listener have nothing to accept
        self._wake_r, self._wake_w = socket.socketpair()
        self._thread = threading.Thread(target=self._accept_until_stopped, name=f"loopkit-sim-{simulator.protocol}", daemon=True)

    @property
    def requests(self) -> list[SimRequest]:
        return self.simulator.requests

    def assert_complete(self) -> None:
        self.simulator.assert_complete()

    def start(self) -> ServedSimulator:
        self._thread.start()
        return self

    def _accept_until_stopped(self) -> None:
        # not serve_forever: it notices shutdown() only at its next poll, and a served simulator
        # per test (or per conformance case) would wait that out each time; the wake-up socket
        # ends the wait at once
        with selectors.DefaultSelector() as selector:
            selector.register(self._server, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            while True:
                for key, _ in selector.select():
                    if key.fileobj is self._wake_r:
                        return
                    self._server.handle_request()

    def stop(self) -> None:
        """Stop listening (again: nothing happens)."""
        if self._wake_w.fileno() == -1:
            return
        self._wake_w.send(b"\0")
        if self._thread.ident is not None:
            self._thread.join(timeout=5)
        self._server.server_close()
        self._wake_r.close()
        self._wake_w.close()

    def __enter__(self) -> ServedSimulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        raise_first(self.simulator.harness_errors, exc[1])  # type: ignore[arg-type]
