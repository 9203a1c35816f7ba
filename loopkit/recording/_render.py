"""rich renderables for ``cassette show`` and ``cassette diff`` (they never print; rich is
imported only when a renderable is built)."""

from __future__ import annotations

import json
from typing import Any

from ._inspect import Difference, Summary

_MAX = 160


def _cut(text: str, width: int = _MAX) -> str:
    text = text.replace("\n", "⏎")
    return text if len(text) <= width else text[: width - 1] + "…"


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for b in content or []:
        kind = b.get("type")
        if kind == "text":
            parts.append(b.get("text", ""))
        elif kind == "thinking":
            parts.append(f"[thinking] {b.get('thinking', '')}")
        elif kind == "toolCall":
            args = b.get("raw_arguments") or json.dumps(b.get("arguments", {}), ensure_ascii=False)
            parts.append(f"→ {b.get('name')}({args}) #{b.get('id')}")
        elif kind == "image":
            parts.append(f"[image {b.get('mime_type')}]")
    return "\n".join(parts)


def _message_line(m: dict[str, Any]) -> tuple[str, str]:
    role = m.get("role", "?")
    if role == "toolResult":
        flag = " error" if m.get("is_error") else ""
        return f"tool {m.get('tool_name')}{flag}", _content(m.get("content"))
    if role == "assistant":
        stop = m.get("stop_reason", "stop")
        err = f" ({m.get('error_message')})" if m.get("error_message") else ""
        return f"assistant [{stop}]{err}", _content(m.get("content"))
    return role, _content(m.get("content"))


def render_show(name: str, summaries: list[Summary], *, events: bool = True) -> Any:
    """The session as a conversation: per interaction the request, status, timing, the turn's new
    messages (prompt, tool results) and the answer (tool calls, text), and the stream reassembled
    into events. Long values fold inside their column at any console width."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[Any] = [Text(f"{name}: {len(summaries)} interaction(s)", style="bold", overflow="fold")]
    for s in summaries:
        head = Text(f"\n#{s.index} ", style="bold", overflow="fold")
        if s.method:
            head.append(f"{s.method} {s.path} → {s.status}")
            timing = f"\n   {s.chunks} chunk(s), {s.size} bytes"
            if s.first_t is not None:
                timing += f", first at {s.first_t * 1000:.0f} ms, last at {(s.last_t or 0) * 1000:.0f} ms"
            head.append(timing, style="dim")
        else:
            head.append("model call (transcript only)")
        parts.append(head)
        if s.new_messages or s.answer:
            table = Table(show_header=False, box=None, padding=(0, 1), expand=False)
            table.add_column(style="cyan", no_wrap=True, max_width=24, overflow="ellipsis")
            table.add_column(overflow="fold", ratio=1)
            for m in s.new_messages + ([s.answer] if s.answer else []):
                who, what = _message_line(m)
                table.add_row(Text(who), Text(_cut(what, 400)))
            parts.append(table)
        if events and s.events:
            table = Table(show_header=True, box=None, padding=(0, 1), expand=False)
            table.add_column("t (ms)", justify="right", style="dim", no_wrap=True)
            table.add_column("event", style="magenta", overflow="fold", max_width=28)
            table.add_column("data", overflow="fold", ratio=1)
            for e in s.events:
                table.add_row(f"{e.t * 1000:.0f}", Text(e.name or ""), Text(_cut(e.data)))
            parts.append(table)
    return Group(*parts)


_WINDOW = 120


def render_diff(a: str, b: str, differences: list[Difference]) -> Any:
    """The differences as a table: interaction, field (and message), A, B; each value shown around
    the place where it differs, folded (never cut) to the console width."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from ._match import short

    if not differences:
        return Text(f"{a} and {b} match", overflow="fold")
    title = Text(f"{a} → {b}: {len(differences)} difference(s)", style="bold", overflow="fold")
    table = Table(show_lines=True, expand=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("where", overflow="fold", ratio=2)
    table.add_column("msg", justify="right", no_wrap=True)
    table.add_column("A", style="red", overflow="fold", ratio=3)
    table.add_column("B", style="green", overflow="fold", ratio=3)
    for d in differences:
        table.add_row(
            str(d.interaction),
            Text(d.where),
            "" if d.message is None else str(d.message),
            Text(short(d.a, d.b, _WINDOW)),
            Text(short(d.b, d.a, _WINDOW)),
        )
    return Group(title, table)
