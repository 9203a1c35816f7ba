"""Where the test MCP servers live and how to start them (imported by conftest.py and the tests)."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from loopkit.mcp import MCPServer

SERVERS = Path(__file__).resolve().parent / "servers"
START_TIMEOUT = 120.0  # a loaded 2-core machine can take many seconds to import the SDK


def stdio_server(name: str) -> MCPServer:
    """The test server ``servers/<name>.py``, run by this Python over stdio."""
    return MCPServer.stdio(sys.executable, str(SERVERS / f"{name}.py"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_http(name: str) -> Iterator[str]:
    """Run ``servers/<name>.py --http PORT`` on a free port of 127.0.0.1; yields its URL, stops it."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(SERVERS / f"{name}.py"), "--http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{name}.py --http exited with {proc.returncode}: {proc.stderr.read().decode(errors='replace')}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name}.py --http did not listen on port {port} within {START_TIMEOUT} s") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def _load(name: str) -> Any:
    """``servers/<name>.py`` imported as a module (not run as a script)."""
    spec = importlib.util.spec_from_file_location(f"loopkit_test_mcp_server_{name}", SERVERS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def serve_http_in_thread(name: str) -> Iterator[str]:
    """Serve ``servers/<name>.py``'s app over streamable HTTP from a thread of this process, on a
    free port of 127.0.0.1; yields its URL, stops it. The transport is the same as
    :func:`serve_http`'s (uvicorn, a real socket), without a process start: the SDK this process
    has already imported would be imported again, a second or two of CPU. For a server that must
    be able to die (a crash), use :func:`serve_http`."""
    import uvicorn

    app = _load(name).http_app()
    up = threading.Event()

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            up.set()

    def run() -> None:
        try:
            server.run(sockets=[sock])
        finally:
            up.set()  # a server that failed to start does not keep the caller waiting

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5))
    thread = threading.Thread(target=run, name=f"mcp-{name}-http", daemon=True)
    thread.start()
    try:
        if not up.wait(START_TIMEOUT) or not server.started:
            raise RuntimeError(f"{name}.py's HTTP app did not start on port {port} (see the log above)")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
