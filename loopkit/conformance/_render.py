"""rich renderables for a conformance report (never prints; rich is imported lazily).

One row per case, in two columns so the text gets the width: the status, then the case id with
its spec citation, the behaviour, and for a failure what was sent or parsed against what was
expected (for not-applicable, why). At 80 columns the text column still has ~65 characters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._suite import SuiteReport

if TYPE_CHECKING:
    from rich.console import RenderableType

STATUS_STYLE = {"pass": "dim green", "fail": "bold red", "not-applicable": "dim", "error": "magenta"}
STATUS_MARK = {"pass": "✓ pass", "fail": "✗ FAIL", "not-applicable": "– n/a", "error": "! error"}


def report_table(report: SuiteReport, *, verbose: bool = True) -> RenderableType:
    """The report as a table. ``verbose=False`` lists only the cases that failed or errored
    (the caption still counts every status)."""
    from rich.table import Table
    from rich.text import Text

    counts = report.counts()
    shown = [r for r in report.results if verbose or r.status in ("fail", "error")]
    caption = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
    hidden = len(report.results) - len(shown)
    if hidden:
        caption += f"; -v lists all {len(report.results)} cases"
    variant = f", variant {report.variant}" if report.variant else ""
    table = Table(title=f"conformance: {report.target} ({report.protocol}{variant})", caption=caption, show_lines=False, expand=True)
    table.add_column("status", no_wrap=True)
    table.add_column("case · spec · behaviour / detail", ratio=1, overflow="fold")
    for r in shown:
        cell = Text(r.case_id, style="bold")
        cell.append(f"  {r.spec}", style="dim")
        cell.append("\n" + r.statement)
        if r.detail:
            cell.append("\n" + r.detail, style=STATUS_STYLE[r.status] if r.status != "fail" else "red")
        table.add_row(Text(STATUS_MARK[r.status], style="green" if r.status == "pass" else STATUS_STYLE[r.status]), cell)
    if not shown:
        table.add_row(Text(STATUS_MARK["pass"], style="green"), Text("every case passed or does not apply to this protocol"))
    return table
