"""Failures and retries: HTTP errors, errors and cuts mid-stream, slow streams, the abort signal."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import (
    AuthenticationError,
    BadRequestError,
    ConnectionClosedError,
    PermissionDeniedError,
    ProviderError,
    ServerError,
    WireError,
)
from ..events import DoneEvent, ErrorEvent, TextDeltaEvent
from ..provider import AbortSignal, ModelRequest
from ..script import Delay, HttpFault, MidStreamError, Truncate, Turn, call
from ._case import Context
from ._fixtures import answer, call_ids, finished, request
from ._harness import MAX_RETRIES, Cut, Exchange, qualified
from ._wire import Wire


def expect_failure(ctx: Context, ex: Exchange, classes: tuple[type, ...], what: str) -> None:
    if ex.error is not None:
        if not isinstance(ex.error, classes):
            ctx.fail(what, " or ".join(qualified(c) for c in classes), f"{qualified(type(ex.error))}: {ex.error}")
        elif isinstance(ex.error, ProviderError) and not ex.error.provider:
            ctx.fail(f"{what}: the provider the error names (ProviderError.provider)", "the provider's name", ex.error.provider)
        return
    t = ex.terminal
    if isinstance(t, ErrorEvent) and t.reason == "error":
        return
    ctx.fail(what, f"a raised {' or '.join(qualified(c) for c in classes)} or an ErrorEvent(reason='error')", ex.outcome())


def expect_error_details(ctx: Context, ex: Exchange, *, status: int | None, error_type: str) -> None:
    """The error a failed call surfaced carries the HTTP status (None: an in-stream error) and
    the provider's own error type (ProviderError.status / .error_type, ErrorEvent.error_type)."""
    if isinstance(ex.error, ProviderError):
        got_status, got_type = ex.error.status, ex.error.error_type
    elif ex.error is None and isinstance(ex.terminal, ErrorEvent):
        got_status, got_type = status, ex.terminal.error_type
    else:
        return  # not a loopkit failure: expect_failure said so already
    ctx.expect("the error's HTTP status", got_status, status)
    if (got_type or "").lower() != error_type.lower():
        ctx.fail("the error's error_type (the provider's own)", error_type, got_type)


def said(ex: Exchange) -> str:
    """The error text a failed call surfaced."""
    if ex.error is not None:
        return str(ex.error)
    return getattr(ex.terminal, "error_message", "") or ""


def http_error_case(status: int, classes: tuple[type, ...]) -> Callable[[Context], None]:
    message = f"Invalid request (HTTP {status} from the conformance suite)"

    def check(ctx: Context) -> None:
        error_type = ctx.wire.error_types[0]
        ex = answer(ctx, [Turn(faults=(HttpFault(status=status, message=message, error_type=error_type),)), "Never reached."])
        expect_failure(ctx, ex, classes, f"HTTP {status}")
        expect_error_details(ctx, ex, status=status, error_type=error_type)
        if message not in said(ex):
            ctx.fail("the provider's error message", f"text containing {message!r}", said(ex))
        elif "{" in said(ex):
            ctx.fail("the provider's error message, not the raw JSON body it came in", message, said(ex))
        ctx.expect(f"requests sent (an HTTP {status} is not retried)", ex.attempts, 1)

    return check


