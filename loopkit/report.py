"""rich renderables for runs (never prints: the CLI and the pytest plugin hold the Console).

``rich`` is imported inside the functions, so ``import loopkit`` stays light.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, ToolResultMessage, UserMessage

if TYPE_CHECKING:
    from rich.console import RenderableType

    from .runtime import RunResult

REASON_STYLE = {"stop": "green", "error": "red", "aborted": "yellow", "max_iterations": "magenta"}


def _short(text: str, limit: int = 160) -> str:
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _args(call: ToolCall) -> str:
    if call.raw_arguments is not None:
        return f"<not JSON> {call.raw_arguments!r}"
    return json.dumps(call.arguments, ensure_ascii=False)


def transcript(result: RunResult, *, title: str = "run") -> RenderableType:
    """The run as a conversation: one line per message, tool calls and results indented."""
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    table = Table.grid(padding=(0, 1))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for m in result.messages:
        if isinstance(m, UserMessage):
            table.add_row(Text("user", style="cyan"), _short(m.text))
        elif isinstance(m, AssistantMessage):
            parts: list[Text] = []
            for b in m.content:
                if isinstance(b, TextContent) and b.text:
                    parts.append(Text(_short(b.text)))
                elif isinstance(b, ThinkingContent):
                    parts.append(Text(f"(thinking) {_short(b.thinking, 80)}", style="dim"))
                elif isinstance(b, ToolCall):
                    parts.append(Text(f"→ {b.name}({_short(_args(b), 100)})  [{b.id}]", style="blue"))
            if m.stop_reason in ("error", "aborted"):
                parts.append(Text(f"✗ {m.stop_reason}: {_short(m.error_message or '')}", style="red"))
            label = Text("assistant", style="green")
            if not parts:
                parts.append(Text("(empty)", style="dim"))
            for i, p in enumerate(parts):
                table.add_row(label if i == 0 else Text(""), p)
        elif isinstance(m, ToolResultMessage):
            style = "red" if m.is_error else "white"
            mark = "✗" if m.is_error else "←"
            table.add_row(Text("  tool", style="blue"), Text(f"{mark} {m.tool_name} [{m.tool_call_id}]: {_short(m.text)}", style=style))
    reason = Text(result.reason, style=REASON_STYLE.get(result.reason, "white"))
    footer = Text.assemble("ended: ", reason, f"   model calls: {result.model_calls}")
    if result.pending:
        footer.append(f"   pending (returned, not injected): {len(result.pending)}")
    return Panel(table, title=title, subtitle=footer, subtitle_align="left", expand=True)


def summary_table(rows: Sequence[dict[str, Any]], *, columns: Sequence[str], title: str = "summary") -> RenderableType:
    """A table with one row per session; ``reason`` cells are coloured by end reason."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title)
    for i, c in enumerate(columns):
        table.add_column(c, no_wrap=True, justify="left" if i == 0 else "center")
    for row in rows:
        cells = []
        for c in columns:
            value = row.get(c, "")
            if isinstance(value, str) and value in REASON_STYLE:
                cells.append(Text(value, style=REASON_STYLE[value]))
            elif isinstance(value, bool):
                cells.append(Text("✓" if value else "✗", style="green" if value else "red"))
            else:
                cells.append(Text(str(value)))
        table.add_row(*cells)
    return table
