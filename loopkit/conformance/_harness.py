"""One exchange: a ModelRequest and a Script, run through a provider against a protocol's simulator.

The simulator is in process (an httpx transport) when the factory takes ``transport=``, else served
on 127.0.0.1. Retry waits go through a recorded :class:`~loopkit.retry.RetryPolicy` when the factory
takes ``retry=``; attempts are always read from the simulator's request log. Responses can be
cut short cleanly and re-chunked (every few bytes, so chunk boundaries fall inside UTF-8
sequences). Each exchange records whether the adapter's request asked for a streamed answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..accumulate import accumulate
from ..errors import LoopkitError, ProviderError
from ..events import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    StreamEvent,
    TextDeltaEvent,
    TextEndEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
)
from ..messages import AssistantMessage, UserMessage
from ..provider import ModelRequest
from ..retry import RetryPolicy
from ..script import Script, ScriptedCall, Turn, call
from ._factory import FactoryShape, ProviderFactory, factory_shape

MAX_RETRIES = 2
BASE_DELAY = 0.25

Cut = Callable[[list[bytes]], list[bytes]]


class RetryRecorder:
    """Records the waits a provider asks its retry policy for, without sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    async def asleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    def policy(self) -> RetryPolicy:
        return RetryPolicy(max_retries=MAX_RETRIES, base_delay=BASE_DELAY, max_delay=60.0, sleep=self.sleep, asleep=self.asleep)


@dataclass(slots=True, kw_only=True)
class Exchange:
    """What happened in one exchange.

    Args:
        events: the stream events the provider yielded (up to an exception).
        error: the exception the provider raised, if any.
        message: the events folded into a message, when they form a complete stream.
        contract: why the events do not form a valid stream, when they do not.
        bodies: the JSON body of every request the simulator received, in order.
        waits: retry waits the provider asked for (None: the factory takes no ``retry=``).
        streamed: whether the first request asked for a streamed answer, as the simulator read
            it (the ``stream`` flag, Gemini's ``streamGenerateContent``, Bedrock's
            ``converse-stream``); None when no request reached a route.
    """

    events: list[StreamEvent] = field(default_factory=list)
    error: BaseException | None = None
    message: AssistantMessage | None = None
    contract: str | None = None
    bodies: list[Any] = field(default_factory=list)
    waits: list[float] | None = None
    streamed: bool | None = None

    @property
    def attempts(self) -> int:
        return len(self.bodies)

    @property
    def body(self) -> Any:
        """The first request body."""
        return self.bodies[0] if self.bodies else None

    @property
    def terminal(self) -> StreamEvent | None:
        last = self.events[-1] if self.events else None
        return last if isinstance(last, (DoneEvent, ErrorEvent)) else None

    def failure(self) -> str | None:
        """How the call failed, as a short description, or None when it finished normally."""
        if self.error is not None:
            return f"raised {qualified(type(self.error))}: {self.error}"
        t = self.terminal
        if isinstance(t, ErrorEvent):
            return f"ended with ErrorEvent(reason={t.reason!r}, error_type={t.error_type!r}, message={t.error_message!r})"
        return None

    def outcome(self) -> str:
        """One line: what the provider produced."""
        failed = self.failure()
        if failed:
            return failed
        if self.contract:
            return f"broke the stream contract: {self.contract}"
        m = self.message
        return "no message" if m is None else describe_message(m)


def qualified(cls: type) -> str:
    """``module.Class``: an SDK's BadRequestError and loopkit's read differently."""
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def describe_message(m: AssistantMessage) -> str:
    parts = []
    for b in m.content:
        kind = getattr(b, "type", type(b).__name__)
        if kind == "text":
            parts.append(f"text {b.text!r}")
        elif kind == "thinking":
            parts.append(f"thinking {b.thinking!r} signature={b.thinking_signature!r}")
        elif kind == "toolCall":
            raw = f" raw_arguments={b.raw_arguments!r}" if b.raw_arguments is not None else ""
            parts.append(f"toolCall id={b.id!r} name={b.name!r} arguments={b.arguments!r}{raw}")
    return f"stop_reason={m.stop_reason!r} [{'; '.join(parts)}]"