def check_error_body_not_json(ctx: Context) -> None:
    """A proxy or load balancer in front of the API answers in plain text: the status still decides."""
    text = "upstream connect error or disconnect/reset before headers (conformance)"
    ex = answer(ctx, [Turn(faults=(HttpFault(status=400, body=text),)), "Never reached."])
    expect_failure(ctx, ex, (BadRequestError,), "HTTP 400 with a plain-text body")
    if text not in said(ex):
        ctx.fail("the error message of a plain-text error body", f"text containing {text!r}", said(ex))
    if isinstance(ex.error, ProviderError):
        ctx.expect("the error's HTTP status", ex.error.status, 400)
        ctx.expect(f"the error's error_type ({ctx.wire.plain_body_error_type or 'none: a plain-text body names no type'})", ex.error.error_type, ctx.wire.plain_body_error_type)
    ctx.expect("requests sent (an HTTP 400 is not retried)", ex.attempts, 1)
    # a firewall's block page in Latin-1: bytes that are not UTF-8 must not break the error
    page = "Access denied by the web application firewall (conformance)"
    ex = answer(ctx, [Turn(faults=(HttpFault(status=403, body=f"<html><body>{page}: r\xe8gle 42</body></html>".encode("latin-1")),)), "Never reached."])
    expect_failure(ctx, ex, (PermissionDeniedError,), "HTTP 403 with a body that is not UTF-8")
    if page not in said(ex):
        ctx.fail("the error message of a body that is not UTF-8", f"text containing {page!r}", said(ex))


def check_auth(ctx: Context) -> None:
    fault, classes = auth_fault(ctx.wire)
    ex = answer(ctx, [Turn(faults=(fault,)), "Never reached."])
    expect_failure(ctx, ex, classes, f"the protocol's bad-credentials answer (HTTP {fault.status})")
    ctx.expect("requests sent (bad credentials are not retried)", ex.attempts, 1)


def auth_fault(wire: Wire) -> tuple[HttpFault, tuple[type, ...]]:
    """What a protocol answers to a bad key (docs/wire.md §6.3) and the errors that may report it."""
    if wire.name == "gemini":
        body = {
            "error": {
                "code": 400,
                "message": "API key not valid. Please pass a valid API key.",
                "status": "INVALID_ARGUMENT",
                "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}],
            }
        }
        return HttpFault(status=400, body=body), (AuthenticationError, BadRequestError)
    if wire.name == "bedrock":
        return HttpFault(status=403, error_type="UnrecognizedClientException", message="The security token included in the request is invalid."), (AuthenticationError, PermissionDeniedError)
    return HttpFault(status=401), (AuthenticationError,)


def retried_case(status: int, *, retry_after: float | None = None) -> Callable[[Context], None]:
    def check(ctx: Context) -> None:
        for use_async in (False, True):
            via = "astream()" if use_async else "stream()"
            ex = answer(ctx, [Turn(faults=(HttpFault(status=status, retry_after=retry_after),)), "Recovered."], use_async=use_async)
            m = finished(ctx, ex, f"{via} after one HTTP {status}")
            if m is not None:
                ctx.expect(f"{via}: text after the retry", m.text, "Recovered.")
            ctx.expect(f"{via}: requests sent (HTTP {status}, then a retry)", ex.attempts, 2)
            if ex.waits is None:
                continue
            if retry_after is not None:
                ctx.expect(f"{via}: retry waits (the provider asked for {retry_after} s)", ex.waits, [retry_after])
            elif len(ex.waits) != 1 or not ex.waits[0] > 0:
                ctx.fail(f"{via}: retry waits", "one positive wait", ex.waits)
        if not ctx.harness.records_waits:
            ctx.note("retry waits not observed: the factory takes no retry=")

    return check


def check_retries_bounded(ctx: Context) -> None:
    if ctx.harness.records_waits:
        ex = answer(ctx, [Turn(faults=(HttpFault(status=500),)) for _ in range(MAX_RETRIES + 1)])
        ctx.expect(f"requests sent with max_retries={MAX_RETRIES} against persistent 500s", ex.attempts, MAX_RETRIES + 1)
        ctx.expect("retry waits", len(ex.waits or []), MAX_RETRIES)
    else:
        ctx.note("the bound is checked against 6 persistent 500s: the factory takes no retry=")
        ex = answer(ctx, [Turn(faults=(HttpFault(status=500),)) for _ in range(6)])
        if ex.attempts >= 6:
            ctx.fail("requests sent against persistent 500s", "fewer than 6 (retries are bounded)", ex.attempts)
    expect_failure(ctx, ex, (ServerError,), "the call after the last retry")


