"""Less common but real wire forms and history shapes: another form a protocol streams calls in,
errors written without the stream's framing, results given in another order than their calls.

A protocol-specific form is written by the protocol's :class:`~._wire.Wire` (from the spec, not
from loopkit's adapters); where the protocol has no such form the case is not applicable.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import BadRequestError, ProviderError
from ..events import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    ToolCallDeltaEvent,
    ToolCallStartEvent,
)
from ..messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    user,
)
from ..script import HttpFault, MidStreamError, ScriptedCall, Turn, call
from ._case import Case, Context
from ._failure_cases import expect_error_details, expect_failure, said
from ._fixtures import (
    PROMPT,
    SIGNATURE,
    accepted,
    answer,
    call_ids,
    finished,
    kinds,
    only_calls,
    request,
)
from ._harness import describe_message, turn_from
from ._wire import Wire

# arguments with every kind of value a JSON path can reach: nested objects, arrays (of objects
# too), numbers, booleans, null, an empty string, a key that needs the bracket form, escapes
STREAMED_ARGS_A = {"city": 'Zürich "Altstadt" \\ 🏔️', "units": "c"}
STREAMED_ARGS_B = {
    "tz": "Asia/Tokyo",
    "at": {"hour": 9, "minute": 30.5},
    "days": ["monday", "tue"],
    "stops": [{"city": "Kyoto"}, {"city": "Osaka", "nights": 2}],
    "dst": False,
    "exact": True,
    "note": None,
    "label": "",
    "display name": "Tokyo, JP",
    "it's": "quoted",
}


def _streamed_calls(wire: Wire, provider: Any) -> str | None:
    return None if wire.streamed_calls else f"{wire.name} streams tool-call arguments in one form only (docs/wire.md §0.3)"


def _unframed_errors(wire: Wire, provider: Any) -> str | None:
    return None if wire.unframed_errors else f"on {wire.name} every error event arrives framed like the rest of the stream (docs/wire.md §6.3)"


def check_streamed_call_form(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    turn = Turn(
        text="Checking both.",
        tool_calls=(
            ScriptedCall(name="get_weather", arguments=STREAMED_ARGS_A, id=a, thought_signature=SIGNATURE),
            call("get_time", STREAMED_ARGS_B),
            call("get_time", {"tz": "UTC"}),  # short: one part
            call("get_time"),  # no arguments: whole, without args
        ),
        chunk_size=5,
    )
    ex = answer(ctx, [turn], cut=ctx.wire.stream_calls)
    m = finished(ctx, ex, f"an answer whose calls stream as {ctx.wire.streamed_calls}")
    if m is None:
        return
    ctx.expect("content blocks", kinds(m), ["text", "toolCall", "toolCall", "toolCall", "toolCall"])
    ctx.expect("text", m.text, "Checking both.")
    calls = only_calls(m)
    expected = [("get_weather", STREAMED_ARGS_A), ("get_time", STREAMED_ARGS_B), ("get_time", {"tz": "UTC"}), ("get_time", {})]
    ctx.expect("tool calls (name, arguments), in order", [(c.name, c.arguments) for c in calls], expected)
    if len(calls) == 4:
        ctx.expect("the id the API sent on the first call", calls[0].id, a)
        ids = [c.id for c in calls]
        if not all(ids) or len(set(ids)) != len(ids):
            ctx.fail("the ids of the calls sent without one", f"non-empty ids, distinct and other than {a!r}", ids)
        ctx.expect("the thought signature on the first call's opening part", calls[0].thought_signature, SIGNATURE)
        ctx.expect("the signatures of the calls the API sent none for", [c.thought_signature for c in calls[1:]], [None, None, None])
    _expect_call_events(ctx, ex.events, calls)
    ctx.expect("stop_reason", m.stop_reason, "toolUse")

    def cut_inside(chunks: list[bytes]) -> list[bytes]:  # the body ends cleanly after the call's second argument part
        streamed = ctx.wire.stream_calls(chunks)
        opened = next(i for i, c in enumerate(streamed) if b'"willContinue"' in c)
        return streamed[: opened + 2]

    ex = answer(ctx, [turn], cut=cut_inside)
    expect_failure(ctx, ex, (ProviderError,), "a stream that ends inside a streamed tool call")
    if any(isinstance(e, DoneEvent) for e in ex.events) or (ex.message is not None and only_calls(ex.message)):
        ctx.fail("a stream that ends inside a streamed tool call", "no 'done' and no call", ex.outcome())

    alone = finished(ctx, answer(ctx, [Turn(tool_calls=(call("get_time", STREAMED_ARGS_B),))], cut=ctx.wire.stream_calls), "an answer of one streamed call")
    if alone is not None:
        ctx.expect("stop_reason of an answer of one streamed call and nothing else", alone.stop_reason, "toolUse")


def check_unframed_error(ctx: Context) -> None:
    message = 'Upstream failure {"shard": 3} with a quote \\" and a } brace (conformance)'
    error_type = ctx.wire.error_types[1]
    turn = Turn(text="This answer fails part-way.", chunk_size=4, faults=(MidStreamError(after=2, message=message, error_type=error_type),))
    for in_array in (False, True):
        form = f"{ctx.wire.unframed_errors}{', in an array' if in_array else ''}"
        ex = answer(ctx, [turn, "Never reached."], cut=lambda chunks, a=in_array: ctx.wire.unframe_errors(chunks, in_array=a))
        expect_failure(ctx, ex, (ProviderError,), f"an error event written as {form}")
        expect_error_details(ctx, ex, status=None, error_type=error_type)
        if message not in said(ex):
            ctx.fail(f"the provider's error message ({form})", f"text containing {message!r}", said(ex))
        if any(isinstance(e, DoneEvent) for e in ex.events):
            ctx.fail(f"events ({form})", "no 'done' event", ex.outcome())

    def cut_inside(chunks: list[bytes]) -> list[bytes]:  # the body ends cleanly half-way through the unframed error
        unframed = ctx.wire.unframe_errors(chunks)
        return [*unframed[:-1], unframed[-1][: len(unframed[-1]) // 2]]

    ex = answer(ctx, [turn, "Never reached."], cut=cut_inside)
    expect_failure(ctx, ex, (ProviderError,), f"a body that ends half-way through an error written as {ctx.wire.unframed_errors}")
    if any(isinstance(e, DoneEvent) for e in ex.events):
        ctx.fail("events (a body that ends inside an unframed error)", "no 'done' event", ex.outcome())


def _wrapped_error_body(wire: Wire, provider: Any) -> str | None:
    return None if wire.wrapped_error_body else f"{wire.name}'s HTTP errors come in one body shape (docs/wire.md §6.3)"


def check_wrapped_error_body(ctx: Context) -> None:
    message = "Invalid request in a wrapped error body (conformance)"
    error_type = ctx.wire.error_types[0]
    body = ctx.wire.wrap_error_body({"code": 400, "message": message, "status": error_type})
    ex = answer(ctx, [Turn(faults=(HttpFault(status=400, body=body),)), "Never reached."])
    expect_failure(ctx, ex, (BadRequestError,), f"HTTP 400 with {ctx.wire.wrapped_error_body}")
    expect_error_details(ctx, ex, status=400, error_type=error_type)
    if message not in said(ex):
        ctx.fail("the provider's error message", f"text containing {message!r}", said(ex))
    ctx.expect("requests sent (an HTTP 400 is not retried)", ex.attempts, 1)


def check_results_out_of_order(ctx: Context) -> None:
    """Two calls of one tool, sent without ids where the wire allows, answered in reverse order
    (tools that ran concurrently finish in any order): each result must reach its own call."""

    def next_request(done: list[Any]) -> Any:
        if not done:
            return request()
        if len(done) == 2 or done[0].message is None:
            return None
        calls = only_calls(done[0].message)
        texts = {"Paris": "18 C, clear", "Tokyo": "48 F, rain"}
        results = [ToolResultMessage(tool_call_id=c.id, tool_name=c.name, content=[TextContent(text=texts.get(str((c.arguments or {}).get("city")), "?"))]) for c in calls]
        return request(messages=[user("Weather in Paris and in Tokyo?"), done[0].message, *reversed(results)])

    first = Turn(tool_calls=(call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "Tokyo", "units": "f"})))
    rounds = ctx.harness.run_rounds([first, "Paris is clear; Tokyo is rainy."], next_request)
    m = finished(ctx, rounds[0], "model call 1")
    if m is None:
        return
    if len(rounds) < 2 or not rounds[1].bodies:
        ctx.fail("the next request", "sent with the two results", "not sent")
        return
    finished(ctx, rounds[1], "model call 2 (the API accepted the results)")
    _expect_results_match(ctx, rounds[1].bodies[0], only_calls(m), {"Paris": "18 C, clear", "Tokyo": "48 F, rain"})


def _expect_results_match(ctx: Context, body: Any, calls: list[ToolCall], texts: dict[str, str]) -> None:
    results = ctx.wire.results(body or {})
    echoed = ctx.wire.echoed_calls(body or {})
    ctx.expect("number of tool results sent", len(results), len(calls))
    by_id = {c.id: c for c in calls}
    for n, r in enumerate(results):
        if r.id is not None:  # matched by id
            c = by_id.get(r.id)
        else:  # a wire without ids (Gemini) pairs results with the echoed calls by order
            c = calls[n] if n < len(calls) and n < len(echoed) and echoed[n].id is None else None
        if c is None:
            ctx.fail(f"result {n + 1} answers a call", f"one of {sorted(by_id)}", r.id)
            continue
        want = texts[str((c.arguments or {}).get("city"))]
        if want not in r.text:
            ctx.fail(f"result {n + 1} (for the call with {c.arguments}) carries that call's text", want, r.text)


def check_history_rounds(ctx: Context) -> None:
    """A history of two tool rounds and a follow-up question: each round's calls and results
    stay in their own turns, in order, and the text between them is kept."""
    a, b = call_ids(ctx.wire)
    messages = [
        user(PROMPT),
        AssistantMessage(content=[TextContent(text="Paris first."), ToolCall(id=a, name="get_weather", arguments={"city": "Paris"})], stop_reason="toolUse"),
        ToolResultMessage(tool_call_id=a, tool_name="get_weather", content=[TextContent(text="18 C, clear")]),
        AssistantMessage(content=[ToolCall(id=b, name="get_time", arguments={"tz": "Asia/Tokyo"})], stop_reason="toolUse"),
        ToolResultMessage(tool_call_id=b, tool_name="get_time", content=[TextContent(text="09:30")]),
        AssistantMessage(content=[TextContent(text="Paris: 18 C. Tokyo: 09:30.")]),
        user("And tomorrow?"),
    ]
    ex = answer(ctx, ["Tomorrow looks the same."], request(messages=messages))
    accepted(ctx, ex)
    body = ex.body or {}
    echoed = [(c.id, c.name, c.arguments) for c in ctx.wire.echoed_calls(body)]
    expected = [(a, "get_weather", {"city": "Paris"}), (b, "get_time", {"tz": "Asia/Tokyo"})]
    if ctx.wire.name == "gemini":  # functionCall.id is optional on this wire; when sent it must be the same
        echoed = [(e if i is None else i, n, args) for (i, n, args), (e, _, _) in zip(echoed, expected)] + echoed[len(expected) :]
    ctx.expect("the calls of both rounds echoed (id, name, arguments), in order", echoed, expected)
    results = ctx.wire.results(body)
    got = [("18 C" in r.text, "09:30" in r.text) for r in results]
    ctx.expect("the results of both rounds, in order (the first carries '18 C, clear', the second '09:30')", got, [(True, False), (False, True)])
    for r, cid in zip(results, (a, b)):
        if r.id is not None or ctx.wire.name != "gemini":
            ctx.expect(f"the result {r.text!r} answers call id", r.id, cid)
    ctx.expect("the assistant's text of every round echoed", ctx.wire.assistant_text(body), "Paris first.Paris: 18 C. Tokyo: 09:30.")


def check_call_events(ctx: Context) -> None:
    """The events of each call agree with the call the message ends up with: its start event
    names its id and tool, and its delta events, joined, are its arguments as JSON text."""
    a, _ = call_ids(ctx.wire)
    turn = Turn(text="Checking.", tool_calls=(call("get_weather", {"city": "Zürich 🏔️", "units": "c"}, id=a), call("get_time", {"tz": "Asia/Tokyo"})), chunk_size=4)
    ex = answer(ctx, [turn])
    m = finished(ctx, ex)
    if m is None:
        return
    _expect_call_events(ctx, ex.events, only_calls(m))
    if not ctx.wire.reasoning:
        return
    turn = Turn(thinking="Two lookups.", thinking_signature=SIGNATURE, text="Checking.", tool_calls=(call("get_weather", {"city": "Paris"}, id=a),))
    ex = answer(ctx, [turn])
    m = finished(ctx, ex, "thinking, text and a call")
    if m is not None:
        ctx.expect("content blocks of thinking, text and a call", kinds(m), ["thinking", "text", "toolCall"])
        _expect_call_events(ctx, ex.events, only_calls(m))


def _expect_call_events(ctx: Context, events: list[Any], calls: list[ToolCall]) -> None:
    ctx.expect("start events in the stream", sum(isinstance(e, StartEvent) for e in events), 1)
    starts = [e for e in events if isinstance(e, ToolCallStartEvent)]
    if not starts:
        return  # no start events at all: each end event carries its whole call (a JSON body's calls)
    ctx.expect("tool-call start events (id, name), in order", [(e.id, e.name) for e in starts], [(c.id, c.name) for c in calls])
    for start, c in zip(starts, calls):
        deltas = [e.delta for e in events if isinstance(e, ToolCallDeltaEvent) and e.content_index == start.content_index]
        if not deltas:
            continue  # the end event carries the whole call
        text = "".join(d if isinstance(d, str) else repr(d) for d in deltas)
        try:
            parsed = json.loads(text) if text.strip() else {}
        except ValueError:
            parsed = f"<not JSON: {text[:200]!r}>"
        ctx.expect(f"the delta events of {c.name!r}, joined and parsed", parsed, c.arguments)



def _reports_model(wire: Wire, provider: Any) -> str | None:
    return None if wire.reports_model else f"a {wire.name} answer does not name the model that wrote it (docs/wire.md §5.4)"


def check_request_model(ctx: Context) -> None:
    names = ["conformance-model-2"] + ([ctx.wire.model_prefix + "conformance-model-2"] if ctx.wire.model_prefix else [])
    for name in names:
        m = finished(ctx, answer(ctx, [Turn(text="Hello.")], request(model=name)), f"a request for model {name!r}")
        if m is not None:
            ctx.expect(f"the model that answered a request for {name!r}", m.model, "conformance-model-2")


def check_retry_after_header(ctx: Context) -> None:
    """A ``retry-after`` header (a proxy's, or the API's own) sets the wait, whatever the body says."""
    ex = answer(ctx, [Turn(faults=(HttpFault(status=429, headers={"retry-after": "2"}),)), "Recovered."])
    m = finished(ctx, ex, "the call after one HTTP 429 with retry-after: 2")
    if m is not None:
        ctx.expect("text after the retry", m.text, "Recovered.")
    ctx.expect("requests sent (HTTP 429, then a retry)", ex.attempts, 2)
    if ex.waits is None:
        ctx.note("retry waits not observed: the factory takes no retry=")
    else:
        ctx.expect("retry waits (the header asked for 2 s)", ex.waits, [2.0])


USAGE = Usage(input=11, output=7, total_tokens=18)


def check_stop_details(ctx: Context) -> None:
    for case in ctx.wire.stop_cases():
        ex = answer(ctx, [turn_from({**case.turn, "usage": USAGE})], sim_options=case.sim_options)
        if ex.error is not None:  # an error stop may be raised (as a ProviderError), with the provider's words
            if "error" not in case.expected:
                continue  # stop.reasons says what went wrong
            expect_failure(ctx, ex, (ProviderError,), f"an answer ending with {case.wire!r}")
            if case.message and case.message not in str(ex.error):
                ctx.fail(f"the error raised for wire stop reason {case.wire!r}", f"text containing {case.message!r}", str(ex.error))
            continue
        if ex.contract is not None or ex.message is None:
            continue  # stop.reasons says what went wrong
        m = ex.message
        ctx.expect(f"usage (input, output) of an answer ending with {case.wire!r}", (m.usage.input, m.usage.output), (USAGE.input, USAGE.output))
        if m.stop_reason == "error":
            if not m.error_type:
                ctx.fail(f"error_type of the error stop {case.wire!r}", "the reason, named", m.error_type)
            if case.message and case.message not in (m.error_message or ""):
                ctx.fail(f"error_message of the error stop {case.wire!r}", f"text containing the provider's {case.message!r}", m.error_message)



def _blocked_prompts(wire: Wire, provider: Any) -> str | None:
    return None if wire.blocked_prompts else f"{wire.name} has no blocked-prompt answer apart from its stop reasons (docs/wire.md §0.2)"


def check_prompt_blocked(ctx: Context) -> None:
    reason = "PROHIBITED_CONTENT"
    ex = answer(ctx, [Turn(text="Never shown.", usage=USAGE)], cut=lambda chunks: ctx.wire.block_prompt(chunks, reason))
    if ex.error is not None:
        expect_failure(ctx, ex, (ProviderError,), f"a prompt blocked ({ctx.wire.blocked_prompts})")
        if reason not in str(ex.error):
            ctx.fail("the error of a blocked prompt", f"text naming {reason!r}", str(ex.error))
        return
    if ex.contract is not None or ex.message is None:
        ctx.fail(f"a prompt blocked ({ctx.wire.blocked_prompts})", "an error stop or a raised ProviderError", ex.outcome())
        return
    m = ex.message
    ctx.expect("stop_reason of a blocked prompt (never a clean stop)", m.stop_reason, "error")
    if reason.lower() not in (m.error_type or "").lower():
        ctx.fail("error_type of a blocked prompt", f"the block reason, {reason!r}", m.error_type)
    why = ex.terminal.error_message if isinstance(ex.terminal, ErrorEvent) else None
    if not why:
        ctx.fail("the error event's message for a blocked prompt", "a message saying why", why)
    ctx.expect("usage (input, output) of a blocked prompt", (m.usage.input, m.usage.output), (USAGE.input, 0))
    if only_calls(m) or m.text:
        ctx.fail("content of a blocked prompt", "none", describe_message(m))


def _retried_stream_errors(wire: Wire, provider: Any) -> str | None:
    return None if wire.retried_stream_errors else f"the suite does not check which in-stream errors {wire.name} retries (docs/wire.md §6.3)"


def check_stream_error_first(ctx: Context) -> None:
    for error_type, retried in ctx.wire.retried_stream_errors:
        message = f"{error_type} before any content (conformance)"
        ex = answer(ctx, [Turn(text="Never shown.", faults=(MidStreamError(after=0, message=message, error_type=error_type),)), "Recovered."])
        if retried:
            m = finished(ctx, ex, f"a call whose stream began with a transient {error_type} error event")
            if m is not None:
                ctx.expect(f"text after the retry of {error_type}", m.text, "Recovered.")
            ctx.expect(f"requests sent ({error_type} in the stream before any content, then a retry)", ex.attempts, 2)
        else:
            expect_failure(ctx, ex, (ProviderError,), f"a stream that began with a {error_type} error event")
            ctx.expect(f"requests sent ({error_type} is not transient: no retry)", ex.attempts, 1)
            if message not in said(ex):
                ctx.fail("the provider's error message", f"text containing {message!r}", said(ex))


WIRE_FORM_CASES: tuple[Case, ...] = (
    Case("stream.streamed_call_form", "Tool calls streamed in the protocol's other form (Vertex partialArgs: an opening part, argument parts by JSON path, a closing part) become the same calls; a body that ends inside one fails.", "docs/wire.md §4.4 (Vertex streamFunctionCallArguments); google-genai types FunctionCall.partialArgs, PartialArg", check_streamed_call_form, _streamed_calls, streamed_only=True),
    Case("failure.unframed_error", "An error event written without the stream's framing (bare JSON lines, as google-genai reads them) fails the call with the provider's message and type.", "docs/wire.md §4.4, §6.3; google-genai _api_client response-stream reader", check_unframed_error, _unframed_errors, streamed_only=True),
    Case("request.history.rounds", "A history of two tool rounds then a follow-up question keeps each round's calls, results and text, in order.", "docs/wire.md §0.3, §1.6, §2.6, §3.6, §4.6, §5.7", check_history_rounds),
    Case("stream.events.tool_calls", "One start event; each call's stream events agree with the call the message keeps: the start event's id and name, and the delta events joined into its arguments' JSON.", "docs/wire.md §0 (stream events); docs/loop-contract.md §7.6", check_call_events),
    Case("failure.retry_after_header", "An HTTP 429 whose retry-after header asks for 2 s is retried after exactly 2 s.", "docs/wire.md §0 (retries), §4.5, §6.3", check_retry_after_header),
    Case("request.model", "ModelRequest.model overrides the provider's model (named with or without the API's resource prefix), and the answer names it.", "docs/wire.md §1.2, §2.2, §3.2, §4.1; docs/loop-contract.md §7.1", check_request_model, _reports_model),
    Case("stop.details", "The answer of every stop reason reports its usage; an error stop names its reason in error_type and carries the provider's own words on it.", "docs/wire.md §0.2, §4.3; docs/loop-contract.md §7.3", check_stop_details),
    Case("stop.prompt_blocked", "A prompt the API blocks outright (no answer at all) is an error stop naming the block reason, with its usage; never a clean stop.", "docs/wire.md §4.3; google-genai types PromptFeedback.block_reason", check_prompt_blocked, _blocked_prompts, streamed_only=True),
    Case("failure.stream_error_first", "An error event that opens the stream, before any content, is retried when the protocol calls it transient, and not otherwise.", "docs/wire.md §0 (retries), §4.5, §6.3", check_stream_error_first, _retried_stream_errors, streamed_only=True),
    Case("failure.error_body_wrapped", "An HTTP error body in the protocol's other shape (Gemini's one-element array) still gives the provider's message and error type.", "docs/wire.md §4.5, §6.3", check_wrapped_error_body, _wrapped_error_body),
    Case("request.history.results_out_of_order", "Results given in another order than their calls (two calls of one tool, sent without ids where the wire allows) each reach their own call.", "docs/wire.md §0.3, §4.6; docs/loop-contract.md §7.4", check_results_out_of_order),
)