def turn_from(spec: Turn | str | Mapping[str, Any]) -> Turn:
    """A Turn from a Turn, a text answer, or a mapping of its fields (tool calls as mappings or ScriptedCalls)."""
    if isinstance(spec, Turn):
        return spec
    if isinstance(spec, str):
        return Turn(text=spec)
    kw = dict(spec)
    calls = []
    for c in kw.pop("tool_calls", ()):
        calls.append(c if isinstance(c, ScriptedCall) else call(c["name"], c.get("arguments"), id=c.get("id")))
    return Turn(tool_calls=tuple(calls), **kw)


class Harness:
    """Runs exchanges for one provider factory and one protocol.

    Args:
        factory: the provider factory under test.
        protocol: the wire protocol it speaks (a simulator name).
        served: run the simulator on 127.0.0.1 even when the factory takes ``transport=``.
        sim_options: options every simulator is built with (an exchange's own come on top).
    """

    def __init__(self, factory: ProviderFactory, protocol: str, *, served: bool = False, sim_options: Mapping[str, Any] | None = None) -> None:
        self.factory = factory
        self.protocol = protocol
        self.sim_options = dict(sim_options or {})
        self.shape: FactoryShape = factory_shape(factory)
        self.served = served or not self.shape.transport
        self.provider_attrs: dict[str, Any] = {}
        self._streams: bool | None = None

    @property
    def records_waits(self) -> bool:
        return self.shape.retry

    def streams(self) -> bool:
        """Whether the adapter asks for streamed answers: read once from the request it actually
        sends for a plain text answer (not from anything the adapter declares). True when that
        request never reached the simulator (the cases then report the adapter's failure)."""
        if self._streams is None:
            ex = self.run(ModelRequest(messages=[UserMessage(content="Say hello.")]), ["Hello."])
            self._streams = ex.streamed is not False
        return self._streams

    @property
    def known_streams(self) -> bool | None:
        """:meth:`streams` if it was read already, else None (reading it costs an exchange)."""
        return self._streams

    def probe(self) -> Any:
        """A provider built once without a simulator behind it, to read class-level attributes."""
        import loopkit.simulators as simulators

        sim = simulators.create(self.protocol, [])
        return self._build(simulators.transport(sim) if not self.served else None, "http://127.0.0.1:9" if self.served else None, None)

    def _build(self, transport: Any, base_url: str | None, retry: RetryPolicy | None) -> Any:
        kwargs: dict[str, Any] = {}
        if transport is not None:
            kwargs["transport"] = transport
        if base_url is not None:
            kwargs["base_url"] = base_url
        if retry is not None and self.shape.retry:
            kwargs["retry"] = retry
        return self.factory(**kwargs)

    def run(
        self,
        request: ModelRequest,
        turns: list[Turn | str | Mapping[str, Any]],
        *,
        sim_options: Mapping[str, Any] | None = None,
        rechunk: int | None = None,
        cut: Cut | None = None,
        on_event: Callable[[StreamEvent, ModelRequest], None] | None = None,
        use_async: bool = False,
    ) -> Exchange:
        """Run ``request`` against a simulator answering from ``turns``."""
        return self.run_rounds(
            turns,
            lambda done: request if not done else None,
            sim_options=sim_options,
            rechunk=rechunk,
            cut=cut,
            on_event=on_event,
            use_async=use_async,
        )[0]

    def run_rounds(
        self,
        turns: list[Turn | str | Mapping[str, Any]],
        next_request: Callable[[list[Exchange]], ModelRequest | None],
        *,
        sim_options: Mapping[str, Any] | None = None,
        rechunk: int | None = None,
        cut: Cut | None = None,
        on_event: Callable[[StreamEvent, ModelRequest], None] | None = None,
        use_async: bool = False,
    ) -> list[Exchange]:
        """Several model calls through ONE provider and ONE simulator, as a loop makes them.

        ``next_request(exchanges so far)`` gives the next request, or None to stop. Each exchange's
        ``bodies`` are the requests its call sent (retries included). ``cut(chunks)`` gives the
        chunks an answer keeps (a streamed answer: one wire event per chunk; a non-streamed one:
        its JSON body as one chunk); the body then ends cleanly there.
        """
        import loopkit.simulators as simulators

        script = Script([turn_from(t) for t in turns], name="conformance")
        sim = simulators.create(self.protocol, script, **{**self.sim_options, **(sim_options or {})})
        if rechunk is not None or cut is not None:
            _wrap_handle(sim, rechunk, cut)
        recorder = RetryRecorder()
        exchanges: list[Exchange] = []

        def drive(provider: Any) -> None:
            while (request := next_request(exchanges)) is not None:
                seen, waited = len(sim.requests), len(recorder.waits)
                ex = Exchange()
                self._drive(provider, request, ex, on_event, use_async)
                sent = sim.requests[seen:]
                ex.bodies = [r.json for r in sent]
                ex.streamed = _asked_to_stream(sim, sent[0]) if sent else None
                ex.waits = recorder.waits[waited:] if self.records_waits else None
                exchanges.append(ex)

        # a factory that takes no retry= retries with its own sleeps: keep them from waiting
        quick = contextlib.nullcontext() if self.records_waits else no_real_sleeps()
        if self.served:
            # not ``with``: an overrun is the adapter's doing here, data for the case to judge
            served = simulators.serve(sim).start()
            try:
                with quick:
                    provider = self._build(None, served.base_url, recorder.policy())
                    drive(provider)
                    _close(provider)
            finally:
                served.stop()
        else:
            # scripted delays stay instant in process: the transport's sleeps are recorded
            sleeps: list[float] = []
            transport = simulators.SimulatorTransport(sim, sleep=sleeps.append, asleep=_arecord(sleeps))
            with quick:
                provider = self._build(transport, None, recorder.policy())
                drive(provider)
                _close(provider)
        return exchanges

    def _drive(self, provider: Any, request: ModelRequest, ex: Exchange, on_event: Any, use_async: bool) -> None:
        try:
            if use_async:
                import asyncio

                async def collect() -> None:
                    async for event in provider.astream(request):
                        ex.events.append(event)
                        if on_event is not None:
                            on_event(event, request)

                asyncio.run(collect())
            else:
                for event in provider.stream(request):
                    ex.events.append(event)
                    if on_event is not None:
                        on_event(event, request)
        except Exception as exc:  # the provider's failure is data for the case to judge
            ex.error = exc
        ex.contract = _contract_problem(ex.events, ex.error)
        if ex.contract is None and ex.terminal is not None:
            try:
                ex.message = accumulate(ex.events)
            except LoopkitError as exc:
                ex.contract = str(exc)


