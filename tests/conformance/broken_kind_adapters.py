"""Adapters with one realistic stop- or content-kind bug each, for the ``kind.*`` cases.

Each is a subclass of a shipped adapter with one hook bent: its stream decoder (for the events a
decoder yields, or for the wire payloads it reads) or the request body it builds. ``KIND_EXPECTED``
maps (bug, protocol) to the case ids that must fail, and only those, among every case whose
result the bug can change (:data:`CHECKED`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from broken_adapters import _factory_for, _request_bug

from loopkit.events import DoneEvent, ErrorEvent, StreamEvent
from loopkit.providers import adapter_class
from loopkit.providers.anthropic import MessagesStreamDecoder
from loopkit.providers.gemini import GeminiStreamDecoder


class _Bent:
    """Wraps a stream decoder, passing every batch of events through ``bend``."""

    def __init__(self, inner: Any, bend: Callable[[StreamEvent], StreamEvent]) -> None:
        self.inner, self.bend = inner, bend

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        return [self.bend(e) for e in self.inner.feed(chunk)]

    def close(self) -> list[StreamEvent]:
        return [self.bend(e) for e in self.inner.close()]


def _refusal_as_stop(e: StreamEvent) -> StreamEvent:
    """A refusal is taken for a clean end (the refusal field never read as one)."""
    if isinstance(e, ErrorEvent) and e.error_type == "refusal":
        return DoneEvent(reason="stop", usage=e.usage)
    return e


def _filter_as_stop(e: StreamEvent) -> StreamEvent:
    """Every finish reason but the known refusal is a clean stop (content filters included)."""
    if isinstance(e, ErrorEvent) and e.error_type != "refusal" and e.reason == "error":
        return DoneEvent(reason="stop", usage=e.usage)
    return e


class _PauseAsLength(MessagesStreamDecoder):
    """Reads Anthropic's ``pause_turn`` as a truncated answer."""

    __slots__ = ()

    def _event(self, name: str, data: str, out: list[StreamEvent]) -> None:
        super()._event(name, data.replace('"stop_reason":"pause_turn"', '"stop_reason":"max_tokens"'), out)


class _UsageFromLastEvent(MessagesStreamDecoder):
    """Takes the usage of message_delta alone, forgetting message_start's input counts."""

    __slots__ = ()

    def _message_start(self, payload: dict[str, Any], out: list[StreamEvent]) -> None:
        message = dict(payload.get("message") or {})
        message.pop("usage", None)
        super()._message_start({**payload, "message": message}, out)


class _UsageFromFirstCount(GeminiStreamDecoder):
    """Keeps the first usageMetadata that counts output tokens (usage read from the wrong chunk)."""

    __slots__ = ()

    def handle(self, data: Any) -> list[StreamEvent]:
        if isinstance(data, dict) and self._usage is not None and self._usage.output:
            data = {k: v for k, v in data.items() if k != "usageMetadata"}
        return super().handle(data)


class _DropsThoughtTokens(GeminiStreamDecoder):
    """Counts candidatesTokenCount alone as the output, leaving out thoughtsTokenCount."""

    __slots__ = ()

    def handle(self, data: Any) -> list[StreamEvent]:
        if isinstance(data, dict) and isinstance(data.get("usageMetadata"), dict):
            usage = {k: v for k, v in data["usageMetadata"].items() if k != "thoughtsTokenCount"}
            data = {**data, "usageMetadata": usage}
        return super().handle(data)


def _drops_redacted(protocol: str) -> Callable[[dict[str, Any]], None]:
    """Leaves redacted thinking out of the echoed history (plain thinking is still sent)."""

    def edit(body: dict[str, Any]) -> None:
        if protocol == "openai_responses":
            body["input"] = [i for i in body["input"] if not (isinstance(i, dict) and i.get("type") == "reasoning" and not i.get("summary"))]
            return
        for m in body.get("messages") or ():
            if isinstance(m.get("content"), list):
                m["content"] = [
                    b for b in m["content"]
                    if not (b.get("type") == "redacted_thinking" or "redactedContent" in (b.get("reasoningContent") or {}))
                ]  # fmt: skip

    return edit


def broken_kind(bug: str, protocol: str) -> Callable[..., Any]:
    """A factory for the adapter of ``protocol`` with ``bug`` planted."""
    base = adapter_class(protocol)
    attrs: dict[str, Any]
    if bug in ("refusal_as_stop", "filter_as_stop"):
        bend = _refusal_as_stop if bug == "refusal_as_stop" else _filter_as_stop
        attrs = {"stream_decoder": lambda self: _Bent(base.stream_decoder(self), bend)}
    elif bug in ("pause_as_length", "usage_from_last_event"):
        decoder = _PauseAsLength if bug == "pause_as_length" else _UsageFromLastEvent
        attrs = {"stream_decoder": lambda self: decoder()}
    elif bug in ("usage_from_first_count", "drops_thought_tokens"):
        decoder_cls = _UsageFromFirstCount if bug == "usage_from_first_count" else _DropsThoughtTokens

        def stream_decoder(self: Any) -> Any:
            return decoder_cls(self._new_call_id, provider=self.provider_name, api=self.api, model=self.model)

        attrs = {"stream_decoder": stream_decoder}
    elif bug == "drops_redacted":
        return _factory_for(_request_bug(base, _drops_redacted(protocol), f"{bug}_{protocol}"))
    else:
        raise ValueError(f"no planted bug {bug!r}")
    cls = type(f"{bug}_{protocol}", (base,), attrs)
    return _factory_for(cls)


# the cases a kind bug can change: the kind cases, and the stop and usage cases next to them
CHECKED = ("kind", "stop.reasons", "stream.usage", "stream.thinking", "request.reasoning.passback")

KIND_EXPECTED: dict[tuple[str, str], set[str]] = {
    **{("refusal_as_stop", p): {"kind.refusal", "kind.refusal.message"} for p in ("openai_chat", "openai_responses")},
    # Anthropic's refusal stop is also how its safety filter ends an answer
    ("refusal_as_stop", "anthropic"): {"kind.refusal", "kind.content_filter", "stop.reasons"},
    # stop.reasons already sends each protocol's own content-filter stop
    **{("filter_as_stop", p): {"kind.content_filter", "stop.reasons"} for p in ("openai_chat", "openai_responses", "gemini", "bedrock")},
    ("pause_as_length", "anthropic"): {"kind.pause_turn", "stop.reasons"},
    ("usage_from_last_event", "anthropic"): {"kind.usage_split"},
    ("usage_from_first_count", "gemini"): {"kind.usage_split"},
    ("drops_thought_tokens", "gemini"): {"kind.reasoning_tokens"},
    **{("drops_redacted", p): {"kind.redacted_thinking"} for p in ("openai_responses", "anthropic", "bedrock")},
}
