"""Adapters with one realistic bug each, for the cases of unusual wire forms and histories
(``loopkit/conformance/_form_cases.py``) and the Anthropic wire forms they cover.

Each is a subclass of a shipped adapter with one hook bent: its stream decoder (the wire payloads
it reads), the request it encodes, or the body it builds. ``FORM_EXPECTED`` maps (bug, protocol)
to the case ids that must fail, and only those, among every case of the suite.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from broken_adapters import _factory_for

from loopkit.events import DoneEvent, ErrorEvent, StartEvent
from loopkit.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from loopkit.provider import ModelRequest
from loopkit.providers import adapter_class
from loopkit.providers.anthropic import STOP_REASONS, MessagesStreamDecoder

_START_CONTENT = {"text": "", "thinking": "", "signature": ""}


class _OnlyDeltas(MessagesStreamDecoder):
    """Reads a block's content from its deltas alone: whatever content_block_start already
    carries (text, thinking, signature, a tool call's input) is lost."""

    __slots__ = ()

    def _event(self, name: str, data: str, out: list[Any]) -> None:
        payload = json.loads(data) if data else None
        if isinstance(payload, dict) and payload.get("type") == "content_block_start":
            block = dict(payload["content_block"])
            block.update({k: v for k, v in _START_CONTENT.items() if k in block})
            if block.get("type") == "tool_use":
                block["input"] = {}
            data = json.dumps({**payload, "content_block": block})
        super()._event(name, data, out)


class _ServerToolsAsCalls(MessagesStreamDecoder):
    """Takes every ``*tool_use`` block for a call of the loop's (``block.type.endswith("tool_use")``),
    so a server-side web search becomes a tool call the loop would run."""

    __slots__ = ()

    def _event(self, name: str, data: str, out: list[Any]) -> None:
        super()._event(name, data.replace('"type":"server_tool_use"', '"type":"tool_use"'), out)


class _RawStopReason(MessagesStreamDecoder):
    """Passes a stop reason it has no mapping for through as it came (``STOP.get(r, r)``)."""

    __slots__ = ()

    def _event(self, name: str, data: str, out: list[Any]) -> None:
        super()._event(name, data, out)
        if out and isinstance(out[-1], DoneEvent) and self._stop_reason not in STOP_REASONS:
            out[-1].reason = self._stop_reason  # type: ignore[assignment]


class _RequestedModel:
    """Wraps a stream decoder: the start event names the model the adapter asked for
    (``StartEvent(model=self.model)``), not the one the answer names."""

    def __init__(self, inner: Any, model: str) -> None:
        self.inner, self.model = inner, model

    def _bend(self, events: list[Any]) -> list[Any]:
        for e in events:
            if isinstance(e, StartEvent):
                e.model = self.model
        return events

    def feed(self, chunk: bytes) -> list[Any]:
        return self._bend(self.inner.feed(chunk))

    def close(self) -> list[Any]:
        return self._bend(self.inner.close())


class _NoCacheCounts(_RequestedModel):
    """Wraps a stream decoder: reads the input and output counts only, so the prompt cache's
    reads and writes are lost (and the total with them)."""

    def _bend(self, events: list[Any]) -> list[Any]:
        for e in events:
            if isinstance(e, (DoneEvent, ErrorEvent)) and e.usage is not None:
                e.usage = Usage(input=e.usage.input, output=e.usage.output, total_tokens=e.usage.input + e.usage.output)
        return events


class _ErrorStopWithoutUsage(_RequestedModel):
    """Wraps a stream decoder: an error stop (a refusal, a content filter) carries no usage, as
    in ``ErrorEvent(reason="error", error_message=...)`` written without it."""

    def _bend(self, events: list[Any]) -> list[Any]:
        for e in events:
            if isinstance(e, ErrorEvent):
                e.usage = None
        return events


def _result_text_only(request: Any) -> Any:
    """Sends each tool result as its text alone (``result.text``), so an image never leaves."""
    messages = [ToolResultMessage(tool_call_id=m.tool_call_id, tool_name=m.tool_name, content=[TextContent(text=m.text)], is_error=m.is_error) if isinstance(m, ToolResultMessage) else m for m in request.messages]
    return _with_messages(request, messages)


def _result_first_part_only(request: Any) -> Any:
    """Sends the first part of each tool result (``result.content[0]``), losing the rest."""
    messages = [ToolResultMessage(tool_call_id=m.tool_call_id, tool_name=m.tool_name, content=m.content[:1], is_error=m.is_error) if isinstance(m, ToolResultMessage) else m for m in request.messages]
    return _with_messages(request, messages)


def _user_text_only(request: Any) -> Any:
    """Sends each user message as its text (``message.text``), so images never leave."""
    messages = [UserMessage(content=m.text) if isinstance(m, UserMessage) else m for m in request.messages]
    return _with_messages(request, messages)


def _last_user_message_wins(request: Any) -> Any:
    """Keeps only the last of user messages in a row (the merge replaces instead of appending)."""
    messages = [m for i, m in enumerate(request.messages) if not (isinstance(m, UserMessage) and i + 1 < len(request.messages) and isinstance(request.messages[i + 1], UserMessage))]
    return _with_messages(request, messages)


def _with_messages(request: ModelRequest, messages: list[Any]) -> ModelRequest:
    keep = ("tools", "tool_choice", "parallel_tool_calls", "model", "system", "max_tokens", "abort_signal", "call_number")
    return ModelRequest(messages, **{k: getattr(request, k) for k in keep})


def _arguments_as_parsed(body: dict[str, Any], request: Any) -> None:
    """Echoes each call's arguments as they parsed (``"input": call.arguments``): None for text
    that never parsed, a list for a JSON array, where the API takes only an object."""
    calls = {b.id: b for m in request.messages if isinstance(m, AssistantMessage) for b in m.content if isinstance(b, ToolCall)}
    for m in body["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else ():
            if b.get("type") == "tool_use" and b["id"] in calls:
                b["input"] = calls[b["id"]].arguments


def broken_form(bug: str, protocol: str) -> Callable[..., Any]:
    """A factory for the adapter of ``protocol`` with ``bug`` planted."""
    base = adapter_class(protocol)
    attrs: dict[str, Any]
    if bug in ("only_deltas", "server_tools_as_calls", "raw_stop_reason"):
        decoder = {"only_deltas": _OnlyDeltas, "server_tools_as_calls": _ServerToolsAsCalls, "raw_stop_reason": _RawStopReason}[bug]
        attrs = {"stream_decoder": lambda self: decoder()}
    elif bug == "requested_model":
        attrs = {"stream_decoder": lambda self: _RequestedModel(base.stream_decoder(self), self.model)}
    elif bug in ("no_cache_counts", "error_stop_without_usage"):
        wrapper = _NoCacheCounts if bug == "no_cache_counts" else _ErrorStopWithoutUsage
        attrs = {"stream_decoder": lambda self: wrapper(base.stream_decoder(self), self.model)}
    elif bug in ("user_text_only", "last_user_message_wins", "result_text_only", "result_first_part_only"):
        edit_request = {
            "user_text_only": _user_text_only,
            "last_user_message_wins": _last_user_message_wins,
            "result_text_only": _result_text_only,
            "result_first_part_only": _result_first_part_only,
        }[bug]
        attrs = {"build_request": lambda self, request: base.build_request(self, edit_request(request))}
    elif bug in ("nameless_errors", "utf8_only_errors"):

        def map_error(self: Any, status: int, headers: Any, body: bytes) -> Any:
            if bug == "utf8_only_errors":  # reads the body as UTF-8 text first, strictly
                body.decode("utf-8")
            err = base.map_error(self, status, headers, body)
            if bug == "nameless_errors":  # the error says which status, never which provider
                err.provider = None
            return err


        attrs = {"map_error": map_error}
    elif bug == "raw_body_messages":

        def map_error(self: Any, status: int, headers: Any, body: bytes) -> Any:
            err = base.map_error(self, status, headers, body)  # the body's text as the message
            return type(err)(body.decode("utf-8", "replace"), status=err.status, error_type=err.error_type, retry_after=err.retry_after, provider=err.provider, body=err.body)

        attrs = {"map_error": map_error}
    elif bug == "arguments_as_parsed":

        def build_request(self: Any, request: Any) -> Any:
            call = base.build_request(self, request)
            _arguments_as_parsed(call.json, request)
            return call

        attrs = {"build_request": build_request}
    else:
        raise ValueError(f"no planted bug {bug!r}")
    cls = type(f"{bug}_{protocol}", (base,), attrs)
    return _factory_for(cls)


ALL = ("openai_chat", "openai_responses", "anthropic", "gemini", "bedrock")

FORM_EXPECTED: dict[tuple[str, str], set[str]] = {
    ("only_deltas", "anthropic"): {"stream.block_start_content"},
    ("server_tools_as_calls", "anthropic"): {"stream.server_tool_blocks"},
    ("raw_stop_reason", "anthropic"): {"stop.new_reason"},
    **{("user_text_only", p): {"request.user_content"} for p in ALL},
    **{("last_user_message_wins", p): {"request.user_content"} for p in ALL},
    ("arguments_as_parsed", "anthropic"): {"request.history.unparsed_arguments"},
    **{("result_text_only", p): {"request.history.result_parts"} for p in ("openai_responses", "anthropic", "bedrock")},  # where a result holds images
    **{("result_first_part_only", p): {"request.history.result_parts"} for p in ALL},
    **{("raw_body_messages", p): {"failure.http_400"} for p in ALL},
    ("raw_body_messages", "bedrock"): {"failure.http_400", "failure.error_forms"},  # Bedrock's other error forms carry a message too
    **{("utf8_only_errors", p): {"failure.error_body_not_json"} for p in ALL},
    **{("nameless_errors", p): {"failure.http_400", "failure.error_body_not_json", "failure.auth", "failure.retries_bounded", "failure.error_identity"} for p in ALL},
    # the protocol's other error forms name the provider too
    ("nameless_errors", "gemini"): {"failure.http_400", "failure.error_body_not_json", "failure.auth", "failure.retries_bounded", "failure.error_body_wrapped", "failure.error_identity"},
    ("nameless_errors", "bedrock"): {"failure.http_400", "failure.error_body_not_json", "failure.auth", "failure.retries_bounded", "failure.error_forms", "failure.error_identity"},
    **{("no_cache_counts", p): {"stream.usage_cache"} for p in ALL},
    **{("no_cache_counts", p): {"stream.usage_cache", "stream.usage.all_cached"} for p in ("openai_chat", "openai_responses")},
    ("no_cache_counts", "gemini"): {"stream.usage_cache", "stream.usage_total"},  # the total it makes is not the API's
    # the usage of an error stop: a refusal where the API has one, and a content filter everywhere
    # every error stop keeps its usage: the kinds, the stop reasons and their details check it
    **{("error_stop_without_usage", p): {"kind.refusal", "kind.content_filter", "stop.reasons", "stop.details"} for p in ("openai_chat", "openai_responses", "anthropic")},
    ("error_stop_without_usage", "gemini"): {"kind.content_filter", "stop.reasons", "stop.details", "stop.prompt_blocked"},
    ("error_stop_without_usage", "bedrock"): {"kind.content_filter", "stop.reasons", "stop.details"},
    # the model the message names: the answer's, and the one the request asked for
    **{("requested_model", p): {"stream.answer_names", "stream.model_named", "request.model"} for p in ALL if p != "bedrock"},  # Converse names no model
}


# --- round 3: spliced streams, a last event without its blank line, errors instead of answers ---


class _EndsAtBlockStopOnly(MessagesStreamDecoder):
    """Ends a block only at its content_block_stop: one the stream never stops (a max_tokens stop
    inside a call, a spliced answer) is never ended."""

    __slots__ = ()

    def _end_open_blocks(self, out: list[Any]) -> None:
        self._blocks.clear()


class _StartPerMessage(MessagesStreamDecoder):
    """Yields a start event at every message_start (it forgets it has started)."""

    __slots__ = ()

    def _message_start(self, payload: dict[str, Any], out: list[Any]) -> None:
        self._started = False
        super()._message_start(payload, out)


class _FlushArgumentsSwapped(MessagesStreamDecoder):
    """Flushes the last event at the end of the body with its name and data swapped (a typo in
    the rarely run path), so that event fails to parse instead of being read or dropped."""

    __slots__ = ()

    def close(self) -> list[Any]:
        from loopkit.errors import ConnectionClosedError

        out: list[Any] = []
        for sse in self._sse.close():
            self._event(sse.data, sse.event, out)  # type: ignore[arg-type]
        if not self._done:
            raise ConnectionClosedError("the stream ended before message_stop", provider="anthropic")
        return out


class _ErrorsOnlyOnceStarted(MessagesStreamDecoder):
    """Reads error events only once the message started: an error that opens the stream is
    skipped, and the stream then ends without its message_stop."""

    __slots__ = ()

    def _event(self, name: str, data: str, out: list[Any]) -> None:
        if not self._started and '"type":"error"' in data.replace(" ", ""):
            return
        super()._event(name, data, out)


def _stream_errors_marked(retryable: bool) -> type:
    """A decoder that marks every in-stream error ``retryable`` whatever its type. True: an
    invalid request is retried too. False: an error mapping that knows HTTP statuses only, so an
    overloaded_error before any content fails the call as if permanent, where the 529 it stands
    for is retryable."""
    from loopkit.errors import StreamError

    class Decoder(MessagesStreamDecoder):
        __slots__ = ()

        def _event(self, name: str, data: str, out: list[Any]) -> None:
            try:
                super()._event(name, data, out)
            except StreamError as err:
                err.retryable = retryable
                raise

    return Decoder


def _empty_text_blocks_kept(base: type) -> type:
    """Sends a user message's text as a text block even when it is empty."""
    import loopkit.providers.anthropic as module

    def build_request(self: Any, request: Any) -> Any:
        real = module._user_blocks
        module._user_blocks = lambda content: [{"type": "text", "text": content}] if isinstance(content, str) else real(content)
        try:
            return base.build_request(self, request)
        finally:
            module._user_blocks = real

    return type("empty_text_blocks_kept", (base,), {"build_request": build_request})


_ROUND3_DECODERS: dict[str, type] = {
    "ends_at_block_stop_only": _EndsAtBlockStopOnly,
    "start_per_message": _StartPerMessage,
    "flush_arguments_swapped": _FlushArgumentsSwapped,
    "errors_only_once_started": _ErrorsOnlyOnceStarted,
    "every_stream_error_retried": _stream_errors_marked(True),
    "stream_errors_never_retried": _stream_errors_marked(False),
}


def broken_anthropic_round3(bug: str) -> Callable[..., Any]:
    """A factory for the Anthropic adapter with one of the round-3 ``bug`` planted."""
    base = adapter_class("anthropic")
    if bug in _ROUND3_DECODERS:
        decoder = _ROUND3_DECODERS[bug]
        cls = type(f"{bug}_anthropic", (base,), {"stream_decoder": lambda self: decoder()})
    elif bug == "empty_text_blocks_kept":
        cls = _empty_text_blocks_kept(base)
    else:
        raise ValueError(f"no planted bug {bug!r}")
    return _factory_for(cls)


# bug -> the case ids that must fail on Anthropic, and only those
ROUND3_EXPECTED: dict[str, set[str]] = {
    "ends_at_block_stop_only": {"stream.blocks_ended.length_stop", "stream.spliced_message_start"},
    "start_per_message": {"stream.spliced_message_start"},
    "flush_arguments_swapped": {"stream.last_event_unterminated"},
    "errors_only_once_started": {"failure.error_event_first", "failure.error_instead_of_answer"},
    "every_stream_error_retried": {"failure.error_event_first"},
    "stream_errors_never_retried": {"failure.error_event_first"},
    "empty_text_blocks_kept": {"request.history.empty_user_message_first", "request.history.empty_user_message", "request.user_text_blank"},
}