def _asked_to_stream(sim: Any, request: Any) -> bool | None:
    """Whether ``request`` asks ``sim`` for a streamed answer (None: no route serves it)."""
    route = sim.route(request)
    return None if route is None else bool(sim.wants_stream(request, route))


def _contract_problem(events: list[StreamEvent], error: BaseException | None) -> str | None:
    """What is wrong with an event sequence as a stream (docs/loop-contract.md §7.6), or None."""
    if not events:
        return None if error is not None else "the provider yielded no events and raised nothing"
    if not isinstance(events[0], StartEvent):
        return f"the first event is {getattr(events[0], 'type', events[0])!r}, not 'start'"
    for i, e in enumerate(events[:-1]):
        if isinstance(e, (DoneEvent, ErrorEvent)):
            return f"terminal event {e.type!r} at position {i} is followed by {len(events) - i - 1} more event(s)"
    if error is None and not isinstance(events[-1], (DoneEvent, ErrorEvent)):
        return "the stream ended without a terminal 'done' or 'error' event and nothing was raised"
    problem = _block_problem(events)
    if problem is not None:
        return problem
    try:
        accumulate(events + ([] if isinstance(events[-1], (DoneEvent, ErrorEvent)) else [DoneEvent()]))
    except LoopkitError as exc:
        return str(exc)
    return None


_ENDS = (TextEndEvent, ThinkingEndEvent, ToolCallEndEvent)
_DELTAS = (TextDeltaEvent, ThinkingDeltaEvent, ToolCallDeltaEvent)


