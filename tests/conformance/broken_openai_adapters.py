"""OpenAI adapters (Chat Completions and Responses) with one realistic bug each, for the cases that
check the answer's metadata, cached usage, image parts, failed answers, forced-call stops and
echoed call item ids.

Each is a subclass of a shipped adapter with one hook bent, in the style of ``broken_adapters``:
its stream decoder (the events it yields, or the wire payloads it reads) or the request body it
builds. ``OPENAI_EXPECTED`` maps (bug, protocol) to the case ids that must fail, and only those.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from broken_adapters import _factory_for, _request_bug, _stream_bug

from loopkit.errors import StreamError
from loopkit.events import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    StreamEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
)
from loopkit.messages import AssistantMessage, TextContent
from loopkit.provider import ModelRequest
from loopkit.providers import adapter_class
from loopkit.providers.openai_chat import ChatStreamDecoder, OpenAIChatProvider
from loopkit.providers.openai_responses import (
    OpenAIResponsesProvider,
    ResponsesStreamDecoder,
)


def model_from_config() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Names the model the adapter was configured with, not the one that answered, and keeps
    no response id."""

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        return [StartEvent(api=e.api, provider=e.provider, model="sim-model") if isinstance(e, StartEvent) else e for e in events]

    return bend


def cached_in_input() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Reports prompt_tokens / input_tokens as the input, cached tokens included, and no cache_read."""

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for e in events:
            if isinstance(e, (DoneEvent, ErrorEvent)) and e.usage is not None and e.usage.cache_read:
                e = dataclasses.replace(e, usage=dataclasses.replace(e.usage, input=e.usage.input + e.usage.cache_read, cache_read=0))
            out.append(e)
        return out

    return bend


def ends_calls_twice() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Ends every tool call twice (closed at its finish and again at the stream's end)."""

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        return [x for e in events for x in ((e, e) if isinstance(e, ToolCallEndEvent) else (e,))]

    return bend


def starts_twice() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Sends its start event twice (a decoder that forgets it has started)."""

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        return [x for e in events for x in ((e, e) if isinstance(e, StartEvent) else (e,))]

    return bend


def _drops_images(protocol: str) -> Callable[[dict[str, Any]], None]:
    """Sends only the text parts of a user message (images silently left out)."""
    key, image = ("input", "input_image") if protocol == "openai_responses" else ("messages", "image_url")

    def edit(body: dict[str, Any]) -> None:
        for m in body.get(key) or ():
            if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), list):
                m["content"] = [p for p in m["content"] if p.get("type") != image]

    return edit


def _drops_item_ids(protocol: str) -> Callable[[dict[str, Any]], None]:
    """Echoes a function call with its call_id only, without the item id the answer gave it."""

    def edit(body: dict[str, Any]) -> None:
        for item in body.get("input") or ():
            if isinstance(item, dict) and item.get("type") == "function_call":
                item.pop("id", None)

    return edit


class _FailedWithoutDetails(ResponsesStreamDecoder):
    """Raises a generic error for ``response.failed``, without the response's error message and code."""

    __slots__ = ()

    def _on_event(self, name: str, data: str, out: list[StreamEvent]) -> None:
        if name == "response.failed":
            raise StreamError("the response failed", provider="openai_responses")
        super()._on_event(name, data, out)


class _FirstSummaryPartOnly(ResponsesStreamDecoder):
    """Reads a reasoning summary's first part only (``summary_index`` 0, ``summary[0]``)."""

    __slots__ = ()

    def _on_event(self, name: str, data: str, out: list[StreamEvent]) -> None:
        ev = json.loads(data) if data.startswith("{") else None
        if isinstance(ev, dict) and ev.get("summary_index", 0) > 0:
            return
        if isinstance(ev, dict) and isinstance(ev.get("item"), dict) and ev["item"].get("summary"):
            data = json.dumps({**ev, "item": {**ev["item"], "summary": ev["item"]["summary"][:1]}})
        super()._on_event(name, data, out)


class _NestedErrorOnly(ResponsesStreamDecoder):
    """Reads the nested ``error`` event only: a flat one fails with no message and no code."""

    __slots__ = ()

    def _on_event(self, name: str, data: str, out: list[StreamEvent]) -> None:
        ev = json.loads(data) if data.startswith("{") else None
        if isinstance(ev, dict) and ev.get("type") == "error" and not isinstance(ev.get("error"), dict):
            raise StreamError("error during the stream", provider="openai_responses")
        super()._on_event(name, data, out)


