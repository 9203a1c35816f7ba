"""Drivers for the loop: :func:`run` (sync), :func:`arun` (asyncio) and :class:`Runtime`.

Both drivers perform the actions :func:`loopkit.loop.agent_loop` yields and nothing else; the
algorithm exists once. A tool body runs inside a context that remembers the run's provider and
tools, so a nested :meth:`Runtime.exec` inherits them (docs/loop-contract.md).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._sync import in_thread, run_coroutine
from .errors import LoopkitError, UsageError
from .events import AgentEvent
from .loop import END, MODEL, NEXT_KIND, STEER_KIND, TOOL, LoopConfig, LoopOutcome, Raised, agent_loop
from .messages import AssistantMessage, Message, ToolCall, ToolResultMessage, Usage, UserMessage, total_usage
from .provider import AbortSignal, Provider, ToolChoice, _sync_iter
from .tools import Tool, ToolRegistry, adapt_tool, default_registry, resolve_tools

Clock = Callable[[], int]


def wall_clock() -> int:
    """Milliseconds since the epoch (the default clock)."""
    return int(time.time() * 1000)


class TickClock:
    """A deterministic clock for tests: ``start``, ``start + step``, ... on each call."""

    __slots__ = ("now", "step")

    def __init__(self, start: int = 0, step: int = 1) -> None:
        self.now = start - step
        self.step = step

    def __call__(self) -> int:
        self.now += self.step
        return self.now


@dataclass(slots=True, kw_only=True)
class RunResult:
    """What a run produced.

    Attributes:
        reason: ``stop``, ``error``, ``aborted`` or ``max_iterations``.
        messages: the run's new messages (prompts, injected messages, assistants, tool results).
        events: every loop event, in order.
        model_calls: how many model calls the run made.
        pending: steering / follow-up messages polled but never injected.
        error: the exception that ended the run (a provider error), if one did.
    """

    reason: str
    messages: list[Message]
    events: list[AgentEvent]
    model_calls: int
    pending: list[Message] = field(default_factory=list)
    error: BaseException | None = None

    def __repr__(self) -> str:
        return (
            f"RunResult(reason={self.reason!r}, model_calls={self.model_calls}, messages=<{len(self.messages)}>, "
            f"events=<{len(self.events)}>, pending=<{len(self.pending)}>, error={self.error!r})"
        )

    @property
    def last_assistant(self) -> AssistantMessage | None:
        for m in reversed(self.messages):
            if isinstance(m, AssistantMessage):
                return m
        return None

    @property
    def text(self) -> str:
        """The final assistant message's text ("" when there is none)."""
        last = self.last_assistant
        return last.text if last is not None else ""

    @property
    def tool_results(self) -> list[ToolResultMessage]:
        return [m for m in self.messages if isinstance(m, ToolResultMessage)]

    @property
    def usage(self) -> Usage:
        """The usage of every model call of the run, summed."""
        return total_usage(self.messages)

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call the loop acted on, in order: the calls of each assistant message
        except those that ended in ``error`` or ``aborted`` (whose calls are dropped, never run).
        Each has exactly one result in :attr:`tool_results`, at the same position."""
        return [c for m in self.messages if isinstance(m, AssistantMessage) and m.stop_reason not in ("error", "aborted") for c in m.tool_calls]

    def calls_to(self, name: str) -> list[ToolCall]:
        """The calls of :attr:`tool_calls` that name the tool ``name`` (``[c.arguments for c in
        result.calls_to("add")]``)."""
        return [c for c in self.tool_calls if c.name == name]

    @property
    def tool_errors(self) -> list[ToolResultMessage]:
        """The error results fed back to the model (unknown tool, invalid arguments, a tool that
        raised, a skipped call), in order; ``[e.text for e in result.tool_errors]``."""
        return [m for m in self.tool_results if m.is_error]

    def result_for(self, call: ToolCall | str) -> ToolResultMessage:
        """The result fed back for ``call`` (a :class:`ToolCall` of this run, matched by
        position, or a call id: the first result with that id).

        Raises:
            LookupError: the run has no result for that call.
        """
        results = self.tool_results
        if isinstance(call, str):
            for r in results:
                if r.tool_call_id == call:
                    return r
            wanted = call
        else:
            for c, r in zip(self.tool_calls, results):
                if c is call:
                    return r
            wanted = call.id
        known = ", ".join(repr(r.tool_call_id) for r in results) or "none"
        raise LookupError(f"no tool result for call {wanted!r} in this run (results for: {known})")


@dataclass(slots=True)
class _RunContext:
    provider: Provider
    tools: list[Tool]
    registry: ToolRegistry


_current: contextvars.ContextVar[_RunContext | None] = contextvars.ContextVar("loopkit_run", default=None)


class MessageQueue:
    """A steering or follow-up queue: ``put()`` messages, pass the queue as the callback.

    Args:
        mode: ``"all"`` hands over everything queued on each poll; ``"one-at-a-time"`` one
            message per poll (pi's default).
    """

    def __init__(self, *items: str | Message, mode: str = "all") -> None:
        if mode not in ("all", "one-at-a-time"):
            raise UsageError(f"MessageQueue mode must be 'all' or 'one-at-a-time', not {mode!r}")
        self.mode = mode
        self.items: list[str | Message] = list(items)
        self.polls = 0

    def put(self, *items: str | Message) -> None:
        self.items.extend(items)

    def __call__(self) -> list[str | Message]:
        self.polls += 1
        if not self.items:
            return []
        if self.mode == "all":
            out, self.items = self.items, []
            return out
        return [self.items.pop(0)]


def _prompts(prompt: str | Message | Sequence[str | Message] | None, clock: Clock) -> list[Message]:
    if prompt is None:
        return []
    if isinstance(prompt, str):
        return [UserMessage(content=prompt, timestamp=clock())]
    if isinstance(prompt, (UserMessage, AssistantMessage, ToolResultMessage)):
        return [prompt]
    out: list[Message] = []
    for p in prompt:
        if isinstance(p, str):
            out.append(UserMessage(content=p, timestamp=clock()))
        elif isinstance(p, (UserMessage, AssistantMessage, ToolResultMessage)):
            out.append(p)
        else:
            raise UsageError(f"a prompt is a string or a message, not {type(p).__name__}")
    return out


def _config(
    provider: Provider,
    prompt: Any,
    *,
    tools: Sequence[Any] | None,
    tool_choice: ToolChoice,
    parallel_tool_calls: bool | None,
    max_iterations: int | None,
    steering: Callable[[], Any] | None,
    follow_ups: Callable[[], Any] | None,
    on_event: Callable[[AgentEvent], None] | None,
    history: Sequence[Message] | None,
    system: str | None,
    model: str | None,
    abort_signal: AbortSignal | None,
    clock: Clock | None,
    raise_errors: bool,
    max_tokens: int | None = None,
) -> tuple[LoopConfig, list[AgentEvent], list[Tool]]:
    if not (hasattr(provider, "stream") or hasattr(provider, "astream")):
        raise UsageError(f"provider must have stream() or astream(); got {type(provider).__name__}")
    if isinstance(tools, (str, bytes)):
        raise UsageError("tools must be a list of tools, not a string")
    clock = clock or wall_clock
    adapted = [adapt_tool(t) for t in tools] if tools else []
    prompts = _prompts(prompt, clock)
    context = list(history or [])
    if not prompts:
        if not context:
            raise UsageError("nothing to run: give a prompt, or a history to continue from")
        if isinstance(context[-1], AssistantMessage):
            raise UsageError("cannot continue from a history whose last message is an assistant message; add a user message or tool result")
    events: list[AgentEvent] = []
    if on_event is None:
        emit = events.append
    else:
        append = events.append

        def emit(event: AgentEvent) -> None:
            append(event)
            on_event(event)

    cfg = LoopConfig(
        prompts=prompts,
        history=context,
        tools=adapted,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
        model=model,
        system=system,
        max_tokens=max_tokens,
        max_iterations=max_iterations,
        emit=emit,
        clock=clock,
        has_steering=steering is not None,
        has_follow_ups=follow_ups is not None,
        abort_signal=abort_signal,
        raise_errors=raise_errors,
    )
    return cfg, events, adapted


def _result(outcome: LoopOutcome, events: list[AgentEvent]) -> RunResult:
    return RunResult(
        reason=outcome.reason,
        messages=outcome.messages,
        events=events,
        model_calls=outcome.model_calls,
        pending=outcome.pending,
        error=outcome.error,
    )


def _close(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if close is not None:
        close()


class _CoroutineRunner:
    """Runs an async tool's coroutine from the sync driver: on a private event loop, or on a
    worker thread when the calling thread already runs a loop."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, coro: Any) -> Any:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return run_coroutine(coro, self._loop)

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()


def _open_sync(provider: Provider, request: Any) -> Iterator[Any] | list[Any]:
    """The provider's stream for the sync driver; an ``astream``-only provider is stepped on a
    private event loop (``_config`` accepts a provider with either method)."""
    stream = getattr(provider, "stream", None)
    if stream is not None:
        events = stream(request)
        return events if type(events) is list else iter(events)
    return _sync_iter(provider.astream(request))


def _open_async(provider: Provider, request: Any) -> Any:
    """The provider's async stream for the async driver; a ``stream``-only provider's events
    are iterated as they come."""
    astream = getattr(provider, "astream", None)
    if astream is not None:
        return astream(request).__aiter__()
    return _aiter(provider.stream(request))


async def _aiter(events: Any) -> Any:
    for event in events:
        yield event


def _drive_sync(cfg: LoopConfig, provider: Provider, steering: Callable[[], Any] | None, follow_ups: Callable[[], Any] | None) -> LoopOutcome:
    signal = cfg.abort_signal
    gen = agent_loop(cfg)
    stream: Iterator[Any] | None = None
    coros = _CoroutineRunner()
    try:
        action = next(gen)
        while True:
            kind = action[0]
            if kind == NEXT_KIND:
                try:
                    value = next(stream, END)  # type: ignore[arg-type]
                except Exception as exc:
                    value = Raised(exc)
            else:
                if stream is not None:
                    _close(stream)
                    stream = None
                if kind == MODEL:
                    try:
                        stream = _open_sync(provider, action[1])
                        if type(stream) is list:  # every event is known: the engine takes them at once
                            value, stream = stream, None
                        else:
                            value = next(stream, END)
                    except Exception as exc:
                        value = Raised(exc)
                elif kind == TOOL:
                    _, tool, args, call, on_update = action
                    try:
                        value = tool.invoke(args, tool_call_id=call.id, signal=signal, on_update=on_update)
                        if type(value) not in _PLAIN and _awaitable(value):
                            value = coros.run(value)
                    except Exception as exc:
                        value = Raised(exc)
                else:
                    value = steering() if kind == STEER_KIND else follow_ups()  # type: ignore[misc]
                    if _awaitable(value):
                        value = coros.run(value)
            action = gen.send(value)
    except StopIteration as stop:
        return stop.value
    finally:
        if stream is not None:
            _close(stream)
        coros.close()


async def _drive_async(cfg: LoopConfig, provider: Provider, steering: Callable[[], Any] | None, follow_ups: Callable[[], Any] | None) -> LoopOutcome:
    signal = cfg.abort_signal
    gen = agent_loop(cfg)
    stream: Any = None
    try:
        action = next(gen)
        while True:
            kind = action[0]
            if kind == NEXT_KIND:
                try:
                    value = await stream.__anext__()
                except StopAsyncIteration:
                    value = END
                except Exception as exc:
                    value = Raised(exc)
            else:
                if stream is not None:
                    await _aclose(stream)
                    stream = None
                if kind == MODEL:
                    try:
                        stream = _open_async(provider, action[1])
                        value = await stream.__anext__()
                    except StopAsyncIteration:
                        value = END
                    except Exception as exc:
                        value = Raised(exc)
                elif kind == TOOL:
                    _, tool, args, call, on_update = action
                    try:
                        value = tool.invoke(args, tool_call_id=call.id, signal=signal, on_update=on_update)
                        if _awaitable(value):
                            value = await value
                    except Exception as exc:
                        value = Raised(exc)
                elif kind == STEER_KIND:
                    value = await _maybe_await(steering())  # type: ignore[misc]
                else:
                    value = await _maybe_await(follow_ups())  # type: ignore[misc]
            action = gen.send(value)
    except StopIteration as stop:
        return stop.value
    finally:
        if stream is not None:
            await _aclose(stream)


async def _aclose(stream: Any) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


def _awaitable(value: Any) -> bool:
    """``inspect.isawaitable`` without its ABC check for the common plain results."""
    return hasattr(type(value), "__await__") or inspect.isawaitable(value) if type(value) not in _PLAIN else False


_PLAIN = frozenset({str, int, float, bool, dict, list, type(None)})


async def _maybe_await(value: Any) -> Any:
    return await value if _awaitable(value) else value


def run(
    provider: Provider,
    prompt: str | Message | Sequence[str | Message] | None,
    *,
    tools: Sequence[Any] | None = None,
    tool_choice: ToolChoice = None,
    parallel_tool_calls: bool | None = None,
    max_iterations: int | None = None,
    steering: Callable[[], Any] | None = None,
    follow_ups: Callable[[], Any] | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
    history: Sequence[Message] | None = None,
    system: str | None = None,
    model: str | None = None,
    abort_signal: AbortSignal | None = None,
    clock: Clock | None = None,
    raise_errors: bool = False,
    max_tokens: int | None = None,
) -> RunResult:
    """Run the tool-call loop synchronously until it ends.

    Args:
        provider: answers model calls (a fake, a simulator-backed adapter, a real adapter).
        prompt: the user's message(s); None continues from ``history``.
        tools: tools the model may call (functions, ``@tool`` objects, spec/execute dicts, ...).
        tool_choice: ``"auto"``, ``"required"``, ``"none"`` or ``{"type": "function", "name": X}``;
            sent on every model call.
        parallel_tool_calls: False asks the provider for one call at a time.
        max_iterations: at most ``max(1, max_iterations)`` model calls; None: no cap.
        steering: polled before the first call, after each tool call and after each round; what it
            returns (messages or strings) is injected before the next model call, and the round's
            remaining tool calls are skipped.
        follow_ups: polled when the loop would stop; what it returns starts another round.
            Either callback may be async, as tools may.
        on_event: called with every loop event as it happens.
        history: earlier messages to send before the prompt.
        system: the system prompt.
        model: the model name to put on each request.
        abort_signal: set it to end the run with reason ``aborted``.
        clock: milliseconds for timestamps (inject for deterministic transcripts).
        raise_errors: let provider exceptions escape instead of ending with reason ``error``.
        max_tokens: the longest answer each model call may give (the protocol's own field).

    A :class:`~loopkit.errors.HarnessError` (a cassette miss, a script that ran out, a usage
    error) always escapes, whatever ``raise_errors`` says: it means the test's setup is wrong.
    """
    cfg, events, adapted = _config(
        provider, prompt, tools=tools, tool_choice=tool_choice, parallel_tool_calls=parallel_tool_calls,
        max_iterations=max_iterations, steering=steering, follow_ups=follow_ups, on_event=on_event,
        history=history, system=system, model=model, abort_signal=abort_signal, clock=clock,
        raise_errors=raise_errors, max_tokens=max_tokens,
    )  # fmt: skip
    token = _current.set(_RunContext(provider, adapted, default_registry))
    try:
        outcome = _drive_sync(cfg, provider, steering, follow_ups)
    finally:
        _current.reset(token)
    return _result(outcome, events)


async def arun(
    provider: Provider,
    prompt: str | Message | Sequence[str | Message] | None,
    *,
    tools: Sequence[Any] | None = None,
    tool_choice: ToolChoice = None,
    parallel_tool_calls: bool | None = None,
    max_iterations: int | None = None,
    steering: Callable[[], Any] | None = None,
    follow_ups: Callable[[], Any] | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
    history: Sequence[Message] | None = None,
    system: str | None = None,
    model: str | None = None,
    abort_signal: AbortSignal | None = None,
    clock: Clock | None = None,
    raise_errors: bool = False,
    max_tokens: int | None = None,
) -> RunResult:
    """:func:`run` on asyncio: the provider's ``astream`` is used, async tools are awaited in
    the running loop, and steering / follow-up callbacks may be async. A harness error escapes,
    as from :func:`run`."""
    cfg, events, adapted = _config(
        provider, prompt, tools=tools, tool_choice=tool_choice, parallel_tool_calls=parallel_tool_calls,
        max_iterations=max_iterations, steering=steering, follow_ups=follow_ups, on_event=on_event,
        history=history, system=system, model=model, abort_signal=abort_signal, clock=clock,
        raise_errors=raise_errors, max_tokens=max_tokens,
    )  # fmt: skip
    token = _current.set(_RunContext(provider, adapted, default_registry))
    try:
        outcome = await _drive_async(cfg, provider, steering, follow_ups)
    finally:
        _current.reset(token)
    return _result(outcome, events)


class RunFailed(LoopkitError):
    """:meth:`Runtime.exec` could not produce a final answer; ``result`` holds the whole run."""

    def __init__(self, message: str, result: RunResult) -> None:
        super().__init__(message)
        self.result = result


class Runtime:
    """``exec()``-style entry point: one prompt in, the final answer's text out.

    Args:
        provider: the default provider (a nested exec inherits the running one instead).
        registry: where ``exec`` finds tools when ``tools`` is not given (default: the global
            :data:`loopkit.tools.default_registry`).
        model / system / clock / on_event: passed to every run.
    """

    def __init__(
        self,
        provider: Provider | None = None,
        *,
        registry: ToolRegistry | None = None,
        model: str | None = None,
        system: str | None = None,
        clock: Clock | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
    ) -> None:
        self.provider = provider
        self.registry = registry if registry is not None else default_registry
        self.model = model
        self.system = system
        self.clock = clock
        self.on_event = on_event
        self.last_result: RunResult | None = None

    def _resolve(
        self,
        provider: Provider | None,
        tools: Sequence[Any] | None,
        toolset: str | None,
        tools_source: str | Sequence[str] | None,
        tools_allow: Sequence[str] | None,
        tools_deny: Sequence[str] | None,
    ) -> tuple[Provider, list[Tool]]:
        outer = _current.get()
        chosen = provider or (outer.provider if outer is not None else None) or self.provider
        if chosen is None:
            raise UsageError("Runtime.exec needs a provider: Runtime(provider) or exec(..., provider=...)")
        if tools is None and outer is not None and toolset is None:
            # a nested exec inherits the outer run's tools, then applies its own policy
            inherited = ToolRegistry()
            for t in outer.tools:
                if t.name not in inherited.names():
                    inherited.register(t)
            return chosen, resolve_tools(None, registry=inherited, source=tools_source, allow=tools_allow, deny=tools_deny)
        return chosen, resolve_tools(
            None if tools is None else list(tools),
            registry=self.registry,
            toolset=toolset,
            source=tools_source,
            allow=tools_allow,
            deny=tools_deny,
        )

    def _finish(self, result: RunResult) -> str:
        self.last_result = result
        if result.reason == "stop":
            return result.text
        last = result.last_assistant
        detail = (last.error_message if last is not None and last.error_message else None) or result.reason
        if result.reason == "max_iterations":
            detail = f"the run reached max_iterations after {result.model_calls} model call(s) without a final answer"
        raise RunFailed(f"exec ended with reason {result.reason!r}: {detail}", result)

    def exec(
        self,
        content: str | Message | Sequence[str | Message],
        *,
        tools: Sequence[Any] | None = None,
        toolset: str | None = None,
        tools_source: str | Sequence[str] | None = None,
        tools_allow: Sequence[str] | None = None,
        tools_deny: Sequence[str] | None = None,
        tool_choice: ToolChoice = None,
        parallel_tool_calls: bool | None = None,
        max_iterations: int | None = 20,
        provider: Provider | None = None,
        history: Sequence[Message] | None = None,
        steering: Callable[[], Any] | None = None,
        follow_ups: Callable[[], Any] | None = None,
        abort_signal: AbortSignal | None = None,
    ) -> str:
        """Run one prompt to its final answer and return that answer's text.

        ``tools=None`` takes the registry's tools (``toolset``, ``tools_source``, ``tools_allow``,
        ``tools_deny`` trim them; ``toolset="none"`` gives none); inside a tool body it takes the
        outer run's tools and provider instead. ``tools=[]`` sends no tools. The cap defaults to 20
        model calls. A run that ends with ``error``, ``aborted`` or ``max_iterations`` raises
        :class:`RunFailed` (with the whole run in ``.result``) instead of returning a partial text;
        a :class:`~loopkit.errors.HarnessError` (the test's setup is wrong) propagates as itself.
        """
        chosen, resolved = self._resolve(provider, tools, toolset, tools_source, tools_allow, tools_deny)
        kwargs = dict(
            tools=resolved, tool_choice=tool_choice, parallel_tool_calls=parallel_tool_calls,
            max_iterations=max_iterations, history=history, steering=steering, follow_ups=follow_ups,
            system=self.system, model=self.model, abort_signal=abort_signal, clock=self.clock,
            on_event=self.on_event,
        )  # fmt: skip
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._finish(run(chosen, content, **kwargs))
        # called from inside a running event loop (an async tool): run on a worker thread
        return self._finish(in_thread(lambda: run(chosen, content, **kwargs)))

    async def aexec(self, content: str | Message | Sequence[str | Message], **options: Any) -> str:
        """:meth:`exec` on asyncio (same options)."""
        chosen, resolved = self._resolve(
            options.pop("provider", None), options.pop("tools", None), options.pop("toolset", None),
            options.pop("tools_source", None), options.pop("tools_allow", None), options.pop("tools_deny", None),
        )  # fmt: skip
        options.setdefault("max_iterations", 20)
        result = await arun(
            chosen, content, tools=resolved, system=self.system, model=self.model, clock=self.clock,
            on_event=self.on_event, **options,
        )  # fmt: skip
        return self._finish(result)
