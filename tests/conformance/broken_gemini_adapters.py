"""Gemini adapters with one realistic bug each, for the cases that Gemini's rarer wire forms and
history shapes need (Vertex's streamed calls, errors as bare JSON lines, results out of order).

Each is a subclass of the shipped :class:`~loopkit.providers.gemini.GeminiProvider` with one hook
bent: its stream decoder or the request body it builds. ``GEMINI_EXPECTED`` maps a bug to the
case ids that must fail on Gemini, and only those.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from broken_adapters import _factory_for

from loopkit.errors import ConnectionClosedError, StreamError
from loopkit.events import ErrorEvent, ToolCallDeltaEvent
from loopkit.messages import AssistantMessage, TextContent, ToolResultMessage, UserMessage
from loopkit.provider import ModelRequest
from loopkit.providers._sse import SSEDecoder
from loopkit.providers.gemini import NO_RESULT, GeminiProvider, GeminiStreamDecoder, google_error


class _WholeCallsOnly(GeminiStreamDecoder):
    """Written for the Developer API: every functionCall part is a whole call, so Vertex's
    opening, partialArgs and closing parts each become a call of their own (arguments lost)."""

    __slots__ = ()

    def _part(self, part: Mapping[str, Any]) -> list[Any]:
        fc = part.get("functionCall")
        if isinstance(fc, Mapping):
            part = {**part, "functionCall": {k: v for k, v in fc.items() if k not in ("partialArgs", "willContinue")}}
        return super()._part(part)


class _SseOnly(GeminiStreamDecoder):
    """Reads ``data:`` events only: an error written as bare JSON lines goes unseen, and the call
    fails as a stream that ended early, without the provider's message."""

    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sse = SSEDecoder()


class _ErrorStopsWithoutUsage(GeminiStreamDecoder):
    """Reports usage on clean stops only: an answer blocked by SAFETY loses its token counts."""

    __slots__ = ()

    def close(self) -> list[Any]:
        return [replace(e, usage=None) if isinstance(e, ErrorEvent) else e for e in super().close()]


class _NoFinishMessage(GeminiStreamDecoder):
    """Never reads ``finishMessage``: an error stop says only its reason, not the API's words."""

    __slots__ = ()

    def handle(self, data: Any) -> list[Any]:
        if isinstance(data, Mapping):
            data = {**data, "candidates": [{k: v for k, v in c.items() if k != "finishMessage"} for c in data.get("candidates") or []]}
        return super().handle(data)


class _CachedAsInput(GeminiStreamDecoder):
    """Ignores ``cachedContentTokenCount``: cached prompt tokens count as plain input."""

    __slots__ = ()

    def handle(self, data: Any) -> list[Any]:
        if isinstance(data, Mapping) and isinstance(data.get("usageMetadata"), Mapping):
            data = {**data, "usageMetadata": {k: v for k, v in data["usageMetadata"].items() if k != "cachedContentTokenCount"}}
        return super().handle(data)


class _NoPromptFeedback(GeminiStreamDecoder):
    """Never reads ``promptFeedback``: a blocked prompt looks like a stream that ended early."""

    __slots__ = ()

    def handle(self, data: Any) -> list[Any]:
        if isinstance(data, Mapping):
            data = {k: v for k, v in data.items() if k != "promptFeedback"}
        return super().handle(data)


class _StreamErrorsFinal(GeminiStreamDecoder):
    """Treats every error event in a stream as final, even a 500 before any content."""

    __slots__ = ()

    def handle(self, data: Any) -> list[Any]:
        try:
            return super().handle(data)
        except StreamError as exc:
            exc.retryable = False
            raise


class _StreamErrorsRetried(GeminiStreamDecoder):
    """Retries every error event that opens a stream, even a 400 that will fail again."""

    __slots__ = ()

    def handle(self, data: Any) -> list[Any]:
        try:
            return super().handle(data)
        except StreamError as exc:
            exc.retryable = True
            raise


