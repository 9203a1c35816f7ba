"""OpenAI Chat Completions (docs/wire.md §1): a pure codec plus a thin provider.

- :func:`build_body`: a :class:`ModelRequest` -> the ``/chat/completions`` JSON body.
- :class:`ChatStreamDecoder`: streamed bytes -> stream events (tool calls assembled per ``index``;
  the id and name come on a call's first fragment only, later fragments append arguments).
- :func:`decode_completion`: a non-streaming ``chat.completion`` body -> stream events.
- :class:`OpenAIChatProvider`: the HTTP half (retries, errors) from :class:`HttpProvider`.

Conventions: ``is_error`` has no wire form here, so an error result reaches the model as its text
alone (docs/loop-contract.md §7.2). A refusal (``refusal`` text) and ``finish_reason: content_filter`` end
the call with stop reason ``error`` and ``error_type`` ``refusal`` / ``content_filter``; the refusal
text is also kept as a text block so it can be shown. Thinking blocks are not sent back (Chat
Completions has no field for them); ``reasoning_content`` / ``reasoning`` (streamed or whole) from
OpenAI-compatible servers is read as thinking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ConnectionClosedError, UsageError, WireError
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
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    arguments_json,
    parse_arguments,
)
from ..provider import ModelRequest, ToolSpec, forced_tool_name
from ._http import HttpCall, WireHistory, json_or_wire_error
from ._openai_common import OpenAIHttpProvider, image_url, result_text, stream_error, usage_from, wire_entries
from ._sse import SSEDecoder

API = "openai_chat"
_FINISH: dict[str | None, str] = {"stop": "stop", "length": "length", "tool_calls": "toolUse", "function_call": "toolUse"}

# --- request ------------------------------------------------------------------------------------


def build_body(request: ModelRequest, *, model: str, stream: bool = True, history: WireHistory | None = None) -> dict[str, Any]:
    """The Chat Completions body for ``request`` (tool_choice and parallel flag per docs/loop-contract.md
    §8.1: both omitted without tools; ``parallel_tool_calls`` sent only when False).

    Args:
        history: reuses the previous request's converted messages (see :class:`WireHistory`).
    """
    body: dict[str, Any] = {"model": request.model or model, "messages": chat_messages(request, history)}
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    if request.max_tokens is not None:
        body["max_completion_tokens"] = request.max_tokens
    if request.tools:
        body["tools"] = [{"type": "function", "function": _function(t)} for t in request.tools]
        choice = request.tool_choice
        if choice in ("auto", "required", "none"):
            body["tool_choice"] = choice
        elif choice is not None:
            name = forced_tool_name(choice)
            if name is None:
                raise UsageError(f"{API}: tool_choice {choice!r} is not 'auto', 'required', 'none' or {{'type': 'function', 'name': ...}}")
            body["tool_choice"] = {"type": "function", "function": {"name": name}}
        if request.parallel_tool_calls is False:
            body["parallel_tool_calls"] = False
    return body


def _function(t: ToolSpec) -> dict[str, Any]:
    fn: dict[str, Any] = {"name": t.name, "description": t.description, "parameters": dict(t.parameters)}
    if t.strict is not None:
        fn["strict"] = t.strict
    return fn


def chat_messages(request: ModelRequest, history: WireHistory | None = None) -> list[dict[str, Any]]:
    """The ``messages`` array: system prompt, then the history in Chat form.

    An assistant message that ended in ``error``/``aborted`` is left out, with any results of its
    calls: it may be empty or half-written, and the API rejects such an entry.
    """
    entries = wire_entries(request.messages, _message, history)
    return [{"role": "system", "content": request.system}, *entries] if request.system else entries


def _message(m: Any) -> list[dict[str, Any]]:
    if isinstance(m, UserMessage):
        return [{"role": "user", "content": _user_content(m.content)}]
    if isinstance(m, AssistantMessage):
        entry = _assistant(m)
        return [] if entry is None else [entry]
    if isinstance(m, ToolResultMessage):
        return [{"role": "tool", "tool_call_id": m.tool_call_id, "content": result_text(m.content)}]
    raise UsageError(f"{API}: cannot send a {type(m).__name__} as a message")


def _user_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for b in content:
        if isinstance(b, TextContent):
            parts.append({"type": "text", "text": b.text})
        elif isinstance(b, ImageContent):
            parts.append({"type": "image_url", "image_url": {"url": image_url(b)}})
    return parts


def _assistant(m: AssistantMessage) -> dict[str, Any] | None:
    text = "".join(b.text for b in m.content if isinstance(b, TextContent))
    calls = [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments_json(c)}}
        for c in m.content
        if isinstance(c, ToolCall)
    ]
    if not text and not calls:
        return None
    entry: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        entry["tool_calls"] = calls
    return entry


# --- response -----------------------------------------------------------------------------------


def _terminal(finish: str | None, has_calls: bool, refusal: str, usage: Usage | None) -> StreamEvent:
    if refusal:
        return ErrorEvent(error_message=refusal, error_type="refusal", usage=usage)
    if finish == "content_filter":
        return ErrorEvent(error_message="the answer was stopped by OpenAI's content filter", error_type="content_filter", usage=usage)
    reason = _FINISH.get(finish, "stop")  # none (a server that sends no finish_reason) or an unknown one: stop
    if reason == "stop" and has_calls:
        reason = "toolUse"  # a forced tool_choice ends with finish_reason "stop"
    return DoneEvent(reason=reason, usage=usage)  # type: ignore[arg-type]


class ChatStreamDecoder:
    """Chat Completions SSE bytes -> stream events (feed any split of the bytes)."""

    __slots__ = ("_sse", "_started", "_next", "_text", "_thinking", "_calls", "_ids", "_open_calls", "_finish", "_refusal", "_usage", "_done")

    def __init__(self) -> None:
        self._sse = SSEDecoder()
        self._started = False
        self._next = 0  # the content_index the next block gets
        self._text: int | None = None  # open text block
        self._thinking: int | None = None  # open thinking block
        self._calls: dict[int, int] = {}  # wire index -> content_index
        self._ids: dict[int, str] = {}  # content_index -> call id
        self._open_calls: list[int] = []
        self._finish: str | None = None
        self._refusal: list[str] = []
        self._usage: Usage | None = None
        self._done = False

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for ev in self._sse.feed(chunk):
            self._on_data(ev.data, out)
        return out

    def close(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for ev in self._sse.close():
            self._on_data(ev.data, out)
        if not self._done:
            raise ConnectionClosedError(f"{API}: the stream ended before 'data: [DONE]'", provider="openai")
        return out

    def _on_data(self, data: str, out: list[StreamEvent]) -> None:
        if self._done:
            return
        if data.startswith("[DONE]"):
            self._close_blocks(out)
            out.append(_terminal(self._finish, bool(self._calls), "".join(self._refusal), self._usage))
            self._done = True
            return
        chunk = json_or_wire_error(data, f"{API} stream chunk")
        if not isinstance(chunk, dict):
            return
        if chunk.get("error"):  # OpenAI's error frame, OpenRouter's (with code only), TGI's (a bare message)
            raise stream_error(chunk["error"], error_type=chunk.get("error_type"))
        if not self._started:
            self._started = True
            out.append(StartEvent(api=API, provider="openai", model=str(chunk.get("model") or ""), response_id=chunk.get("id")))
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage = usage_from(usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens"), usage.get("prompt_tokens_details"))
        for choice in chunk.get("choices") or ():
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                self._on_choice(choice, out)

    def _on_choice(self, choice: Mapping[str, Any], out: list[StreamEvent]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                if self._thinking is None:
                    self._close_text(out)
                    self._thinking = self._new_block()
                    out.append(ThinkingStartEvent(content_index=self._thinking))
                out.append(ThinkingDeltaEvent(content_index=self._thinking, delta=reasoning))
            for key in ("content", "refusal"):
                piece = delta.get(key)
                if isinstance(piece, str) and piece:
                    if key == "refusal":
                        self._refusal.append(piece)
                    self._text_delta(piece, out)
            calls = delta.get("tool_calls")
            if isinstance(calls, list):
                for frag in calls:
                    if isinstance(frag, dict):
                        self._tool_fragment(frag, out)
        finish = choice.get("finish_reason")
        if finish:
            self._finish = finish
            self._close_blocks(out)

    def _new_block(self) -> int:
        index = self._next
        self._next += 1
        return index

    def _text_delta(self, piece: str, out: list[StreamEvent]) -> None:
        if self._text is None:
            self._close_thinking(out)
            self._text = self._new_block()
            out.append(TextStartEvent(content_index=self._text))
        out.append(TextDeltaEvent(content_index=self._text, delta=piece))

    def _tool_fragment(self, frag: Mapping[str, Any], out: list[StreamEvent]) -> None:
        wire_index = frag.get("index", 0)
        fn = frag.get("function") if isinstance(frag.get("function"), dict) else {}
        index = self._calls.get(wire_index)
        frag_id = frag.get("id")
        if index is None or (frag_id and frag_id != self._ids[index]):
            # Only the first fragment of a call carries id and name; servers that repeat them on
            # later fragments are ignored there (never concatenated). A different id at a known
            # index is a new call (servers that number every parallel call 0).
            self._close_text(out)
            self._close_thinking(out)
            index = self._calls[wire_index] = self._new_block()
            self._open_calls.append(index)
            self._ids[index] = str(frag_id or f"call_{wire_index}")
            out.append(ToolCallStartEvent(content_index=index, id=self._ids[index], name=str(fn.get("name") or "")))
        args = fn.get("arguments")
        if isinstance(args, str) and args:
            out.append(ToolCallDeltaEvent(content_index=index, delta=args))

    def _close_text(self, out: list[StreamEvent]) -> None:
        if self._text is not None:
            out.append(TextEndEvent(content_index=self._text))
            self._text = None

    def _close_thinking(self, out: list[StreamEvent]) -> None:
        if self._thinking is not None:
            out.append(ThinkingEndEvent(content_index=self._thinking))
            self._thinking = None

    def _close_blocks(self, out: list[StreamEvent]) -> None:
        self._close_thinking(out)
        self._close_text(out)
        for index in self._open_calls:
            out.append(ToolCallEndEvent(content_index=index))
        self._open_calls.clear()


def decode_completion(data: Any) -> list[StreamEvent]:
    """A non-streaming ``chat.completion`` body -> the same events a stream would give."""
    if not isinstance(data, dict):
        raise WireError(f"{API}: expected a chat.completion object, got {type(data).__name__}")
    if data.get("error"):
        raise stream_error(data["error"])
    events: list[StreamEvent] = [StartEvent(api=API, provider="openai", model=str(data.get("model") or ""), response_id=data.get("id"))]
    choices = data.get("choices") or []
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    index = 0
    reasoning = message.get("reasoning_content") or message.get("reasoning")  # DeepSeek / vLLM >= 0.9, OpenRouter
    if isinstance(reasoning, str) and reasoning:
        events += [ThinkingStartEvent(content_index=index), ThinkingDeltaEvent(content_index=index, delta=reasoning), ThinkingEndEvent(content_index=index)]
        index += 1
    refusal = message.get("refusal") if isinstance(message.get("refusal"), str) else ""
    for text in (message.get("content"), refusal):
        if isinstance(text, str) and text:
            events += [TextStartEvent(content_index=index), TextDeltaEvent(content_index=index, delta=text), TextEndEvent(content_index=index)]
            index += 1
    calls = message.get("tool_calls") or []
    for c in calls:
        fn = c.get("function") or {}
        args, raw = parse_arguments(fn.get("arguments") or "")
        call = ToolCall(id=str(c.get("id") or f"call_{index}"), name=str(fn.get("name") or ""), arguments=args, raw_arguments=raw)
        events.append(ToolCallEndEvent(content_index=index, tool_call=call))
        index += 1
    usage = data.get("usage")
    u = usage_from(usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens"), usage.get("prompt_tokens_details")) if isinstance(usage, dict) else None
    events.append(_terminal(choice.get("finish_reason"), bool(calls), refusal or "", u))
    return events


# --- provider -----------------------------------------------------------------------------------


class OpenAIChatProvider(OpenAIHttpProvider):
    """An OpenAI Chat Completions adapter (also for OpenAI-compatible servers via ``base_url``).

    Takes :class:`~loopkit.providers._http.HttpProvider`'s arguments (``model``, ``api_key``,
    ``base_url``, ``client``/``async_client``/``transport``, ``stream``, ``extra_body``, ``retry``).
    """

    api = API

    def build_request(self, request: ModelRequest) -> HttpCall:
        return HttpCall(method="POST", path="/chat/completions", json=build_body(request, model=self.model, stream=self.streaming, history=self.wire_history))

    def stream_decoder(self) -> ChatStreamDecoder:
        return ChatStreamDecoder()

    def decode_body(self, data: Any) -> list[StreamEvent]:
        return decode_completion(data)


__all__ = ["ChatStreamDecoder", "OpenAIChatProvider", "build_body", "chat_messages", "decode_completion"]
