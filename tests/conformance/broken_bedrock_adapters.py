"""Bedrock adapters with one realistic bug each, for the cases that read Bedrock's error forms,
in-stream exceptions, cache usage and unusable echoed arguments.

Each is a subclass of the shipped :class:`~loopkit.providers.bedrock.BedrockProvider` with one hook
bent: the event-stream messages its decoder reads, the events it yields, the error it maps or the
request body it builds. ``BEDROCK_EXPECTED`` maps a bug to the case ids that must fail, and only
those, among every case whose result the bug can change (:data:`CHECKED`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from broken_adapters import _factory_for

from loopkit.errors import ConnectionClosedError, ProviderError, ServerError, WireError, error_class_for_status
from loopkit.events import DoneEvent, ErrorEvent, StreamEvent, TextEndEvent
from loopkit.eventstream import EventStreamDecoder, Message
from loopkit.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, ToolResultMessage, UserMessage
from loopkit.providers._http import HttpCall, HttpProvider
from loopkit.providers.bedrock import EXCEPTION_STATUS, BedrockProvider, ConverseStreamDecoder, http_error


class _BentFrames(EventStreamDecoder):
    """The framing decoder, with every decoded message passed through ``bend`` (None drops it)."""

    def __init__(self, bend: Callable[[Message], Message | None]) -> None:
        super().__init__()
        self.bend = bend

    def feed(self, data: Any) -> list[Message]:
        return [m for m in (self.bend(f) for f in super().feed(data)) if m is not None]


def _raw_payload_as_message(frame: Message) -> Message | None:
    """Takes an exception's whole payload text for its message (the JSON never decoded)."""
    if frame.message_type == "exception":
        return Message(frame.headers, json.dumps({"message": frame.payload.decode("utf-8")}).encode())
    return frame


def _skips_error_messages(frame: Message) -> Message | None:
    """Knows only ``event`` and ``exception`` messages: an untyped ``error`` message is skipped."""
    return None if frame.message_type == "error" else frame


def _server_tool_as_call(frame: Message) -> Message | None:
    """Reads every toolUse start as a call for the client, the server's own tools included."""
    if frame.event_type == "contentBlockStart" and b'"server_tool_use"' in frame.payload:
        return Message(frame.headers, frame.payload.replace(b',"type":"server_tool_use"', b""))
    return frame


def _frames_bug(bend: Callable[[Message], Message | None]) -> type:
    class Decoder(ConverseStreamDecoder):
        __slots__ = ()

        def __init__(self, **kw: Any) -> None:
            super().__init__(**kw)
            self._frames = _BentFrames(bend)

    return Decoder


class _AllServerErrors(ConverseStreamDecoder):
    """Raises every in-stream exception as a retryable 5xx, whatever its member."""

    __slots__ = ()

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        try:
            return super().feed(chunk)
        except ConnectionClosedError:
            raise
        except ProviderError as err:
            raise ServerError(err.message, error_type=err.error_type, provider="bedrock") from None


class _ClosedWithoutProvider(ConverseStreamDecoder):
    """Raises ConnectionClosedError without saying which provider's stream ended early."""

    __slots__ = ()

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        try:
            return super().feed(chunk)
        except ConnectionClosedError as err:
            raise ConnectionClosedError(err.message) from None

    def close(self) -> list[StreamEvent]:
        try:
            return super().close()
        except ConnectionClosedError as err:
            raise ConnectionClosedError(err.message) from None


class _NeedsMetadata(ConverseStreamDecoder):
    """Takes the metadata event for the end of the answer: a body that ends after messageStop is cut short."""

    __slots__ = ()

    def close(self) -> list[StreamEvent]:
        if not self._done:  # (metadata ends the answer: without it, it never ended)
            raise ConnectionClosedError("Bedrock stream ended before its metadata", provider="bedrock")
        return super().close()


