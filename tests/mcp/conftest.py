"""Test MCP servers, started once per test session: over stdio as real subprocesses (through
:class:`loopkit.mcp.MCPSession`), and over streamable HTTP on 127.0.0.1 (a free port) from a
thread of the test process (stopped at the end, when any test that used it has closed its
sessions). Under pytest-xdist the MCP tests all run on one worker, so each server starts once."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

if importlib.util.find_spec("mcp") is None:  # not importorskip: importing the SDK costs a second of CPU on every worker
    pytest.skip("the MCP SDK is not installed (pip install 'loopkit[mcp]')", allow_module_level=True)

from mcp_servers import START_TIMEOUT, serve_http_in_thread, stdio_server

from loopkit.mcp import MCPSession


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """One xdist group (``--dist loadgroup``): the servers below start once, not once per worker.
    First among the hooks: xdist reads the group marks in its own, and a mark added after that
    is ignored (tests/mcp/test_mcp_tools.py checks the group holds)."""
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
    """The correct server's streamable-HTTP endpoint, served from a thread of this process."""
    with serve_http_in_thread("correct") as url:
        yield url


@pytest.fixture(scope="session")
def planted_url() -> Iterator[str]:
    """The planted server's streamable-HTTP endpoint, served from a thread of this process (its
    ``crash`` tool raises there instead of ending the process: fuzz it over :func:`serve_http`)."""
    with serve_http_in_thread("planted") as url:
        yield url