class _ReprDeltas(GeminiStreamDecoder):
    """Writes a call's delta as ``str(args)`` (a Python dict's repr, not JSON); the end event still
    carries the call, so only a consumer of the deltas sees it."""

    __slots__ = ()

    def _part(self, part: Mapping[str, Any]) -> list[Any]:
        return [replace(e, delta=str(json.loads(e.delta))) if isinstance(e, ToolCallDeltaEvent) else e for e in super()._part(part)]


class _NoResponseId(GeminiStreamDecoder):
    """Never reads ``responseId``: the answer cannot be traced to the API's logs."""

    __slots__ = ()

    def handle(self, data: Any) -> list[Any]:
        if isinstance(data, Mapping):
            data = {k: v for k, v in data.items() if k != "responseId"}
        return super().handle(data)


class _UnsignedText(GeminiStreamDecoder):
    """Keeps thoughtSignature on thinking and calls only: a signed text part loses its signature."""

    __slots__ = ()

    def _part(self, part: Mapping[str, Any]) -> list[Any]:
        if "text" in part and not part.get("thought"):
            part = {k: v for k, v in part.items() if k != "thoughtSignature"}
        return super()._part(part)


class _TotalFromCounts(GeminiStreamDecoder):
    """Adds its own counts up for usage.total_tokens instead of reading totalTokenCount."""

    __slots__ = ()

    def close(self) -> list[Any]:
        out = super().close()
        for e in out:
            if getattr(e, "usage", None) is not None:
                u = e.usage
                u.total_tokens = u.input + u.output + u.cache_read
        return out


class _NoStreamRetryInfo(GeminiStreamDecoder):
    """Reads the RetryInfo wait of HTTP errors only: an in-stream error's wait is lost."""

    __slots__ = ()

    def handle(self, data: Any) -> list[Any]:
        try:
            return super().handle(data)
        except StreamError as exc:
            exc.retry_after = None
            raise


class _LastEventPerRead(GeminiStreamDecoder):
    """Keeps the events of the last SSE event of each read only (``out = ...`` for ``out += ...``):
    every event but the last of a read that holds several is lost."""

    __slots__ = ()

    def feed(self, chunk: bytes) -> list[Any]:
        out: list[Any] = []
        for ev in self._sse.feed(chunk):
            out = self._event(ev)
        return out


class _EarlyEndAsErrorEvent(GeminiStreamDecoder):
    """Ends a stream that stopped before its finishReason with an error event instead of raising:
    the loop cannot tell an incomplete answer from the model's own error stop."""

    __slots__ = ()

    def close(self) -> list[Any]:
        try:
            return super().close()
        except ConnectionClosedError as exc:
            return [ErrorEvent(error_message=str(exc))]


class _BufferedEventLost(GeminiStreamDecoder):
    """Never flushes its SSE decoder when the body ends: a last chunk whose blank line never came
    (its data line whole) is dropped, with the text it carried."""

    __slots__ = ()

    def close(self) -> list[Any]:
        self._sse = SSEDecoder(raw_lines=True)
        return super().close()


class _NamesFoldedIntoOpenCall(GeminiStreamDecoder):
    """Reads every part that comes while a streamed call is open as more of that call (only the
    opening part's name counts): a part that starts another call adds its arguments to the open
    one, and the two calls come out as one."""

    __slots__ = ()

    def _streamed_call(self, fc: Any, sig: str | None) -> list[Any]:
        if self._partial is not None and isinstance(fc, Mapping):
            fc = {k: v for k, v in fc.items() if k != "name"}
        return super()._streamed_call(fc, sig)


class _EmptySignatureForNone(GeminiStreamDecoder):
    """Gives a streamed call the API signed nowhere the signature ``""`` (``part.get(..., "")``):
    the next request sends an empty thoughtSignature the API never gave."""

    __slots__ = ()

    def _streamed_call(self, fc: Any, sig: str | None) -> list[Any]:
        return super()._streamed_call(fc, "" if sig is None and self._partial is None else sig)


