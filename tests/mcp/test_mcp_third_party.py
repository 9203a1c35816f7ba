"""A widely used third-party server from PyPI, fuzzed: ``mcp-server-time`` (the reference time
server, offline). What it finds is reported in docs/mcp.md.

In the ``slow`` set, with the third-party agent frameworks: it runs the whole default budget (400
calls) against another project's server, whose answers change with that project, not with
loopkit; the planted servers (tests/mcp/servers/) check the fuzzer itself in the everyday run."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator

import pytest
from mcp_servers import START_TIMEOUT

from loopkit.mcp import MCPServer, MCPSession
from loopkit.mcp.fuzz import fuzz_server

if importlib.util.find_spec("mcp_server_time") is None:  # (the server runs in its own process: no import here)
    pytest.skip("mcp-server-time is not installed", allow_module_level=True)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def time_server() -> Iterator[MCPSession]:
    server = MCPServer.stdio(sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC")
    with MCPSession(server, connect_timeout=START_TIMEOUT) as session:
        yield session


def test_mcp_server_time_rejects_strings_its_schema_allows(time_server: MCPSession) -> None:
    report = fuzz_server(time_server, seed=1)
    assert [r.target for r in report.reports] == ["get_current_time", "convert_time"]
    assert [r.examples for r in report.reports] == [200, 200]
    found = {(tool, f.kind): f for tool, f in report.findings}
    # Every argument is declared a plain string, but only IANA zone names and HH:MM pass: the
    # shrunk example is the empty string, answered with a misleading "Missing required argument".
    assert set(found) == {("get_current_time", "valid_rejected"), ("convert_time", "valid_rejected")}
    assert found["get_current_time", "valid_rejected"].example.arguments == {"timezone": ""}
    assert "Missing required argument: timezone" in found["get_current_time", "valid_rejected"].message
    assert report.restarts == 0  # no crash, no hang, no protocol error, outputs match their schemas
