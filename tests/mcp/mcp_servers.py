"""Where the test MCP servers live and how to start them (imported by conftest.py and the tests)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
