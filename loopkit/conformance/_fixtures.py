"""What the cases share: the tools, prompt and history they send, and the checks they all make."""

from __future__ import annotations

import base64
from typing import Any

from ..messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, user
from ..provider import ModelRequest, ToolSpec
from ._case import Context
from ._harness import Exchange
from ._wire import Wire

WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. Paris"},
            "units": {"type": "string", "enum": ["c", "f"]},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
)
CLOCK = ToolSpec(
    name="get_time",
    description="Local time in an IANA time zone.",
    parameters={"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]},
)
TOOLS = (WEATHER, CLOCK)
PROMPT = "What's the weather in Paris, and the time in Tokyo?"
SYSTEM = "You are a terse assistant. Answer in one line."
SIGNATURE = base64.b64encode(b"conformance-signature-0001").decode()
UNICODE_TEXT = 'Grüße aus Köln 🌧️ — 東京は晴れ; مرحبا; e\u0301; "quoted" \\ back\\slash\nnew line'
UNICODE_ARGS = {"city": "Zürich 🏔️ 東京", "units": "c"}


def call_ids(wire: Wire) -> tuple[str, str]:
    """Two tool-call ids in the protocol's own style."""
    return wire.call_id_prefix + "0cnfA1b2C3d4E5f6G7h8i9", wire.call_id_prefix + "1cnfJ0k1L2m3N4o5P6q7r8"


def request(*, messages: list[Any] | None = None, tools: tuple[ToolSpec, ...] = TOOLS, **kw: Any) -> ModelRequest:
    return ModelRequest(messages if messages is not None else [user(PROMPT)], tools=tools, **kw)


def history(wire: Wire) -> list[Any]:
    """A prompt, an assistant turn with text and two tool calls, and their results (the second an error)."""
    a, b = call_ids(wire)
    assistant = AssistantMessage(
        content=[
            TextContent(text="Let me check both."),
            ToolCall(id=a, name="get_weather", arguments={"city": "Paris", "units": "c"}),
            ToolCall(id=b, name="get_time", arguments={"tz": "Asia/Tokyo"}),
        ],
        stop_reason="toolUse",
    )
    return [
        user(PROMPT),
        assistant,
        ToolResultMessage(tool_call_id=a, tool_name="get_weather", content=[TextContent(text="18 C, clear")]),
        ToolResultMessage(tool_call_id=b, tool_name="get_time", content=[TextContent(text="Unknown time zone: Asia/Tokyo")], is_error=True),
    ]


def twice_history(wire: Wire) -> list[Any]:
    """A prompt, an assistant turn calling the same tool twice with different arguments, and
    the two results (in call order, told apart only by their call ids)."""
    a, b = call_ids(wire)
    assistant = AssistantMessage(
        content=[
            ToolCall(id=a, name="get_weather", arguments={"city": "Paris"}),
            ToolCall(id=b, name="get_weather", arguments={"city": "Tokyo", "units": "f"}),
        ],
        stop_reason="toolUse",
    )
    return [
        user("Weather in Paris and in Tokyo?"),
        assistant,
        ToolResultMessage(tool_call_id=a, tool_name="get_weather", content=[TextContent(text="18 C, clear")]),
        ToolResultMessage(tool_call_id=b, tool_name="get_weather", content=[TextContent(text="48 F, rain")]),
    ]


TWICE_CALLS = [("get_weather", {"city": "Paris"}, "18 C, clear"), ("get_weather", {"city": "Tokyo", "units": "f"}, "48 F, rain")]


def finished(ctx: Context, ex: Exchange, what: str = "the call") -> AssistantMessage | None:
    """The message of a call that must complete normally; records a mismatch otherwise."""
    if ex.failure() is not None or ex.contract is not None or ex.message is None:
        ctx.fail(what, "a complete stream ending in a 'done' event", ex.outcome())
        return None
    return ex.message


def accepted(ctx: Context, ex: Exchange) -> None:
    """A request case also needs the simulator (the real API's checks) to accept the request."""
    if ex.failure() is not None:
        ctx.fail("the simulator's answer to the request", "accepted (HTTP 200)", ex.failure())


def answer(ctx: Context, turns: list[Any], req: ModelRequest | None = None, **kw: Any) -> Exchange:
    return ctx.harness.run(req if req is not None else request(), turns, **kw)


def only_calls(m: AssistantMessage) -> list[ToolCall]:
    return [b for b in m.content if isinstance(b, ToolCall)]


def kinds(m: AssistantMessage) -> list[str]:
    return [b.type for b in m.content]
