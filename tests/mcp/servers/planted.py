"""An MCP server with one planted bug per tool, for loopkit's tests (the SDK's low-level Server,
which leaves validation to the tools, as many servers do).

Each tool checks its arguments against its own ``inputSchema`` with jsonschema, as a correct
server would, except for the one mistake its name says:

``bounds``       checks types but not the declared minimum/maximum       -> invalid_accepted
``blank``        rejects a blank name the schema allows                  -> valid_rejected
``strict``       answers invalid arguments with a JSON-RPC error         -> protocol_error
``vague``        says only "Invalid input." for invalid arguments        -> unhelpful_error
``square``       returns the square as a string for negative numbers     -> output_mismatch
``crash``        the process dies on a text longer than 18 characters    -> server_crash
``stall``        never answers for a text with a line break or a tab      -> server_hang
``ok``           no bug

Run: ``python planted.py`` (stdio) or ``python planted.py --http PORT`` (streamable HTTP).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from jsonschema import Draft202012Validator
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

INT = {"type": "integer"}
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
TOOLS: dict[str, dict[str, Any]] = {
    "bounds": {"type": "object", "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 10}}, "required": ["count"]},
    "blank": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    "strict": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
    "vague": {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}, "required": ["code"]},
    "square": {"type": "object", "properties": {"n": INT}, "required": ["n"]},
    "crash": TEXT,
    "stall": TEXT,
    "ok": {"type": "object", "properties": {"n": INT, "label": {"type": "string", "maxLength": 8}}, "required": ["n"]},
}
# a few of the default 200 examples are this long: each crash costs a server start (the SDK's
# imports, about a second of CPU), and every one after the first checks only what the first did
CRASH_LENGTH = 18
OUTPUT = {"square": {"type": "object", "properties": {"square": INT}, "required": ["square"]}}


def problems(name: str, args: dict[str, Any]) -> list[str]:
    """What is wrong with ``args``, naming the property at fault ('' when all is well)."""
    out = []
    for error in Draft202012Validator(TOOLS[name]).iter_errors(args):
        where = "/".join(map(str, error.absolute_path)) or "arguments"
        out.append(f"{where}: {error.message}")
    return out


def done(value: Any, structured: Any = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(value))], structured_content=structured)


def failed(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(name=name, description=f"planted: {name}", input_schema=schema, output_schema=OUTPUT.get(name))
            for name, schema in TOOLS.items()
        ]
    )


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    name, args = params.name, dict(params.arguments or {})
    if name not in TOOLS:
        raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}")
    wrong = problems(name, args)
    if name == "bounds":
        wrong = [w for w in wrong if "less than the minimum" not in w and "greater than the maximum" not in w]
    if name == "strict" and wrong:
        raise MCPError(types.INVALID_PARAMS, "Invalid params: " + "; ".join(wrong))
    if name == "vague" and wrong:
        return failed("Invalid input.")
    if wrong:
        return failed(f"Invalid arguments for {name}: " + "; ".join(wrong))
    if name == "blank":
        if not args["name"].strip():
            return failed("name must not be blank")
        return done(f"hello {args['name']}")
    if name == "square":
        n = args["n"]
        square = str(n * n) if n < 0 else n * n
        return done({"square": square}, {"square": square})
    if name == "crash" and len(args["text"]) > CRASH_LENGTH:
        print(f"crash: cannot handle a text of {len(args['text'])} characters", file=sys.stderr, flush=True)
        if __name__ != "__main__":  # imported, and served from a thread of the test process
            raise RuntimeError("crash: this server shares the test process, which must not exit; run it with serve_http")
        os._exit(70)
    if name == "stall" and any(c in args["text"] for c in "\n\r\t"):
        await anyio.sleep_forever()
    return done(args)


server = Server("loopkit-planted", on_list_tools=list_tools, on_call_tool=call_tool)


async def stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def http_app() -> Any:
    """The streamable-HTTP app (an ASGI app) that ``--http`` serves."""
    return server.streamable_http_app()


if __name__ == "__main__":
    if "--http" in sys.argv:
        import uvicorn

        port = int(sys.argv[sys.argv.index("--http") + 1])
        uvicorn.run(http_app(), host="127.0.0.1", port=port, log_level="warning")
    else:
        anyio.run(stdio)
    # served (stdin closed, or stopped by a signal): skip the interpreter's clean-up of the SDK's
    # modules, half a second of CPU that the client waits out on every close
    sys.stdout.flush()
    os._exit(0)
