"""rich renderables for scenario results (never prints; rich is imported inside the functions)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, ToolResultMessage, UserMessage

if TYPE_CHECKING:
    from rich.console import RenderableType

    from . import ScenarioResult

SHORT = {"scripted": "fake", "openai_chat": "chat", "openai_responses": "resp", "anthropic": "anth", "gemini": "gem", "bedrock": "bedr"}
STATUS_MARK = {"passed": ("✓", "green"), "failed": ("✗", "red"), "skipped": ("–", "dim"), "xfailed": ("x", "yellow"), "xpassed": ("X!", "red")}


def _short(text: str, limit: int = 100) -> str:
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failure_report(result: ScenarioResult, also: Sequence[str] = ()) -> RenderableType:
    """What went wrong: expected against actual for each failed check, then the run as it went.
    ``also`` names other providers whose run failed in the very same way (shown in the title)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    mark, style = STATUS_MARK[result.status]
    head = Text.assemble((f"{mark} ", style), (f"{result.name} [{', '.join([result.provider, *also])}]", "bold"), f": {result.status}")
    if result.xfail_reason:
        head.append(f" (xfail: {result.xfail_reason})", style="yellow")
    if result.skip_reason:
        head.append(f" ({result.skip_reason})", style="dim")
    parts: list[Any] = [head]
    if result.status == "xpassed":
        parts.append(Text("every expectation was met, but the scenario says it fails here (strict xfail): remove the xfail", style="red"))
    if result.failures:
        table = Table(show_header=True, header_style="bold", expand=False, show_lines=True)
        table.add_column("check", overflow="fold")
        table.add_column("expected", style="green", overflow="fold")
        table.add_column("actual", style="red", overflow="fold")
        for f in result.failures:
            table.add_row(Text(f.check), Text(f.expected), Text(f.actual))
        parts.append(table)
    if result.record is not None and result.record.result is not None:
        parts.append(_transcript(result))
    return Group(*parts)


def _transcript(result: ScenarioResult) -> RenderableType:
    from rich.table import Table
    from rich.text import Text

    run = result.record.result  # type: ignore[union-attr]
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for m in run.messages:
        if isinstance(m, UserMessage):
            grid.add_row(Text("user", style="cyan"), Text(_short(m.text)))
        elif isinstance(m, AssistantMessage):
            bits = []
            for b in m.content:
                if isinstance(b, TextContent) and b.text:
                    bits.append(_short(b.text, 60))
                elif isinstance(b, ThinkingContent):
                    bits.append(f"(thinking) {_short(b.thinking, 30)}")
                elif isinstance(b, ToolCall):
                    args = b.raw_arguments if b.raw_arguments is not None else json.dumps(b.arguments, ensure_ascii=False)
                    bits.append(f"→ {b.name}({_short(args, 40)}) [{b.id}]")
            if m.stop_reason in ("error", "aborted"):
                bits.append(f"✗ {m.stop_reason}: {_short(m.error_message or '', 80)}")
            grid.add_row(Text("assistant", style="green"), Text(" | ".join(bits) or "(empty)"))
        elif isinstance(m, ToolResultMessage):
            grid.add_row(Text("  tool", style="blue"), Text(f"{'✗' if m.is_error else '←'} {m.tool_name} [{m.tool_call_id}]: {_short(m.text)}", style="red" if m.is_error else ""))
    grid.add_row(Text("end", style="magenta"), Text(f"{run.reason}, {run.model_calls} model call(s)"))
    return grid


def matrix(results: Sequence[ScenarioResult], providers: Sequence[str]) -> RenderableType:
    """One row per scenario, one column per provider: ✓ passed, ✗ failed, – skipped, x xfailed.
    A skipped or xfailed cell carries the number of its reason, listed below the table."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title="scenarios × providers")
    table.add_column("scenario", overflow="fold")
    for p in providers:
        table.add_column(SHORT.get(p, p), justify="center", no_wrap=True)
    rows: dict[str, dict[str, ScenarioResult]] = {}
    for r in results:
        rows.setdefault(r.label, {})[r.provider] = r
    reasons: dict[str, int] = {}  # reason -> footnote number, in order of first appearance
    for label, by_provider in rows.items():
        cells = []
        for p in providers:
            r = by_provider.get(p)
            if r is None:
                cells.append(Text(""))
                continue
            mark, style = STATUS_MARK[r.status]
            why = r.skip_reason if r.status == "skipped" else r.xfail_reason if r.status == "xfailed" else None
            if why:
                mark += str(reasons.setdefault(why, len(reasons) + 1))
            cells.append(Text(mark, style=style))
        table.add_row(Text(label), *cells)
    legend = Text("  ".join(f"{SHORT.get(p, p)}={p}" for p in providers) + "\n✓ passed  ✗ failed  – skipped  x xfail  X! xpassed (an xfail that passed)", style="dim")
    parts: list[Any] = [table, legend]
    if reasons:
        notes = Table.grid(padding=(0, 1))
        notes.add_column(justify="right", style="bold", no_wrap=True)
        notes.add_column()
        for why, n in reasons.items():
            notes.add_row(str(n), why)
        parts.append(notes)
    return Group(*parts)


def to_text(renderable: Any, width: int = 120) -> str:
    """Render without colour (for assertion messages and pytest reports)."""
    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, soft_wrap=False).print(renderable)
    return buf.getvalue()
