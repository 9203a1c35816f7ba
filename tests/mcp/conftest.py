"""Test MCP servers, started once per test session as real subprocesses: over stdio (through
:class:`loopkit.mcp.MCPSession`) and over streamable HTTP on 127.0.0.1 (a free port; the process
is stopped at the end, and any test that used it has closed its sessions by then)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'loopkit[mcp]')")

from mcp_servers import SERVERS, START_TIMEOUT, stdio_server

from loopkit.mcp import MCPSession


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve_http(name: str) -> Iterator[str]:
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


@pytest.fixture(scope="session")
def planted() -> Iterator[MCPSession]:
    """The server with one planted bug per tool, over stdio."""
    with MCPSession(stdio_server("planted"), timeout=5.0, connect_timeout=START_TIMEOUT) as session:
        yield session


@pytest.fixture(scope="session")
def correct() -> Iterator[MCPSession]:
    """The correct server, over stdio."""
    with MCPSession(stdio_server("correct"), connect_timeout=START_TIMEOUT) as session:
        yield session


@pytest.fixture(scope="session")
def correct_url() -> Iterator[str]:
    """The correct server's streamable-HTTP endpoint."""
    yield from _serve_http("correct")


@pytest.fixture(scope="session")
def planted_url() -> Iterator[str]:
    """The planted server's streamable-HTTP endpoint."""
    yield from _serve_http("planted")
