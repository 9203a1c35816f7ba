"""A worked example: the official ``anthropic`` SDK as a loopkit Provider, conforming.

The "foreign adapter" here is the official ``anthropic`` SDK, as another agent loop would use it:
it takes its own arguments (``messages``, ``tools``, ``tool_choice`` ...) and yields its own raw
stream events. Two small functions glue it to loopkit's :class:`~loopkit.provider.Provider` seam:

- :func:`to_sdk_call` maps loopkit's :class:`~loopkit.provider.ModelRequest` to the SDK call;
- :func:`to_stream_events` maps the SDK's raw events back to loopkit stream events.

The factory takes only ``base_url=``: the SDK speaks HTTP through its own client, so the suite
serves the simulator on 127.0.0.1. It takes no ``retry=``, because the SDK retries by itself
(twice, honouring ``retry-after``); the suite then checks retries through the simulator's request
log, and keeps the SDK's retry sleeps from waiting for real (see the README).

Run it (needs ``pip install anthropic``)::

    loopkit conformance loopkit.conformance.examples.anthropic_sdk:anthropic_sdk_factory --protocol anthropic
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from loopkit.errors import ConnectionClosedError, StreamError, error_class_for_status
from loopkit.events import (
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
from loopkit.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from loopkit.provider import BaseProvider, ModelRequest, forced_tool_name

IN_STREAM_TRANSIENT = ("overloaded_error", "api_error", "rate_limit_error", "timeout_error")
STOP = {"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "tool_use": "toolUse", "max_tokens": "length", "model_context_window_exceeded": "length"}


def _image(block: ImageContent) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type, "data": block.data}}


def to_sdk_call(request: ModelRequest, *, model: str) -> dict[str, Any]:
    """loopkit's request -> keyword arguments of ``client.messages.create``."""
    messages: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if messages and messages[-1]["role"] == role:  # results of parallel calls share one user turn
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})

    for m in request.messages:
        if isinstance(m, UserMessage):
            parts = [TextContent(text=m.content)] if isinstance(m.content, str) else m.content
            add("user", [{"type": "text", "text": b.text} if isinstance(b, TextContent) else _image(b) for b in parts if not (isinstance(b, TextContent) and not b.text)])
        elif isinstance(m, AssistantMessage):
            if m.stop_reason in ("error", "aborted"):
                continue  # a failed answer's calls never ran, and an unanswered tool_use is a 400
            blocks: list[dict[str, Any]] = []
            for b in m.content:
                if isinstance(b, TextContent) and b.text:
                    blocks.append({"type": "text", "text": b.text})
                elif isinstance(b, ThinkingContent) and b.redacted and b.thinking_signature:
                    blocks.append({"type": "redacted_thinking", "data": b.thinking_signature})
                elif isinstance(b, ThinkingContent) and b.thinking_signature:
                    blocks.append({"type": "thinking", "thinking": b.thinking, "signature": b.thinking_signature})
                elif isinstance(b, ToolCall):
                    blocks.append({"type": "tool_use", "id": b.id, "name": b.name, "input": b.arguments if b.arguments_ok else {}})
            if blocks:  # an empty answer: the API refuses an assistant turn without content
                add("assistant", blocks)
        elif isinstance(m, ToolResultMessage):
            images = [_image(b) for b in m.content if isinstance(b, ImageContent)]
            # an error result must have content, and text only; an empty success has none to send
            content: Any = m.text or ("(empty)" if m.is_error else None)
            if images and not m.is_error:
                content = ([{"type": "text", "text": m.text}] if m.text else []) + images
            result = {"type": "tool_result", "tool_use_id": m.tool_call_id, "is_error": m.is_error}
            add("user", [result if content is None else {**result, "content": content}])
    kwargs: dict[str, Any] = {"model": request.model or model, "max_tokens": request.max_tokens or 1024, "messages": messages, "stream": True}
    if request.system:
        kwargs["system"] = request.system
    if request.tools:
        kwargs["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.parameters), **({} if t.strict is None else {"strict": t.strict})}
            for t in request.tools
        ]
        choice = request.tool_choice
        sdk_choice: dict[str, Any] | None = None
        if choice == "auto" or (choice is None and request.parallel_tool_calls is False):
            sdk_choice = {"type": "auto"}
        elif choice == "required":
            sdk_choice = {"type": "any"}
        elif choice == "none":
            sdk_choice = {"type": "none"}
        elif forced_tool_name(choice) is not None:
            sdk_choice = {"type": "tool", "name": forced_tool_name(choice)}
        if sdk_choice is not None and request.parallel_tool_calls is False and sdk_choice["type"] != "none":
            sdk_choice["disable_parallel_tool_use"] = True
        if sdk_choice is not None:
            kwargs["tool_choice"] = sdk_choice
    return kwargs