def check_mid_stream(ctx: Context) -> None:
    text = "This answer will be cut off by an error in the middle of the stream."
    message = "Upstream model failure (conformance)"
    error_type = ctx.wire.error_types[1]
    ex = answer(ctx, [Turn(text=text, chunk_size=4, faults=(MidStreamError(after=3, message=message, error_type=error_type),)), "Never reached."])
    expect_failure(ctx, ex, (ProviderError,), "an error event in the middle of the stream")
    expect_error_details(ctx, ex, status=None, error_type=error_type)
    if message not in said(ex):
        ctx.fail("the provider's error message", f"text containing {message!r}", said(ex))
    if any(isinstance(e, DoneEvent) for e in ex.events):
        ctx.fail("events", "no 'done' event", ex.outcome())
    ctx.expect("requests sent (a stream that failed part-way is not retried)", ex.attempts, 1)


def check_truncated(ctx: Context) -> None:
    text = "This answer is cut off when the connection drops part-way through."
    if not ctx.streamed:
        check_truncated_body(ctx, text)
        return
    ex = answer(ctx, [Turn(text=text, chunk_size=4, faults=(Truncate(after=3),))])
    expect_failure(ctx, ex, (ProviderError,), "a stream whose connection dropped part-way")
    expect_named_provider(ctx, ex, "a stream whose connection dropped part-way")
    if any(isinstance(e, DoneEvent) for e in ex.events):
        ctx.fail("events", "no 'done' event", ex.outcome())


def check_truncated_body(ctx: Context, text: str) -> None:
    """A non-streamed answer whose connection drops half-way through its JSON body: nothing has
    reached the caller yet, so the adapter may fail the call or retry it, but never return a
    message read from the part of the body that arrived."""
    recovered = "Recovered after the dropped connection."
    ex = answer(ctx, [Turn(text=text, faults=(Truncate(),)), recovered])
    if ex.attempts > 1:
        m = finished(ctx, ex, "a retry after a JSON body whose connection dropped part-way")
        if m is not None:
            ctx.expect("text after the retry (the answer of the second request)", m.text, recovered)
        ctx.expect("requests sent (the dropped body, then one retry)", ex.attempts, 2)
        return
    expect_failure(ctx, ex, (ProviderError,), "a JSON body whose connection dropped part-way")
    if any(isinstance(e, DoneEvent) for e in ex.events):
        ctx.fail("events of a JSON body whose connection dropped part-way", "no 'done' event", ex.outcome())


def check_slow(ctx: Context) -> None:
    text = "Slow and steady: every piece arrives, just late."
    ex = answer(ctx, [Turn(text=text, chunk_size=6, faults=(Delay(seconds=0.02, after=1), Delay(seconds=0.02, after=4)))])
    m = finished(ctx, ex, "a stream with pauses between events")
    if m is not None:
        ctx.expect("text", m.text, text)
    ctx.expect("requests sent", ex.attempts, 1)


def check_abort(ctx: Context) -> None:
    text = "A long answer that the caller stops reading after the first words arrive. " * 4

    def abort_on_text(event: Any, req: ModelRequest) -> None:
        if isinstance(event, TextDeltaEvent) and req.abort_signal is not None and not req.abort_signal.aborted:
            req.abort_signal.abort("conformance")

    for use_async in (False, True):
        via = "astream()" if use_async else "stream()"
        ex = answer(ctx, [Turn(text=text, chunk_size=4)], request(abort_signal=AbortSignal()), on_event=abort_on_text, use_async=use_async)
        t = ex.terminal
        if not (isinstance(t, ErrorEvent) and t.reason == "aborted"):
            ctx.fail(f"{via} after the abort signal is set mid-stream", "a terminal ErrorEvent(reason='aborted')", ex.outcome())
        if any(isinstance(e, DoneEvent) for e in ex.events):
            ctx.fail(f"{via}: events", "no 'done' event after the abort", ex.outcome())