def _block_problem(events: list[StreamEvent]) -> str | None:
    """Events out of order (§7.6: one start; per block start, deltas, end), which the lenient
    accumulator lets through: a second start, a block ended twice, or a delta after its block's end. (A block
    still open at 'done' is closed by it: a call cut off by the token limit may never end.)"""
    ended: set[int] = set()
    for e in events[1:]:
        if isinstance(e, StartEvent):
            return "a second 'start' event (a stream has one, first)"
        if isinstance(e, _ENDS):
            if e.content_index in ended:
                return f"{e.type!r} for content_index {e.content_index}, whose block had already ended"
            ended.add(e.content_index)
        elif isinstance(e, _DELTAS) and e.content_index in ended:
            return f"{e.type!r} for content_index {e.content_index} after its block ended"
    return None


_REAL_SLEEP = time.sleep
_REAL_ASLEEP = asyncio.sleep
_QUICK: dict[int, list[float]] = {}  # thread id -> the sleeps asked for while no_real_sleeps() is on


def _sleep(seconds: float) -> None:
    asked = _QUICK.get(threading.get_ident())
    if asked is None:
        return _REAL_SLEEP(seconds)
    asked.append(seconds)
    return None


async def _asleep(seconds: float, result: Any = None) -> Any:
    asked = _QUICK.get(threading.get_ident())
    if asked is not None and seconds > 0:
        asked.append(seconds)
        seconds = 0
    return await _REAL_ASLEEP(seconds, result)


@contextlib.contextmanager
def no_real_sleeps() -> Iterator[list[float]]:
    """Make ``time.sleep``, ``asyncio.sleep`` and anyio's asyncio-backend sleep return at once
    for calls from this thread (a served simulator's pauses, on its own thread, stay real), and
    record the seconds asked for. The suite turns it on while it drives an adapter whose factory
    takes no ``retry=``, so an SDK's own retry backoff costs nothing. The stand-ins sleep for real
    in every other thread and after the block, even where code kept a reference to them."""
    asked: list[float] = []
    me = threading.get_ident()
    _QUICK[me] = asked
    targets: list[tuple[Any, str, Any]] = [(time, "sleep", _sleep), (asyncio, "sleep", _asleep)]
    anyio_backend = sys.modules.get("anyio._backends._asyncio")
    if anyio_backend is not None and getattr(anyio_backend, "sleep", None) is _REAL_ASLEEP:
        targets.append((anyio_backend, "sleep", _asleep))
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in targets]
    for obj, name, value in targets:
        setattr(obj, name, value)
    try:
        yield asked
    finally:
        for obj, name, value in saved:
            setattr(obj, name, value)
        del _QUICK[me]


def _arecord(sleeps: list[float]) -> Callable[[float], Any]:
    async def asleep(seconds: float) -> None:
        sleeps.append(seconds)

    return asleep


def _close(provider: Any) -> None:
    close = getattr(provider, "close", None)
    if callable(close):
        close()


def _wrap_handle(sim: Any, rechunk: int | None, cut: Cut | None = None) -> None:
    """Post-process every response the simulator gives: end a stream or a body early (cleanly:
    the connection is not dropped), re-chunk bytes."""
    handle = sim.handle

    def wrapped(request: Any) -> Any:
        resp = handle(request)
        if cut is not None and resp.status < 400:
            resp.chunks = cut(list(resp.chunks))
            resp.delays = {i: d for i, d in resp.delays.items() if i < len(resp.chunks)}
        if rechunk is not None and resp.chunks:
            body = b"".join(resp.chunks)
            resp.chunks = [body[i : i + rechunk] for i in range(0, len(body), rechunk)]
            resp.delays = {}
        return resp

    sim.handle = wrapped


def is_provider_failure(ex: Exchange) -> bool:
    """The call failed as a provider call should: a ProviderError raised, or an error event."""
    if ex.error is not None:
        return isinstance(ex.error, ProviderError)
    t = ex.terminal
    return isinstance(t, ErrorEvent) and t.reason == "error"
