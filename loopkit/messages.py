"""Content blocks, messages, usage and stop reasons: the vocabulary of docs/loop-contract.md.

Everything here is a plain dataclass (slots, keyword-only) with a ``type`` or ``role`` tag, so a
message costs little to build on the loop's hot path. :mod:`loopkit.serde` turns them into JSON
data and back for cassettes, snapshots and scenario files.
"""

from __future__ import annotations

import json
import json.scanner
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

StopReason: TypeAlias = Literal["stop", "length", "toolUse", "error", "aborted"]
STOP_REASONS: tuple[str, ...] = ("stop", "length", "toolUse", "error", "aborted")


@dataclass(slots=True)
class TextContent:
    """A block of text. ``text_signature`` is an opaque provider token that must round-trip."""

    text: str
    text_signature: str | None = None
    type: Literal["text"] = "text"


@dataclass(slots=True)
class ThinkingContent:
    """Model reasoning. ``thinking_signature`` (Anthropic signature, Responses reasoning item,
    Gemini thoughtSignature) is passed back to the provider unchanged."""

    thinking: str
    thinking_signature: str | None = None
    redacted: bool = False
    type: Literal["thinking"] = "thinking"


@dataclass(slots=True)
class ImageContent:
    """An image as base64 data."""

    data: str
    mime_type: str
    type: Literal["image"] = "image"


@dataclass(slots=True)
class ToolCall:
    """A tool call requested by the model.

    ``arguments`` is the parsed JSON value the model sent: normally an object (a ``dict``), but any
    JSON value is kept as it came so that the loop can answer a non-object with an error result.
    When the model's argument text was not valid JSON at all, ``arguments`` is ``None`` and
    ``raw_arguments`` holds the text exactly as received; :func:`parse_arguments` builds both.
    """

    id: str
    name: str
    arguments: Any = field(default_factory=dict)
    raw_arguments: str | None = None
    thought_signature: str | None = None
    type: Literal["toolCall"] = "toolCall"

    @property
    def arguments_ok(self) -> bool:
        """True when the arguments are a JSON object that a tool can be called with."""
        return self.raw_arguments is None and isinstance(self.arguments, dict)


ContentBlock: TypeAlias = TextContent | ThinkingContent | ImageContent | ToolCall
AssistantBlock: TypeAlias = TextContent | ThinkingContent | ToolCall
UserBlock: TypeAlias = TextContent | ImageContent


@dataclass(slots=True, frozen=True)
class UsageCost:
    """Cost in dollars, per category (immutable, so one zero instance serves every message)."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total: float = 0.0


ZERO_COST = UsageCost()


@dataclass(slots=True)
class Usage:
    """Token counts of one model call. The loop never sums them; :func:`total_usage` does."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: UsageCost = ZERO_COST


@dataclass(slots=True)
class UserMessage:
    """A user turn: the prompt, a steering message or a follow-up."""

    content: str | list[UserBlock]
    timestamp: int = 0
    role: Literal["user"] = "user"

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "".join(b.text for b in self.content if isinstance(b, TextContent))


@dataclass(slots=True)
class AssistantMessage:
    """One model answer. ``stop_reason`` ``error``/``aborted`` ends the run; tool calls are found
    from the ToolCall blocks in ``content``, whatever the stop reason (docs/loop-contract.md)."""

    content: list[AssistantBlock] = field(default_factory=list)
    stop_reason: StopReason = "stop"
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    error_message: str | None = None
    error_type: str | None = None
    response_id: str | None = None
    timestamp: int = 0
    role: Literal["assistant"] = "assistant"

    @property
    def text(self) -> str:
        """The concatenated text blocks, with no separator (docs/loop-contract.md)."""
        return "".join(b.text for b in self.content if isinstance(b, TextContent))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if isinstance(b, ToolCall)]


@dataclass(slots=True)
class ToolResultMessage:
    """The result of one tool call, fed back to the model."""

    tool_call_id: str
    tool_name: str
    content: list[UserBlock] = field(default_factory=list)
    details: Any = None
    is_error: bool = False
    timestamp: int = 0
    role: Literal["toolResult"] = "toolResult"

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextContent))


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage


def parse_arguments(text: str) -> tuple[Any, str | None]:
    """Parse a tool call's argument text as the wire sent it.

    Returns ``(value, None)`` when the text is JSON (any JSON value; an empty string counts as
    ``{}``, which is how providers send a call without arguments), and ``(None, text)`` when it is
    not, so that the raw text survives for the error result instead of becoming ``{}``.
    """
    try:
        value, end = _scan(text, 0)  # the C scanner: no whitespace handling, so fall back below
        if end == len(text):
            return value, None
    except (StopIteration, ValueError):
        pass
    if not text.strip():
        return {}, None
    try:
        return json.loads(text), None
    except ValueError:
        return None, text


_scan = json.scanner.make_scanner(json.JSONDecoder())


def _no_default(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _c_encoder(item_separator: str, key_separator: str) -> Any:
    # the C encoder object itself: json.dumps and JSONEncoder.encode build a new one on every call
    from json.encoder import c_make_encoder, encode_basestring

    if c_make_encoder is None:  # pragma: no cover - Python builds without the _json accelerator
        return None
    return c_make_encoder(None, _no_default, encode_basestring, None, key_separator, item_separator, False, False, True)


_COMPACT = _c_encoder(",", ":")
_SPACED = _c_encoder(", ", ": ")


def dumps(value: Any, *, compact: bool = True) -> str:
    """``json.dumps(value, ensure_ascii=False)`` with ``(",", ":")`` separators (or json's default
    ``(", ", ": ")`` when ``compact=False``), about twice as fast for small values: the loop and the
    adapters encode on every round."""
    encoder = _COMPACT if compact else _SPACED
    if encoder is None:  # pragma: no cover
        return json.dumps(value, ensure_ascii=False, separators=(",", ":") if compact else None)
    return "".join(encoder(value, 0))


def arguments_json(call: ToolCall) -> str:
    """The argument text to put on the wire for ``call``: the raw text when it never parsed."""
    if call.raw_arguments is not None:
        return call.raw_arguments
    return dumps(call.arguments)


def user(content: str | list[UserBlock], *, timestamp: int = 0) -> UserMessage:
    """Shorthand for a :class:`UserMessage`."""
    return UserMessage(content=content, timestamp=timestamp)


def total_usage(messages: list[Message]) -> Usage:
    """Sum the usage of every assistant message in ``messages``."""
    usages = [m.usage for m in messages if isinstance(m, AssistantMessage)]
    cost = UsageCost(
        input=sum(u.cost.input for u in usages),
        output=sum(u.cost.output for u in usages),
        cache_read=sum(u.cost.cache_read for u in usages),
        cache_write=sum(u.cost.cache_write for u in usages),
        total=sum(u.cost.total for u in usages),
    )
    return Usage(
        input=sum(u.input for u in usages),
        output=sum(u.output for u in usages),
        cache_read=sum(u.cache_read for u in usages),
        cache_write=sum(u.cache_write for u in usages),
        total_tokens=sum(u.total_tokens for u in usages),
        cost=cost,
    )
