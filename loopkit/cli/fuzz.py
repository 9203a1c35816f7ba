"""loopkit fuzz TARGET: generated valid and invalid arguments through the loop, tool by tool.

TARGET is module:function (a loopkit tool, a typed function, or a {"spec", "execute"} dict),
module:attribute naming a ToolRegistry or a list of tools, or a module, whose tools are all
fuzzed. The current directory is on the import path. Findings (an exception that escaped,
invalid arguments that reached the function, valid ones that were rejected, error results with
unhelpful text, a return value of the wrong type) are shrunk to minimal examples, each printed
with a pytest test that reproduces it. With --exercise, the tools instead run once through the
loop with ExerciseProvider: one valid, then one invalid call each. Exit code 0 when nothing was
found, 1 otherwise, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import builtins
import importlib
import json
import sys
from typing import Any

from ..errors import UsageError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fuzz", help="fuzz the argument handling of a tool, of every tool of a module, or of an MCP server", description=__doc__)
    p.add_argument("target", nargs="*", metavar="TARGET", help="module:function, module:registry_or_list, or a module; with --mcp, the server's command after --")
    p.add_argument("--examples", type=int, default=200, metavar="N", help="argument sets to try per tool (default 200)")
    p.add_argument("--seed", type=int, default=None, metavar="S", help="seed for a reproducible run")
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="EXC[:PATTERN]",
        help="an exception the tools raise on purpose (ValueError, mypkg.errors.BadInput), optionally with a "
        "regular expression its message must match (ValueError:unsupported); repeatable",
    )
    p.add_argument("--no-shrink", action="store_true", help="report the first example of each finding as found")
    p.add_argument("-x", "--exitfirst", action="store_true", help="end each tool's search at its first finding, as pytest -x does")
    p.add_argument("--no-database", action="store_true", help="neither replay nor save findings in .hypothesis/")
    p.add_argument(
        "--exercise",
        action="store_true",
        help="instead of fuzzing, run the tools once through the loop with ExerciseProvider (one valid, then one "
        "invalid call each) and print its summary",
    )
    p.add_argument("--json", action="store_true", help="print machine-readable results")
    from .fuzz_mcp import add_arguments as add_mcp_arguments

    add_mcp_arguments(p)
    p.set_defaults(handler=run)


def allowed(specs: list[str]) -> list[tuple[type[BaseException], str | None]]:
    """``--allow`` values as ``(exception class, pattern)``."""
    out = []
    for spec in specs:
        name, _, pattern = spec.partition(":")
        out.append((_exception_class(name.strip(), spec), pattern or None))
    return out


def _exception_class(name: str, spec: str) -> type[BaseException]:
    obj: Any = getattr(builtins, name, None)
    if obj is None and "." in name:
        module, _, attr = name.rpartition(".")
        try:
            obj = getattr(importlib.import_module(module), attr, None)
        except ImportError as exc:
            raise UsageError(f"--allow {spec!r}: cannot import {module!r} ({exc})") from None
    if not (isinstance(obj, type) and issubclass(obj, BaseException)):
        raise UsageError(f"--allow {spec!r}: {name!r} is not an exception class; give a built-in name (ValueError) or a dotted path (mypkg.errors.BadInput)")
    return obj


def run(args: argparse.Namespace) -> int:
    """Run the fuzzer; 0 when nothing was found, 1 otherwise."""
    if args.mcp or args.mcp_url:
        from .fuzz_mcp import run as run_mcp

        return run_mcp(args)
    if len(args.target) != 1:
        raise UsageError(f"give one target (module:function or a module), got {len(args.target)}; fuzz an MCP server with --mcp -- COMMAND...")
    args.target = args.target[0]
    from ..fuzz import fuzz_tools, load_toolset

    expect = allowed(args.allow)
    tools = load_toolset(args.target)
    if args.exercise:
        return exercise(args, [t for t, _ in tools])
    single = len(tools) == 1 and ":" in args.target
    options: dict[str, Any] = {"examples": args.examples, "seed": args.seed, "shrink": not args.no_shrink, "expect_errors": expect}
    if args.no_database:
        options["database"] = None
    if args.exitfirst:
        options["until"] = lambda finding: True
    if args.json:
        report = fuzz_tools([t for t, _ in tools] if not single else args.target, **options)
        _fix_references(report, tools)
        out = report.reports[0].to_json() if single else report.to_json()
        print(json.dumps(out, indent=2, ensure_ascii=False, default=str))
        return 0 if report.ok else 1

    from rich.console import Console

    with progress_bar() as progress:
        tasks = {t.name: progress.add_task(t.name, total=args.examples) for t, _ in tools}
        report = fuzz_tools(
            [t for t, _ in tools] if not single else args.target,
            on_progress=lambda name, done, total: progress.update(tasks[name], completed=done),
            **options,
        )
    _fix_references(report, tools)
    out = Console(file=sys.stdout, soft_wrap=False)
    for r in report.reports:
        out.print(render(r))
    if not single:
        out.print(render_summary(report))
    return 0 if report.ok else 1


def exercise(args: argparse.Namespace, tools: list[Any]) -> int:
    """One run of the loop with :class:`~loopkit.strategies.ExerciseProvider`; 1 when a valid
    call failed or an invalid one was accepted."""
    from ..runtime import TickClock, run
    from ..strategies import ExerciseProvider

    model = ExerciseProvider(seed=args.seed or 0)
    result = run(model, "Call every tool.", tools=tools, clock=TickClock())
    if args.json:
        rows = [{"tool": r.tool, "arguments": r.arguments, "valid": r.valid, "rule": r.rule, "is_error": r.is_error, "text": r.text} for r in model.results]
        print(json.dumps({"ok": not model.problems, "reason": result.reason, "calls": rows, "problems": model.problems}, indent=2, ensure_ascii=False, default=str))
    else:
        print(model.summary())
    return 0 if not model.problems and result.reason == "stop" else 1


def _fix_references(report: Any, tools: list[tuple[Any, str | None]]) -> None:
    """Keep the ``module:attribute`` each tool was found under (a list loses it)."""
    refs = {t.name: ref for t, ref in tools}
    for r in report.reports:
        if refs.get(r.target):
            r.reference = refs[r.target]
            r.findings = [_with_reference(f, refs[r.target]) for f in r.findings]


def _with_reference(finding: Any, ref: str) -> Any:
    from dataclasses import replace

    return replace(finding, reference=ref)


def render(report: Any) -> Any:
    """A rich renderable of a :class:`~loopkit.fuzz.FuzzReport`: a table of findings and a test
    per finding, or a pass line."""
    from rich.console import Group
    from rich.syntax import Syntax
    from rich.table import Table
    from rich.text import Text

    expected = f", {report.expected_errors} expected error(s)" if report.expected_errors else ""
    replayed = f", {report.replayed} replayed" if report.replayed else ""
    head = Text.assemble(
        ("loopkit fuzz ", "bold"),
        (report.target, "bold cyan"),
        f": {report.examples} examples ({report.valid_examples} valid, {report.invalid_examples} invalid, "
        f"{report.edge_examples} edge cases{replayed}{expected}), seed {report.seed}",
    )
    if report.ok:
        return Group(head, Text("no findings", style="bold green"))
    table = Table(show_lines=True)
    table.add_column("finding", style="bold red", no_wrap=True)
    table.add_column("minimal arguments", overflow="fold")
    table.add_column("what happened", overflow="fold")
    parts: list[Any] = [head, table]
    for f in report.findings:
        args = f.example.raw if f.example.raw is not None else json.dumps(f.example.arguments, ensure_ascii=False, default=str)
        if not f.example.valid:
            args += f"\n(breaks {f.example.rule} at {'.'.join(map(str, f.example.path)) or 'root'})"
        table.add_row(f.kind, args, f.message)
    for i, f in enumerate(report.findings, 1):
        parts.append(Text(f"reproduce finding {i} ({f.kind}) with this test:", style="bold"))
        parts.append(Syntax(f.reproduction(), "python", theme="ansi_dark", background_color="default", word_wrap=True))
    parts.append(Text(f"{len(report.findings)} finding(s); rerun with --seed {report.seed} to reproduce", style="bold red"))
    return Group(*parts)


def render_summary(report: Any) -> Any:
    """One table for a whole toolset: each tool's examples and findings."""
    from rich.table import Table

    table = Table(title="loopkit fuzz: summary")
    table.add_column("tool", style="bold cyan")
    table.add_column("examples", justify="right")
    table.add_column("findings", justify="right")
    table.add_column("kinds")
    table.add_column("result")
    for r in report.reports:
        kinds = ", ".join(sorted({f.kind for f in r.findings}))
        table.add_row(r.target, str(r.examples), str(len(r.findings)), kinds, "[green]ok[/]" if r.ok else "[bold red]FAIL[/]")
    bad = sum(not r.ok for r in report.reports)
    table.caption = f"{len(report.reports)} tool(s), {bad} with findings" + (f"; seed {report.reports[0].seed}" if report.reports else "")
    return table


def progress_bar() -> Any:
    """The progress display of a fuzzing run, on standard error, gone when the run ends."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("[bold]fuzzing[/] {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    return Progress(*columns, console=Console(stderr=True), transient=True)
