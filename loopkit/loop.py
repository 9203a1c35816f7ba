"""The tool-call loop of docs/loop-contract.md as one sans-IO state machine.

:func:`agent_loop` is a generator. It emits loop events through ``config.emit`` (a plain
callback) and yields *actions* for everything that touches the outside world; the driver performs
the action and sends back its result:

=================================  ============================================================
action                             the driver sends back
=================================  ============================================================
``(MODEL, request)``               the first stream event of ``provider.stream(request)``, or
                                   the whole list when the provider returned a list
``NEXT``                           the next stream event (``END`` when the stream is exhausted)
``(TOOL, tool, args, call, upd)``  what ``tool.invoke(...)`` returned (awaited if awaitable)
``STEER`` / ``FOLLOW``             what the steering / follow-up callback returned
=================================  ============================================================

An exception raised by the provider or a tool comes back wrapped in :class:`Raised`. There is no
I/O and no asyncio here, so the sync driver, the async driver and property tests all drive the
very same algorithm (docs/loop-contract.md §6).

Where OpenProgram departs from its design document, loopkit follows the document
(docs/loop-contract.md, docs/loop-contract.md §6): the cap is ``max(1, max_iterations)`` with no hidden clamp;
every run ends with :class:`AgentEnd` and a ``reason``; polled steering or follow-up messages that
cannot be injected are returned in ``AgentEnd.pending``; a provider failure or a stream that stops
without its terminal event becomes an assistant message with ``stop_reason="error"``; a tool
exception's text is never empty; arguments that are not a JSON object get an error result.

A :class:`~loopkit.errors.HarnessError` (a cassette miss, a script that ran out, a usage error)
raised by the provider is never turned into an error stop: it propagates out of the loop whatever
``raise_errors`` says, because it means the test's setup is wrong, not the model. So does one
that a client library wrapped in its own error (as ``__cause__`` or ``__context__``: an SDK's
connection error around the network guard's :class:`~loopkit.errors.NetworkBlocked`). Raised in
a tool body, a fake's or a cassette's error (:class:`~loopkit.errors.ScriptError`,
:class:`~loopkit.errors.ReplayError`: a nested run's script ran out, a cassette missed)
propagates too, also when the tool's own code wrapped it; anything else a tool raises, a
:class:`~loopkit.errors.UsageError` included, is that tool's error result, as the model would
see it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .accumulate import Accumulator
from .errors import ReplayError, ScriptError, StreamProtocolError, UsageError, harness_cause
from .events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    DoneEvent,
    EndReason,
    ErrorEvent,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    StartEvent,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolResult,
    TurnEnd,
    TurnStart,
)
from .messages import AssistantMessage, Message, TextContent, ToolCall, ToolResultMessage, UserMessage
from .provider import AbortSignal, ModelRequest, ToolChoice, ToolSpec
from .tools import Tool, error_text, to_tool_result

MODEL = 0
NEXT_KIND = 1
TOOL = 2
STEER_KIND = 3
FOLLOW_KIND = 4
NEXT = (NEXT_KIND,)
STEER = (STEER_KIND,)
FOLLOW = (FOLLOW_KIND,)
END: Any = type("END", (), {"__repr__": lambda self: "END"})()
"""Sent back for ``NEXT`` when the provider's stream is exhausted."""

SKIPPED_TEXT = "Skipped due to queued user message."
ABORTED_TEXT = "Skipped: the run was aborted."
NO_TERMINAL_TEXT = "the provider's stream ended before its terminal event (done or error)"


@dataclass(slots=True)
class Raised:
    """An exception the driver caught while performing an action."""

    error: BaseException


@dataclass(slots=True, kw_only=True)
class LoopConfig:
    """Everything one run needs besides the driver.

    Args:
        prompts: the run's new messages (``[]`` continues from ``history``).
        history: the context before the prompts; the loop appends to this list.
        tools: the executable tools; the first tool of a name wins.
        tool_choice / parallel_tool_calls / model / system / max_tokens: sent on every model call.
        max_iterations: None for no cap, else at most ``max(1, max_iterations)`` model calls.
        emit: called with every loop event, in order.
        clock: milliseconds for message timestamps (inject for deterministic transcripts).
        has_steering / has_follow_ups: whether to poll (a poll is an action).
        abort_signal: checked before every model call and every tool call.
        raise_errors: let a provider's exception escape instead of ending the run with an error
            message (the raw stream behaviour of docs/loop-contract.md §1.6). A harness error always
            escapes.
    """

    prompts: list[Message]
    history: list[Message] = field(default_factory=list)
    tools: Sequence[Tool] = ()
    tool_choice: ToolChoice = None
    parallel_tool_calls: bool | None = None
    model: str | None = None
    system: str | None = None
    max_tokens: int | None = None
    max_iterations: int | None = None
    emit: Callable[[AgentEvent], None] = lambda event: None
    clock: Callable[[], int] = lambda: 0
    has_steering: bool = False
    has_follow_ups: bool = False
    abort_signal: AbortSignal | None = None
    raise_errors: bool = False


