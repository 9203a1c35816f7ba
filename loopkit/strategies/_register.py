"""``st.from_type`` strategies for loopkit's message types, registered through hypothesis's
entry point (``[project.entry-points.hypothesis]`` in pyproject.toml)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ..messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UsageCost,
    UserMessage,
)
from ..script import ScriptedCall, Turn
from ._turns import turns

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_NAMES = st.tuples(st.sampled_from(_LOWER), st.text(_LOWER + "0123456789_", max_size=15)).map("".join)
_IDS = st.text(_LOWER + "0123456789", min_size=4, max_size=10).map(lambda s: f"call_{s}")
_JSON_OBJECTS = st.dictionaries(st.text(max_size=8), st.none() | st.booleans() | st.integers() | st.text(max_size=20), max_size=4)
_COUNTS = st.integers(min_value=0, max_value=1_000_000)


def message_strategies() -> dict[type, st.SearchStrategy[Any]]:
    """A strategy for each message type (the values ``st.from_type`` gives once registered)."""
    text = st.builds(TextContent, text=st.text(max_size=40))
    thinking = st.builds(ThinkingContent, thinking=st.text(max_size=40), thinking_signature=st.none() | st.text(max_size=10))
    image = st.builds(ImageContent, data=st.text(_LOWER + _LOWER.upper() + "0123456789+/", max_size=16), mime_type=st.sampled_from(["image/png", "image/jpeg"]))
    call = st.builds(ToolCall, id=_IDS, name=_NAMES, arguments=_JSON_OBJECTS)
    cost = st.builds(UsageCost, **{f: st.floats(0, 10, allow_nan=False) for f in ("input", "output", "cache_read", "cache_write", "total")})
    usage = st.builds(Usage, input=_COUNTS, output=_COUNTS, cache_read=_COUNTS, cache_write=_COUNTS, total_tokens=_COUNTS, cost=cost)
    user = st.builds(UserMessage, content=st.text(max_size=40) | st.lists(text | image, max_size=3))
    assistant = st.builds(
        AssistantMessage,
        content=st.lists(text | thinking | call, max_size=4),
        stop_reason=st.sampled_from(["stop", "length", "toolUse"]),
        usage=usage,
    )
    result = st.builds(
        ToolResultMessage, tool_call_id=_IDS, tool_name=_NAMES, content=st.lists(text, min_size=1, max_size=2), is_error=st.booleans()
    )
    scripted = st.builds(ScriptedCall, name=_NAMES, arguments=_JSON_OBJECTS)
    # a plain answer, or one with the stop and content kinds a run can end in ``stop`` with (as
    # scripts() draws them without a protocol)
    turn = st.builds(Turn, text=st.none() | st.text(max_size=40), tool_calls=st.lists(scripted, max_size=3).map(tuple)) | turns()
    return {
        TextContent: text,
        ThinkingContent: thinking,
        ImageContent: image,
        ToolCall: call,
        UsageCost: cost,
        Usage: usage,
        UserMessage: user,
        AssistantMessage: assistant,
        ToolResultMessage: result,
        ScriptedCall: scripted,
        Turn: turn,
    }


def _hypothesis_setup_hook() -> None:
    """Register the strategies of :func:`message_strategies` with ``st.register_type_strategy``."""
    for cls, strategy in message_strategies().items():
        st.register_type_strategy(cls, strategy)
