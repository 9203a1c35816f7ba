"""Render loop events as compact, readable lines for snapshots and direct assertions.

One event per line, for example::

    tool_execution_end c2 add is_error=True "Skipped due to queued user message."

Messages render as ``user "hi" @0``, ``assistant[toolUse] "I will" calls=[c1 add {"a": 1}] @1`` or
``toolResult c1 add err "boom" @2`` (``@n`` is the message's timestamp).
"""

from __future__ import annotations

import json
from typing import Any

from loopkit.events import (
    AgentEnd,
    AgentEvent,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
)
from loopkit.messages import AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)


def render_message(m: Message) -> str:
    """One message on one line."""
    if isinstance(m, UserMessage):
        return f"user {_q(m.text)} @{m.timestamp}"
    if isinstance(m, ToolResultMessage):
        flag = "err" if m.is_error else "ok"
        return f"toolResult {m.tool_call_id} {m.tool_name} {flag} {_q(m.text)} @{m.timestamp}"
    assert isinstance(m, AssistantMessage), m
    parts = [f"assistant[{m.stop_reason}]"]
    if m.text:
        parts.append(_q(m.text))
    calls = [b for b in m.content if isinstance(b, ToolCall)]
    if calls:
        shown = []
        for c in calls:
            args = _q(c.raw_arguments) if c.raw_arguments is not None else _j(c.arguments)
            shown.append(f"{c.id} {c.name} {args}")
        parts.append("calls=[" + ", ".join(shown) + "]")
    if m.error_message:
        parts.append(f"error={_q(m.error_message)}")
    parts.append(f"@{m.timestamp}")
    return " ".join(parts)


def _short(m: Message) -> str:
    if isinstance(m, UserMessage):
        return f"user {_q(m.text)}"
    if isinstance(m, ToolResultMessage):
        return f"toolResult {m.tool_call_id}"
    return f"assistant[{m.stop_reason}]"


def render_event(e: AgentEvent) -> str:
    """One loop event on one line."""
    t = e.type
    if isinstance(e, MessageStart) and isinstance(e.message, AssistantMessage):
        # a streaming partial's stop_reason means nothing yet: show only what it holds
        return f"{t} {render_message(e.message).replace(f'[{e.message.stop_reason}]', '', 1)}"
    if isinstance(e, (MessageStart, MessageEnd)):
        return f"{t} {render_message(e.message)}"
    if isinstance(e, MessageUpdate):
        ev = e.event
        delta = getattr(ev, "delta", None)
        extra = f" {_q(delta)}" if delta is not None else ""
        return f"{t} {ev.type}[{ev.content_index}]{extra}"
    if isinstance(e, ToolExecutionStart):
        return f"{t} {e.tool_call_id} {e.tool_name} args={_j(e.args)}"
    if isinstance(e, ToolExecutionUpdate):
        return f"{t} {e.tool_call_id} {e.tool_name} partial={_j(e.partial_result)}"
    if isinstance(e, ToolExecutionEnd):
        return f"{t} {e.tool_call_id} {e.tool_name} is_error={e.is_error} {_q(e.result.text)}"
    if isinstance(e, TurnEnd):
        results = ", ".join(r.tool_call_id for r in e.tool_results)
        return f"{t} {_short(e.message)} results=[{results}]"
    if isinstance(e, AgentEnd):
        msgs = ", ".join(_short(m) for m in e.messages)
        pending = ", ".join(_short(m) for m in e.pending)
        return f"{t} reason={e.reason} messages=[{msgs}] pending=[{pending}]"
    return t


def render(events: list[AgentEvent]) -> str:
    """The whole event sequence, one line per event."""
    return "\n".join(render_event(e) for e in events)


def types(events: list[AgentEvent], *, updates: bool = False) -> list[str]:
    """The event type names, without ``message_update`` unless ``updates``."""
    return [e.type for e in events if updates or e.type != "message_update"]
