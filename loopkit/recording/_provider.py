"""Replay at the loop's level: a cassette's transcripts as a Provider and as a Script.

Each recorded interaction may carry a transcript: the :class:`ModelRequest` the loop sent and the
:class:`AssistantMessage` that came back (loopkit.serde data). :class:`ReplayProvider` answers the
loop from those transcripts with no HTTP at all, and :meth:`ReplayProvider.script` turns them into
a :class:`~loopkit.script.Script`, so a recording made with one provider drives any simulator
through any other adapter. :class:`RecordingProvider` writes the transcripts while recording.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from ..accumulate import Accumulator
from ..errors import NoMatchingInteraction, ReplayError, raise_first
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
from ..messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, arguments_json
from ..provider import BaseProvider, ModelRequest, Provider
from ..script import ScriptedCall, Script, Turn
from ..serde import dump_message, dump_request, load_message
from ._calls import CURRENT_CALL, ModelCall
from ._cassette import Cassette
from ._format import CassetteFile, Interaction, Transcript
from ._match import first_difference, message_index, short
from ._scrub import scrub_json

# Fields that legitimately differ when a recording replays through another provider or clock.
_IGNORED = frozenset({"timestamp", "api", "provider", "model", "response_id", "usage", "text_signature", "thinking_signature", "thought_signature"})


def events_for_message(message: AssistantMessage) -> Iterator[StreamEvent]:
    """The stream events that rebuild ``message`` exactly when folded by the accumulator."""
    yield StartEvent(api=message.api, provider=message.provider, model=message.model, response_id=message.response_id)
    for i, block in enumerate(message.content):
        if isinstance(block, TextContent):
            yield TextStartEvent(content_index=i)
            if block.text:
                yield TextDeltaEvent(content_index=i, delta=block.text)
            yield TextEndEvent(content_index=i, text_signature=block.text_signature)
        elif isinstance(block, ThinkingContent):
            yield ThinkingStartEvent(content_index=i, redacted=block.redacted)
            if block.thinking:
                yield ThinkingDeltaEvent(content_index=i, delta=block.thinking)
            yield ThinkingEndEvent(content_index=i, thinking_signature=block.thinking_signature)
        elif isinstance(block, ToolCall):
            yield ToolCallStartEvent(content_index=i, id=block.id, name=block.name)
            yield ToolCallDeltaEvent(content_index=i, delta=arguments_json(block))
            yield ToolCallEndEvent(content_index=i, thought_signature=block.thought_signature)
    if message.stop_reason in ("error", "aborted"):
        yield ErrorEvent(reason=message.stop_reason, error_message=message.error_message or "", error_type=message.error_type, usage=message.usage)  # type: ignore[arg-type]
    else:
        yield DoneEvent(reason=message.stop_reason, usage=message.usage)  # type: ignore[arg-type]


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in _IGNORED}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _transcripts(source: Cassette | CassetteFile) -> list[tuple[int, Transcript]]:
    file = source.file if isinstance(source, Cassette) else source
    return [(n, i.transcript) for n, i in enumerate(file.interactions) if i.transcript is not None]


class ReplayProvider(BaseProvider):
    """Answer each model call with the next recorded AssistantMessage (no HTTP).

    Args:
        cassette: a :class:`Cassette` or a loaded :class:`CassetteFile` with transcripts.
        check_requests: compare each live request with the recorded one (ignoring timestamps,
            provider metadata, usage and signatures) and raise
            :class:`~loopkit.errors.NoMatchingInteraction` with the first difference.
        name: how errors name the cassette.
    """

    def __init__(self, cassette: Cassette | CassetteFile, *, check_requests: bool = True, name: str | None = None) -> None:
        found = _transcripts(cassette)
        self.transcripts = [t for _, t in found]
        self._positions = [n for n, _ in found]  # the interaction each transcript belongs to
        # replaying a Cassette marks what it answered as played (so use_cassette's unplayed check
        # holds for it) and leaves its misses with the cassette (so closing it raises them)
        self._cassette = cassette if isinstance(cassette, Cassette) else None
        self.harness_errors: list[NoMatchingInteraction] = []  # every miss, first first
        self.check_requests = check_requests
        self.name = name or (cassette.name if isinstance(cassette, Cassette) else "<cassette>")
        self.calls = 0
        if not self.transcripts:
            raise ReplayError(f"{self.name}: the cassette holds no transcripts (record through RecordingProvider to get them)")

    def messages(self) -> list[AssistantMessage]:
        """Every recorded assistant message, in order."""
        return [load_message(t.message, path=f"transcripts[{n}].message") for n, t in enumerate(self.transcripts)]  # type: ignore[misc]

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        n = self.calls
        if n >= len(self.transcripts):
            raise self._miss(f"{self.name}: model call {n + 1} was not recorded (the cassette holds {len(self.transcripts)} calls)")
        self.calls += 1
        t = self.transcripts[n]
        if self.check_requests:
            self._check(n, t, request)
        if self._cassette is not None:
            # this call's interaction, and the attempts before it that it retried (a retried call
            # records each attempt; the transcript sits on the one that answered)
            first = self._positions[n - 1] + 1 if n else 0
            for k in range(first, self._positions[n] + 1):
                self._cassette.mark_played(k)
        message = load_message(t.message, path=f"{self.name}: transcripts[{n}].message")
        assert isinstance(message, AssistantMessage)
        yield from events_for_message(message)

    def _check(self, n: int, t: Transcript, request: ModelRequest) -> None:
        live = _strip(scrub_json(dump_request(request)))
        recorded = _strip(t.request)
        live.pop("call_number", None)
        recorded.pop("call_number", None)
        diff = first_difference(recorded, live)
        if diff is None:
            return
        where, rec, got = diff
        idx = message_index(where)
        raise self._miss(
            f"{self.name}: model call {n + 1} differs from the recording at {where}"
            + (f" (message {idx})" if idx is not None else "")
            + f"\n    - recorded: {short(rec, got)}\n    + live:     {short(got, rec)}\n"
            "  re-record the cassette (record_mode='rewrite') if the change is intended"
        )

    def _miss(self, message: str) -> NoMatchingInteraction:
        err = NoMatchingInteraction(message)
        self.harness_errors.append(err)
        if self._cassette is not None:
            self._cassette.remember(err)
        return err

    def assert_complete(self) -> None:
        """Raise the first miss, if a call missed; else
        :class:`~loopkit.errors.UnplayedInteractions` when recorded model calls were never
        replayed (a miss is never reported as "fewer calls")."""
        raise_first(self.harness_errors)
        if self.calls < len(self.transcripts):
            from ..errors import UnplayedInteractions

            raise UnplayedInteractions(f"{self.name}: {len(self.transcripts) - self.calls} recorded model call(s) were never made")

    def script(self) -> Script:
        """The transcripts as a Script (text, thinking, tool calls, stop reason, usage, error).

        A Turn has one text and one thinking block, so several text blocks of one message are
        joined; everything else carries over.
        """
        turns = []
        for m in self.messages():
            text = "".join(b.text for b in m.content if isinstance(b, TextContent))
            thinking = [b for b in m.content if isinstance(b, ThinkingContent)]
            calls = tuple(
                ScriptedCall(
                    name=c.name,
                    arguments=c.raw_arguments if c.raw_arguments is not None else (c.arguments if isinstance(c.arguments, dict) else json.dumps(c.arguments)),
                    id=c.id,
                    thought_signature=c.thought_signature,
                )
                for c in m.tool_calls
            )
            turns.append(
                Turn(
                    text=text or None,
                    thinking="".join(b.thinking for b in thinking) or None,
                    thinking_signature=next((b.thinking_signature for b in thinking if b.thinking_signature), None),
                    tool_calls=calls,
                    stop_reason=m.stop_reason if m.stop_reason not in ("error", "aborted") else None,
                    usage=m.usage,
                    error=(m.error_message or "error") if m.stop_reason == "error" else None,
                    aborted=m.stop_reason == "aborted",
                )
            )
        return Script(turns, name=self.name)


class RecordingProvider(BaseProvider):
    """Wrap a provider and store a transcript for each model call it answers.

    The transcript is attached to the last HTTP interaction the call recorded (retries record
    several; the last is the one that answered), or stored on its own when the provider made no
    HTTP request through the cassette.

    Args:
        provider: the provider to record (an adapter whose client uses a :class:`CassetteTransport`).
        cassette: the cassette to write into.
    """

    def __init__(self, provider: Provider, cassette: Cassette) -> None:
        self.provider = provider
        self.cassette = cassette

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        call, served = ModelCall(), self.cassette.served
        acc = Accumulator()
        events = iter(self.provider.stream(request))
        while True:
            # the variable is set only while the wrapped provider runs, never across our yield
            token = CURRENT_CALL.set(call)
            try:
                event = next(events)
            except StopIteration:
                return
            finally:
                CURRENT_CALL.reset(token)
            acc.feed(event)
            if acc.finished:  # store before yielding: a consumer may stop at the terminal event
                self._store(request, acc.message, call, served)
            yield event

    async def astream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        call, served = ModelCall(), self.cassette.served
        acc = Accumulator()
        events = self.provider.astream(request).__aiter__()
        while True:
            token = CURRENT_CALL.set(call)
            try:
                event = await events.__anext__()
            except StopAsyncIteration:
                return
            finally:
                CURRENT_CALL.reset(token)
            acc.feed(event)
            if acc.finished:
                self._store(request, acc.message, call, served)
            yield event

    def _store(self, request: ModelRequest, message: AssistantMessage, call: ModelCall, served: int) -> None:
        if not self.cassette.records:
            return
        transcript = Transcript.model_validate(
            {"request": scrub_json(dump_request(request)), "message": scrub_json(dump_message(message))}
        )
        if not call.finished(transcript) and self.cassette.served == served:
            self.cassette.add(Interaction(transcript=transcript))  # no HTTP through the cassette
