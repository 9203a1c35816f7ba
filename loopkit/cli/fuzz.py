"""``loopkit fuzz TARGET``: generated valid and invalid arguments through the loop for one tool.

TARGET is ``module:function``: a loopkit tool, a plain function with type hints, or a
``{"spec", "execute"}`` dict. Findings (an exception that escaped, invalid arguments that reached
the function, valid ones that were rejected, error results with unhelpful text) are shrunk to
minimal examples. Exit code 1 when anything was found.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import UsageError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fuzz", help="fuzz a tool's argument handling through the loop", description=__doc__)
    p.add_argument("target", nargs="*", metavar="TARGET", help="module:function (a tool, a typed function, or a spec/execute dict); with --mcp, the server's command after --")
    p.add_argument("--examples", type=int, default=200, metavar="N", help="argument sets to try (default 200)")
    p.add_argument("--seed", type=int, default=None, metavar="S", help="seed for a reproducible run")
    p.add_argument("--no-shrink", action="store_true", help="report the first example of each finding as found")
    p.add_argument("--json", action="store_true", help="print machine-readable results")
    from .fuzz_mcp import add_arguments as add_mcp_arguments

    add_mcp_arguments(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the fuzzer; 0 when nothing was found, 1 otherwise."""
    if args.mcp or args.mcp_url:
        from .fuzz_mcp import run as run_mcp

        return run_mcp(args)
    if len(args.target) != 1:
        raise UsageError(f"give one target (module:function), got {len(args.target)}; fuzz an MCP server with --mcp -- COMMAND...")
    args.target = args.target[0]
    from ..fuzz import fuzz

    if args.json:
        report = fuzz(args.target, examples=args.examples, seed=args.seed, shrink=not args.no_shrink)
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False, default=str))
        return 0 if report.ok else 1

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    err = Console(stderr=True)
    with Progress(TextColumn("[bold]fuzzing[/] {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=True) as progress:
        task = progress.add_task(args.target, total=args.examples)
        report = fuzz(
            args.target,
            examples=args.examples,
            seed=args.seed,
            shrink=not args.no_shrink,
            on_progress=lambda done, total: progress.update(task, completed=done),
        )
    Console(file=sys.stdout, soft_wrap=False).print(render(report))
    return 0 if report.ok else 1


def render(report: Any) -> Any:
    """A rich renderable of a :class:`~loopkit.fuzz.FuzzReport` (a table of findings, or a pass line)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    head = Text.assemble(
        ("loopkit fuzz ", "bold"),
        (report.target, "bold cyan"),
        f": {report.examples} examples ({report.valid_examples} valid, {report.invalid_examples} invalid), seed {report.seed}",
    )
    if report.ok:
        return Group(head, Text("no findings", style="bold green"))
    table = Table(show_lines=True)
    table.add_column("finding", style="bold red", no_wrap=True)
    table.add_column("minimal arguments", overflow="fold")
    table.add_column("what happened", overflow="fold")
    for f in report.findings:
        args = json.dumps(f.example.arguments, ensure_ascii=False, default=str)
        if not f.example.valid:
            args += f"\n(breaks {f.example.rule} at {'.'.join(map(str, f.example.path)) or 'root'})"
        table.add_row(f.kind, args, f.message)
    tail = Text(f"{len(report.findings)} finding(s); rerun with --seed {report.seed} to reproduce", style="bold red")
    return Group(head, table, tail)