@dataclass(slots=True, kw_only=True)
class LoopOutcome:
    """What :func:`agent_loop` returns: the end reason, new messages, unused pending messages,
    the number of model calls and the exception that ended the run, if one did."""

    reason: EndReason
    messages: list[Message]
    pending: list[Message]
    model_calls: int
    error: BaseException | None = None


def as_messages(value: Any, clock: Callable[[], int]) -> list[Message]:
    """Normalise what a steering / follow-up callback returned: None, a string, a message, or a
    list of strings and messages."""
    if value is None:
        return []
    if isinstance(value, (str, UserMessage, AssistantMessage, ToolResultMessage)):
        value = [value]
    out: list[Message] = []
    for item in value:
        if isinstance(item, str):
            out.append(UserMessage(content=item, timestamp=clock()))
        elif isinstance(item, (UserMessage, AssistantMessage, ToolResultMessage)):
            out.append(item)
        else:
            raise UsageError(f"a steering or follow-up callback returned {type(item).__name__}; expected str or a message")
    return out


def _argument_error(call: ToolCall) -> str:
    if call.raw_arguments is not None:
        try:
            json.loads(call.raw_arguments)
            problem = "not valid JSON"
        except ValueError as exc:
            problem = f"not valid JSON ({exc})"
        return f'Invalid arguments for tool "{call.name}": {problem}\n\nReceived arguments:\n{call.raw_arguments}'
    kind = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number", type(None): "null"}
    got = kind.get(type(call.arguments), type(call.arguments).__name__)
    received = json.dumps(call.arguments, indent=2, ensure_ascii=False, default=str)
    return f'Invalid arguments for tool "{call.name}": expected a JSON object, got {got}\n\nReceived arguments:\n{received}'


def _error_result(text: str) -> ToolResult:
    return ToolResult(content=[TextContent(text=text)], details={}, is_error=True)