class _FinishReasonAlone(ChatStreamDecoder):
    """Maps finish_reason alone: a forced call's ``stop`` is taken as a plain stop."""

    __slots__ = ()

    def _on_data(self, data: str, out: list[StreamEvent]) -> None:
        if data.startswith("[DONE]") and self._finish == "stop":
            self._calls.clear()
        super()._on_data(data, out)


class _ReasoningAsText(ChatStreamDecoder):
    """Reads a compatible server's streamed reasoning (``delta.reasoning_content`` /
    ``delta.reasoning``) as answer text."""

    __slots__ = ()

    def _on_data(self, data: str, out: list[StreamEvent]) -> None:
        chunk = json.loads(data) if data.startswith("{") else None
        if isinstance(chunk, dict):
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                reasoning = delta.pop("reasoning_content", None) or delta.pop("reasoning", None)
                if reasoning:
                    delta["content"] = reasoning
            data = json.dumps(chunk)
        super()._on_data(data, out)


class _ReasoningContentOnly(ChatStreamDecoder):
    """Knows DeepSeek's ``reasoning_content`` only: vLLM's and OpenRouter's ``reasoning`` is dropped."""

    __slots__ = ()

    def _on_data(self, data: str, out: list[StreamEvent]) -> None:
        chunk = json.loads(data) if data.startswith("{") else None
        if isinstance(chunk, dict):
            for choice in chunk.get("choices") or ():
                (choice.get("delta") or {}).pop("reasoning", None)
            data = json.dumps(chunk)
        super()._on_data(data, out)


class _ClosedByDoneOnly(ResponsesStreamDecoder):
    """Ends an item only at its ``output_item.done``: one a stream never closed is left open at
    ``response.completed`` (a reasoning item without text never even starts)."""

    __slots__ = ()

    def _close_all(self, out: list[StreamEvent]) -> None:
        pass


