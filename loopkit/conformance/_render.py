"""rich renderables for a conformance report (never prints; rich is imported lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._suite import SuiteReport

if TYPE_CHECKING:
    from rich.console import RenderableType

STATUS_STYLE = {"pass": "dim green", "fail": "bold red", "not-applicable": "dim", "error": "magenta"}
STATUS_MARK = {"pass": "✓ pass", "fail": "✗ FAIL", "not-applicable": "– n/a", "error": "! error"}


def report_table(report: SuiteReport) -> RenderableType:
    """One row per case: status, id, statement and spec, and for a failure what was sent or parsed
    against what was expected (for not-applicable, why)."""
    from rich.table import Table
    from rich.text import Text

    counts = report.counts()
    table = Table(
        title=f"conformance: {report.target} ({report.protocol})",
        caption=", ".join(f"{n} {status}" for status, n in counts.items() if n),
        show_lines=False,
        expand=True,
    )
    table.add_column("status", no_wrap=True)
    table.add_column("case", no_wrap=True)
    table.add_column("behaviour / detail", ratio=3)
    table.add_column("spec", style="dim", ratio=1)
    for r in report.results:
        cell = Text(r.statement)
        if r.detail:
            cell.append("\n" + r.detail, style=STATUS_STYLE[r.status] if r.status != "fail" else "red")
        table.add_row(Text(STATUS_MARK[r.status], style="green" if r.status == "pass" else STATUS_STYLE[r.status]), r.case_id, cell, r.spec)
    return table
