"""Test MCP servers, started once per test session as real subprocesses: over stdio (through
:class:`loopkit.mcp.MCPSession`) and over streamable HTTP on 127.0.0.1 (a free port; the process
is stopped at the end, and any test that used it has closed its sessions by then). Under
pytest-xdist the MCP tests all run on one worker, so each server starts once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'loopkit[mcp]')")

from mcp_servers import START_TIMEOUT, serve_http, stdio_server

from loopkit.mcp import MCPSession


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """One xdist group (``--dist loadgroup``): the servers below start once, not once per worker."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.xdist_group("mcp"))


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
    with serve_http("correct") as url:
        yield url


@pytest.fixture(scope="session")
def planted_url() -> Iterator[str]:
    """The planted server's streamable-HTTP endpoint."""
    with serve_http("planted") as url:
        yield url