def agent_loop(cfg: LoopConfig) -> Generator[tuple, Any, LoopOutcome]:
    """Run one loop; see the module docstring for the action protocol."""
    emit = cfg.emit
    clock = cfg.clock
    history = cfg.history
    new: list[Message] = []
    tools_by_name: dict[str, Tool] = {}
    for t in cfg.tools:
        tools_by_name.setdefault(t.name, t)
    specs: tuple[ToolSpec, ...] = tuple(t.spec for t in tools_by_name.values())
    cap = None if cfg.max_iterations is None else max(1, cfg.max_iterations)
    signal = cfg.abort_signal
    steering = cfg.has_steering
    model_calls = 0

    def finish(reason: EndReason, pending: list[Message], error: BaseException | None = None) -> LoopOutcome:
        emit(AgentEnd(messages=new, reason=reason, pending=list(pending)))
        return LoopOutcome(reason=reason, messages=new, pending=list(pending), model_calls=model_calls, error=error)

    emit(AgentStart())
    emit(TurnStart())
    for p in cfg.prompts:
        history.append(p)
        new.append(p)
        emit(MessageStart(p))
        emit(MessageEnd(p))

    pending: list[Message] = as_messages((yield STEER), clock) if steering else []
    template: ModelRequest | None = None  # the first request; later ones copy its settings
    first_round = True
    while True:
        has_more = True
        while has_more or pending:
            if signal is not None and signal.aborted:
                return finish("aborted", pending)
            if cap is not None and model_calls >= cap:
                return finish("max_iterations", pending)
            if first_round:
                first_round = False
            else:
                emit(TurnStart())
            for m in pending:
                history.append(m)
                new.append(m)
                emit(MessageStart(m))
                emit(MessageEnd(m))
            pending = []

            # --- one model call -------------------------------------------------------------
            model_calls += 1
            if template is None:
                template = ModelRequest(
                    history,
                    tools=specs,
                    tool_choice=cfg.tool_choice,
                    parallel_tool_calls=cfg.parallel_tool_calls,
                    model=cfg.model,
                    system=cfg.system,
                    max_tokens=cfg.max_tokens,
                    abort_signal=signal,
                    call_number=model_calls,
                    _count=len(history),
                )
                request = template
            else:
                request = template.next_call(model_calls)
            acc = Accumulator(timestamp=clock())
            started = False
            failure: BaseException | None = None
            first = yield (MODEL, request)
            # a provider whose events all exist already (a list) is consumed here, without a
            # round trip through the driver per event; an iterator is pulled one NEXT at a time
            batch: list | None = first if type(first) is list else None
            position = 0
            event = (batch[0] if batch else END) if batch is not None else first
            while True:
                if event is END:
                    failure = StreamProtocolError(NO_TERMINAL_TEXT)
                    break
                et = type(event)
                if et is Raised:
                    failure = event.error
                    break
                try:
                    acc.feed(event)
                except StreamProtocolError as exc:
                    failure = exc
                    break
                except Exception as exc:  # a malformed event (a delta that is not a str ...)
                    failure = StreamProtocolError(f"could not apply stream event {event!r}: {type(exc).__name__}: {exc}")
                    break
                if not started:
                    started = True
                    emit(MessageStart(acc.message))
                if et is DoneEvent or et is ErrorEvent:
                    break
                if et is not StartEvent:
                    emit(MessageUpdate(acc.message, event))
                if batch is None:
                    event = yield NEXT
                else:
                    position += 1
                    event = batch[position] if position < len(batch) else END
            message = acc.message
            if failure is not None:
                harness = harness_cause(failure)  # a client library may wrap it (httpcore, an SDK)
                if harness is not None:
                    raise harness
                if cfg.raise_errors:
                    raise failure
                message.stop_reason = "error"
                message.error_message = f"{type(failure).__name__}: {failure}"
                message.error_type = getattr(failure, "error_type", None) or type(failure).__name__
                if not started:
                    emit(MessageStart(message))
            history.append(message)
            new.append(message)
            emit(MessageEnd(message))
            stop = message.stop_reason
            if stop == "error" or stop == "aborted":
                emit(TurnEnd(message=message, tool_results=[]))
                return finish(stop, pending, failure)

            # --- its tool calls, in content order -------------------------------------------
            calls = [b for b in message.content if type(b) is ToolCall]
            results: list[ToolResultMessage] = []
            steered: list[Message] = []
            skip_text: str | None = None
            for call in calls:
                cid, name = call.id, call.name
                raw = call.arguments if call.raw_arguments is None else call.raw_arguments
                emit(ToolExecutionStart(cid, name, raw))
                if skip_text is None and signal is not None and signal.aborted:
                    skip_text = ABORTED_TEXT
                if skip_text is not None:
                    result = _error_result(skip_text)
                else:
                    tool = tools_by_name.get(name)
                    if tool is None:
                        result = _error_result(f"Tool {name} not found")
                    elif call.raw_arguments is not None or type(call.arguments) is not dict:
                        result = _error_result(_argument_error(call))
                    else:
                        args, problem = tool.prepare(call.arguments)
                        if problem is not None:
                            result = _error_result(problem)
                        else:

                            running = [True]

                            def on_update(partial: Any, _c=cid, _n=name, _r=raw, _running=running) -> None:
                                if not _running[0]:
                                    # an update after tool_execution_end would break the event order
                                    raise UsageError(f'on_update was called for tool call {_c} ("{_n}") after that call had finished')
                                emit(ToolExecutionUpdate(tool_call_id=_c, tool_name=_n, args=_r, partial_result=partial))

                            out = yield (TOOL, tool, args, call, on_update)
                            running[0] = False
                            if type(out) is Raised:
                                harness = harness_cause(out.error)  # (also inside an error of the tool's own)
                                if isinstance(harness, (ScriptError, ReplayError)):
                                    raise harness  # a fake or cassette under the tool: the test's setup
                                result = _error_result(error_text(out.error))
                            else:
                                result = to_tool_result(out)
                emit(ToolExecutionEnd(cid, name, result, result.is_error))
                # positional: a keyword call costs twice as much on this hot path
                rm = ToolResultMessage(cid, name, result.content, result.details, result.is_error, clock())
                history.append(rm)
                new.append(rm)
                results.append(rm)
                emit(MessageStart(rm))
                emit(MessageEnd(rm))
                if steering and skip_text is None:
                    steered = as_messages((yield STEER), clock)
                    if steered:
                        skip_text = SKIPPED_TEXT
            emit(TurnEnd(message, results))
            if signal is not None and signal.aborted:
                return finish("aborted", steered)
            has_more = bool(calls)
            if steered:
                pending = steered
            elif steering:
                pending = as_messages((yield STEER), clock)

        if cfg.has_follow_ups:
            pending = as_messages((yield FOLLOW), clock)
            if pending:
                continue
        return finish("stop", pending)