class _WholeFromDone(ResponsesStreamDecoder):
    """Ignores argument and reasoning deltas: takes each whole from its ``.done`` event (nothing
    shows while the model writes them)."""

    __slots__ = ()

    def _on_event(self, name: str, data: str, out: list[StreamEvent]) -> None:
        if name in ("response.function_call_arguments.delta", "response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return
        super()._on_event(name, data, out)


class _ArgumentsAtFinish(ChatStreamDecoder):
    """Holds a call's argument fragments back and yields them in one delta when the choice finishes."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        super().__init__()
        self._held: dict[int, list[str]] = {}

    def _tool_fragment(self, frag: Any, out: list[StreamEvent]) -> None:
        fn = dict(frag.get("function") or {})
        args = fn.pop("arguments", None)
        super()._tool_fragment({**frag, "function": fn}, out)
        if isinstance(args, str) and args:
            self._held.setdefault(self._calls[frag.get("index", 0)], []).append(args)

    def _close_blocks(self, out: list[StreamEvent]) -> None:
        out += [ToolCallDeltaEvent(content_index=i, delta="".join(parts)) for i, parts in self._held.items()]
        self._held.clear()
        super()._close_blocks(out)


class _OpenAIErrorFramesOnly(ChatStreamDecoder):
    """Reads an error chunk as OpenAI writes it (``error.message`` and ``error.type``): another
    server's error with only a code loses its type, and a bare message breaks the decoder."""

    __slots__ = ()

    def _on_data(self, data: str, out: list[StreamEvent]) -> None:
        chunk = json.loads(data) if data.startswith("{") else None
        if isinstance(chunk, dict) and chunk.get("error"):
            error = chunk["error"]
            raise StreamError(error["message"], error_type=error.get("type"), provider="openai", body=error)
        super()._on_data(data, out)


class _FailedErrorAlwaysAnObject(ResponsesStreamDecoder):
    """Reads ``response.failed``'s ``error`` as an object: a null one breaks the decoder."""

    __slots__ = ()

    def _on_event(self, name: str, data: str, out: list[StreamEvent]) -> None:
        if name == "response.failed":
            error = json.loads(data)["response"]["error"]
            raise StreamError(error["message"], error_type=error["code"], provider="openai_responses", body=error)
        super()._on_event(name, data, out)


class _UsageDetailsAlwaysAnObject(ChatStreamDecoder):
    """Reads ``usage.prompt_tokens_details`` as an object: a null one (vLLM's) breaks the decoder."""

    __slots__ = ()

    def _on_data(self, data: str, out: list[StreamEvent]) -> None:
        chunk = json.loads(data) if data.startswith("{") else None
        if isinstance(chunk, dict) and isinstance(chunk.get("usage"), dict):
            chunk["usage"]["prompt_tokens_details"].get("cached_tokens")
        super()._on_data(data, out)


def _last_text_block_only(base: type) -> type:
    """Echoes an assistant message with its last text block only (each block overwrote the text)."""

    def trim(m: Any) -> Any:
        if not isinstance(m, AssistantMessage):
            return m
        texts = [b for b in m.content if isinstance(b, TextContent)]
        return dataclasses.replace(m, content=[b for b in m.content if not isinstance(b, TextContent) or b is texts[-1]])

    def build_request(self: Any, request: Any) -> Any:
        keep = {k: getattr(request, k) for k in ("tools", "tool_choice", "parallel_tool_calls", "model", "system", "max_tokens", "abort_signal", "call_number")}
        return base.build_request(self, ModelRequest([trim(m) for m in request.messages], **keep))

    return type(f"LastTextBlockOnly{base.__name__}", (base,), {"build_request": build_request})


class _NewCallPerId(ChatStreamDecoder):
    """Starts a new call at every fragment that carries an id (``if delta.id``: a new call)."""

    __slots__ = ()

    def _tool_fragment(self, frag: Any, out: list[StreamEvent]) -> None:
        if frag.get("id"):
            self._calls.pop(frag.get("index", 0), None)
        super()._tool_fragment(frag, out)


def _decoder_bug(base: type, decoder: type) -> type:
    return type(f"{decoder.__name__}{base.__name__}", (base,), {"stream_decoder": lambda self: decoder()})


# bug -> (the adapter it bends, the decoder that carries the bug)
_DECODER_BUGS: dict[str, tuple[type, type]] = {
    "failed_without_details": (OpenAIResponsesProvider, _FailedWithoutDetails),
    "first_summary_part_only": (OpenAIResponsesProvider, _FirstSummaryPartOnly),
    "nested_error_only": (OpenAIResponsesProvider, _NestedErrorOnly),
    "new_call_per_id": (OpenAIChatProvider, _NewCallPerId),
    "usage_details_always_an_object": (OpenAIChatProvider, _UsageDetailsAlwaysAnObject),
    "openai_error_frames_only": (OpenAIChatProvider, _OpenAIErrorFramesOnly),
    "failed_error_always_an_object": (OpenAIResponsesProvider, _FailedErrorAlwaysAnObject),
    "whole_from_done": (OpenAIResponsesProvider, _WholeFromDone),
    "arguments_at_finish": (OpenAIChatProvider, _ArgumentsAtFinish),
    "closed_by_done_only": (OpenAIResponsesProvider, _ClosedByDoneOnly),
    "finish_reason_alone": (OpenAIChatProvider, _FinishReasonAlone),
    "reasoning_as_text": (OpenAIChatProvider, _ReasoningAsText),
    "reasoning_content_only": (OpenAIChatProvider, _ReasoningContentOnly),
}


def broken_openai(bug: str, protocol: str) -> Callable[..., Any]:
    """A factory for the OpenAI adapter of ``protocol`` with ``bug`` planted."""
    base = adapter_class(protocol)
    stream_bugs = {"model_from_config": model_from_config, "cached_in_input": cached_in_input, "ends_calls_twice": ends_calls_twice, "starts_twice": starts_twice}
    if bug in stream_bugs:
        cls = _stream_bug(base, stream_bugs[bug], f"{bug}_{protocol}")
    elif bug in ("drops_images", "drops_item_ids"):
        cls = _request_bug(base, {"drops_images": _drops_images, "drops_item_ids": _drops_item_ids}[bug](protocol), f"{bug}_{protocol}")
    elif bug in _DECODER_BUGS and base is _DECODER_BUGS[bug][0]:
        cls = _decoder_bug(base, _DECODER_BUGS[bug][1])
    elif bug == "last_text_block_only":
        cls = _last_text_block_only(base)
    else:
        raise ValueError(f"no planted bug {bug!r} for {protocol}")
    return _factory_for(cls)


OPENAI = ("openai_chat", "openai_responses")

# (bug, protocol) -> the case ids that must fail, and only those
OPENAI_EXPECTED: dict[tuple[str, str], set[str]] = {
    **{("model_from_config", p): {"stream.answer_names", "stream.model_named", "request.model"} for p in OPENAI},
    **{("cached_in_input", p): {"stream.usage_cache", "stream.usage.all_cached"} for p in OPENAI},
    **{("drops_images", p): {"request.user_content"} for p in OPENAI},
    ("drops_item_ids", "openai_responses"): {"request.history.call_item_ids"},
    ("failed_without_details", "openai_responses"): {"failure.model_error"},
    ("finish_reason_alone", "openai_chat"): {"stop.reasons"},
    ("first_summary_part_only", "openai_responses"): {"stream.thinking.summary_parts"},
    ("nested_error_only", "openai_responses"): {"failure.flat_error_event"},
    ("reasoning_as_text", "openai_chat"): {"stream.thinking.reasoning_fields", "stream.thinking.after_text"},
    ("closed_by_done_only", "openai_responses"): {"stream.items_left_open"},
    ("openai_error_frames_only", "openai_chat"): {"failure.error_shapes", "failure.error_shapes.details"},
    ("usage_details_always_an_object", "openai_chat"): {"stream.usage.null_details"},
    **{("last_text_block_only", p): {"request.history.text_blocks"} for p in OPENAI},
    ("new_call_per_id", "openai_chat"): {"stream.tool_call_ids_repeated"},
    ("failed_error_always_an_object", "openai_responses"): {"failure.error_shapes", "failure.error_shapes.details"},
    ("whole_from_done", "openai_responses"): {"stream.events.as_they_arrive", "stream.items_left_open"},
    ("arguments_at_finish", "openai_chat"): {"stream.events.as_they_arrive"},
    ("reasoning_content_only", "openai_chat"): {"stream.thinking.reasoning_fields"},
}


# --- round 3: refusals, interleaved reasoning, cached prompts, typeless errors, reasoning items ---


def refusal_message_generic() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Ends a refusal with a message of its own ("the model refused"), not the refusal."""

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        return [dataclasses.replace(e, error_message="the model refused") if isinstance(e, ErrorEvent) and e.error_type == "refusal" else e for e in events]

    return bend


def zero_input_falls_back() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Computes the input as ``prompt - cached or prompt``: a prompt read whole from the cache
    counts all of it as input too."""

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for e in events:
            if isinstance(e, (DoneEvent, ErrorEvent)) and e.usage is not None and e.usage.input == 0 and e.usage.cache_read:
                e = dataclasses.replace(e, usage=dataclasses.replace(e.usage, input=e.usage.cache_read))
            out.append(e)
        return out

    return bend


def empty_reasoning_redacted() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Takes a reasoning block that got no text for an encrypted one (redacted)."""
    from loopkit.events import ThinkingEndEvent, ThinkingStartEvent

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        out = list(events)
        for i, e in enumerate(out[:-1]):
            if isinstance(e, ThinkingStartEvent) and isinstance(out[i + 1], ThinkingEndEvent):
                out[i] = dataclasses.replace(e, redacted=True)
        return out

    return bend


class _TypeAsText:
    """Wraps a stream decoder: an in-stream error's type is written with ``str()`` (a missing one
    becomes 'None') and the error's body is not kept."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        return self._call(self.inner.feed, chunk)

    def close(self) -> list[StreamEvent]:
        return self._call(self.inner.close)

    @staticmethod
    def _call(fn: Callable[..., list[StreamEvent]], *args: Any) -> list[StreamEvent]:
        try:
            return fn(*args)
        except StreamError as err:
            err.error_type, err.body = str(err.error_type), None
            raise


