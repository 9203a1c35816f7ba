"""In-process fake providers: :class:`ScriptedProvider` and :class:`FunctionProvider`.

Both stream their answers as real deltas (so ``message_update`` events happen), record every
:class:`ModelRequest` they receive for assertions about what the model saw, and fail loudly:
a script that runs out raises :class:`ScriptExhausted` naming the request (a harness error: it
ends the run by propagating, never as ``reason == "error"``), and
:meth:`ScriptedProvider.assert_complete` reports turns that were never used and requests that
arrived after the script was exhausted, in the simulators' words.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

from ._sync import run_coroutine
from .errors import ConnectionClosedError, ProviderError, ScriptExhausted, StreamError, error_class_for_status
from .events import (
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
from .messages import AssistantMessage, dumps
from .provider import BaseProvider, ModelRequest
from .retry import NO_RETRY, RetryPolicy
from .script import Delay, HttpFault, MidStreamError, Script, Truncate, Turn, incomplete_script, script_exhausted


class CallIds:
    """Deterministic tool-call ids, unique across a provider's whole life: ``call_1``, ``call_2``."""

    __slots__ = ("prefix", "n")

    def __init__(self, prefix: str = "call_") -> None:
        self.prefix = prefix
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"{self.prefix}{self.n}"




def _pieces(text: str, size: int) -> list[str]:
    if len(text) <= size:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def turn_events(turn: Turn, *, ids: Callable[[], str], chunk_size: int = 16, api: str = "scripted", model: str = "scripted") -> list[StreamEvent]:
    """The stream events of one scripted turn, deltas split every ``chunk_size`` characters.

    :class:`HttpFault` and :class:`Delay` are the provider's business (it owns retries and the
    sleep); :meth:`ScriptedProvider.stream` applies :class:`MidStreamError` and
    :class:`Truncate` with :func:`cut_events`.
    """
    size = turn.chunk_size or chunk_size
    events: list[StreamEvent] = [StartEvent(api, api, model)]  # positional: hot path
    index = 0
    if turn.redacted_thinking is not None:
        events += [ThinkingStartEvent(content_index=index, redacted=True), ThinkingEndEvent(content_index=index, thinking_signature=turn.redacted_thinking)]
        index += 1
    if turn.thinking is not None:
        events.append(ThinkingStartEvent(content_index=index))
        events.extend([ThinkingDeltaEvent(content_index=index, delta=p) for p in _pieces(turn.thinking, size)])
        events.append(ThinkingEndEvent(content_index=index, thinking_signature=turn.thinking_signature))
        index += 1
    if turn.text is not None:
        events.append(TextStartEvent(index))
        text = turn.text
        if len(text) <= size:
            events.append(TextDeltaEvent(index, text))
        else:
            events.extend([TextDeltaEvent(content_index=index, delta=p) for p in _pieces(text, size)])
        events.append(TextEndEvent(index))
        index += 1
    if turn.refusal is not None:  # the refusal text is kept as a text block, as the adapters keep it
        events += [TextStartEvent(index), TextDeltaEvent(index, turn.refusal), TextEndEvent(index)]
        index += 1
    for c in turn.tool_calls:
        raw = c.arguments if isinstance(c.arguments, str) else dumps(c.arguments if type(c.arguments) is dict else dict(c.arguments), compact=False)
        events.append(ToolCallStartEvent(index, c.id or ids(), c.name))
        if len(raw) <= size:
            events.append(ToolCallDeltaEvent(index, raw))
        else:
            events.extend([ToolCallDeltaEvent(content_index=index, delta=p) for p in _pieces(raw, size)])
        events.append(ToolCallEndEvent(index, None, c.thought_signature))
        index += 1
    reason = turn.resolved_stop_reason
    if turn.refusal is not None or turn.content_filter:
        message = turn.refusal if turn.refusal is not None else "the answer was blocked by a content filter"
        events.append(ErrorEvent(error_message=message, error_type="refusal" if turn.refusal is not None else "content_filter", usage=turn.usage))
    elif reason == "error" or reason == "aborted":
        events.append(ErrorEvent(reason=reason, error_message=turn.error or "aborted", usage=turn.usage))
    else:
        events.append(DoneEvent(reason, turn.usage))
    return events


