"""Anthropic Messages (``POST /v1/messages``): a pure codec plus a thin :class:`AnthropicProvider`.

The codec has three parts, each usable on its own:

- :func:`encode_request` turns a :class:`ModelRequest` into the Messages body (docs/wire.md §3.2,
  §3.6; docs/loop-contract.md §7.1-§7.2);
- :class:`MessagesStreamDecoder` turns the SSE bytes of a streamed answer into loopkit stream
  events (docs/wire.md §3.4), whatever the chunking;
- :func:`decode_message` turns a non-streamed message body into the same events.

Choices where the API leaves room, all forced by what the API rejects:

- an assistant tool call whose arguments never parsed (or parsed to a non-object) is echoed with
  ``input: {}``, because ``input`` must be an object; the error result that follows tells the model;
- an error tool result with no text is sent as ``"(empty)"`` (the API answers 400 "content cannot
  be empty if `is_error` is true"); a successful empty result is sent without ``content``, which
  the API allows; an error result keeps only its text blocks ("all content must be type 'text' if
  'is_error' is true");
- empty text blocks are never sent ("text content blocks must be non-empty"); thinking without a
  signature (from another provider) cannot be replayed and is dropped; assistant messages that
  ended in ``error``/``aborted`` are dropped (docs/loop-contract.md §7.2); consecutive same-role messages are
  merged so tool results share one user message (docs/wire.md §3.6).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from ..errors import (
    ConnectionClosedError,
    ProviderError,
    StreamError,
    StreamProtocolError,
    UsageError,
    WireError,
    error_class_for_status,
)
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
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    parse_arguments,
)
from ..provider import ModelRequest, ToolSpec, forced_tool_name
from ..retry import parse_retry_after
from ._http import HttpCall, HttpProvider, WireHistory, json_or_wire_error
from ._sse import SSEDecoder

API = "anthropic-messages"
PROVIDER = "anthropic"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
EMPTY_ERROR_RESULT = "(empty)"

# docs/wire.md §0.2 and docs/loop-contract.md §7.3. A context-window overflow truncates the answer like
# max_tokens does, so it maps to "length"; a refusal ends the run as an error.
STOP_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
    "refusal": "error",
    "sensitive": "error",
}
# In-stream error types worth a retry when they arrive before any event was yielded.
_RETRYABLE_STREAM_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})


# --- request ------------------------------------------------------------------------------------


def encode_tool(tool: ToolSpec) -> dict[str, Any]:
    """One tool declaration: ``{name, description?, input_schema}``."""
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = dict(tool.parameters)
    if tool.strict is not None:
        out["strict"] = tool.strict
    return out


def encode_tool_choice(choice: Any, parallel_tool_calls: bool | None) -> dict[str, Any] | None:
    """``tool_choice`` per docs/loop-contract.md §7.1 (checklist item 52), or None to omit it.

    ``parallel_tool_calls=False`` adds ``disable_parallel_tool_use: true`` (creating
    ``{"type": "auto"}`` when no choice was given), except with ``none``, which takes no flag.
    """
    if choice is None:
        out: dict[str, Any] | None = None
    elif choice == "auto":
        out = {"type": "auto"}
    elif choice == "required":
        out = {"type": "any"}
    elif choice == "none":
        return {"type": "none"}
    elif isinstance(choice, Mapping):
        name = forced_tool_name(choice)
        if name is None:
            raise UsageError(f"anthropic: a forced tool_choice needs a tool name, got {dict(choice)!r}")
        out = {"type": "tool", "name": name}
    else:
        raise UsageError(f"anthropic: tool_choice must be 'auto', 'required', 'none', a forced-function mapping or None; got {choice!r}")
    if parallel_tool_calls is False:
        out = {"type": "auto"} if out is None else out
        out["disable_parallel_tool_use"] = True
    return out


def _image(block: ImageContent) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type, "data": block.data}}


def _user_blocks(content: str | list[Any]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    out = []
    for b in content:
        if isinstance(b, TextContent):
            if b.text:
                out.append({"type": "text", "text": b.text})
        elif isinstance(b, ImageContent):
            out.append(_image(b))
    return out


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for b in message.content:
        if isinstance(b, TextContent):
            if b.text:
                out.append({"type": "text", "text": b.text})
        elif isinstance(b, ThinkingContent):
            if b.redacted:
                if b.thinking_signature:
                    out.append({"type": "redacted_thinking", "data": b.thinking_signature})
            elif b.thinking_signature:
                out.append({"type": "thinking", "thinking": b.thinking, "signature": b.thinking_signature})
        elif isinstance(b, ToolCall):
            args = b.arguments if b.raw_arguments is None and isinstance(b.arguments, dict) else {}
            out.append({"type": "tool_use", "id": b.id, "name": b.name, "input": args})
    return out


def encode_tool_result(message: ToolResultMessage) -> dict[str, Any]:
    """One ``tool_result`` block, with ``is_error`` when set (docs/wire.md §3.6)."""
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    texts = [b.text for b in message.content if isinstance(b, TextContent) and b.text]
    images = [b for b in message.content if isinstance(b, ImageContent)]
    if message.is_error:
        out["content"] = "".join(texts) or EMPTY_ERROR_RESULT
        out["is_error"] = True
    elif images:
        out["content"] = [{"type": "text", "text": t} for t in texts] + [_image(i) for i in images]
    elif texts:
        out["content"] = "".join(texts)
    return out


def _encode_one(m: Message) -> tuple[str, list[dict[str, Any]]] | None:
    """(role, blocks) for one message, or None when it is not sent at all."""
    if isinstance(m, UserMessage):
        blocks = _user_blocks(m.content)
        role = "user"
    elif isinstance(m, ToolResultMessage):
        return "user", [encode_tool_result(m)]
    elif isinstance(m, AssistantMessage):
        if m.stop_reason in ("error", "aborted"):
            return None
        role, blocks = "assistant", _assistant_blocks(m)
    else:
        raise UsageError(f"anthropic: cannot send a message of type {type(m).__name__}")
    return (role, blocks) if blocks else None


def encode_messages(messages: Iterable[Message], history: WireHistory | None = None) -> list[dict[str, Any]]:
    """The ``messages`` array: roles alternate, tool results become user ``tool_result`` blocks.

    Args:
        messages: the history, oldest first.
        history: goes on from the previous request's conversion (see :class:`WireHistory`), so a
            round encodes only the messages that are new since then.
    """
    return (WireHistory() if history is None else history).fold(messages, list, _add_message, list)


def _add_message(out: list[dict[str, Any]], m: Message) -> None:
    """Append one message, merged into the last wire message when the role repeats (the last
    one is replaced, never changed: earlier request bodies share it)."""
    enc = _encode_one(m)
    if enc is None:
        return
    role, blocks = enc
    if out and out[-1]["role"] == role:
        content = out[-1]["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out[-1] = {"role": role, "content": content + blocks}
    elif role == "user" and isinstance(m, UserMessage) and isinstance(m.content, str):
        out.append({"role": role, "content": m.content})
    else:
        out.append({"role": role, "content": blocks})


def encode_request(
    request: ModelRequest,
    *,
    model: str,
    stream: bool,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    history: WireHistory | None = None,
) -> dict[str, Any]:
    """The Messages request body for ``request`` (``history``: see :func:`encode_messages`;
    ``request.max_tokens`` wins over ``max_tokens``)."""
    body: dict[str, Any] = {"model": request.model or model, "max_tokens": request.max_tokens or max_tokens}
    if request.system:
        body["system"] = request.system
    body["messages"] = encode_messages(request.messages, history)
    if request.tools:
        body["tools"] = [encode_tool(t) for t in request.tools]
        choice = encode_tool_choice(request.tool_choice, request.parallel_tool_calls)
        if choice is not None:
            body["tool_choice"] = choice
    if stream:
        body["stream"] = True
    return body


# --- response -----------------------------------------------------------------------------------


def decode_usage(data: Mapping[str, Any], into: Usage | None = None) -> Usage:
    """Read Anthropic usage counts; fields present overwrite (message_delta counts are cumulative)."""
    u = into if into is not None else Usage()
    if (v := data.get("input_tokens")) is not None:
        u.input = int(v)
    if (v := data.get("output_tokens")) is not None:
        u.output = int(v)
    if (v := data.get("cache_read_input_tokens")) is not None:
        u.cache_read = int(v)
    if (v := data.get("cache_creation_input_tokens")) is not None:
        u.cache_write = int(v)
    u.total_tokens = u.input + u.output + u.cache_read + u.cache_write
    return u


def _refusal_message(stop_details: Any) -> str:
    if isinstance(stop_details, Mapping) and stop_details.get("explanation"):
        return f"The model refused to answer: {stop_details['explanation']}"
    return "The model refused to answer (stop_reason refusal)"


def _terminal(stop_reason: str | None, stop_details: Any, usage: Usage) -> StreamEvent:
    reason = STOP_REASONS.get(stop_reason, "stop")  # none (never on the real wire) or a future one: a clean end
    if reason == "error":
        return ErrorEvent(reason="error", error_message=_refusal_message(stop_details), error_type=stop_reason, usage=usage)
    return DoneEvent(reason=reason, usage=usage)  # type: ignore[arg-type]


def stream_error(data: Mapping[str, Any]) -> StreamError:
    """The :class:`StreamError` for an in-stream ``event: error`` payload (a JSON object)."""
    err = data.get("error")
    err = err if isinstance(err, Mapping) else {}
    error_type = str(err.get("type") or "error")
    return StreamError(
        str(err.get("message") or "error event in the stream"),
        error_type=error_type,
        provider=PROVIDER,
        body=data,
        retryable=error_type in _RETRYABLE_STREAM_ERRORS,
    )


class _Block:
    __slots__ = ("kind", "index", "signature", "has_args", "start_input")

    def __init__(self, kind: str, index: int) -> None:
        self.kind = kind  # "text" | "thinking" | "redacted" | "tool"
        self.index = index  # content_index in the assistant message
        self.signature: str | None = None
        self.has_args = False
        self.start_input: Any = None


class MessagesStreamDecoder:
    """Decode a streamed Messages answer: ``feed(bytes) -> [events]``, ``close() -> [events]``.

    Raises :class:`StreamError` on ``event: error``, :class:`ConnectionClosedError` when the
    stream ends before ``message_stop``, :class:`WireError` on undecodable payloads and
    :class:`StreamProtocolError` on a delta for a block that never started.
    """

    __slots__ = ("_sse", "_blocks", "_count", "_usage", "_stop_reason", "_stop_details", "_done", "_started")

    def __init__(self) -> None:
        self._sse = SSEDecoder()
        self._blocks: dict[int, _Block | None] = {}  # wire index -> open block (None: one not kept)
        self._count = 0
        self._usage = Usage()
        self._stop_reason: str | None = None
        self._stop_details: Any = None
        self._done = False
        self._started = False

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for sse in self._sse.feed(chunk):
            self._event(sse.event, sse.data, out)
        return out

    def close(self) -> list[StreamEvent]:
        # An event whose blank line never came is dropped, as the SSE standard and the official
        # SDK's reader drop it: the API ends every event with one.
        if not self._done:
            raise ConnectionClosedError(
                "the stream ended before message_stop (connection closed mid-answer)", provider=PROVIDER
            )
        return []

    def _event(self, name: str, data: str, out: list[StreamEvent]) -> None:
        if self._done or name == "ping" or not data:
            return
        payload = json_or_wire_error(data, f"anthropic stream event {name!r}")
        if not isinstance(payload, dict):
            raise WireError(f"anthropic stream event {name!r}: payload is not an object: {data[:200]!r}")
        kind = payload.get("type", name)  # the same as the event's name on this wire (§3.4)
        if kind == "error":
            raise stream_error(payload)
        if kind == "content_block_delta":
            self._delta(payload, out)
        elif kind == "content_block_start":
            self._start(payload, out)
        elif kind == "content_block_stop":
            block = self._blocks.pop(_index(payload), None)
            if block is not None:
                self._end(block, out)
        elif kind == "message_start":
            self._message_start(payload, out)
        elif kind == "message_delta":
            delta = payload.get("delta") or {}
            if "stop_reason" in delta:
                self._stop_reason = delta["stop_reason"]
            if delta.get("stop_details") is not None:
                self._stop_details = delta["stop_details"]
            decode_usage(payload.get("usage") or {}, self._usage)
        elif kind == "message_stop":
            self._end_open_blocks(out)  # a max_tokens stop can leave a block open
            self._done = True
            out.append(_terminal(self._stop_reason, self._stop_details, self._usage))
        # anything else (future event types) is ignored

    def _message_start(self, payload: dict[str, Any], out: list[StreamEvent]) -> None:
        message = payload.get("message") or {}
        # A second message_start (spliced streams, docs/wire.md §3.7.5) restarts wire indexes at
        # 0; the blocks it brings are appended after the ones already seen.
        self._end_open_blocks(out)
        decode_usage(message.get("usage") or {}, self._usage)  # its stop_reason is always null
        if not self._started:
            self._started = True
            out.append(StartEvent(api=API, provider=PROVIDER, model=message.get("model", ""), response_id=message.get("id")))

    def _end_open_blocks(self, out: list[StreamEvent]) -> None:
        for index in sorted(self._blocks):
            block = self._blocks[index]
            if block is not None:
                self._end(block, out)
        self._blocks.clear()

    def _start(self, payload: dict[str, Any], out: list[StreamEvent]) -> None:
        wire = _index(payload)
        cb = payload.get("content_block") or {}
        t = cb.get("type")
        if t == "text":
            block = _Block("text", self._count)
            out.append(TextStartEvent(content_index=block.index))
            if cb.get("text"):
                out.append(TextDeltaEvent(content_index=block.index, delta=cb["text"]))
        elif t == "thinking":
            block = _Block("thinking", self._count)
            out.append(ThinkingStartEvent(content_index=block.index))
            if cb.get("thinking"):
                out.append(ThinkingDeltaEvent(content_index=block.index, delta=cb["thinking"]))
            block.signature = cb.get("signature") or None
        elif t == "redacted_thinking":
            block = _Block("redacted", self._count)
            out.append(ThinkingStartEvent(content_index=block.index, redacted=True))
            block.signature = cb.get("data")
        elif t == "tool_use":
            block = _Block("tool", self._count)
            out.append(ToolCallStartEvent(content_index=block.index, id=str(cb.get("id", "")), name=str(cb.get("name", ""))))
            block.start_input = cb.get("input")
        else:  # server tools, search results, future block types: not part of the loop's message
            self._blocks[wire] = None  # started (so its deltas are not an error), and dropped
            return
        self._count += 1
        self._blocks[wire] = block

    def _delta(self, payload: dict[str, Any], out: list[StreamEvent]) -> None:
        wire = _index(payload)
        if wire not in self._blocks:
            raise StreamProtocolError(f"anthropic: content_block_delta for index {wire}, which was never started")
        block = self._blocks[wire]
        if block is None:  # a block the message does not keep
            return
        delta = payload.get("delta") or {}
        t = delta.get("type")
        if t == "text_delta" and block.kind == "text":
            if delta.get("text"):
                out.append(TextDeltaEvent(content_index=block.index, delta=delta["text"]))
        elif t == "input_json_delta" and block.kind == "tool":
            block.has_args = True
            if delta.get("partial_json"):
                out.append(ToolCallDeltaEvent(content_index=block.index, delta=delta["partial_json"]))
        elif t == "thinking_delta" and block.kind == "thinking":
            if delta.get("thinking"):
                out.append(ThinkingDeltaEvent(content_index=block.index, delta=delta["thinking"]))
        elif t == "signature_delta" and block.kind == "thinking":
            block.signature = (block.signature or "") + str(delta.get("signature", ""))
        # citations_delta and future delta types carry nothing the message keeps

    def _end(self, block: _Block, out: list[StreamEvent]) -> None:
        i = block.index
        if block.kind == "text":
            out.append(TextEndEvent(content_index=i))
        elif block.kind in ("thinking", "redacted"):
            out.append(ThinkingEndEvent(content_index=i, thinking_signature=block.signature))
        elif block.kind == "tool":
            if not block.has_args and block.start_input:
                out.append(ToolCallDeltaEvent(content_index=i, delta=json.dumps(block.start_input, ensure_ascii=False)))
            out.append(ToolCallEndEvent(content_index=i))


def _index(payload: Mapping[str, Any]) -> int:
    index = payload.get("index")
    if not isinstance(index, int):
        raise WireError(f"anthropic: {payload.get('type')} without an integer index: {payload!r}")
    return index


def decode_message(data: Any) -> list[StreamEvent]:
    """The stream events of a non-streamed Messages body."""
    if not isinstance(data, Mapping):
        raise WireError(f"anthropic: response body is not a message object: {data!r:.200}")
    if data.get("type") == "error":
        raise stream_error(data)
    out: list[StreamEvent] = [StartEvent(api=API, provider=PROVIDER, model=str(data.get("model", "")), response_id=data.get("id"))]
    i = 0
    for cb in data.get("content") or []:
        t = cb.get("type")
        if t == "text":
            out += [TextStartEvent(content_index=i), TextDeltaEvent(content_index=i, delta=cb.get("text", "")), TextEndEvent(content_index=i)]
        elif t == "thinking":
            out += [
                ThinkingStartEvent(content_index=i),
                ThinkingDeltaEvent(content_index=i, delta=cb.get("thinking", "")),
                ThinkingEndEvent(content_index=i, thinking_signature=cb.get("signature") or None),
            ]
        elif t == "redacted_thinking":
            out += [ThinkingStartEvent(content_index=i, redacted=True), ThinkingEndEvent(content_index=i, thinking_signature=cb.get("data"))]
        elif t == "tool_use":
            args, raw = cb.get("input", {}), None
            if isinstance(args, str):  # never from the real API; keep broken text raw, never {}
                args, raw = parse_arguments(args)
            call = ToolCall(id=str(cb.get("id", "")), name=str(cb.get("name", "")), arguments=args, raw_arguments=raw)
            out += [ToolCallStartEvent(content_index=i, id=call.id, name=call.name), ToolCallEndEvent(content_index=i, tool_call=call)]
        else:
            continue
        i += 1
    out.append(_terminal(data.get("stop_reason"), data.get("stop_details"), decode_usage(data.get("usage") or {})))
    return out


def map_error(status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
    """An HTTP error answer -> the :class:`ProviderError` for its status (the class follows the
    status alone, as the official SDK maps it: 529 is the ``OverloadedError``), with the body's
    ``error.type`` and ``error.message`` and the ``retry-after`` wait (docs/wire.md §3.5)."""
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = None
    message = body.decode("utf-8", "replace")[:500] or f"HTTP {status}"
    error_type = None
    err = data.get("error") if isinstance(data, Mapping) else None
    if isinstance(err, Mapping):
        message = str(err.get("message") or message)
        error_type = err.get("type")
    return error_class_for_status(status)(
        message,
        status=status,
        error_type=None if error_type is None else str(error_type),
        retry_after=parse_retry_after(headers),
        provider=PROVIDER,
        body=data,
    )


# --- provider -----------------------------------------------------------------------------------


class AnthropicProvider(HttpProvider):
    """Anthropic Messages over httpx (streams by default).

    Args: those of :class:`~loopkit.providers._http.HttpProvider`. ``max_tokens`` (required by the
    API) defaults to 4096; set another value with ``ModelRequest.max_tokens``, and extended
    thinking with ``extra_body={"thinking": {...}}``.
    """

    api = API
    provider_name = PROVIDER
    default_base_url = "https://api.anthropic.com"
    api_key_env = ("ANTHROPIC_API_KEY",)

    def build_request(self, request: ModelRequest) -> HttpCall:
        body = encode_request(request, model=self.model, stream=self.streaming, history=self.wire_history)
        return HttpCall(method="POST", path="/v1/messages", json=body, headers={"anthropic-version": ANTHROPIC_VERSION})

    def auth_headers(self) -> dict[str, str]:
        # credentials, not codec: out of the mutation score (the suite's factories always pass a key)
        return {"x-api-key": self.api_key} if self.api_key else {}  # pragma: no mutate

    def stream_decoder(self) -> MessagesStreamDecoder:
        return MessagesStreamDecoder()

    def decode_body(self, data: Any) -> list[StreamEvent]:
        return decode_message(data)

    def map_error(self, status: int, headers: httpx.Headers, body: bytes) -> ProviderError:
        return map_error(status, headers, body)


__all__ = [
    "AnthropicProvider",
    "MessagesStreamDecoder",
    "decode_message",
    "encode_messages",
    "encode_request",
    "encode_tool",
    "encode_tool_choice",
    "encode_tool_result",
    "map_error",
]
