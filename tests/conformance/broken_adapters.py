"""Deliberately broken adapters: each plants one bug the conformance suite must catch.

Each is a subclass of a real adapter with one hook bent. Stream bugs wrap the adapter's own
stream decoder (so they work over any built-in adapter); request bugs edit the body the adapter
built. ``BROKEN`` maps a factory name to (factory, protocol, the case ids that must fail).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from loopkit.events import (
    DoneEvent,
    ErrorEvent,
    StreamEvent,
    TextEndEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from loopkit.messages import ToolCall
from loopkit.providers import adapter_class


class _FilteringDecoder:
    """Wraps a stream decoder, passing every batch of events through ``bend``."""

    def __init__(self, inner: Any, bend: Callable[[list[StreamEvent]], list[StreamEvent]]) -> None:
        self.inner, self.bend = inner, bend

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        return self.bend(self.inner.feed(chunk))

    def close(self) -> list[StreamEvent]:
        return self.bend(self.inner.close())


def _stream_bug(base: type, bend_factory: Callable[[], Callable[[list[StreamEvent]], list[StreamEvent]]], name: str) -> type:
    def stream_decoder(self: Any) -> Any:
        return _FilteringDecoder(base.stream_decoder(self), bend_factory())

    return type(name, (base,), {"stream_decoder": stream_decoder})


def drops_second_call() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Keeps only the first tool call of an answer."""
    state = {"calls": 0, "dropped": set()}

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        out = []
        for e in events:
            if isinstance(e, ToolCallStartEvent) or (isinstance(e, ToolCallEndEvent) and e.tool_call is not None):
                state["calls"] += 1
                if state["calls"] == 2:
                    state["dropped"].add(e.content_index)
            if getattr(e, "content_index", None) in state["dropped"]:
                continue
            out.append(e)
        return out

    return bend


def repeats_call_id() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Gives every tool call the id of the first."""
    state: dict[str, Any] = {"first": None}

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        for e in events:
            if isinstance(e, ToolCallStartEvent):
                state["first"] = state["first"] or e.id
                e.id = state["first"]
            elif isinstance(e, ToolCallEndEvent) and e.tool_call is not None:
                state["first"] = state["first"] or e.tool_call.id
                e.tool_call.id = state["first"]
        return events

    return bend


def malformed_to_empty() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Turns argument text that is not JSON into ``{}`` (the classic ``parse(...) or {}``)."""
    starts: dict[int, ToolCallStartEvent] = {}
    fragments: dict[int, list[str]] = {}

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for e in events:
            if isinstance(e, ToolCallStartEvent):
                starts[e.content_index], fragments[e.content_index] = e, []
            elif isinstance(e, ToolCallDeltaEvent):
                fragments[e.content_index].append(e.delta)
            elif isinstance(e, ToolCallEndEvent) and e.tool_call is None and e.content_index in starts:
                text = "".join(fragments.pop(e.content_index))
                try:
                    json.loads(text or "{}")
                except ValueError:
                    start = starts[e.content_index]
                    e = ToolCallEndEvent(content_index=e.content_index, tool_call=ToolCall(id=start.id, name=start.name, arguments={}))
            out.append(e)
        return out

    return bend


def stops_at_first_text() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Ignores every block after the first text block ends (keeps the terminal event)."""
    state = {"done": False}

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        out = []
        for e in events:
            if state["done"] and not isinstance(e, (DoneEvent, ErrorEvent)):
                continue
            out.append(e)
            if isinstance(e, TextEndEvent):
                state["done"] = True
        return out

    return bend


def _request_bug(base: type, edit: Callable[[dict[str, Any]], None], name: str) -> type:
    def build_request(self: Any, request: Any) -> Any:
        call = base.build_request(self, request)
        edit(call.json)
        return call

    return type(name, (base,), {"build_request": build_request})


def bedrock_required_to_auto(body: dict[str, Any]) -> None:
    config = body.get("toolConfig") or {}
    if config.get("toolChoice") == {"any": {}}:
        config["toolChoice"] = {"auto": {}}


def bedrock_loses_is_error(body: dict[str, Any]) -> None:
    for m in body.get("messages", []):
        for b in m.get("content", []):
            b.get("toolResult", {}).pop("status", None)


def _ignores_retry_after(base: type) -> type:
    def map_error(self: Any, status: int, headers: Any, body: bytes) -> Any:
        err = base.map_error(self, status, headers, body)
        err.retry_after = None
        return err

    return type(f"IgnoresRetryAfter{base.__name__}", (base,), {"map_error": map_error})


def factory_for(cls: type) -> Callable[..., Any]:
    def factory(*, transport: Any = None, base_url: str | None = None, retry: Any = None) -> Any:
        kwargs: dict[str, Any] = {"model": "sim-model", "api_key": "sim-key", "transport": transport, "retry": retry}
        if base_url is not None:
            kwargs["base_url"] = base_url
        return cls(**kwargs)

    return factory


Bedrock = adapter_class("bedrock")

DropsSecondCall = _stream_bug(Bedrock, drops_second_call, "DropsSecondCall")
RepeatsCallId = _stream_bug(Bedrock, repeats_call_id, "RepeatsCallId")
MalformedToEmpty = _stream_bug(Bedrock, malformed_to_empty, "MalformedToEmpty")
StopsAtFirstText = _stream_bug(Bedrock, stops_at_first_text, "StopsAtFirstText")
RequiredToAuto = _request_bug(Bedrock, bedrock_required_to_auto, "RequiredToAuto")
LosesIsError = _request_bug(Bedrock, bedrock_loses_is_error, "LosesIsError")
IgnoresRetryAfter = _ignores_retry_after(Bedrock)

drops_second_call_factory = factory_for(DropsSecondCall)
repeats_call_id_factory = factory_for(RepeatsCallId)
malformed_to_empty_factory = factory_for(MalformedToEmpty)
stops_at_first_text_factory = factory_for(StopsAtFirstText)
required_to_auto_factory = factory_for(RequiredToAuto)
loses_is_error_factory = factory_for(LosesIsError)
ignores_retry_after_factory = factory_for(IgnoresRetryAfter)

BROKEN: dict[str, tuple[Callable[..., Any], str, set[str]]] = {
    "drops_second_call": (drops_second_call_factory, "bedrock", {"stream.parallel_calls"}),
    "required_to_auto": (required_to_auto_factory, "bedrock", {"request.tool_choice.required"}),
    "loses_is_error": (loses_is_error_factory, "bedrock", {"request.history.is_error"}),
    "repeats_call_id": (repeats_call_id_factory, "bedrock", {"stream.parallel_calls"}),
    "malformed_to_empty": (malformed_to_empty_factory, "bedrock", {"stream.arguments.malformed", "stream.length_mid_call"}),
    "ignores_retry_after": (ignores_retry_after_factory, "bedrock", {"failure.http_429_retry_after"}),
    "stops_at_first_text": (stops_at_first_text_factory, "bedrock", {"stream.text_then_tool_call", "stream.unicode", "stream.utf8_split"}),
}