def _decoder_bug(decoder: type) -> type:
    class Adapter(GeminiProvider):
        def stream_decoder(self) -> GeminiStreamDecoder:
            return decoder(self._new_call_id, provider=self.provider_name, api=self.api, model=self.model)

    return Adapter


class _ResultsAsGiven(GeminiProvider):
    """Sends the functionResponse parts in the order the results were given, not in the order of
    the calls they answer (Gemini pairs responses without ids with calls by position)."""

    def build_request(self, request: Any) -> Any:
        call = super().build_request(request)
        given = [m.text for m in request.messages if isinstance(m, ToolResultMessage)]
        for content in call.json.get("contents", []):
            parts = content.get("parts", [])
            if parts and all("functionResponse" in p for p in parts):
                text = {id(p): next(iter(p["functionResponse"]["response"].values())) for p in parts}
                parts.sort(key=lambda p: given.index(text[id(p)]) if text[id(p)] in given else len(given))
        return call


class _ResultsOfLastRoundOnly(GeminiProvider):
    """Keeps only the results after the last model turn: an earlier round's calls go unanswered."""

    def build_request(self, request: Any) -> Any:
        call = super().build_request(request)
        contents = call.json.get("contents", [])
        answers = [i for i, c in enumerate(contents) if c.get("parts") and all("functionResponse" in p for p in c["parts"])]
        call.json["contents"] = [c for i, c in enumerate(contents) if i not in answers[:-1]]
        return call


class _ThinkingAsText(GeminiProvider):
    """Echoes a thinking block as a plain text part (its signature kept): the model reads its own
    thoughts back as something it said."""

    def build_request(self, request: Any) -> Any:
        call = super().build_request(request)
        for content in call.json.get("contents", []):
            for part in content.get("parts", []):
                part.pop("thought", None)
        return call


class _NoResponseIds(GeminiProvider):
    """Never sends functionResponse.id: the API pairs its call's id with nothing."""

    def build_request(self, request: Any) -> Any:
        call = super().build_request(request)
        for content in call.json.get("contents", []):
            for part in content.get("parts", []):
                if "functionResponse" in part:
                    part["functionResponse"].pop("id", None)
        return call


class _IdsFromOne(GeminiProvider):
    """Counts its made-up ids from gcall_1 whatever the history holds: a provider resuming a
    history repeats the ids of its calls."""

    def _raise_floor(self, messages: Any) -> None:
        return None


class _StatusAsText(GeminiProvider):
    """Writes the body's status with ``str()`` whether or not there is one: a plain-text error
    body gets the error type ``"None"``."""

    def map_error(self, status: int, headers: Any, body: bytes) -> Any:
        err = super().map_error(status, headers, body)
        err.error_type = str(err.error_type)
        return err


class _ConfiguredModelOnly(GeminiProvider):
    """Always calls the model it was built with, ignoring ``ModelRequest.model``."""

    def build_request(self, request: Any) -> Any:
        asked, request.model = request.model, None
        try:
            return super().build_request(request)
        finally:
            request.model = asked


class _BodyRetryInfoOnly(GeminiProvider):
    """Reads the wait from the body's RetryInfo only, never from a ``retry-after`` header."""

    def map_error(self, status: int, headers: Any, body: bytes) -> Any:
        return super().map_error(status, type(headers)(), body)


class _ErrorObjectsOnly(GeminiProvider):
    """Reads an HTTP error body only as an ``{"error": ...}`` object: in an array, the message is
    the raw body text and the error type is lost."""

    def map_error(self, status: int, headers: Any, body: bytes) -> Any:
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if isinstance(data, list):
            return google_error(status, None, body, retry_after=None, provider=self.provider_name)
        return super().map_error(status, headers, body)


