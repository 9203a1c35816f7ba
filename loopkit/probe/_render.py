"""rich renderables for a probe report (never prints; rich is imported lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._model import ProbeReport

if TYPE_CHECKING:
    from rich.console import RenderableType

STATUS_STYLE = {"pass": "green", "fail": "bold red", "not-applicable": "dim"}
STATUS_MARK = {"pass": "✓ pass", "fail": "✗ FAIL", "not-applicable": "– n/a"}


def report_table(report: ProbeReport) -> RenderableType:
    """One row per case: status, case, what happened (for a failure: the message, the rule and
    the request that shows it), and the rules the case checks."""
    from rich.table import Table
    from rich.text import Text

    counts = report.counts()
    table = Table(
        title=f"probe: {report.agent} ({report.protocol})",
        caption=f"tools declared: {', '.join(report.tools) or 'none'}; may be called: {', '.join(report.allowed) or 'none'}; "
        + ", ".join(f"{n} {status}" for status, n in counts.items() if n),
        expand=True,
    )
    table.add_column("status", no_wrap=True)
    table.add_column("case", no_wrap=True)
    table.add_column("what happened", ratio=3)
    table.add_column("calls", justify="right")
    for r in report.results:
        cell = Text(r.description)
        if r.status == "fail":
            for f in r.failures:
                cell.append("\n" + f.message, style="red")
                cell.append(f"\n  rule: {f.rule}", style="dim")
                if f.diff:
                    cell.append("\n" + f.diff, style="dim")
            if r.agent_error:
                cell.append(f"\nagent: {r.agent_error[:300]}", style="dim")
        elif r.reason:
            cell.append("\n" + r.reason, style="dim")
        calls = "" if r.status == "not-applicable" else str(r.model_calls)
        table.add_row(Text(STATUS_MARK[r.status], style=STATUS_STYLE[r.status]), r.case, cell, calls)
    return table