class _ReasoningBeforeTextOnly(ChatStreamDecoder):
    """Reads reasoning only until the text starts: reasoning that resumes after some text is dropped."""

    __slots__ = ("_wrote",)

    def _on_data(self, data: str, out: list[StreamEvent]) -> None:
        chunk = json.loads(data) if data.startswith("{") else None
        if isinstance(chunk, dict):
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                if getattr(self, "_wrote", False):
                    delta.pop("reasoning_content", None)
                    delta.pop("reasoning", None)
                if delta.get("content"):
                    self._wrote = True
            data = json.dumps(chunk)
        super()._on_data(data, out)


class _FirstReasoningItemOnly(ResponsesStreamDecoder):
    """Reads the first reasoning item of an answer only; later ones are skipped."""

    __slots__ = ("_reasoning_at",)

    def _on_event(self, name: str, data: str, out: list[StreamEvent]) -> None:
        ev = json.loads(data) if data.startswith("{") else None
        if isinstance(ev, dict) and (ev.get("item") or {}).get("type") == "reasoning":
            first = getattr(self, "_reasoning_at", ev.get("output_index"))
            self._reasoning_at = first
            if ev.get("output_index") != first:
                return
        super()._on_event(name, data, out)


class _DoneOnlyAfterAdded(ResponsesStreamDecoder):
    """Reads an output_item.done only for an item its output_item.added announced."""

    __slots__ = ()

    def _on_event(self, name: str, data: str, out: list[StreamEvent]) -> None:
        ev = json.loads(data) if data.startswith("{") else None
        if isinstance(ev, dict) and ev.get("type") == "response.output_item.done" and self._state(ev) is None:
            return
        super()._on_event(name, data, out)


