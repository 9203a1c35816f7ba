"""``loopkit fuzz --mcp -- COMMAND ARGS...`` and ``loopkit fuzz --mcp-url URL``: fuzz every tool an
MCP server lists (or the ones ``--tools`` names). Tool calls have side effects: name the tools
that may be called. Exit code 0 when nothing was found, 1 otherwise, 2 when the server could not
be reached."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The MCP options of ``loopkit fuzz``."""
    group = p.add_argument_group("MCP servers (tool calls have side effects: choose the tools with --tools)")
    group.add_argument("--mcp", action="store_true", help="fuzz the MCP server started by the command after -- (stdio)")
    group.add_argument("--mcp-url", metavar="URL", default=None, help="fuzz the MCP server at this streamable-HTTP URL")
    group.add_argument("--tools", metavar="A,B", default=None, help="only these tools may be called (default: every tool the server lists)")
    group.add_argument("--timeout", type=float, default=10.0, metavar="S", help="seconds a call may take before it counts as a hang (default 10)")


def run(args: argparse.Namespace) -> int:
    """Fuzz an MCP server; 0 when nothing was found, 1 otherwise."""
    from ..mcp import MCPServer
    from ..mcp.fuzz import fuzz_server

    if args.mcp and args.mcp_url:
        raise UsageError("give either --mcp -- COMMAND... or --mcp-url URL, not both")
    if args.mcp_url:
        if args.target:
            raise UsageError(f"--mcp-url takes no command, got {args.target!r}")
        server = MCPServer.http(args.mcp_url)
    else:
        if not args.target:
            raise UsageError("--mcp needs the server's command after --, e.g. loopkit fuzz --mcp -- python server.py")
        server = MCPServer.stdio(list(args.target))
    tools = [t.strip() for t in args.tools.split(",") if t.strip()] if args.tools else None
    options: dict[str, Any] = dict(tools=tools, examples=args.examples, seed=args.seed, shrink=not args.no_shrink, timeout=args.timeout)
    if args.exitfirst:
        options["until"] = lambda finding: True
    if args.json:
        report = fuzz_server(server, **options)
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False, default=str))
        return 0 if report.ok else 1

    from rich.console import Console

    from .fuzz import progress_bar

    with progress_bar() as progress:
        task = progress.add_task(server.label, total=None)

        def on_progress(tool: str, done: int, total: int) -> None:
            progress.update(task, description=f"{server.label} · {tool}", completed=done, total=total)

        report = fuzz_server(server, on_progress=on_progress, **options)
    Console(file=sys.stdout, soft_wrap=False).print(render(report))
    return 0 if report.ok else 1


def render(report: Any) -> Any:
    """A summary table (one row per tool) and each tool's findings."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from .fuzz import render as render_tool

    head = Text.assemble(("loopkit fuzz ", "bold"), (report.server, "bold cyan"), f": {len(report.reports)} tool(s), seed {report.seed}, {report.restarts} restart(s)")
    summary = Table(show_edge=False)
    summary.add_column("tool", style="bold")
    summary.add_column("examples", justify="right")
    summary.add_column("findings")
    for r in report.reports:
        kinds = ", ".join(dict.fromkeys(f.kind for f in r.findings))
        summary.add_row(r.target, str(r.examples), Text(kinds or "none", style="red" if kinds else "green"))
    parts: list[Any] = [head, summary]
    if report.not_fuzzed:
        parts.append(Text(f"not called: {', '.join(report.not_fuzzed)}", style="dim"))
    parts.extend(render_tool(r) for r in report.reports if not r.ok)
    parts.extend(Text(f"error: {e}", style="bold red") for e in report.errors)
    if report.ok:
        parts.append(Text("no findings", style="bold green"))
    return Group(*parts)
