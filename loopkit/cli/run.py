"""``loopkit run``: run scenario files on every provider.

A progress bar while the runs go, then a matrix of scenario × provider whose skipped and xfailed
cells carry the number of their reason (listed below the table), then one report per distinct
failure (a scenario that fails the same way on several providers is reported once, naming them
all). ``expect.snapshot: true`` is compared with the snapshot the pytest plugin stores.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

DESCRIPTION = """\
Run scenario files (YAML) on the scripted fake and on every wire protocol's adapter and
simulator, then print a matrix of scenario × provider and a report of each failure.

Scenarios that ask for a snapshot (expect.snapshot: true) are compared with the snapshot
stored next to the file (__snapshots__/NAME.ambr, written by pytest --snapshot-update).

exit status: 0 when every run met its expectations (skips and expected failures included),
1 when any failed (an expected failure that passes counts), 2 when a file is malformed."""

EXAMPLES = """\
examples:
  loopkit run                                  every file under ./scenarios
  loopkit run scenarios/steering --provider anthropic --provider scripted
  loopkit run scenarios/errors/unknown_tool.yaml --json"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run scenario files on every provider",
        description=DESCRIPTION,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="scenario files or folders (default: ./scenarios)")
    p.add_argument(
        "--provider",
        action="append",
        dest="providers",
        metavar="NAME",
        help="run only on this provider (repeatable): scripted, openai_chat, openai_responses, anthropic, gemini, bedrock",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    p.add_argument("--driver", choices=("sync", "async"), default="sync", help="drive the loop synchronously (default) or with asyncio")
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    from ..errors import ScenarioError, UsageError
    from ..scenario import load_all
    from ..scenario.model import PROVIDER_NAMES, check_provider

    providers = args.providers or list(PROVIDER_NAMES)
    for name in providers:
        try:
            check_provider(name)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    paths = args.paths or [Path("scenarios")]
    scenarios = load_all(paths)  # a malformed file raises ScenarioFileError (exit 2, every problem listed)
    if not scenarios:
        raise UsageError(f"no scenario files under {', '.join(map(str, paths))}")
    broken = []
    for s in scenarios:  # every tool reference imports before anything runs
        try:
            s.prepare()
        except ScenarioError as exc:
            broken.append(str(exc))
    if broken:
        raise ScenarioError("\n".join(broken))
    total = len(scenarios) * len(providers)
    if args.json:
        results = [s.run(p, driver=args.driver, snapshot=True) for s in scenarios for p in providers]
        print(json.dumps(_json(results), indent=2, ensure_ascii=False))
    else:
        results = _with_progress(scenarios, providers, total, args.driver)
        _print_tables(results, providers)
    return 1 if any(r.status in ("failed", "xpassed") for r in results) else 0


def _with_progress(scenarios: list[Any], providers: list[str], total: int, driver: str) -> list[Any]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    results = []
    console = Console(stderr=True)
    with Progress(TextColumn("[bold]scenarios"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("{task.description}"), console=console, transient=True) as bar:
        task = bar.add_task("", total=total)
        for s in scenarios:
            for p in providers:
                bar.update(task, description=f"{s.label} [{p}]")
                results.append(s.run(p, driver=driver, snapshot=True))
                bar.advance(task)
    return results


def group_failures(results: list[Any]) -> list[tuple[Any, list[str]]]:
    """The failed (and xpassed) results, one per scenario and distinct set of failures: each
    with the other providers whose run failed in the very same way."""
    groups: dict[tuple, tuple[Any, list[str]]] = {}
    for r in results:
        if r.status not in ("failed", "xpassed"):
            continue
        key = (r.label, r.status, tuple((f.check, f.expected, f.actual) for f in r.failures))
        if key in groups:
            groups[key][1].append(r.provider)
        else:
            groups[key] = (r, [])
    return list(groups.values())


def _print_tables(results: list[Any], providers: list[str]) -> None:
    from rich.console import Console
    from rich.text import Text

    from ..scenario.render import failure_report, matrix

    console = Console()
    if not console.is_terminal:
        # piped output has no width to respect: keep every scenario name on one line
        longest = max((len(r.label) for r in results), default=10)
        console = Console(width=max(console.width, longest + 7 * len(providers) + 4))
    console.print(matrix(results, providers))
    for first, also in group_failures(results):
        console.rule(Text(f"{first.label} [{', '.join([first.provider, *also])}]"), style="red")  # Text: no markup in names
        console.print(failure_report(first, also))
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    bad = any(r.status in ("failed", "xpassed") for r in results)
    console.print(f"{len(results)} scenario run(s): {summary}", style="red" if bad else "green")


def _json(results: list[Any]) -> dict[str, Any]:
    return {
        "results": [
            {
                "scenario": r.label,
                "provider": r.provider,
                "status": r.status,
                "skip_reason": r.skip_reason,
                "xfail_reason": r.xfail_reason,
                "failures": [{"check": f.check, "expected": f.expected, "actual": f.actual} for f in r.failures],
            }
            for r in results
        ],
        "summary": {status: sum(1 for r in results if r.status == status) for status in ("passed", "failed", "skipped", "xfailed", "xpassed")},
    }