def to_stream_events(raw: Any, request: ModelRequest) -> Iterator[StreamEvent]:
    """The SDK's raw stream events -> loopkit stream events.

    A ``content_block_start`` carries a whole block (text, thinking, its signature, a tool call's
    input), which its deltas extend, as the SDK's own accumulator reads it. Blocks the loop does
    not keep (server tools and their results) are skipped, so the kept ones are numbered apart
    from the wire's indexes. Blocks the wire never stops (a ``max_tokens`` stop inside a call) end
    at ``message_stop``; a second ``message_start`` (spliced answers) ends the blocks still open,
    and its blocks, numbered from 0 again on the wire, follow the ones already seen.
    """
    kinds: dict[int, str] = {}  # wire index -> block type
    slots: dict[int, int] = {}  # wire index -> content_index, for the blocks kept
    signatures: dict[int, str] = {}
    inputs: dict[int, Any] = {}  # a tool call's input from content_block_start, until a delta replaces it
    usage = Usage()
    stop = details = None
    complete = started = False
    count = 0  # blocks kept so far

    def end(w: int) -> Iterator[StreamEvent]:
        kind, i = kinds.pop(w, None), slots.pop(w, None)
        if kind == "text":
            yield TextEndEvent(content_index=i)
        elif kind in ("thinking", "redacted_thinking"):
            yield ThinkingEndEvent(content_index=i, thinking_signature=signatures.get(w) or None)
        elif kind == "tool_use":
            if inputs.get(w):
                yield ToolCallDeltaEvent(content_index=i, delta=json.dumps(inputs[w]))
            yield ToolCallEndEvent(content_index=i)

    for event in raw:
        signal = request.abort_signal
        if signal is not None and signal.aborted:
            raw.close()
            yield ErrorEvent(reason="aborted", error_message="aborted by the caller")
            return
        t = event.type
        if t == "message_start":
            for w in sorted(kinds):
                yield from end(w)
            usage.input = event.message.usage.input_tokens
            usage.cache_read = event.message.usage.cache_read_input_tokens or 0  # counted apart from input_tokens
            usage.cache_write = event.message.usage.cache_creation_input_tokens or 0
            if not started:
                started = True
                yield StartEvent(api="anthropic-messages", provider="anthropic", model=event.message.model, response_id=event.message.id)
        elif t == "content_block_start":
            block, w = event.content_block, event.index
            kinds[w] = block.type
            if block.type not in ("text", "thinking", "redacted_thinking", "tool_use"):
                continue
            i = slots[w] = count
            count += 1
            if block.type == "text":
                yield TextStartEvent(content_index=i)
                if block.text:
                    yield TextDeltaEvent(content_index=i, delta=block.text)
            elif block.type == "thinking":
                yield ThinkingStartEvent(content_index=i)
                if block.thinking:
                    yield ThinkingDeltaEvent(content_index=i, delta=block.thinking)
                signatures[w] = block.signature
            elif block.type == "redacted_thinking":
                signatures[w] = block.data
                yield ThinkingStartEvent(content_index=i, redacted=True)
            else:
                inputs[w] = block.input
                yield ToolCallStartEvent(content_index=i, id=block.id, name=block.name)
        elif t == "content_block_delta":
            d, w = event.delta, event.index
            i, kind = slots.get(w), kinds.get(w)
            if d.type == "text_delta" and kind == "text":
                yield TextDeltaEvent(content_index=i, delta=d.text)
            elif d.type == "thinking_delta" and kind == "thinking":
                yield ThinkingDeltaEvent(content_index=i, delta=d.thinking)
            elif d.type == "signature_delta" and kind == "thinking":
                signatures[w] = d.signature
            elif d.type == "input_json_delta" and kind == "tool_use" and d.partial_json:
                inputs.pop(w, None)
                yield ToolCallDeltaEvent(content_index=i, delta=d.partial_json)
        elif t == "content_block_stop":
            yield from end(event.index)
        elif t == "message_delta":
            stop = event.delta.stop_reason
            details = getattr(event.delta, "stop_details", None)
            usage.output = event.usage.output_tokens
        elif t == "message_stop":
            for w in sorted(kinds):
                yield from end(w)
            complete = True
            break
    if not complete:  # a body that ends without message_stop is cut short, however cleanly it ends
        raise ConnectionClosedError("the stream ended before message_stop", provider="anthropic")
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
    if stop in STOP:
        yield DoneEvent(reason=STOP[stop], usage=usage)  # type: ignore[arg-type]
    else:
        explanation = getattr(details, "explanation", None)
        yield ErrorEvent(reason="error", error_message=f"stop_reason {stop}" + (f": {explanation}" if explanation else ""), error_type=stop, usage=usage)


class AnthropicSDKProvider(BaseProvider):
    """The glue: a loopkit Provider over an ``anthropic.Anthropic`` client."""

    def __init__(self, client: Any, *, model: str) -> None:
        self.client, self.model = client, model

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        import anthropic
        import httpx2

        try:
            raw = self.client.messages.create(**to_sdk_call(request, model=self.model))
            yield from to_stream_events(raw, request)
        except anthropic.APIStatusError as exc:  # one mapping from the SDK's errors to loopkit's
            body = exc.body if isinstance(exc.body, dict) else {}
            error = body.get("error", body) if isinstance(body.get("error", body), dict) else {}
            status = exc.status_code
            cls = StreamError if status == 200 else error_class_for_status(status)
            # an error event in the stream (status 200) is transient when it is the in-stream form of 529, 500, 429 or 504
            transient = True if status == 200 and error.get("type") in IN_STREAM_TRANSIENT else None
            raise cls(str(error.get("message", exc.message)), status=None if status == 200 else status, error_type=error.get("type"), provider="anthropic", body=exc.body, retryable=transient) from exc
        except (anthropic.APIConnectionError, httpx2.TransportError) as exc:
            # the SDK wraps connection errors before the response, but lets httpx2's escape mid-stream
            raise ConnectionClosedError(f"connection failed or dropped: {exc}", provider="anthropic") from exc


_HTTP: list[Any] = []


def anthropic_sdk_factory(*, base_url: str) -> AnthropicSDKProvider:
    """What ``loopkit conformance`` and the pytest plugin call: a Provider pointed at the simulator."""
    import anthropic

    if not _HTTP:  # building an SDK client costs ~0.2 s (an SSL context); the suite builds dozens
        _HTTP.append(anthropic.DefaultHttpxClient())
    client = anthropic.Anthropic(base_url=base_url, api_key="sim-key", http_client=_HTTP[0])
    return AnthropicSDKProvider(client, model="sim-model")