def _with_results(body: dict[str, Any], bend: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """``body`` with each ``toolResult`` replaced by ``bend(result)`` (new objects: the adapter's
    history cache keeps the ones it built)."""
    messages = []
    for m in body["messages"]:
        content = [{"toolResult": bend(dict(b["toolResult"]))} if "toolResult" in b else b for b in m["content"]]
        messages.append({**m, "content": content})
    return {**body, "messages": messages}


def _empty_result_placeholder(self: Any, request: Any) -> dict[str, Any]:
    """Sends a successful result with no content as a placeholder text of its own, which the
    model reads as the tool's answer."""

    def bend(r: dict[str, Any]) -> dict[str, Any]:
        return {**r, "content": [{"text": "(no output)"}]} if "status" not in r and r["content"] == [{"text": ""}] else r

    return _with_results(BedrockProvider.request_body(self, request), bend)


class _StatusDropped(BedrockProvider):
    """For a model that refuses toolResult.status: drops the field and puts nothing in its
    place, so an error result reads like a success."""

    def request_body(self, request: Any) -> dict[str, Any]:
        return _with_results(super().request_body(request), lambda r: {k: v for k, v in r.items() if k != "status"})


class _TextErrors(BedrockProvider):
    """The adapter built for a model that refuses toolResult.status (error_status=False)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(error_status=False, **kw)


class _MarksEveryResult(_TextErrors):
    """Prefixes every result's text with ``Error:``, successes included."""

    def request_body(self, request: Any) -> dict[str, Any]:
        def bend(r: dict[str, Any]) -> dict[str, Any]:
            text = r["content"][0].get("text", "")
            return r if text.startswith("Error: ") else {**r, "content": [{"text": "Error: " + text}, *r["content"][1:]]}

        return _with_results(super().request_body(request), bend)


class _ErrorTextTwice(_TextErrors):
    """Adds the marked text to an error result and keeps its text blocks as well: the tool's
    text reaches the model twice."""

    def request_body(self, request: Any) -> dict[str, Any]:
        texts = {m.tool_call_id: m.text for m in request.messages if isinstance(m, ToolResultMessage) and m.is_error and m.text}

        def bend(r: dict[str, Any]) -> dict[str, Any]:
            text = texts.get(r["toolUseId"])
            return {**r, "content": [*r["content"], {"text": text}]} if text else r

        return _with_results(super().request_body(request), bend)


VARIANT_BUGS: dict[str, type] = {
    "status_anyway": BedrockProvider,  # the usual adapter, sending the status the model refuses
    "status_dropped": _StatusDropped,
    "marks_every_result": _MarksEveryResult,
    "error_text_twice": _ErrorTextTwice,
}
"""Adapters run against the model family that refuses toolResult.status (variant
``no-tool-result-status``), each with one realistic bug."""

_SENDS_AN_ERROR_RESULT = {
    "request.history.tool_calls",
    "request.history.results",
    "request.history.argument_types",
    "request.history.is_error",
    "request.history.empty_error_result",
    "request.history.empty_result",
    "request.history.error_in_text",
    "request.tool_choice.none_after_tool_round",
}
VARIANT_EXPECTED: dict[str, set[str]] = {
    "status_anyway": _SENDS_AN_ERROR_RESULT,  # each request with an error result is refused
    "status_dropped": {"request.history.is_error", "request.history.error_in_text"},
    "marks_every_result": {"request.history.is_error", "request.history.error_in_text", "request.history.empty_result"},
    "error_text_twice": {"request.history.error_in_text"},
}

# the cases sending an error result, and three that send none (they must pass on every bug)
VARIANT_CHECKED: tuple[str, ...] = (*sorted(_SENDS_AN_ERROR_RESULT), "request.history.same_tool_twice", "request.reasoning.passback", "stream.text")
"""The cases whose result these bugs can change: every case sending tool results, and one that sends none."""


def variant_bedrock(bug: str) -> Callable[..., Any]:
    """A factory for the Bedrock adapter of ``VARIANT_BUGS[bug]``."""
    return _factory_for(VARIANT_BUGS[bug])


def _drops_error_body(self: Any, status: int, headers: Any, body: bytes) -> ProviderError:
    """Keeps the message of an HTTP error, not its decoded body."""
    err = http_error(status, headers, body)
    err.body = None
    return err


class _DropsCacheUsage:
    """Wraps the decoder: usage keeps input and output only (the cache counts never read)."""

    def __init__(self, inner: ConverseStreamDecoder) -> None:
        self.inner = inner

    def _bend(self, events: list[StreamEvent]) -> list[StreamEvent]:
        for e in events:
            if isinstance(e, (DoneEvent, ErrorEvent)) and e.usage is not None:
                e.usage.cache_read = e.usage.cache_write = 0
                e.usage.total_tokens = e.usage.input + e.usage.output
        return events

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        return self._bend(self.inner.feed(chunk))

    def close(self) -> list[StreamEvent]:
        return self._bend(self.inner.close())


class _Bent:
    """Wraps the decoder, passing each batch of events through ``bend``."""

    def __init__(self, inner: ConverseStreamDecoder, bend: Callable[[list[StreamEvent]], list[StreamEvent]]) -> None:
        self.inner, self.bend = inner, bend

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        return self.bend(self.inner.feed(chunk))

    def close(self) -> list[StreamEvent]:
        return self.bend(self.inner.close())


def _no_text_end(events: list[StreamEvent]) -> list[StreamEvent]:
    """Text blocks are never ended (the contentBlockStop of a text block is dropped)."""
    return [e for e in events if not isinstance(e, TextEndEvent)]


def _error_stop_without_usage(events: list[StreamEvent]) -> list[StreamEvent]:
    """An error stop (guardrail, content filter ...) loses the usage of its answer."""
    return [replace(e, usage=None) if isinstance(e, ErrorEvent) else e for e in events]


def _error_stop_untyped(events: list[StreamEvent]) -> list[StreamEvent]:
    """Every error stop has the error_type ``error``: which stop reason it was is lost."""
    return [replace(e, error_type="error") if isinstance(e, ErrorEvent) else e for e in events]


def _bent(bend: Callable[[list[StreamEvent]], list[StreamEvent]]) -> Callable[[Any], Any]:
    return lambda self: _Bent(BedrockProvider.stream_decoder(self), bend)


def _model_path_keeps_slashes(self: Any, request: Any) -> HttpCall:
    """URL-encodes the model id with ``quote``'s default, which keeps ``/`` (an ARN's path breaks)."""
    op = "converse-stream" if self.streaming else "converse"
    return HttpCall(method="POST", path=f"/model/{quote(request.model or self.model)}/{op}", json=self.request_body(request))


def _error_type_verbatim(self: Any, status: int, headers: Any, body: bytes) -> ProviderError:
    """Keeps ``x-amzn-errortype`` as sent, namespace and URI included."""
    err = http_error(status, headers, body)
    if headers.get("x-amzn-errortype"):
        err.error_type = headers["x-amzn-errortype"]
    return err


def _lowercase_message_only(self: Any, status: int, headers: Any, body: bytes) -> ProviderError:
    """Reads the body's ``message`` only: a capitalised ``Message`` leaves the raw body as the text."""
    err = http_error(status, headers, body)
    if isinstance(err.body, dict) and "message" not in err.body:
        err.message = body.decode("utf-8")
    return err


def _error_type_from_header_only(self: Any, status: int, headers: Any, body: bytes) -> ProviderError:
    """Reads the shape from ``x-amzn-errortype`` alone: without the header the error has no type and
    its class comes from the status."""
    err = http_error(status, headers, body)
    if headers.get("x-amzn-errortype"):
        return err
    return error_class_for_status(status)(err.message, status=status, error_type=None, provider="bedrock", body=err.body)


def _class_by_status(self: Any, status: int, headers: Any, body: bytes) -> ProviderError:
    """Picks the class by the HTTP status alone: a ThrottlingException with HTTP 400 is a bad request."""
    err = http_error(status, headers, body)
    return error_class_for_status(status)(err.message, status=status, error_type=err.error_type, retry_after=err.retry_after, provider="bedrock", body=err.body)


class _BarePayloadAsMessage(ConverseStreamDecoder):
    """Reports an exception whose payload names no message by that payload's JSON text."""

    __slots__ = ()

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        try:
            return super().feed(chunk)
        except ProviderError as err:
            if isinstance(err.body, dict) and "message" not in err.body:
                err.message = json.dumps(err.body)
            raise


def _known_exceptions_only(frame: Message) -> Message | None:
    """Looks each exception's member up in its table: a member it does not know crashes it."""
    if frame.message_type == "exception":
        EXCEPTION_STATUS[str(frame.headers.get(":exception-type")).lower()]
    return frame


class _SignatureRequired(ConverseStreamDecoder):
    """Takes every reasoning block to end with a signature: one that came without crashes it."""

    __slots__ = ()

    def _event(self, event_type: str, payload: bytes, out: list[StreamEvent]) -> None:
        if event_type == "contentBlockStop":
            kind, i = self._blocks.get(json.loads(payload).get("contentBlockIndex"), ("ignored", -1))
            if kind == "thinking":
                self._signatures[i]  # a KeyError when no signature delta came
        super()._event(event_type, payload, out)


def _echoes_unsigned_thinking(self: Any, request: Any) -> dict[str, Any]:
    """Sends every thinking block back, with an empty signature where it had none."""
    body = BedrockProvider.request_body(self, request)
    thoughts = [b for m in request.messages if isinstance(m, AssistantMessage) for b in m.content if isinstance(b, ThinkingContent)]
    for m in body["messages"]:
        if m["role"] == "assistant" and thoughts and not any("reasoningContent" in b for b in m["content"]):
            m["content"] = [{"reasoningContent": {"reasoningText": {"text": t.thinking, "signature": t.thinking_signature or ""}}} for t in thoughts] + m["content"]
    return body


def _echoes_arguments_as_kept(self: Any, request: Any) -> dict[str, Any]:
    """Echoes each call's arguments as the message keeps them: the raw text of a call that never
    parsed, a non-object as it is."""
    body = BedrockProvider.request_body(self, request)
    calls = {b.id: b for m in request.messages if isinstance(m, AssistantMessage) for b in m.content if isinstance(b, ToolCall)}
    for m in body["messages"]:
        for block in m["content"]:
            call = calls.get((block.get("toolUse") or {}).get("toolUseId"))
            if call is not None:
                block["toolUse"] = {**block["toolUse"], "input": call.raw_arguments if call.raw_arguments is not None else call.arguments}
    return body


def _image_format_as_mime(self: Any, request: Any) -> dict[str, Any]:
    """Sends an image's media type (image/png) where Converse wants its format name (png)."""
    body = BedrockProvider.request_body(self, request)
    for m in body["messages"]:
        for block in m["content"]:
            if "image" in block:
                block["image"] = {**block["image"], "format": "image/" + block["image"]["format"]}
    return body


def _error_type_from_status(self: Any, status: int, headers: Any, body: bytes) -> ProviderError:
    """Names an error that names no shape by its HTTP status, as botocore's Error.Code does."""
    err = http_error(status, headers, body)
    if err.error_type is None:
        err.error_type = str(status)
    return err


def _body_empty_dict(self: Any, status: int, headers: Any, body: bytes) -> ProviderError:
    """Reads an error body that is not JSON as an empty object."""
    err = http_error(status, headers, body)
    if err.body is None:
        err.body = {}
    return err


def _keeps_blank_text(self: Any, request: Any) -> dict[str, Any]:
    """Sends user text as it is given, blank text included (the merged first user message starts
    with the blank blocks the shipped adapter drops)."""
    body = BedrockProvider.request_body(self, request)
    blanks = [
        {"text": t}
        for m in request.messages
        if isinstance(m, UserMessage)
        for t in ([m.content] if isinstance(m.content, str) else [b.text for b in m.content if isinstance(b, TextContent)])
        if not t.strip()
    ]
    first = next((m for m in body["messages"] if m["role"] == "user"), None)
    if blanks and first is not None:
        first["content"] = blanks + first["content"]
    return body


class _StopNeedsOpenBlock(ConverseStreamDecoder):
    """Takes a contentBlockStop for a block no delta opened for a broken stream."""

    __slots__ = ()

    def _event(self, event_type: str, payload: bytes, out: list[StreamEvent]) -> None:
        if event_type == "contentBlockStop" and json.loads(payload).get("contentBlockIndex") not in self._blocks:
            raise WireError("bedrock: contentBlockStop for a block that never started")
        super()._event(event_type, payload, out)


class _LastSignatureDeltaWins(ConverseStreamDecoder):
    """Keeps the last signature (or redacted data) delta of a reasoning block, not their join."""

    __slots__ = ()

    def _delta(self, data: dict[str, Any], out: list[StreamEvent]) -> None:
        rc = (data.get("delta") or {}).get("reasoningContent") or {}
        kind, i = self._blocks.get(data.get("contentBlockIndex"), (None, -1))
        if kind == "thinking" and ("signature" in rc or "redactedContent" in rc):
            self._signatures.pop(i, None)
        super()._delta(data, out)


def _decoder_hook(decoder: type) -> Callable[[Any], Any]:
    return lambda self: decoder(api=self.api, provider=self.provider_name, model=self.model)


BUGS: dict[str, dict[str, Any]] = {
    "raw_payload_as_message": {"stream_decoder": _decoder_hook(_frames_bug(_raw_payload_as_message))},
    "skips_error_messages": {"stream_decoder": _decoder_hook(_frames_bug(_skips_error_messages))},
    "all_stream_exceptions_server_errors": {"stream_decoder": _decoder_hook(_AllServerErrors)},
    "drops_cache_usage": {"stream_decoder": lambda self: _DropsCacheUsage(BedrockProvider.stream_decoder(self))},
    "error_type_verbatim": {"map_error": _error_type_verbatim},
    "lowercase_message_only": {"map_error": _lowercase_message_only},
    "echoes_arguments_as_kept": {"request_body": _echoes_arguments_as_kept},
    # the answer names no model, so the decoder's (the adapter's) is kept even for a request for another
    "names_the_adapters_model": {"stream": HttpProvider.stream, "astream": HttpProvider.astream},
    "model_path_keeps_slashes": {"build_request": _model_path_keeps_slashes},
    "no_text_end": {"stream_decoder": _bent(_no_text_end)},
    "error_stop_without_usage": {"stream_decoder": _bent(_error_stop_without_usage)},
    "error_stop_untyped": {"stream_decoder": _bent(_error_stop_untyped)},
    "closed_without_provider": {"stream_decoder": _decoder_hook(_ClosedWithoutProvider)},
    "drops_error_body": {"map_error": _drops_error_body},
    "needs_metadata": {"stream_decoder": _decoder_hook(_NeedsMetadata)},
    "server_tool_as_call": {"stream_decoder": _decoder_hook(_frames_bug(_server_tool_as_call))},
    "image_format_as_mime": {"request_body": _image_format_as_mime},
    "error_type_from_header_only": {"map_error": _error_type_from_header_only},
    "class_by_status": {"map_error": _class_by_status},
    "signature_required": {"stream_decoder": _decoder_hook(_SignatureRequired)},
    "echoes_unsigned_thinking": {"request_body": _echoes_unsigned_thinking},
    "known_exceptions_only": {"stream_decoder": _decoder_hook(_frames_bug(_known_exceptions_only))},
    "bare_payload_as_message": {"stream_decoder": _decoder_hook(_BarePayloadAsMessage)},
    "error_type_from_status": {"map_error": _error_type_from_status},
    "body_empty_dict": {"map_error": _body_empty_dict},
    "keeps_blank_text": {"request_body": _keeps_blank_text},
    "stop_needs_open_block": {"stream_decoder": _decoder_hook(_StopNeedsOpenBlock)},
    "last_signature_delta_wins": {"stream_decoder": _decoder_hook(_LastSignatureDeltaWins)},
    "empty_result_placeholder": {"request_body": _empty_result_placeholder},
}

BEDROCK_EXPECTED: dict[str, set[str]] = {
    "raw_payload_as_message": {"failure.stream_exceptions", "failure.stream_exception_unknown", "failure.stream_exception_bare"},
    "skips_error_messages": {"failure.stream_error_event"},
    "all_stream_exceptions_server_errors": {"failure.stream_exceptions", "failure.stream_exception_unknown", "failure.stream_exception_bare"},
    "drops_cache_usage": {"stream.usage_cache"},
    "error_type_verbatim": {"failure.error_forms"},
    "lowercase_message_only": {"failure.error_forms"},
    "echoes_arguments_as_kept": {"request.history.unparsed_arguments"},
    "names_the_adapters_model": {"stream.model_named"},
    "model_path_keeps_slashes": {"stream.model_named"},
    "no_text_end": {"stream.blocks_ended", "stream.blocks_ended.length_stop"},
    "error_stop_without_usage": {"stop.reasons", "kind.content_filter"},
    "error_stop_untyped": {"stop.reasons"},
    "closed_without_provider": {"failure.ends_early"},
    "drops_error_body": {"failure.error_forms"},
    "needs_metadata": {"stream.ends_at_terminal"},
    "server_tool_as_call": {"stream.server_tool_calls"},
    "image_format_as_mime": {"request.user_content"},
    "error_type_from_header_only": {"failure.error_forms"},
    "class_by_status": {"failure.throttling_any_status"},
    "signature_required": {"stream_decoder": _decoder_hook(_SignatureRequired)},
    "echoes_unsigned_thinking": {"request_body": _echoes_unsigned_thinking},
    "known_exceptions_only": {"failure.stream_exception_unknown"},
    "bare_payload_as_message": {"failure.stream_exception_bare"},
    "signature_required": {"stream.thinking_unsigned"},
    "echoes_unsigned_thinking": {"stream.thinking_unsigned"},
    "error_type_from_status": {"failure.proxy_error_untyped"},
    "body_empty_dict": {"failure.proxy_error_untyped"},
    "keeps_blank_text": {"request.user_text_blank"},
    "stop_needs_open_block": {"stream.block_stop_without_delta"},
    "last_signature_delta_wins": {"stream.signature_fragments"},
    "empty_result_placeholder": {"request.history.empty_result"},
}

CHECKED: tuple[str, ...] = (
    "request.user_content",
    "request.system",
    "request.history.tool_calls",
    "request.history.argument_types",
    "request.history.unparsed_arguments",
    "stream.text",
    "stream.text_then_tool_call",
    "stream.thinking",
    "stream.thinking_unsigned",
    "request.reasoning.passback",
    "stream.blocks_ended",
    "stream.ends_at_terminal",
    "stream.server_tool_calls",
    "stream.model_named",
    "stop.reasons",
    "kind.content_filter",
    "kind.stop_sequence",
    "stream.async",
    "stream.usage",
    "stream.usage_cache",
    "kind.reasoning_tokens",
    "failure.http_400",
    "failure.error_body_not_json",
    "failure.auth",
    "failure.error_forms",
    "failure.http_429_retry_after",
    "failure.http_500",
    "failure.mid_stream",
    "failure.stream_exceptions",
    "failure.stream_error_event",
    "failure.throttling_any_status",
    "failure.stream_exception_unknown",
    "failure.stream_exception_bare",
    "failure.proxy_error_untyped",
    "request.user_text_blank",
    "stream.block_stop_without_delta",
    "stream.signature_fragments",
    "failure.truncated",
    "failure.ends_early",
    "request.history.results",
    "request.history.empty_error_result",
    "request.history.empty_result",
)
"""The cases whose result these bugs can change: the ones named above and their neighbours."""


def broken_bedrock(bug: str) -> Callable[..., Any]:
    """A factory for the Bedrock adapter with ``bug`` planted."""
    cls = type(f"Broken{bug.title().replace('_', '')}", (BedrockProvider,), BUGS[bug])
    return _factory_for(cls)
