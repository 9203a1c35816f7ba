"""Deterministic snapshots of runs, transcripts and events (for syrupy, or any snapshot tool).

:func:`snapshot_data` turns a :class:`~loopkit.runtime.RunResult`, a list of messages, a list of
loop events (or any list/dict holding them) into plain data that is the same on every run:

- timestamps are left out (they come from the run's clock: the wall clock unless one is injected);
- tool-call ids become ``call_1``, ``call_2``, ... in order of first appearance, everywhere they
  appear (the call, its result, the tool execution events), and response ids ``response_1``, ...
  (providers and recorded cassettes make up random ones); ``keep_ids=True`` keeps them as they are;
- events are compact: ``message_update`` keeps its stream event but not the partial message,
  ``message_start`` only the role, ``turn_end`` the number of results, ``agent_end`` the reason
  and the pending messages (the messages themselves are in the transcript).

:class:`LoopkitExtension` is a syrupy amber extension that applies it, so a snapshot test reads::

    def test_transcript(snapshot):
        result = loopkit.run(provider, "go", tools=[add])
        assert result == snapshot(extension_class=LoopkitExtension)

(the pytest plugin's ``loopkit_snapshot`` fixture is ``snapshot.use_extension(LoopkitExtension)``).
syrupy is imported only when :class:`LoopkitExtension` is first used.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from .events import AgentEnd, AgentEvent, MessageStart, MessageUpdate, TurnEnd
from .messages import AssistantMessage, Message, ToolResultMessage, UserMessage
from .runtime import RunResult
from .serde import dump_message

_MESSAGES = (UserMessage, AssistantMessage, ToolResultMessage)
_ROLES = ("user", "assistant", "toolResult")
_CALL_ID_KEYS = ("tool_call_id",)


class _Ids:
    """Stable replacements for the ids of one snapshot, in order of first appearance."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.calls: dict[str, str] = {}
        self.responses: dict[str, str] = {}

    def call(self, value: Any) -> Any:
        if self.keep or not isinstance(value, str):
            return value
        return self.calls.setdefault(value, f"call_{len(self.calls) + 1}")

    def response(self, value: Any) -> Any:
        if self.keep or not isinstance(value, str):
            return value
        return self.responses.setdefault(value, f"response_{len(self.responses) + 1}")


def snapshot_data(value: Any, *, keep_ids: bool = False) -> Any:
    """``value`` as plain data with timestamps left out and ids renumbered (see the module
    docstring). Messages already dumped to data (``serde.dump_messages``) are treated alike;
    other values pass through, and lists, tuples and mappings are walked.

    Args:
        value: a RunResult, a message, an event, or a list/dict holding them.
        keep_ids: keep the ids as the provider made them.
    """
    return _plain(value, _Ids(keep=keep_ids))


def _plain(value: Any, ids: _Ids) -> Any:
    if isinstance(value, RunResult):
        out: dict[str, Any] = {"reason": value.reason, "model_calls": value.model_calls, "messages": [_message(m, ids) for m in value.messages]}
        if value.pending:
            out["pending"] = [_message(m, ids) for m in value.pending]
        if value.error is not None:
            out["error"] = f"{type(value.error).__name__}: {value.error}"
        return out
    if isinstance(value, _MESSAGES):
        return _message(value, ids)
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and hasattr(value, "type"):
        return _event(value, ids)
    if isinstance(value, Mapping):
        if value.get("role") in _ROLES:  # a message dumped by serde
            return _scrub(dict(value), ids)
        return {k: _plain(v, ids) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, ids) for v in value]
    return value


def _message(message: Message, ids: _Ids) -> dict[str, Any]:
    return _scrub(dump_message(message), ids)


def _scrub(data: Any, ids: _Ids) -> Any:
    """Dumped data with timestamps dropped and ids renumbered."""
    if isinstance(data, list):
        return [_scrub(v, ids) for v in data]
    if not isinstance(data, dict):
        return data
    out: dict[str, Any] = {}
    for key, v in data.items():
        if key == "timestamp":
            continue
        if key in _CALL_ID_KEYS or (key == "id" and data.get("type") in ("toolCall", "toolcall_start")):
            out[key] = ids.call(v)
        elif key == "response_id":
            out[key] = ids.response(v)
        else:
            out[key] = _scrub(v, ids)
    return out


def _event(event: AgentEvent | Any, ids: _Ids) -> dict[str, Any]:
    if isinstance(event, MessageStart):
        return {"type": event.type, "role": event.message.role}
    if isinstance(event, MessageUpdate):
        return {"type": event.type, "event": _event(event.event, ids)}
    if isinstance(event, TurnEnd):
        return {"type": event.type, "tool_results": len(event.tool_results)}
    if isinstance(event, AgentEnd):
        out: dict[str, Any] = {"type": event.type, "reason": event.reason}
        if event.pending:
            out["pending"] = [_message(m, ids) for m in event.pending]
        return out
    from .serde import _dump_value  # the dump cassettes and transcripts use (defaults left out)

    return _scrub(_dump_value(event), ids)


def __getattr__(name: str) -> Any:
    if name == "LoopkitExtension":
        cls = _extension_class()
        globals()["LoopkitExtension"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _extension_class() -> type:
    try:
        from syrupy.extensions.amber import AmberSnapshotExtension
    except ImportError:
        raise ImportError("loopkit.snapshot.LoopkitExtension needs syrupy: pip install syrupy") from None

    class LoopkitExtension(AmberSnapshotExtension):  # type: ignore[misc, valid-type]
        """syrupy's amber format for runs, transcripts and events, through :func:`snapshot_data`
        (deterministic: timestamps left out, ids renumbered)."""

        def serialize(self, data: Any, **kwargs: Any) -> str:
            return super().serialize(snapshot_data(data), **kwargs)

    LoopkitExtension.__module__ = __name__
    return LoopkitExtension


__all__ = ["LoopkitExtension", "snapshot_data"]
