"""Where the test MCP servers live and how to start them (imported by conftest.py and the tests)."""

from __future__ import annotations

import sys
from pathlib import Path

from loopkit.mcp import MCPServer

SERVERS = Path(__file__).resolve().parent / "servers"
START_TIMEOUT = 120.0  # a loaded 2-core machine can take many seconds to import the SDK


def stdio_server(name: str) -> MCPServer:
    """The test server ``servers/<name>.py``, run by this Python over stdio."""
    return MCPServer.stdio(sys.executable, str(SERVERS / f"{name}.py"))
