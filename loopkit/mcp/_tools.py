"""An MCP server's tool as a loopkit :class:`~loopkit.tools.Tool`: the schema is the tool's
``inputSchema``, the execution is ``tools/call``."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from ..tools import Tool
from ._results import to_tool_result

_NOT_IN_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def loopkit_name(name: str) -> str:
    """A name every provider accepts: MCP allows ``.`` (and older servers anything) in a tool
    name, which become ``_``; the call still uses the server's own name."""
    return _NOT_IN_NAME.sub("_", name)[:64] or "tool"


def sync_tool(spec: Any, call: Callable[[str, dict[str, Any]], Any], *, source: str = "mcp", name: str | None = None, description: str | None = None) -> Tool:
    """A tool whose execution blocks on ``call(name, arguments)`` (a sync session's)."""
    server_name, output_schema = spec.name, spec.output_schema

    def execute(args: dict[str, Any], /) -> Any:
        return to_tool_result(call(server_name, args), output_schema=output_schema, tool_name=server_name)

    return _tool(spec, execute, source, name, description)


def async_tool(spec: Any, call: Callable[[str, dict[str, Any]], Awaitable[Any]], *, source: str = "mcp", name: str | None = None, description: str | None = None) -> Tool:
    """A tool whose execution awaits ``call(name, arguments)`` (an async session's; await it on
    the event loop that opened the session, as :func:`loopkit.arun` does)."""
    server_name, output_schema = spec.name, spec.output_schema

    async def execute(args: dict[str, Any], /) -> Any:
        return to_tool_result(await call(server_name, args), output_schema=output_schema, tool_name=server_name)

    return _tool(spec, execute, source, name, description)


def _tool(spec: Any, execute: Callable[..., Any], source: str, name: str | None, description: str | None) -> Tool:
    return Tool(
        name=name or loopkit_name(spec.name),
        execute=execute,
        description=description if description is not None else spec.description or spec.title or "",
        parameters=spec.input_schema,
        source=source,
    )
