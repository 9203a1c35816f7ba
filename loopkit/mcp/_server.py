"""Where an MCP server is (a command to run over stdio, or a streamable-HTTP URL) and the errors
of talking to one."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import LoopkitError, UsageError


class MCPServerError(LoopkitError):
    """An MCP server could not be reached, or did not answer as the protocol asks."""


class MCPConnectError(MCPServerError):
    """The server could not be started or connected to (the message says why, with the tail of
    its standard error for a stdio server)."""


class MCPProtocolError(MCPServerError):
    """The server answered with a JSON-RPC error (``code``, ``message``, ``data``), or with a
    result that is not a valid ``CallToolResult`` (``code`` None)."""

    def __init__(self, message: str, *, code: int | None, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class MCPTimeout(MCPServerError, TimeoutError):
    """No answer within the per-call time limit."""


class MCPServerClosed(MCPServerError):
    """The connection closed while a call was waiting: the server process exited (or the HTTP
    server went away). ``stderr`` holds the end of a stdio server's standard error."""

    def __init__(self, message: str, *, stderr: str = "") -> None:
        super().__init__(message)
        self.stderr = stderr


@dataclass(frozen=True, slots=True)
class MCPServer:
    """How to reach one MCP server. Build one with :meth:`stdio` or :meth:`http`.

    Attributes:
        command: the program and its arguments, for a server spoken to over stdio.
        url: the endpoint of a streamable-HTTP server (``http://127.0.0.1:8000/mcp``).
        env: variables added to this process's environment for a stdio server.
        cwd: the working directory of a stdio server.
    """

    command: tuple[str, ...] = ()
    url: str | None = None
    env: Mapping[str, str] | None = field(default=None, compare=False)
    cwd: str | None = None

    def __post_init__(self) -> None:
        if bool(self.command) == bool(self.url):
            raise UsageError("an MCP server is either a command (MCPServer.stdio) or a URL (MCPServer.http), not both or neither")
        if self.url is not None and not (isinstance(self.url, str) and self.url.startswith(("http://", "https://"))):
            raise UsageError(f"MCP server URL {self.url!r} must start with http:// or https://")
        if self.command and not all(isinstance(p, str) and p for p in self.command):
            raise UsageError(f"MCP server command {list(self.command)!r} must be non-empty strings")

    @classmethod
    def stdio(cls, command: str | Sequence[str], *args: str, env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None) -> MCPServer:
        """A server started as ``command args...`` and spoken to over its stdin and stdout. A single
        string with spaces is split like a shell would (``"python server.py"``). The server
        inherits this process's environment, plus ``env``."""
        if isinstance(command, str):
            parts = tuple(shlex.split(command)) if not args else (command,)
        else:
            parts = tuple(command)
        parts += tuple(args)
        if not parts:
            raise UsageError("MCPServer.stdio needs a command")
        return cls(command=parts, env=dict(env) if env is not None else None, cwd=os.fspath(cwd) if cwd is not None else None)

    @classmethod
    def http(cls, url: str) -> MCPServer:
        """A server already listening on a streamable-HTTP endpoint."""
        return cls(url=url)

    @property
    def transport(self) -> str:
        """``"stdio"`` or ``"http"``."""
        return "stdio" if self.command else "http"

    @property
    def label(self) -> str:
        """The command line or the URL, for messages."""
        return shlex.join(self.command) if self.command else str(self.url)

    def __str__(self) -> str:
        return self.label


def as_server(server: Any) -> MCPServer:
    """An :class:`MCPServer` from itself, a URL, or a command (a list, or a string to split)."""
    if isinstance(server, MCPServer):
        return server
    if isinstance(server, str):
        return MCPServer.http(server) if server.startswith(("http://", "https://")) else MCPServer.stdio(server)
    if isinstance(server, Sequence) and server and all(isinstance(p, str) for p in server):
        return MCPServer.stdio(list(server))
    raise UsageError(f"expected an MCPServer, a URL or a command list, got {type(server).__name__} {server!r}")