def check_ends_early(ctx: Context) -> None:
    """A body that ends cleanly (no connection error) before the protocol's terminal event is an
    incomplete answer, whether it stops mid-text or just before the terminal event."""
    a, _ = call_ids(ctx.wire)
    turn = Turn(text="Let me check the weather for you.", tool_calls=(call("get_weather", {"city": "Paris"}, id=a),), chunk_size=6)

    def before_terminal(chunks: list[bytes]) -> list[bytes]:
        for i, chunk in enumerate(chunks):
            if ctx.wire.is_terminal(chunk):
                return chunks[:i]
        raise AssertionError(f"the {ctx.wire.name} simulator sent no terminal event")  # the suite's own setup

    if not ctx.streamed:
        check_body_ends_early(ctx, turn)
        return

    def mid_event(chunks: list[bytes]) -> list[bytes]:
        return chunks[:2] + [chunks[2][: len(chunks[2]) // 2]]

    cuts = (("just before its terminal event", before_terminal), ("after two events, mid-text", lambda chunks: chunks[:2]), ("half-way through its third event", mid_event))
    for what, cut in cuts:
        ex = answer(ctx, [turn], cut=cut)
        expect_failure(ctx, ex, (ConnectionClosedError,), f"a stream that ends cleanly {what}")
        if ex.error is None:  # an incomplete answer is raised, never ended with an error event (§7.6)
            ctx.fail(f"a stream that ends cleanly {what}", "a raised loopkit.errors.ConnectionClosedError", ex.outcome())
        expect_named_provider(ctx, ex, f"a stream that ends cleanly {what}")
        if any(isinstance(e, DoneEvent) for e in ex.events):
            ctx.fail(f"events of a stream that ends cleanly {what}", "no 'done' event", ex.outcome())


def _error_class(name: str) -> type:
    import loopkit.errors as errors

    return getattr(errors, name)


def expect_named_provider(ctx: Context, ex: Exchange, what: str) -> None:
    """A raised ProviderError names the provider that raised it (``ProviderError.provider``)."""
    if isinstance(ex.error, ProviderError) and not (isinstance(ex.error.provider, str) and ex.error.provider):
        ctx.fail(f"{what}: the error's provider (which protocol raised it)", "a non-empty name", ex.error.provider)


def _expect_details(ctx: Context, ex: Exchange, what: str, *, status: int | None, error_type: str, message: str, body: bool = True) -> None:
    """The raised error's status, error type, provider and decoded body (``body``: the answer had a
    JSON one), and the provider's message in what it says."""
    if isinstance(ex.error, ProviderError):
        expect_named_provider(ctx, ex, what)
        if body and not isinstance(ex.error.body, Mapping):
            ctx.fail(f"{what}: the error's body (the decoded error answer)", "a JSON object", ex.error.body)
        ctx.expect(f"{what}: the error's HTTP status", ex.error.status, status)
        if (ex.error.error_type or "").lower() != error_type.lower():
            ctx.fail(f"{what}: the error's error_type (the provider's own)", error_type, ex.error.error_type)
    elif ex.error is None and isinstance(ex.terminal, ErrorEvent) and (ex.terminal.error_type or "").lower() != error_type.lower():
        ctx.fail(f"{what}: the ErrorEvent's error_type (the provider's own)", error_type, ex.terminal.error_type)
    if message not in said(ex):
        ctx.fail(f"{what}: the provider's message, decoded", f"text containing {message!r}", said(ex))


def check_error_forms(ctx: Context) -> None:
    """Each real form of the protocol's error answer fails the call with its class, type and message."""
    for form in ctx.wire.error_forms():
        status = form.fault["status"]
        what = f"HTTP {status} with {form.what}"
        ex = answer(ctx, [Turn(faults=(HttpFault(**form.fault),)), "Never reached."], sim_options=form.sim_options)
        expect_failure(ctx, ex, (_error_class(form.error),), what)
        _expect_details(ctx, ex, what, status=status, error_type=form.error_type, message=form.message)
        ctx.expect(f"{what}: requests sent (not retried)", ex.attempts, 1)


def check_stream_exceptions(ctx: Context) -> None:
    """A typed in-stream exception raises the class of its modelled status, so it is retried
    before the first event exactly when that class is retryable, and never after."""
    text = "An answer that an exception in the stream interrupts."
    for member, name in ctx.wire.stream_exceptions:
        cls = _error_class(name)
        message = f'{member} for "sim-model" (conformance)'  # quotes: the raw JSON payload escapes them
        what = f"a {member} after the first events"
        ex = answer(ctx, [Turn(text=text, chunk_size=6, faults=(MidStreamError(after=2, message=message, error_type=member),)), "Never reached."])
        expect_failure(ctx, ex, (cls,), what)
        _expect_details(ctx, ex, what, status=None, error_type=member, message=message)
        if any(isinstance(e, DoneEvent) for e in ex.events):
            ctx.fail(f"{what}: events", "no 'done' event", ex.outcome())
        ctx.expect(f"{what}: requests sent (never retried once events were yielded)", ex.attempts, 1)
        first = answer(ctx, [Turn(text=text, faults=(MidStreamError(after=0, message=message, error_type=member),)), "Recovered."])
        what = f"a {member} before any event"
        if cls.retryable_default:
            m = finished(ctx, first, f"{what} ({name}: retried)")
            if m is not None:
                ctx.expect(f"{what}: text after the retry", m.text, "Recovered.")
            ctx.expect(f"{what}: requests sent ({name} is retried)", first.attempts, 2)
        else:
            expect_failure(ctx, first, (cls,), what)
            ctx.expect(f"{what}: requests sent ({name} is not retried)", first.attempts, 1)


def check_generic_stream_error(ctx: Context) -> None:
    """An untyped error event mid-stream fails the call with its code and message."""
    code, message = "InternalFailure", 'The stream of "sim-model" failed (conformance)'
    event = ctx.wire.generic_error_event(code, message)
    assert event is not None  # the case applies only where the protocol has one
    text = "An answer that an untyped error event interrupts."
    ex = answer(ctx, [Turn(text=text, chunk_size=6), "Never reached."], cut=lambda chunks: chunks[:3] + [event])
    what = "an untyped error event after the first events"
    expect_failure(ctx, ex, (ProviderError,), what)
    _expect_details(ctx, ex, what, status=None, error_type=code, message=message, body=False)
    if any(isinstance(e, DoneEvent) for e in ex.events):
        ctx.fail(f"{what}: events", "no 'done' event", ex.outcome())
    ctx.expect(f"{what}: requests sent (not retried)", ex.attempts, 1)


def check_body_ends_early(ctx: Context, turn: Turn) -> None:
    """A non-streamed answer whose JSON body ends cleanly before it is whole is not an answer:
    the adapter raises (a ProviderError, or loopkit's WireError for a body that is not JSON)."""

    def body_cut(keep: Callable[[bytes], bytes]) -> Cut:
        return lambda chunks: [keep(b"".join(chunks))]

    cuts = (("half-way through", body_cut(lambda body: body[: len(body) // 2])), ("one byte short (no closing brace)", body_cut(lambda body: body.rstrip()[:-1])))
    for what, cut in cuts:
        ex = answer(ctx, [turn], cut=cut)
        expect_failure(ctx, ex, (ProviderError, WireError), f"a JSON body that ends cleanly {what}")
        if any(isinstance(e, DoneEvent) for e in ex.events):
            ctx.fail(f"events of a JSON body that ends cleanly {what}", "no 'done' event", ex.outcome())
