"""A correct MCP server for loopkit's tests, written with the SDK's MCPServer (FastMCP).

Strict types, so that a value of the wrong type is rejected instead of converted (pydantic's
default would turn ``true`` into ``1``), and bounds declared in the schema are the ones checked.
An integer-valued float (``2.0``) is an integer to JSON Schema, so the integers take it.
Run: ``python correct.py`` (stdio) or ``python correct.py --http PORT`` (streamable HTTP on
127.0.0.1).
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BeforeValidator, Field, StrictInt, StrictStr


def _integral(value: object) -> object:
    return int(value) if isinstance(value, float) and value.is_integer() else value


Integer = Annotated[StrictInt, BeforeValidator(_integral)]


def bounded(low: int, high: int) -> object:
    """An integer in [low, high], published as JSON Schema's minimum and maximum."""
    return Annotated[StrictInt, Field(ge=low, le=high), BeforeValidator(_integral)]

app = MCPServer("loopkit-correct")


@app.tool()
def add(a: Integer, b: Integer) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def repeat(text: Annotated[StrictStr, Field(max_length=20)], times: bounded(1, 3) = 1) -> str:
    """Repeat a short text one to three times."""
    return text * times


@app.tool()
def paint(color: Literal["red", "green", "blue"], shade: bounded(0, 100)) -> dict[str, str | int]:
    """Describe a colour at a shade."""
    return {"color": color, "shade": shade}


def http_app() -> object:
    """The streamable-HTTP app (an ASGI app) that ``--http`` serves."""
    return app.streamable_http_app()


if __name__ == "__main__":
    if "--http" in sys.argv:
        import uvicorn

        uvicorn.run(http_app(), host="127.0.0.1", port=int(sys.argv[sys.argv.index("--http") + 1]), log_level="warning")
    else:
        app.run()
    # served (stdin closed, or stopped by a signal): skip the interpreter's clean-up of the SDK's
    # modules, half a second of CPU that the client waits out on every close
    sys.stdout.flush()
    os._exit(0)