def _any_json_signature_sent(base: type) -> type:
    """Sends back as a reasoning item any thinking whose signature parses as JSON."""
    import loopkit.providers.openai_responses as module

    def reasoning_item(block: Any) -> Any:
        try:
            return json.loads(block.thinking_signature or "")
        except ValueError:
            return None

    def build_request(self: Any, request: Any) -> Any:
        real = module._reasoning_item
        module._reasoning_item = reasoning_item
        try:
            return base.build_request(self, request)
        finally:
            module._reasoning_item = real

    return type("any_json_signature_sent", (base,), {"build_request": build_request})


def broken_openai_round3(bug: str, protocol: str) -> Callable[..., Any]:
    """A factory for the OpenAI adapter of ``protocol`` with one of the round-3 ``bug`` planted."""
    base = adapter_class(protocol)
    bends = {"refusal_message_generic": refusal_message_generic, "zero_input_falls_back": zero_input_falls_back, "empty_reasoning_redacted": empty_reasoning_redacted}
    decoders = {"reasoning_before_text_only": (OpenAIChatProvider, _ReasoningBeforeTextOnly), "first_reasoning_item_only": (OpenAIResponsesProvider, _FirstReasoningItemOnly), "done_only_after_added": (OpenAIResponsesProvider, _DoneOnlyAfterAdded)}
    if bug in bends:
        cls = _stream_bug(base, bends[bug], f"{bug}_{protocol}")
    elif bug == "type_as_text":
        cls = type(f"{bug}_{protocol}", (base,), {"stream_decoder": lambda self: _TypeAsText(base.stream_decoder(self))})
    elif bug in decoders and base is decoders[bug][0]:
        cls = _decoder_bug(base, decoders[bug][1])
    elif bug == "any_json_signature_sent" and protocol == "openai_responses":
        cls = _any_json_signature_sent(base)
    else:
        raise ValueError(f"no planted bug {bug!r} for {protocol}")
    return _factory_for(cls)


# (bug, protocol) -> the case ids that must fail, and only those
ROUND3_EXPECTED: dict[tuple[str, str], set[str]] = {
    **{("refusal_message_generic", p): {"kind.refusal.message"} for p in OPENAI},
    **{("zero_input_falls_back", p): {"stream.usage.all_cached"} for p in OPENAI},
    # the body left out also fails the cases that check the error's identity
    **{("type_as_text", p): {"failure.error_shapes.details", "failure.error_identity", "failure.model_error"} for p in OPENAI},
    ("empty_reasoning_redacted", "openai_responses"): {"stream.reasoning.bare_item"},
    ("reasoning_before_text_only", "openai_chat"): {"stream.thinking.after_text"},
    ("first_reasoning_item_only", "openai_responses"): {"stream.reasoning.two_items"},
    ("done_only_after_added", "openai_responses"): {"stream.items_never_added"},
    ("any_json_signature_sent", "openai_responses"): {"request.reasoning.foreign_signature"},
}