class _MadeUpResultAsOutput(GeminiProvider):
    """Answers a call left without a result with ``{"output": "No result provided"}``: the model
    reads a call that never ran as the tool's own output."""

    def build_request(self, request: Any) -> Any:
        call = super().build_request(request)
        for content in call.json.get("contents", []):
            for part in content.get("parts", []):
                fr = part.get("functionResponse")
                if fr is not None and fr.get("response") == {"error": NO_RESULT}:
                    fr["response"] = {"output": NO_RESULT}
        return call


_EMPTY = "\x00empty\x00"


def _with_empty_texts(m: Any) -> Any:
    if not isinstance(m, UserMessage):
        return m
    if isinstance(m.content, str):
        return UserMessage(content=m.content or _EMPTY)
    blocks = [TextContent(text=b.text or _EMPTY) if isinstance(b, TextContent) else b for b in m.content]
    return UserMessage(content=blocks or [TextContent(text=_EMPTY)])


def _with_messages(request: Any, change: Callable[[Any], Any]) -> ModelRequest:
    return ModelRequest([change(m) for m in request.messages], tools=request.tools, tool_choice=request.tool_choice,
                        model=request.model, system=request.system, max_tokens=request.max_tokens)  # fmt: skip


class _EmptyTextParts(GeminiProvider):
    """Sends every text of a user message as a part, empty ones too, and a message with no blocks
    as one empty text: the API refuses a part that is only ``{"text": ""}``."""

    def build_request(self, request: Any) -> Any:
        call = super().build_request(_with_messages(request, _with_empty_texts))
        for content in call.json.get("contents", []):
            for part in content.get("parts", []):
                if part.get("text") == _EMPTY:
                    part["text"] = ""
        return call


def _cut_at_empty_text(m: Any) -> Any:
    if not isinstance(m, AssistantMessage):
        return m
    for i, b in enumerate(m.content):
        if isinstance(b, TextContent) and not b.text and b.text_signature is None:
            return replace(m, content=m.content[:i])
    return m


class _EmptyTextEndsTurn(GeminiProvider):
    """Stops a model turn's parts at its first empty text (meant to skip the empty text a Gemini
    answer ends with): a call after one is lost, and its result then answers nothing."""

    def build_request(self, request: Any) -> Any:
        return super().build_request(_with_messages(request, _cut_at_empty_text))


class _OwnIdsByDigits(GeminiProvider):
    """Takes every id whose tail after the first six characters is all digits for one of its own
    made-up ``gcall_<n>`` ids, and so never echoes such an id the API sent."""

    def build_request(self, request: Any) -> Any:
        call = super().build_request(request)
        for content in call.json.get("contents", []):
            for part in content.get("parts", []):
                for key in ("functionCall", "functionResponse"):
                    if key in part and str(part[key].get("id", ""))[6:].isdigit():
                        part[key].pop("id")
        return call


