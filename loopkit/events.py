"""Provider stream events and loop (agent) events.

Provider stream events are what a :class:`~loopkit.provider.Provider` yields for one model call
(docs/loop-contract.md §7.6): ``start``, then ``text_*`` / ``thinking_*`` / ``toolcall_*`` start-delta-end
triples addressed by ``content_index``, then one terminal ``done`` or ``error``. They carry only
what changed; :mod:`loopkit.accumulate` folds them into an :class:`AssistantMessage`.

Loop events are what a run emits (docs/loop-contract.md), from :class:`AgentStart` to
:class:`AgentEnd`. :class:`AgentEnd` also says *why* the run ended and returns any steering or
follow-up messages that were polled but never injected (loopkit never drops them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from .messages import (
    AssistantMessage,
    Message,
    StopReason,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserBlock,
)

# --- provider stream events -------------------------------------------------------------------


@dataclass(slots=True)
class StartEvent:
    """The provider started answering. Metadata fills the message's api/provider/model fields."""

    api: str = ""
    provider: str = ""
    model: str = ""
    response_id: str | None = None
    type: Literal["start"] = "start"


@dataclass(slots=True)
class TextStartEvent:
    content_index: int
    type: Literal["text_start"] = "text_start"


@dataclass(slots=True)
class TextDeltaEvent:
    content_index: int
    delta: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(slots=True)
class TextEndEvent:
    content_index: int
    text_signature: str | None = None
    type: Literal["text_end"] = "text_end"


@dataclass(slots=True)
class ThinkingStartEvent:
    content_index: int
    redacted: bool = False
    type: Literal["thinking_start"] = "thinking_start"


@dataclass(slots=True)
class ThinkingDeltaEvent:
    content_index: int
    delta: str
    type: Literal["thinking_delta"] = "thinking_delta"


@dataclass(slots=True)
class ThinkingEndEvent:
    content_index: int
    thinking_signature: str | None = None
    type: Literal["thinking_end"] = "thinking_end"


@dataclass(slots=True)
class ToolCallStartEvent:
    content_index: int
    id: str
    name: str
    type: Literal["toolcall_start"] = "toolcall_start"


@dataclass(slots=True)
class ToolCallDeltaEvent:
    """A fragment of the argument JSON text (fragments may split anywhere, even inside a
    UTF-8 character's escape or a string)."""

    content_index: int
    delta: str
    type: Literal["toolcall_delta"] = "toolcall_delta"


@dataclass(slots=True)
class ToolCallEndEvent:
    """The call is complete. ``tool_call`` is the finished call when the provider has it whole
    (Gemini, or a non-streaming body); otherwise the accumulator parses the joined fragments."""

    content_index: int
    tool_call: ToolCall | None = None
    thought_signature: str | None = None
    type: Literal["toolcall_end"] = "toolcall_end"


@dataclass(slots=True)
class DoneEvent:
    """The model finished. ``message``, when given, replaces what was accumulated."""

    reason: Literal["stop", "length", "toolUse"] = "stop"
    usage: Usage | None = None
    message: AssistantMessage | None = None
    type: Literal["done"] = "done"


@dataclass(slots=True)
class ErrorEvent:
    """The call failed (``error``) or was cancelled (``aborted``); the run ends."""

    reason: Literal["error", "aborted"] = "error"
    error_message: str = ""
    error_type: str | None = None
    usage: Usage | None = None
    message: AssistantMessage | None = None
    type: Literal["error"] = "error"


StreamEvent: TypeAlias = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)

DELTA_EVENT_TYPES: tuple[type, ...] = (
    TextStartEvent,
    TextDeltaEvent,
    TextEndEvent,
    ThinkingStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ToolCallStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
)

# --- tool results as a tool returns them ------------------------------------------------------


@dataclass(slots=True)
class ToolResult:
    """What a tool's execution produced (``AgentToolResult`` in the spec)."""

    content: list[UserBlock] = field(default_factory=list)
    details: Any = None
    is_error: bool = False

    @property
    def text(self) -> str:
        return "".join(getattr(b, "text", "") for b in self.content)


# --- loop events ------------------------------------------------------------------------------

EndReason: TypeAlias = Literal["stop", "error", "aborted", "max_iterations"]


@dataclass(slots=True)
class AgentStart:
    type: Literal["agent_start"] = "agent_start"


@dataclass(slots=True)
class TurnStart:
    type: Literal["turn_start"] = "turn_start"


@dataclass(slots=True)
class MessageStart:
    message: Message
    type: Literal["message_start"] = "message_start"


@dataclass(slots=True)
class MessageUpdate:
    """One provider delta. ``message`` is the partial assistant message being built (the same
    object for every update of one call, so it shows the latest state)."""

    message: AssistantMessage
    event: StreamEvent
    type: Literal["message_update"] = "message_update"


@dataclass(slots=True)
class MessageEnd:
    message: Message
    type: Literal["message_end"] = "message_end"


@dataclass(slots=True)
class ToolExecutionStart:
    """``args`` are the raw arguments the model sent, before coercion."""

    tool_call_id: str
    tool_name: str
    args: Any
    type: Literal["tool_execution_start"] = "tool_execution_start"


@dataclass(slots=True)
class ToolExecutionUpdate:
    tool_call_id: str
    tool_name: str
    args: Any
    partial_result: Any
    type: Literal["tool_execution_update"] = "tool_execution_update"


@dataclass(slots=True)
class ToolExecutionEnd:
    tool_call_id: str
    tool_name: str
    result: ToolResult
    is_error: bool
    type: Literal["tool_execution_end"] = "tool_execution_end"


@dataclass(slots=True)
class TurnEnd:
    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    type: Literal["turn_end"] = "turn_end"


@dataclass(slots=True)
class AgentEnd:
    """The run is over. ``messages`` are the run's new messages; ``pending`` are steering or
    follow-up messages that were polled but not injected (for example at the cap)."""

    messages: list[Message]
    reason: EndReason
    pending: list[Message] = field(default_factory=list)
    type: Literal["agent_end"] = "agent_end"


AgentEvent: TypeAlias = (
    AgentStart
    | TurnStart
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
    | TurnEnd
    | AgentEnd
)

__all__ = [
    "AgentEnd",
    "AgentEvent",
    "AgentStart",
    "DoneEvent",
    "EndReason",
    "ErrorEvent",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "StartEvent",
    "StopReason",
    "StreamEvent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingStartEvent",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolResult",
    "TurnEnd",
    "TurnStart",
]
