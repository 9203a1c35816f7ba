"""A recording reverse proxy on 127.0.0.1, for clients in any language (``loopkit record``).

Each request is forwarded to the upstream through a :class:`CassetteTransport`, so the cassette's
record mode applies (``all`` by default: everything is recorded anew). The response streams back
to the client chunk by chunk as it arrives (chunked transfer encoding), and the cassette is saved
atomically after every interaction, so stopping the proxy at any moment leaves a whole file.
"""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from ..errors import LoopkitError
from ._cassette import Cassette
from ._transport import CassetteTransport

_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "host", "proxy-connection", "upgrade", "te", "trailer"})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _ProxyServer

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        # The request line as the cassette stores it: secret query parameters and keys scrubbed.
        url = self.server.cassette.scrubber.url(self.path)
        self.log_message("%s %s -> %s", self.command, url, code)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.log is not None:
            self.server.log(self.server.clean(format % args))

    def _forward(self) -> None:
        proxy = self.server
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in _HOP]
        url = proxy.upstream.rstrip("/") + self.path
        try:
            with proxy.client.stream(self.command, url, content=body, headers=headers) as response:
                self.send_response(response.status_code)
                for k, v in response.headers.multi_items():
                    if k.lower() not in _HOP and k.lower() != "content-encoding":
                        self.send_header(k, v)
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for chunk in response.iter_raw():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
        except (LoopkitError, httpx.HTTPError) as exc:
            message = proxy.clean(f"loopkit record: {type(exc).__name__}: {exc}").encode()
            self.send_response(502)
            self.send_header("content-type", "text/plain; charset=utf-8")
            self.send_header("content-length", str(len(message)))
            self.end_headers()
            self.wfile.write(message)
        finally:
            proxy.save()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], upstream: str, cassette: Cassette, client: httpx.Client, log: Any) -> None:
        super().__init__(address, _Handler)
        self.upstream, self.cassette, self.client, self.log = upstream, cassette, client, log
        self._save_lock = threading.Lock()

        self.save_error: str | None = None

    def clean(self, text: str) -> str:
        """``text`` with every secret the cassette's scrubber knows replaced."""
        from ._secrets import redact

        return redact(text, self.cassette.scrubber.matcher().find(text))

    def save(self) -> None:
        with self._save_lock:
            if self.cassette.recorded:
                try:
                    self.cassette.save()
                    self.save_error = None
                except (LoopkitError, OSError) as exc:
                    self.save_error = self.clean(str(exc))
                    if self.log is not None:
                        self.log(f"error: the cassette was not saved: {self.save_error}")

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that closes its keep-alive connection is not an error worth a traceback.
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, TimeoutError)):
            return
        if self.log is not None:
            self.log(self.clean(f"error: {type(exc).__name__}: {exc}"))


class RecordingProxy:
    """Forward ``http://127.0.0.1:PORT/...`` to ``upstream`` and record every exchange.

    Args:
        upstream: base URL of the real service (or a simulator).
        cassette: the cassette to record into (its path is where it is saved).
        port: the port to listen on (0: a free one).
        transport: the transport that reaches the upstream (default ``httpx.HTTPTransport()``).
        log: a callable for one line per request, or None for quiet.
    """

    def __init__(self, upstream: str, cassette: Cassette, *, port: int = 0, transport: httpx.BaseTransport | None = None, log: Any = None) -> None:
        self.cassette = cassette
        client = httpx.Client(transport=CassetteTransport(cassette, transport or httpx.HTTPTransport()), timeout=None)
        self._server = _ProxyServer(("127.0.0.1", port), upstream, cassette, client, log)
        self._thread: threading.Thread | None = None

    @property
    def save_error(self) -> str | None:
        """Why the last save failed (secrets refused, a disk error), or None."""
        return self._server.save_error

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def serve_forever(self) -> None:
        """Serve until interrupted (the CLI)."""
        try:
            self._server.serve_forever()
        finally:
            self._server.server_close()
            self._server.save()

    def start(self) -> RecordingProxy:
        """Serve in a background thread (tests)."""
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server.client.close()
        self._server.save()

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
