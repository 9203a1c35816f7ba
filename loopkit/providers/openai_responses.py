"""OpenAI Responses (docs/wire.md §2): a pure codec plus a thin provider.

- :func:`build_body`: a :class:`ModelRequest` -> the ``/responses`` JSON body (stateless: the
  whole history goes in ``input`` as items).
- :class:`ResponsesStreamDecoder`: the typed event stream -> stream events, ending at
  ``response.completed`` / ``response.incomplete``; ``response.failed`` and ``error`` events raise
  a :class:`~loopkit.errors.StreamError`.
- :func:`decode_response`: a non-streaming ``Response`` object -> stream events.
- :class:`OpenAIResponsesProvider`: the HTTP half from :class:`HttpProvider`.

Round-tripping: a reasoning item becomes a :class:`ThinkingContent` (``redacted`` when it has no
summary, only ``encrypted_content``) whose ``thinking`` is the
summary text and whose ``thinking_signature`` is the item itself as JSON (``id``, ``summary``,
``encrypted_content``), sent back unchanged in ``input``. A function call's ``call_id`` is the
:class:`ToolCall` id (what ``function_call_output`` references); its item id (``fc_...``) is kept
in ``ToolCall.thought_signature`` and echoed as the item's ``id`` so the server can pair it with its
reasoning item. Function tools are sent with ``"strict": false`` (the API's default is strict,
which rejects ordinary JSON Schemas). ``is_error`` results reach the model as their text alone.
Refusals and ``content_filter`` end the call with stop reason ``error`` (``error_type``
``refusal`` / ``content_filter``), the refusal text kept as a text block.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import ConnectionClosedError, ProviderError, UsageError, WireError
from ..events import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    StreamEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from ..messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    arguments_json,
    parse_arguments,
)
from ..provider import ModelRequest, forced_tool_name
from ._http import HttpCall, WireHistory, json_or_wire_error
from ._openai_common import OpenAIHttpProvider, image_url, result_text, stream_error, usage_from, wire_entries
from ._sse import SSEDecoder

API = "openai_responses"

# --- request ------------------------------------------------------------------------------------


def build_body(request: ModelRequest, *, model: str, stream: bool = True, history: WireHistory | None = None) -> dict[str, Any]:
    """The Responses body for ``request`` (tool_choice and parallel flag per docs/loop-contract.md §7.1).

    Args:
        history: reuses the previous request's converted messages (see :class:`WireHistory`).
    """
    body: dict[str, Any] = {"model": request.model or model, "input": input_items(request, history)}
    if request.system:
        body["instructions"] = request.system
    if stream:
        body["stream"] = True
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    if request.tools:
        # strict defaults to true on this API (and the SDK requires the key): send False unless asked
        body["tools"] = [
            {"type": "function", "name": t.name, "description": t.description, "parameters": dict(t.parameters), "strict": t.strict is True}
            for t in request.tools
        ]
        choice = request.tool_choice
        if choice in ("auto", "required", "none"):
            body["tool_choice"] = choice
        elif choice is not None:
            name = forced_tool_name(choice)
            if name is None:
                raise UsageError(f"{API}: tool_choice {choice!r} is not 'auto', 'required', 'none' or {{'type': 'function', 'name': ...}}")
            body["tool_choice"] = {"type": "function", "name": name}
        if request.parallel_tool_calls is False:
            body["parallel_tool_calls"] = False
    return body


def input_items(request: ModelRequest, history: WireHistory | None = None) -> list[dict[str, Any]]:
    """The ``input`` items for the history. Assistant messages that ended in ``error``/``aborted``
    are left out with the results of their calls (they may be half-written)."""
    return wire_entries(request.messages, _items, history)


def _items(m: Any) -> list[dict[str, Any]]:
    if isinstance(m, UserMessage):
        return [{"role": "user", "content": _user_content(m.content)}]
    if isinstance(m, AssistantMessage):
        out: list[dict[str, Any]] = []
        _assistant_items(m, out)
        return out
    if isinstance(m, ToolResultMessage):
        return [{"type": "function_call_output", "call_id": m.tool_call_id, "output": _output(m)}]
    raise UsageError(f"{API}: cannot send a {type(m).__name__} as an input item")


def _user_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for b in content:
        if isinstance(b, TextContent):
            parts.append({"type": "input_text", "text": b.text})
        elif isinstance(b, ImageContent):
            parts.append({"type": "input_image", "image_url": image_url(b), "detail": "auto"})
    return parts


def _output(m: ToolResultMessage) -> Any:
    if not any(isinstance(b, ImageContent) for b in m.content):
        return result_text(m.content)
    return _user_content(m.content)


def _assistant_items(m: AssistantMessage, out: list[dict[str, Any]]) -> None:
    text: list[str] = []

    def flush() -> None:
        if text:
            out.append({"role": "assistant", "content": "".join(text)})
            text.clear()

    for b in m.content:
        if isinstance(b, TextContent):
            text.append(b.text)
            continue
        flush()
        if isinstance(b, ThinkingContent):
            item = _reasoning_item(b)
            if item is not None:
                out.append(item)
        elif isinstance(b, ToolCall):
            fc: dict[str, Any] = {"type": "function_call", "call_id": b.id, "name": b.name, "arguments": arguments_json(b)}
            if b.thought_signature:
                fc["id"] = b.thought_signature
            out.append(fc)
    flush()


def _reasoning_item(block: ThinkingContent) -> dict[str, Any] | None:
    """The reasoning item kept in the signature; thinking from other providers is not sent."""
    if not block.thinking_signature:
        return None
    try:
        item = json.loads(block.thinking_signature)
    except ValueError:
        return None
    if not isinstance(item, dict) or item.get("type") != "reasoning":
        return None
    return item


def _start_reasoning(state: dict[str, Any], out: list[StreamEvent], redacted: bool = False) -> None:
    if not state.get("started", True):
        state["started"] = True
        out.append(ThinkingStartEvent(content_index=state["index"], redacted=redacted))


def _signature(item: Mapping[str, Any]) -> str:
    keep = {"type": "reasoning", "id": item.get("id"), "summary": item.get("summary") or []}
    if item.get("encrypted_content"):
        keep["encrypted_content"] = item["encrypted_content"]
    return json.dumps(keep, ensure_ascii=False, separators=(",", ":"))


# --- response -----------------------------------------------------------------------------------


def _usage(response: Mapping[str, Any]) -> Usage | None:
    u = response.get("usage")
    if not isinstance(u, dict):
        return None
    return usage_from(u.get("input_tokens"), u.get("output_tokens"), u.get("total_tokens"), u.get("input_tokens_details"))


def _terminal(response: Mapping[str, Any], has_calls: bool, refusal: str) -> StreamEvent:
    usage = _usage(response)
    status = response.get("status")
    details = response.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    if refusal:
        return ErrorEvent(error_message=refusal, error_type="refusal", usage=usage)
    if reason == "content_filter":
        return ErrorEvent(error_message="the answer was stopped by OpenAI's content filter", error_type="content_filter", usage=usage)
    if status == "incomplete":
        return DoneEvent(reason="length", usage=usage)  # max_output_tokens (or another cut-off)
    return DoneEvent(reason="toolUse" if has_calls else "stop", usage=usage)


def _failed(response: Mapping[str, Any]) -> ProviderError:
    err = response.get("error")
    if isinstance(err, dict):
        return stream_error({"message": err.get("message"), "type": err.get("code")}, fallback="the response failed")  # ResponseError: {code, message}
    return stream_error(None, fallback="the response failed")


class ResponsesStreamDecoder:
    """Responses SSE bytes -> stream events (feed any split of the bytes)."""

    __slots__ = ("_sse", "_started", "_next", "_items", "_parts", "_open_parts", "_streamed", "_refusal", "_has_calls", "_done")

    def __init__(self) -> None:
        self._sse = SSEDecoder()
        self._started = False
        self._next = 0
        self._items: dict[Any, dict[str, Any]] = {}  # output_index -> state (every item event carries it)
        self._parts: dict[tuple[int, int], int] = {}  # (output_index, content_index) -> block
        self._open_parts: list[int] = []
        self._streamed: set[int] = set()  # text blocks that received deltas
        self._refusal: list[str] = []
        self._has_calls = False
        self._done = False

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for ev in self._sse.feed(chunk):
            self._on_event(ev.event, ev.data, out)
        return out

    def close(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for ev in self._sse.close():
            self._on_event(ev.event, ev.data, out)
        if not self._done:
            raise ConnectionClosedError(f"{API}: the stream ended before response.completed", provider="openai")
        return out

    def _new_block(self, out: list[StreamEvent]) -> int:
        self._start_pending(out)  # blocks start in order: a reasoning item before this one gets no text now
        index = self._next
        self._next += 1
        return index

    def _start_pending(self, out: list[StreamEvent]) -> None:
        """Start each reasoning item that got no text yet (only a stream that never closed it has one)."""
        for state in self._items.values():  # _start_reasoning starts only a reasoning item not started yet
            _start_reasoning(state, out, redacted=bool(state["item"].get("encrypted_content")))

    def _on_event(self, name: str, data: str, out: list[StreamEvent]) -> None:
        if self._done or data.startswith("[DONE]"):
            return
        ev = json_or_wire_error(data, f"{API} event {name!r}")
        if not isinstance(ev, dict):
            return
        kind = ev.get("type") or name
        if not self._started:
            self._started = True
            response = ev.get("response") if isinstance(ev.get("response"), dict) else {}
            out.append(StartEvent(api=API, provider="openai", model=str(response.get("model") or ""), response_id=response.get("id")))
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, ev, out)

    # --- items ----------------------------------------------------------------------------

    def _item_added(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> None:
        item = ev.get("item")
        if not isinstance(item, dict):
            return
        kind = item.get("type")
        state: dict[str, Any] = {"type": kind, "item": item, "index": None, "args": False, "text": False}  # args/text: some came
        if kind == "reasoning":
            # started at its first summary text, or at its end: only then is it known whether it
            # is redacted (encrypted reasoning with no summary)
            state["index"] = self._new_block(out)
            state["started"] = False
        elif kind == "function_call":
            self._has_calls = True
            state["index"] = self._new_block(out)
            out.append(ToolCallStartEvent(content_index=state["index"], id=str(item.get("call_id") or item.get("id") or ""), name=str(item.get("name") or "")))
            if item.get("arguments"):
                state["args"] = True
                out.append(ToolCallDeltaEvent(content_index=state["index"], delta=item["arguments"]))
        self._items[ev.get("output_index")] = state

    def _state(self, ev: Mapping[str, Any]) -> dict[str, Any] | None:
        return self._items.get(ev.get("output_index"))

    def _item_done(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> None:
        item = ev.get("item")
        if not isinstance(item, dict):
            return
        state = self._state(ev)
        if state is None:  # a done without its added: treat it as both
            self._item_added(ev, out)
            state = self._items[ev.get("output_index")]
        kind = state["type"]
        index = state["index"]
        if kind == "reasoning" and index is not None:
            if not state["text"]:
                summary = "\n\n".join(p.get("text", "") for p in item.get("summary") or () if isinstance(p, dict))
                _start_reasoning(state, out, redacted=not summary and bool(item.get("encrypted_content")))
                if summary:
                    out.append(ThinkingDeltaEvent(content_index=index, delta=summary))
            out.append(ThinkingEndEvent(content_index=index, thinking_signature=_signature(item)))
            state["index"] = None
        elif kind == "function_call" and index is not None:
            if not state["args"] and item.get("arguments"):
                out.append(ToolCallDeltaEvent(content_index=index, delta=item["arguments"]))
            out.append(ToolCallEndEvent(content_index=index, thought_signature=item.get("id")))
            state["index"] = None
        elif kind == "message":
            self._close_parts(out)

    # --- message parts --------------------------------------------------------------------

    def _part(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> int:
        key = (ev.get("output_index", 0), ev.get("content_index", 0))
        index = self._parts.get(key)
        if index is None:
            index = self._parts[key] = self._new_block(out)
            self._open_parts.append(index)
            out.append(TextStartEvent(content_index=index))
        return index

    def _part_added(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> None:
        self._part(ev, out)

    def _text_delta(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> None:
        delta = ev.get("delta")
        if isinstance(delta, str) and delta:
            index = self._part(ev, out)
            self._streamed.add(index)
            out.append(TextDeltaEvent(content_index=index, delta=delta))

    def _refusal_delta(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> None:
        delta = ev.get("delta")
        if isinstance(delta, str) and delta:
            self._refusal.append(delta)
            self._text_delta(ev, out)

    def _text_done(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> None:
        """``output_text.done`` / ``refusal.done``: the whole text, used only when no delta came."""
        text = ev.get("text") if ev.get("type") == "response.output_text.done" else ev.get("refusal")
        index = self._parts.get((ev.get("output_index", 0), ev.get("content_index", 0)))
        if isinstance(text, str) and text and (index is None or index not in self._streamed):
            (self._refusal_delta if ev.get("type") == "response.refusal.done" else self._text_delta)({**ev, "delta": text}, out)

    def _close_parts(self, out: list[StreamEvent]) -> None:
        for index in self._open_parts:
            out.append(TextEndEvent(content_index=index))
        self._open_parts.clear()

    # --- reasoning and arguments ----------------------------------------------------------

    def _reasoning_delta(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> None:
        state = self._state(ev)
        delta = ev.get("delta")
        if state is not None and state["index"] is not None and isinstance(delta, str) and delta:
            _start_reasoning(state, out)
            state["text"] = True
            out.append(ThinkingDeltaEvent(content_index=state["index"], delta=delta))

    def _summary_part_added(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> None:
        state = self._state(ev)
        if state is not None and state["index"] is not None and state["text"]:
            out.append(ThinkingDeltaEvent(content_index=state["index"], delta="\n\n"))  # between summary parts

    def _args_delta(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> None:
        state = self._state(ev)
        delta = ev.get("delta")
        if state is not None and state["index"] is not None and isinstance(delta, str) and delta:
            state["args"] = True
            out.append(ToolCallDeltaEvent(content_index=state["index"], delta=delta))

    def _args_done(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> None:
        state = self._state(ev)
        args = ev.get("arguments")
        if state is not None and state["index"] is not None and not state["args"] and isinstance(args, str) and args:
            state["args"] = True
            out.append(ToolCallDeltaEvent(content_index=state["index"], delta=args))

    # --- terminal -------------------------------------------------------------------------

    def _close_all(self, out: list[StreamEvent]) -> None:
        """End the blocks of items the stream never closed (a translating proxy may send no
        ``.done`` events, docs/wire.md §2.7 #5), with what streamed of them."""
        self._close_parts(out)
        self._start_pending(out)
        for state in self._items.values():
            if state["index"] is not None:
                if state["type"] == "reasoning":
                    out.append(ThinkingEndEvent(content_index=state["index"], thinking_signature=_signature(state["item"])))
                else:
                    out.append(ToolCallEndEvent(content_index=state["index"], thought_signature=state["item"].get("id")))

    def _completed(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> None:
        response = ev.get("response") if isinstance(ev.get("response"), dict) else {}
        self._close_all(out)
        out.append(_terminal(response, self._has_calls, "".join(self._refusal)))
        self._done = True

    def _failed(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> None:
        response = ev.get("response") if isinstance(ev.get("response"), dict) else {}
        raise _failed(response)

    def _error(self, ev: Mapping[str, Any], out: list[StreamEvent]) -> None:
        nested = ev.get("error")
        raise stream_error(nested if isinstance(nested, dict) else {"message": ev.get("message"), "type": ev.get("code")})


_HANDLERS = {
    "response.output_item.added": ResponsesStreamDecoder._item_added,
    "response.output_item.done": ResponsesStreamDecoder._item_done,
    "response.content_part.added": ResponsesStreamDecoder._part_added,
    "response.output_text.delta": ResponsesStreamDecoder._text_delta,
    "response.refusal.delta": ResponsesStreamDecoder._refusal_delta,
    "response.output_text.done": ResponsesStreamDecoder._text_done,
    "response.refusal.done": ResponsesStreamDecoder._text_done,
    "response.reasoning_summary_text.delta": ResponsesStreamDecoder._reasoning_delta,
    "response.reasoning_text.delta": ResponsesStreamDecoder._reasoning_delta,
    "response.reasoning_summary_part.added": ResponsesStreamDecoder._summary_part_added,
    "response.function_call_arguments.delta": ResponsesStreamDecoder._args_delta,
    "response.function_call_arguments.done": ResponsesStreamDecoder._args_done,
    "response.completed": ResponsesStreamDecoder._completed,
    "response.incomplete": ResponsesStreamDecoder._completed,
    "response.failed": ResponsesStreamDecoder._failed,
    "error": ResponsesStreamDecoder._error,
}


def decode_response(data: Any) -> list[StreamEvent]:
    """A non-streaming ``Response`` object -> the same events a stream would give."""
    if not isinstance(data, dict):
        raise WireError(f"{API}: expected a response object, got {type(data).__name__}")
    if data.get("status") == "failed":
        raise _failed(data)
    events: list[StreamEvent] = [StartEvent(api=API, provider="openai", model=str(data.get("model") or ""), response_id=data.get("id"))]
    index = 0
    refusal: list[str] = []
    has_calls = False
    for item in data.get("output") or ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "reasoning":
            summary = "\n\n".join(p.get("text", "") for p in item.get("summary") or () if isinstance(p, dict))
            events.append(ThinkingStartEvent(content_index=index, redacted=not summary and bool(item.get("encrypted_content"))))
            if summary:
                events.append(ThinkingDeltaEvent(content_index=index, delta=summary))
            events.append(ThinkingEndEvent(content_index=index, thinking_signature=_signature(item)))
            index += 1
        elif kind == "message":
            for part in item.get("content") or ():
                text = part.get("text") if part.get("type") == "output_text" else part.get("refusal") if part.get("type") == "refusal" else None
                if not isinstance(text, str):
                    continue
                if part.get("type") == "refusal":
                    refusal.append(text)
                events += [TextStartEvent(content_index=index), TextDeltaEvent(content_index=index, delta=text), TextEndEvent(content_index=index)]
                index += 1
        elif kind == "function_call":
            has_calls = True
            args, raw = parse_arguments(item.get("arguments") or "")
            call = ToolCall(
                id=str(item.get("call_id") or item.get("id") or ""), name=str(item.get("name") or ""), arguments=args, raw_arguments=raw, thought_signature=item.get("id")
            )
            events.append(ToolCallEndEvent(content_index=index, tool_call=call))
            index += 1
    events.append(_terminal(data, has_calls, "".join(refusal)))
    return events


# --- provider -----------------------------------------------------------------------------------


class OpenAIResponsesProvider(OpenAIHttpProvider):
    """An OpenAI Responses adapter (stateless: the history is sent as input items every call).

    Takes :class:`~loopkit.providers._http.HttpProvider`'s arguments.
    """

    api = API

    def build_request(self, request: ModelRequest) -> HttpCall:
        return HttpCall(method="POST", path="/responses", json=build_body(request, model=self.model, stream=self.streaming, history=self.wire_history))

    def stream_decoder(self) -> ResponsesStreamDecoder:
        return ResponsesStreamDecoder()

    def decode_body(self, data: Any) -> list[StreamEvent]:
        return decode_response(data)


__all__ = ["OpenAIResponsesProvider", "ResponsesStreamDecoder", "build_body", "decode_response", "input_items"]