GEMINI_BUGS: dict[str, type] = {
    "whole_calls_only": _decoder_bug(_WholeCallsOnly),
    "sse_only": _decoder_bug(_SseOnly),
    "results_as_given": _ResultsAsGiven,
    "error_objects_only": _ErrorObjectsOnly,
    "body_retry_info_only": _BodyRetryInfoOnly,
    "configured_model_only": _ConfiguredModelOnly,
    "no_response_id": _decoder_bug(_NoResponseId),
    "repr_deltas": _decoder_bug(_ReprDeltas),
    "results_of_last_round_only": _ResultsOfLastRoundOnly,
    "error_stops_without_usage": _decoder_bug(_ErrorStopsWithoutUsage),
    "no_finish_message": _decoder_bug(_NoFinishMessage),
    "cached_as_input": _decoder_bug(_CachedAsInput),
    "no_prompt_feedback": _decoder_bug(_NoPromptFeedback),
    "stream_errors_final": _decoder_bug(_StreamErrorsFinal),
    "stream_errors_retried": _decoder_bug(_StreamErrorsRetried),
    "unsigned_text": _decoder_bug(_UnsignedText),
    "thinking_as_text": _ThinkingAsText,
    "no_response_ids": _NoResponseIds,
    "ids_from_one": _IdsFromOne,
    "total_from_counts": _decoder_bug(_TotalFromCounts),
    "no_stream_retry_info": _decoder_bug(_NoStreamRetryInfo),
    "last_event_per_read": _decoder_bug(_LastEventPerRead),
    "early_end_as_error_event": _decoder_bug(_EarlyEndAsErrorEvent),
    "status_as_text": _StatusAsText,
    "made_up_result_as_output": _MadeUpResultAsOutput,
    "empty_text_parts": _EmptyTextParts,
    "own_ids_by_digits": _OwnIdsByDigits,
    "empty_text_ends_turn": _EmptyTextEndsTurn,
    "buffered_event_lost": _decoder_bug(_BufferedEventLost),
    "names_folded_into_open_call": _decoder_bug(_NamesFoldedIntoOpenCall),
    "empty_signature_for_none": _decoder_bug(_EmptySignatureForNone),
}


def broken_gemini(bug: str) -> Callable[..., Any]:
    """A factory for the Gemini adapter with ``bug`` planted."""
    return _factory_for(GEMINI_BUGS[bug])


# bug -> the case ids that must fail on Gemini, and only those
GEMINI_EXPECTED: dict[str, set[str]] = {
    "whole_calls_only": {"stream.streamed_call_form", "stream.streamed_call_interrupted"},
    "sse_only": {"failure.unframed_error"},
    "results_as_given": {"request.history.results_out_of_order"},
    "error_objects_only": {"failure.error_body_wrapped"},
    "body_retry_info_only": {"failure.retry_after_header"},
    "configured_model_only": {"request.model", "stream.model_named"},
    "no_response_id": {"stream.answer_names"},
    "repr_deltas": {"stream.events.tool_calls", "stream.streamed_call_form"},
    "results_of_last_round_only": {"request.history.rounds"},
    "error_stops_without_usage": {"stop.details", "stop.prompt_blocked", "stop.reasons", "kind.content_filter"},
    "no_finish_message": {"stop.details", "failure.model_error"},  # a model's failed answer carries its words too
    "cached_as_input": {"stream.usage_cache"},
    "no_prompt_feedback": {"stop.prompt_blocked"},
    "stream_errors_final": {"failure.stream_error_first", "failure.stream_error_retry_delay"},
    "stream_errors_retried": {"failure.stream_error_first"},
    "unsigned_text": {"request.history.part_signatures"},
    "thinking_as_text": {"request.history.part_signatures"},
    "no_response_ids": {"request.history.part_signatures", "request.history.failed_answer_result", "request.history.opaque_ids"},
    "ids_from_one": {"stream.ids_resumed"},
    "total_from_counts": {"stream.usage_total"},
    "no_stream_retry_info": {"failure.stream_error_retry_delay"},
    "last_event_per_read": {"stream.one_read", "stream.last_event_unterminated"},
    "early_end_as_error_event": {"failure.ends_early", "stream.streamed_call_form"},  # the call it had opened is kept
    "status_as_text": {"failure.error_body_not_json", "failure.proxy_error_untyped"},
    "made_up_result_as_output": {"request.history.failed_answer_result"},
    "empty_text_parts": {"request.history.empty_user_message", "request.history.empty_user_message_first", "request.user_text_blank"},
    "own_ids_by_digits": {"request.history.opaque_ids"},
    "empty_text_ends_turn": {"request.history.empty_text_before_call"},
    "buffered_event_lost": {"stream.last_chunk_unterminated"},
    "names_folded_into_open_call": {"stream.streamed_call_interrupted"},
    "empty_signature_for_none": {"stream.streamed_call_form"},
}
