"""Forms a Bedrock-shaped protocol answers in more than one way: a throttling shape under another
HTTP status, an in-stream exception of a type the service model does not name yet, reasoning that
comes without a signature."""

from __future__ import annotations

from typing import Any

from ..errors import ProviderError
from ..events import DoneEvent
from ..messages import ThinkingContent, user
from ..script import HttpFault, MidStreamError, Turn
from ._case import Case, Context
from ._failure_cases import _error_class, _expect_details, expect_error_details, expect_failure
from ._fixtures import PROMPT, accepted, answer, finished, kinds, request
from ._wire import Wire

# an exception member no service model names (the ConverseStreamOutput union grows over time)
UNKNOWN_EXCEPTION = "capacityReservationExhaustedException"


def _throttling_shape(wire: Wire, provider: Any) -> str | None:
    if wire.throttling_shape is None:
        return f"{wire.name} names no error shape apart from its HTTP status: the status alone decides a retry (failure.http_429_retry_after)"
    return None


def _stream_exceptions(wire: Wire, provider: Any) -> str | None:
    return None if wire.stream_exceptions else f"{wire.name} has no typed in-stream exceptions: its stream errors are covered by failure.mid_stream"


def _unsigned_reasoning(wire: Wire, provider: Any) -> str | None:
    return None if wire.unsigned_reasoning else f"the suite knows no {wire.name} model that sends reasoning without a signature"


def check_unsigned_thinking(ctx: Context) -> None:
    """Reasoning without a signature (DeepSeek-R1 on Bedrock) is kept as thinking with no
    signature, and is not sent back: the service refuses reasoning echoed without its signature."""
    thought = "The user greets me; a short answer will do."
    m = finished(ctx, answer(ctx, [Turn(thinking=thought, text="Hi there.")]), "an answer whose reasoning has no signature")
    if m is None:
        return
    ctx.expect("content blocks", kinds(m), ["thinking", "text"])
    thinking = [b for b in m.content if isinstance(b, ThinkingContent)]
    if thinking:
        ctx.expect("thinking text", thinking[0].thinking, thought)
        ctx.expect_in("thinking signature (none came)", thinking[0].thinking_signature, [None, ""])
    ex = answer(ctx, ["Fine."], request(messages=[user(PROMPT), m, user("And tomorrow?")]))
    accepted(ctx, ex)
    ctx.expect("reasoning passed back (none: it had no signature)", ctx.wire.reasoning_passed_back(ex.body or {}), [])


def _bare_exceptions(wire: Wire, provider: Any) -> str | None:
    if wire.bare_exception_event(wire.stream_exceptions[0][0] if wire.stream_exceptions else "x") is None:
        return f"{wire.name} has no typed in-stream exception whose message is optional"
    return None


def check_exception_without_message(ctx: Context) -> None:
    """An exception whose payload names no message (the model makes it optional) fails the call
    with the class of its member and its type, and says which error it was, not the bare JSON."""
    member, name = ctx.wire.stream_exceptions[0]
    event = ctx.wire.bare_exception_event(member)
    assert event is not None  # the case applies only where the protocol has one
    what = f"a {member} whose payload is {{}} after the first events"
    ex = answer(ctx, [Turn(text="An answer that a bare exception interrupts.", chunk_size=6), "Never reached."], cut=lambda chunks: chunks[:3] + [event])
    expect_failure(ctx, ex, (_error_class(name),), what)
    expect_error_details(ctx, ex, status=None, error_type=member)
    text = ex.error.message if isinstance(ex.error, ProviderError) else getattr(ex.terminal, "error_message", None)
    if not (isinstance(text, str) and text.strip()) or "{" in text:
        ctx.fail(f"{what}: the error's message (ProviderError.message)", "some text saying which error it was, not the bare payload", text)
    if any(isinstance(e, DoneEvent) for e in ex.events):
        ctx.fail(f"{what}: events", "no 'done' event", ex.outcome())
    ctx.expect(f"{what}: requests sent (never retried once events were yielded)", ex.attempts, 1)


def check_throttling_any_status(ctx: Context) -> None:
    """AWS's common errors list ThrottlingException with HTTP 400 as well as 429; botocore
    retries it by its code, so an adapter must too."""
    shape = ctx.wire.throttling_shape
    assert shape is not None  # the case applies only where the protocol has one
    for status in (400, 429):
        what = f"a {shape} with HTTP {status}"
        ex = answer(ctx, [Turn(faults=(HttpFault(status=status, error_type=shape, message="Rate exceeded"),)), "Recovered."])
        m = finished(ctx, ex, f"{what} (a throttle: retried)")
        if m is not None:
            ctx.expect(f"{what}: text after the retry", m.text, "Recovered.")
        ctx.expect(f"{what}: requests sent (a throttle is retried whatever its status)", ex.attempts, 2)


def check_unknown_stream_exception(ctx: Context) -> None:
    """An exception member the adapter has never heard of still fails the call with its type and
    message (never a crash of another kind, never a 'done')."""
    text = "An answer that an exception of a new type interrupts."
    message = f'{UNKNOWN_EXCEPTION} for "sim-model" (conformance)'
    what = f"a {UNKNOWN_EXCEPTION} (a member no service model names) after the first events"
    ex = answer(ctx, [Turn(text=text, chunk_size=6, faults=(MidStreamError(after=2, message=message, error_type=UNKNOWN_EXCEPTION),)), "Never reached."])
    expect_failure(ctx, ex, (ProviderError,), what)
    _expect_details(ctx, ex, what, status=None, error_type=UNKNOWN_EXCEPTION, message=message)
    if any(isinstance(e, DoneEvent) for e in ex.events):
        ctx.fail(f"{what}: events", "no 'done' event", ex.outcome())
    ctx.expect(f"{what}: requests sent (never retried once events were yielded)", ex.attempts, 1)


BEDROCK_ROUND2_CASES: tuple[Case, ...] = (
    Case("stream.thinking_unsigned", "Reasoning without a signature is kept as thinking with none, and not sent back on the next request.", "docs/wire.md §5.8 #6", check_unsigned_thinking, _unsigned_reasoning),
    Case("failure.throttling_any_status", "An error whose shape is the protocol's throttle is retried whatever its HTTP status (AWS answers ThrottlingException with 400 as well as 429).", "docs/wire.md §5.5", check_throttling_any_status, _throttling_shape),
    Case("failure.stream_exception_bare", "An in-stream exception whose payload names no message (the model makes it optional) fails the call with its member's class and type, and a message that is not the bare payload.", "docs/wire.md §5.6", check_exception_without_message, _bare_exceptions, streamed_only=True),
    Case("failure.stream_exception_unknown", "An in-stream exception of a type no service model names fails the call with its type and message, without a 'done' or a retry.", "docs/wire.md §5.6", check_unknown_stream_exception, _stream_exceptions, streamed_only=True),
)
