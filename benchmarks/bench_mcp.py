"""Fuzzing an MCP server: the cost per example against a direct ``tools/call``, and 200 examples
of one tool of a stdio server end to end (server start included).

The server is ``tests/mcp/servers/planted.py`` (the SDK's low-level server) and the tool its
bug-free ``ok``. "Direct" is the SDK's own async ``Client.call_tool`` in a loop, with no loopkit
in between; loopkit's blocking ``MCPSession.call`` is shown too. Budgets (issue 16): fuzzing time
per example at most 1.5x a direct call; 200 examples of one stdio tool in under 5 s. Prints
figures; exits 1 when a budget is blown. On a loaded machine compare the ratio, not the seconds.

    PYTHONPATH=. python benchmarks/bench_mcp.py [--examples 200] [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from loopkit.mcp import MCPServer, MCPSession
from loopkit.mcp.fuzz import fuzz_server

SERVER = MCPServer.stdio(sys.executable, str(Path(__file__).resolve().parent.parent / "tests" / "mcp" / "servers" / "planted.py"))
ARGS = {"n": 7, "label": "abc"}


async def sdk_calls(calls: int) -> float:
    """Seconds per call of the SDK's Client.call_tool (the direct baseline)."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=SERVER.command[0], args=list(SERVER.command[1:]))
    async with Client(params) as client:
        await client.list_tools()
        for _ in range(20):
            await client.call_tool("ok", ARGS)
        start = time.perf_counter()
        for _ in range(calls):
            await client.call_tool("ok", ARGS)
        return (time.perf_counter() - start) / calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--calls", type=int, default=300)
    opts = parser.parse_args()

    direct = asyncio.run(sdk_calls(opts.calls))
    with MCPSession(SERVER) as session:
        for _ in range(20):
            session.call("ok", ARGS)
        start = time.perf_counter()
        for _ in range(opts.calls):
            session.call("ok", ARGS)
        blocking = (time.perf_counter() - start) / opts.calls
        fuzz_server(session, tools=["ok"], examples=20, seed=0, shrink=False)  # warm hypothesis up
        start = time.perf_counter()
        report = fuzz_server(session, tools=["ok"], examples=opts.examples, seed=1, shrink=False)
        per_example = (time.perf_counter() - start) / report.reports[0].examples

    start = time.perf_counter()
    end_to_end = fuzz_server(SERVER, tools=["ok"], examples=200, seed=1)
    total = time.perf_counter() - start
    assert end_to_end.ok, end_to_end.findings

    ratio = per_example / direct
    print(f"direct tools/call (SDK Client):      {direct * 1000:8.2f} ms")
    print(f"MCPSession.call (blocking, portal):   {blocking * 1000:8.2f} ms  ({blocking / direct:.2f}x direct)")
    print(f"fuzz_server, per example:             {per_example * 1000:8.2f} ms  ({ratio:.2f}x direct; budget 1.5x)")
    print(f"200 examples of one stdio tool:       {total:8.2f} s   (server start included; budget 5 s)")
    ok = ratio <= 1.5 and total < 5.0
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