def cut_events(events: list[StreamEvent], turn: Turn, api: str) -> Iterator[StreamEvent]:
    """Yield ``events`` until a :class:`MidStreamError` or :class:`Truncate` fault of ``turn``
    cuts the stream: the first raises :class:`StreamError`, the second
    :class:`ConnectionClosedError`, after ``after`` events. A fault never lets the terminal event
    through: an ``after`` at or past it cuts just before it (as the simulators do)."""
    mid = turn.fault(MidStreamError)
    cut = turn.fault(Truncate)
    stop_at = min(min(f.after for f in (mid, cut) if f is not None), len(events) - 1)
    yield from events[:stop_at]
    if mid is not None and (cut is None or mid.after <= cut.after):
        raise StreamError(mid.message, error_type=mid.error_type, provider=api)
    raise ConnectionClosedError("the stream was cut off (scripted Truncate fault)", provider=api)


def _failure_before_first_event(turn: Turn) -> ProviderError | None:
    """The error a turn fails with before any event arrives, which a retry policy may retry:
    an HTTP status, or a stream cut or broken at its very start (as an HTTP adapter sees it)."""
    http = turn.fault(HttpFault)
    if http is not None:
        return error_class_for_status(http.status)(
            http.message or f"scripted HTTP {http.status}",
            status=http.status,
            error_type=http.error_type,
            retry_after=http.retry_after,
            provider="scripted",
        )
    cut = turn.fault(Truncate)
    if cut is not None and cut.after == 0:
        return ConnectionClosedError("the stream was cut off before its first event (scripted Truncate fault)", provider="scripted")
    mid = turn.fault(MidStreamError)
    if mid is not None and mid.after == 0:
        return StreamError(mid.message, error_type=mid.error_type, provider="scripted")
    return None


class ScriptedProvider(BaseProvider):
    """Answers model call *n* with turn *n* of a script, streamed as deltas.

    Args:
        turns: a :class:`Script`, or Turns / strings (a string is a text answer).
        chunk_size: characters per text or argument delta.
        retry: how to treat an :class:`HttpFault` turn: by default it raises the typed
            :class:`ProviderError` at once; with a policy, a retryable status consumes the next
            turn after the policy's (injected) sleep, as an HTTP adapter would.
        sleep: how :class:`Delay` faults wait (inject a fake to keep tests instant); retry
            waits use the policy's own ``sleep``, as the HTTP adapters do.
        ids: the tool-call id factory for calls the script gives no id.

    Attributes:
        requests: every ModelRequest received, in order.
        overruns: the numbers (1-based) of the requests that found the script exhausted.
        harness_errors: the :class:`ScriptExhausted` raised for them, first first.
    """

    def __init__(
        self,
        turns: Script | Iterable[Turn | str],
        *,
        chunk_size: int = 16,
        retry: RetryPolicy = NO_RETRY,
        sleep: Callable[[float], None] = time.sleep,
        ids: Callable[[], str] | None = None,
        model: str = "scripted",
    ) -> None:
        self.script = Script.coerce(turns)
        self.chunk_size = chunk_size
        self.retry = retry
        self.sleep = sleep
        self.ids = ids or CallIds()
        self.model = model
        self.requests: list[ModelRequest] = []
        self.overruns: list[int] = []
        self.harness_errors: list[ScriptExhausted] = []
        self._next = 0
        self._attempts = 0  # requests plus retries: what a simulator would count

    @property
    def used(self) -> int:
        return self._next

    def _take(self) -> Turn:
        turns = self.script.turns
        if self._next >= len(turns):
            n = len(self.requests) + self._attempts
            err = script_exhausted("ScriptedProvider", n, len(turns))
            self.overruns.append(n)
            self.harness_errors.append(err)
            raise err
        turn = turns[self._next]
        self._next += 1
        return turn

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        self.requests.append(request)
        turns = self.script.turns
        if self._next < len(turns):  # the common case of _take(), inline: this is a hot path
            turn = turns[self._next]
            self._next += 1
        else:
            turn = self._take()
        if not turn.faults:
            # a list: every event is known up front, so the loop may take them in one step
            return turn_events(turn, ids=self.ids, chunk_size=self.chunk_size, model=self.model)  # type: ignore[return-value]
        return self._faulty(turn)

    def _faulty(self, turn: Turn) -> Iterator[StreamEvent]:
        attempt = 1
        while True:
            for f in turn.faults:
                if isinstance(f, Delay) and f.after == 0:
                    self.sleep(f.seconds)
            err = _failure_before_first_event(turn)
            if err is None:
                break
            wait = self.retry.delay(attempt, err)
            if wait is None:
                raise err
            self.retry.sleep(wait)
            attempt += 1
            self._attempts += 1
            turn = self._take()
        events = turn_events(turn, ids=self.ids, chunk_size=self.chunk_size, model=self.model)
        delays = {f.after: f.seconds for f in turn.faults if isinstance(f, Delay) and f.after > 0}
        stream = cut_events(events, turn, "scripted") if turn.fault(MidStreamError) or turn.fault(Truncate) else iter(events)
        for i, event in enumerate(stream):
            if i in delays:
                self.sleep(delays[i])
            yield event

    def assert_complete(self) -> None:
        """Raise :class:`~loopkit.errors.IncompleteScript` when turns were never used or requests
        arrived after the script was exhausted (the simulators' ``assert_complete`` says the same)."""
        err = incomplete_script("ScriptedProvider", len(self.script), self._next, self.overruns)
        if err is not None:
            raise err


