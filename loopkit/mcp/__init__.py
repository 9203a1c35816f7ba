"""MCP servers as loopkit tools, and ``loopkit fuzz`` for a whole MCP server.

Connect to a server with the official ``mcp`` SDK (``pip install 'loopkit[mcp]'``), over stdio
(a command) or streamable HTTP (a URL); its tools become loopkit :class:`~loopkit.tools.Tool`
objects whose schema is the server's ``inputSchema`` and whose execution is ``tools/call``::

    from loopkit.mcp import MCPServer, MCPSession

    with MCPSession(MCPServer.stdio("python", "server.py")) as session:
        result = loopkit.run(provider, "Go.", tools=session.tools())

:func:`fuzz_server` (``loopkit fuzz --mcp -- COMMAND...``) fuzzes every tool the server lists, or
the ones named. Tool calls have side effects: name the tools that may be called.

Nothing here imports the SDK until a session opens.
"""

from __future__ import annotations

from typing import Any

from ._server import (
    MCPConnectError,
    MCPProtocolError,
    MCPServer,
    MCPServerClosed,
    MCPServerError,
    MCPTimeout,
)
from ._session import AsyncMCPSession, MCPSession, close_shared_sessions, shared_session

__all__ = [
    "AsyncMCPSession",
    "MCPConnectError",
    "MCPProtocolError",
    "MCPServer",
    "MCPServerClosed",
    "MCPServerError",
    "MCPSession",
    "MCPTimeout",
    "ServerFuzzReport",
    "close_shared_sessions",
    "fuzz_server",
    "shared_session",
]


def __getattr__(name: str) -> Any:
    # the fuzz driver imports hypothesis: load it only when asked for
    if name in ("fuzz_server", "ServerFuzzReport", "MCP_KINDS"):
        from . import fuzz

        return getattr(fuzz, name)
    raise AttributeError(f"module 'loopkit.mcp' has no attribute {name!r}")