async def _drain(events: Any) -> tuple[list[Any], Exception | None]:
    out: list[Any] = []
    try:
        async for event in events:
            out.append(event)
    except Exception as exc:  # noqa: BLE001 - re-raised after the events that preceded it
        return out, exc
    return out, None


class FunctionProvider(BaseProvider):
    """Answers with a function of the request (sync or async).

    The function returns a :class:`Turn`, a string (a text answer), a finished
    :class:`AssistantMessage` (sent as a single ``done`` event with no ``start``), or an iterable
    or async iterable of stream events (sent as they are: the way to test a provider that
    misbehaves).
    """

    def __init__(self, fn: Callable[[ModelRequest], Any], *, chunk_size: int = 16, ids: Callable[[], str] | None = None) -> None:
        self.fn = fn
        self.chunk_size = chunk_size
        self.ids = ids or CallIds()
        self.requests: list[ModelRequest] = []

    def _events(self, answer: Any) -> Iterator[StreamEvent]:
        if isinstance(answer, str):
            answer = Turn(text=answer)
        if isinstance(answer, Turn):
            if answer.fault(HttpFault) is not None:
                h = answer.fault(HttpFault)
                raise error_class_for_status(h.status)(h.message or f"HTTP {h.status}", status=h.status, error_type=h.error_type, retry_after=h.retry_after, provider="function")
            events = turn_events(answer, ids=self.ids, chunk_size=self.chunk_size, api="function", model="function")
            return cut_events(events, answer, "function") if answer.fault(MidStreamError) or answer.fault(Truncate) else iter(events)
        if isinstance(answer, AssistantMessage):
            return iter([DoneEvent(reason=answer.stop_reason if answer.stop_reason in ("stop", "length", "toolUse") else "stop", message=answer)])
        return iter(answer)

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        self.requests.append(request)
        answer = self.fn(request)
        if inspect.isawaitable(answer):
            answer = run_coroutine(answer)
        if hasattr(answer, "__aiter__"):
            # an async iterator of events, driven from sync code: drain it, then replay what it
            # sent and the error it stopped with, so a failure still comes after its events
            events, error = run_coroutine(_drain(answer))
            yield from events
            if error is not None:
                raise error
            return
        yield from self._events(answer)

    async def astream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        answer = self.fn(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if hasattr(answer, "__aiter__"):
            async for event in answer:
                yield event
            return
        for event in self._events(answer):
            yield event
