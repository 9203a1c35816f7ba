"""The conformance cases: request mapping, stream parsing, stop reasons, failures and retries.

Every case builds a :class:`~loopkit.provider.ModelRequest` and a script, runs the provider against
its protocol's simulator, and checks what the simulator received (through the suite's own reading
of the wire in :mod:`._wire`) and what the provider produced.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from ..errors import (
    AuthenticationError,
    BadRequestError,
    PermissionDeniedError,
    ProviderError,
    ServerError,
)
from ..events import DoneEvent, ErrorEvent, TextDeltaEvent
from ..messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, ToolResultMessage, Usage, user
from ..provider import AbortSignal, ModelRequest, ToolSpec
from ..script import Delay, HttpFault, MidStreamError, ScriptedCall, Truncate, Turn, call
from ._case import Case, Context
from ._harness import MAX_RETRIES, Exchange, is_provider_failure
from ._wire import Wire

WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. Paris"},
            "units": {"type": "string", "enum": ["c", "f"]},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
)
CLOCK = ToolSpec(
    name="get_time",
    description="Local time in an IANA time zone.",
    parameters={"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]},
)
TOOLS = (WEATHER, CLOCK)
PROMPT = "What's the weather in Paris, and the time in Tokyo?"
SYSTEM = "You are a terse assistant. Answer in one line."
SIGNATURE = base64.b64encode(b"conformance-signature-0001").decode()
UNICODE_TEXT = 'Grüße aus Köln 🌧️ — 東京は晴れ; مرحبا; e\u0301; "quoted" \\ back\\slash\nnew line'
UNICODE_ARGS = {"city": "Zürich 🏔️ 東京", "units": "c"}


def call_ids(wire: Wire) -> tuple[str, str]:
    """Two tool-call ids in the protocol's own style."""
    return wire.call_id_prefix + "0cnfA1b2C3d4E5f6G7h8i9", wire.call_id_prefix + "1cnfJ0k1L2m3N4o5P6q7r8"


def request(*, messages: list[Any] | None = None, tools: tuple[ToolSpec, ...] = TOOLS, **kw: Any) -> ModelRequest:
    return ModelRequest(messages if messages is not None else [user(PROMPT)], tools=tools, **kw)


def history(wire: Wire) -> list[Any]:
    """A prompt, an assistant turn with text and two tool calls, and their results (the second an error)."""
    a, b = call_ids(wire)
    assistant = AssistantMessage(
        content=[
            TextContent(text="Let me check both."),
            ToolCall(id=a, name="get_weather", arguments={"city": "Paris", "units": "c"}),
            ToolCall(id=b, name="get_time", arguments={"tz": "Asia/Tokyo"}),
        ],
        stop_reason="toolUse",
    )
    return [
        user(PROMPT),
        assistant,
        ToolResultMessage(tool_call_id=a, tool_name="get_weather", content=[TextContent(text="18 C, clear")]),
        ToolResultMessage(tool_call_id=b, tool_name="get_time", content=[TextContent(text="Unknown time zone: Asia/Tokyo")], is_error=True),
    ]


# --- shared checks ------------------------------------------------------------------------------


def finished(ctx: Context, ex: Exchange, what: str = "the call") -> AssistantMessage | None:
    """The message of a call that must complete normally; records a mismatch otherwise."""
    if ex.failure() is not None or ex.contract is not None or ex.message is None:
        ctx.fail(what, "a complete stream ending in a 'done' event", ex.outcome())
        return None
    return ex.message


def accepted(ctx: Context, ex: Exchange) -> None:
    """A request case also needs the simulator (the real API's checks) to accept the request."""
    if ex.failure() is not None:
        ctx.fail("the simulator's answer to the request", "accepted (HTTP 200)", ex.failure())


def answer(ctx: Context, turns: list[Any], req: ModelRequest | None = None, **kw: Any) -> Exchange:
    return ctx.harness.run(req if req is not None else request(), turns, **kw)


def only_calls(m: AssistantMessage) -> list[ToolCall]:
    return [b for b in m.content if isinstance(b, ToolCall)]


def kinds(m: AssistantMessage) -> list[str]:
    return [b.type for b in m.content]


# --- request mapping ----------------------------------------------------------------------------


def check_tools_declared(ctx: Context) -> None:
    ex = answer(ctx, ["OK."])
    accepted(ctx, ex)
    declared = ctx.wire.tools(ex.body or {})
    if declared is None:
        ctx.fail("tool declarations", [t.name for t in TOOLS], "no tools in the request body")
        return
    ctx.expect("declared tool names, in order", [d.name for d in declared], [t.name for t in TOOLS])
    for spec, d in zip(TOOLS, declared):
        ctx.expect(f"description of {spec.name}", d.description, spec.description)
        ctx.expect(f"parameters schema of {spec.name}", d.parameters, dict(spec.parameters))


def tool_choice_case(form: Any) -> Callable[[Context], None]:
    def check(ctx: Context) -> None:
        ex = answer(ctx, ["OK."], request(tool_choice=form))
        accepted(ctx, ex)
        body = ex.body or {}
        ctx.expect_in(f"tool_choice {form!r} on the wire", ctx.wire.tool_choice(body), ctx.wire.expected_choice(form, [t.name for t in TOOLS]))
        if form != "none":
            ctx.expect("tools still declared", [d.name for d in ctx.wire.tools(body) or []], [t.name for t in TOOLS])

    return check


def check_parallel_disabled(ctx: Context) -> None:
    ex = answer(ctx, ["OK."], request(tool_choice="auto", parallel_tool_calls=False))
    accepted(ctx, ex)
    ctx.expect("parallel calls disabled on the wire", ctx.wire.parallel_disabled(ex.body or {}), True)


def check_parallel_default(ctx: Context) -> None:
    for flag in (None, True):
        ex = answer(ctx, ["OK."], request(parallel_tool_calls=flag))
        accepted(ctx, ex)
        ctx.expect(f"parallel calls disabled with parallel_tool_calls={flag}", ctx.wire.parallel_disabled(ex.body or {}), False)


def check_parallel_with_none(ctx: Context) -> None:
    ex = answer(ctx, ["OK."], request(tool_choice="none", parallel_tool_calls=False))
    accepted(ctx, ex)
    body = ex.body or {}
    ctx.expect("tool_choice", ctx.wire.tool_choice(body), {"type": "none"})
    ctx.expect("disable_parallel_tool_use alongside tool_choice none", ctx.wire.parallel_disabled(body), False)


def check_no_tools(ctx: Context) -> None:
    for choice in (None, "auto"):
        ex = answer(ctx, ["OK."], request(tools=(), tool_choice=choice, parallel_tool_calls=False))
        accepted(ctx, ex)
        present = [k for k in ctx.wire.tool_keys if k in (ex.body or {})]
        ctx.expect(f"tool-related keys with no tools (tool_choice={choice!r}, parallel_tool_calls=False)", present, [])


def check_history_calls(ctx: Context) -> None:
    ex = answer(ctx, ["Paris is clear; Tokyo's zone was not found."], request(messages=history(ctx.wire)))
    accepted(ctx, ex)
    a, b = call_ids(ctx.wire)
    echoed = ctx.wire.echoed_calls(ex.body or {})
    expected = [(a, "get_weather", {"city": "Paris", "units": "c"}), (b, "get_time", {"tz": "Asia/Tokyo"})]
    got = [(c.id, c.name, c.arguments) for c in echoed]
    if ctx.wire.name == "gemini":  # functionCall.id is optional on this wire; when sent it must be the same
        got = [(e if i is None else i, n, args) for (i, n, args), (e, _, _) in zip(got, expected)] + got[len(expected) :]
    ctx.expect("assistant tool calls echoed (id, name, arguments), in order", got, expected)


def check_history_results(ctx: Context) -> None:
    ex = answer(ctx, ["Paris is clear; Tokyo's zone was not found."], request(messages=history(ctx.wire)))
    accepted(ctx, ex)
    a, b = call_ids(ctx.wire)
    results = ctx.wire.results(ex.body or {})
    ctx.expect("number of tool results sent", len(results), 2)
    for r, (cid, name, text) in zip(results, [(a, "get_weather", "18 C, clear"), (b, "get_time", "Unknown time zone: Asia/Tokyo")]):
        if r.id is not None or ctx.wire.name != "gemini":
            ctx.expect(f"the result for {name} answers call id", r.id, cid)
        if r.name is not None:
            ctx.expect(f"the result for {name} names the tool", r.name, name)
        if text not in r.text:
            ctx.fail(f"the result for {name} carries its text", text, r.text)


def check_history_is_error(ctx: Context) -> None:
    ex = answer(ctx, ["Paris is clear; Tokyo's zone was not found."], request(messages=history(ctx.wire)))
    accepted(ctx, ex)
    results = ctx.wire.results(ex.body or {})
    flags = [r.error for r in results]
    ctx.expect(f"error flags ({ctx.wire.error_flag}) of [success, error] results", flags, [False, True])


def check_system(ctx: Context) -> None:
    ex = answer(ctx, ["OK."], request(system=SYSTEM))
    accepted(ctx, ex)
    ctx.expect("system prompt", ctx.wire.system(ex.body or {}), SYSTEM)


def check_reasoning_passback(ctx: Context) -> None:
    first = answer(
        ctx,
        [Turn(thinking="The user wants the weather.", thinking_signature=SIGNATURE, tool_calls=(ScriptedCall(name="get_weather", arguments={"city": "Paris"}, thought_signature=SIGNATURE),))],
    )
    m = finished(ctx, first, "the answer with reasoning")
    if m is None:
        return
    calls = only_calls(m)
    if not calls:
        ctx.fail("the answer with reasoning", "a tool call", first.outcome())
        return
    results = [ToolResultMessage(tool_call_id=c.id, tool_name=c.name, content=[TextContent(text="18 C")]) for c in calls]
    second = answer(ctx, ["Clear."], request(messages=[user(PROMPT), m, *results]))
    accepted(ctx, second)
    signatures = [sig for _, sig in ctx.wire.reasoning_passed_back(second.body or {})]
    if SIGNATURE not in signatures:
        ctx.fail("reasoning signature passed back in the next request", SIGNATURE, signatures or "no reasoning in the history")


# --- stream parsing -----------------------------------------------------------------------------


def check_text(ctx: Context) -> None:
    text = "Hello, world! It is 18 C and clear in Paris today."
    m = finished(ctx, answer(ctx, [Turn(text=text, chunk_size=5)]))
    if m is None:
        return
    ctx.expect("content blocks", kinds(m), ["text"])
    ctx.expect("text", m.text, text)
    ctx.expect("stop_reason", m.stop_reason, "stop")


def check_text_then_call(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    m = finished(ctx, answer(ctx, [Turn(text="Let me check.", tool_calls=(call("get_weather", {"city": "Paris"}, id=a),))]))
    if m is None:
        return
    ctx.expect("content blocks", kinds(m), ["text", "toolCall"])
    ctx.expect("text", m.text, "Let me check.")
    calls = only_calls(m)
    ctx.expect("tool calls (id, name, arguments)", [(c.id, c.name, c.arguments) for c in calls], [(a, "get_weather", {"city": "Paris"})])
    ctx.expect("stop_reason", m.stop_reason, "toolUse")


def check_thinking(ctx: Context) -> None:
    m = finished(ctx, answer(ctx, [Turn(thinking="The user greets me; answer briefly.", thinking_signature=SIGNATURE, text="Hi there.")]))
    if m is None:
        return
    ctx.expect("content blocks", kinds(m), ["thinking", "text"])
    thinking = [b for b in m.content if isinstance(b, ThinkingContent)]
    if thinking:
        ctx.expect("thinking text", thinking[0].thinking, "The user greets me; answer briefly.")
        if not thinking[0].thinking_signature:
            ctx.fail("thinking signature (kept to pass back)", "a non-empty signature", thinking[0].thinking_signature)
    ctx.expect("text", m.text, "Hi there.")


def check_one_call(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    m = finished(ctx, answer(ctx, [Turn(tool_calls=(call("get_weather", {"city": "Paris", "units": "c"}, id=a),))]))
    if m is None:
        return
    calls = only_calls(m)
    ctx.expect("tool calls (id, name, arguments, raw_arguments)", [(c.id, c.name, c.arguments, c.raw_arguments) for c in calls], [(a, "get_weather", {"city": "Paris", "units": "c"}, None)])
    ctx.expect("stop_reason", m.stop_reason, "toolUse")


def check_parallel_calls(ctx: Context) -> None:
    a, b = call_ids(ctx.wire)
    turn = Turn(tool_calls=(call("get_weather", {"city": "Paris"}, id=a), call("get_time", {"tz": "Asia/Tokyo"}, id=b)))
    m = finished(ctx, answer(ctx, [turn]))
    if m is None:
        return
    calls = only_calls(m)
    ctx.expect(
        "tool calls (id, name, arguments), in order",
        [(c.id, c.name, c.arguments) for c in calls],
        [(a, "get_weather", {"city": "Paris"}), (b, "get_time", {"tz": "Asia/Tokyo"})],
    )
    ids = [c.id for c in calls]
    if len(set(ids)) != len(ids):
        ctx.fail("tool call ids are distinct", "distinct ids", ids)
    ctx.expect("stop_reason", m.stop_reason, "toolUse")


def check_fragmented_arguments(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    args = {"city": 'Zürich "Altstadt" \\ 🏔️', "units": "c", "note": "line1\nline2"}
    m = finished(ctx, answer(ctx, [Turn(tool_calls=(call("get_weather", args, id=a),), chunk_size=1)]))
    if m is None:
        return
    ctx.expect("arguments joined from one-character fragments", [c.arguments for c in only_calls(m)], [args])


def check_utf8_split(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    ex = answer(ctx, [Turn(text=UNICODE_TEXT, tool_calls=(call("get_weather", UNICODE_ARGS, id=a),))], rechunk=3)
    m = finished(ctx, ex, "the call with its body split every 3 bytes")
    if m is None:
        return
    ctx.expect("text", m.text, UNICODE_TEXT)
    ctx.expect("arguments", [c.arguments for c in only_calls(m)], [UNICODE_ARGS])


def check_unicode(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    m = finished(ctx, answer(ctx, [Turn(text=UNICODE_TEXT, tool_calls=(call("get_weather", UNICODE_ARGS, id=a),))]))
    if m is None:
        return
    ctx.expect("text", m.text, UNICODE_TEXT)
    ctx.expect("arguments", [c.arguments for c in only_calls(m)], [UNICODE_ARGS])


def check_empty_arguments(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    m = finished(ctx, answer(ctx, [Turn(tool_calls=(call("get_time", "", id=a),))]))
    if m is None:
        return
    ctx.expect("a call sent with empty argument text (name, arguments, raw_arguments)", [(c.name, c.arguments, c.raw_arguments) for c in only_calls(m)], [("get_time", {}, None)])


def check_malformed_arguments(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    raw = '{"city": "Par'
    ex = answer(ctx, [Turn(tool_calls=(call("get_weather", raw, id=a),))])
    m = finished(ctx, ex)
    if m is None:
        return
    calls = only_calls(m)
    ctx.expect("a call with broken JSON (id, arguments, raw_arguments)", [(c.id, c.arguments, c.raw_arguments) for c in calls], [(a, None, raw)])


def check_non_object_arguments(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    m = finished(ctx, answer(ctx, [Turn(tool_calls=(call("get_weather", "[1, 2]", id=a),))]))
    if m is None:
        return
    calls = only_calls(m)
    ctx.expect("a call whose arguments are a JSON array (arguments, raw_arguments)", [(c.arguments, c.raw_arguments) for c in calls], [([1, 2], None)])


def check_length_mid_call(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    raw = '{"city": "Par'
    ex = answer(ctx, [Turn(tool_calls=(call("get_weather", raw, id=a),), stop_reason="length")])
    m = finished(ctx, ex, "an answer cut by the token limit inside a tool call")
    if m is None:
        return
    ctx.expect("stop_reason", m.stop_reason, "length")
    ctx.expect("the cut-off call (id, arguments, raw_arguments)", [(c.id, c.arguments, c.raw_arguments) for c in only_calls(m)], [(a, None, raw)])


def check_stop_reasons(ctx: Context) -> None:
    from ._harness import turn_from

    for case in ctx.wire.stop_cases():
        ex = answer(ctx, [turn_from(case.turn)], sim_options=case.sim_options, rewrite=case.rewrite)
        if "error" in case.expected and is_provider_failure(ex):
            continue
        if ex.contract is not None or ex.message is None:
            ctx.fail(f"wire stop reason {case.wire!r}", sorted(case.expected), ex.outcome())
            continue
        ctx.expect_in(f"stop_reason for wire stop reason {case.wire!r}", ex.message.stop_reason, sorted(case.expected))


def check_usage(ctx: Context) -> None:
    m = finished(ctx, answer(ctx, [Turn(text="Counted.", usage=Usage(input=11, output=7, total_tokens=18))]))
    if m is None:
        return
    ctx.expect("usage (input, output)", (m.usage.input, m.usage.output), (11, 7))


def check_async(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    turn = Turn(text="Checking.", tool_calls=(call("get_weather", {"city": "Paris"}, id=a),))
    sync = answer(ctx, [turn])
    asyn = answer(ctx, [turn], use_async=True)
    finished(ctx, sync, "stream()")
    finished(ctx, asyn, "astream()")
    ctx.expect("astream() events equal stream() events", asyn.events, sync.events)


# --- failures and retries -----------------------------------------------------------------------


def expect_failure(ctx: Context, ex: Exchange, classes: tuple[type, ...], what: str) -> None:
    if ex.error is not None:
        if not isinstance(ex.error, classes):
            ctx.fail(what, " or ".join(c.__name__ for c in classes), f"{type(ex.error).__name__}: {ex.error}")
        return
    t = ex.terminal
    if isinstance(t, ErrorEvent) and t.reason == "error":
        return
    ctx.fail(what, f"a raised {' or '.join(c.__name__ for c in classes)} or an ErrorEvent(reason='error')", ex.outcome())


def said(ex: Exchange) -> str:
    """The error text a failed call surfaced."""
    if ex.error is not None:
        return str(ex.error)
    return getattr(ex.terminal, "error_message", "") or ""


def http_error_case(status: int, classes: tuple[type, ...]) -> Callable[[Context], None]:
    message = f"Invalid request (HTTP {status} from the conformance suite)"

    def check(ctx: Context) -> None:
        ex = answer(ctx, [Turn(faults=(HttpFault(status=status, message=message),)), "Never reached."])
        expect_failure(ctx, ex, classes, f"HTTP {status}")
        if message not in said(ex):
            ctx.fail("the provider's error message", f"text containing {message!r}", said(ex))
        ctx.expect(f"requests sent (an HTTP {status} is not retried)", ex.attempts, 1)

    return check


def check_auth(ctx: Context) -> None:
    fault, classes = auth_fault(ctx.wire)
    ex = answer(ctx, [Turn(faults=(fault,)), "Never reached."])
    expect_failure(ctx, ex, classes, f"the protocol's bad-credentials answer (HTTP {fault.status})")
    ctx.expect("requests sent (bad credentials are not retried)", ex.attempts, 1)


def auth_fault(wire: Wire) -> tuple[HttpFault, tuple[type, ...]]:
    """What a protocol answers to a bad key (wire.md §6.3) and the errors that may report it."""
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
        ex = answer(ctx, [Turn(faults=(HttpFault(status=status, retry_after=retry_after),)), "Recovered."])
        m = finished(ctx, ex, f"the call after one HTTP {status}")
        if m is not None:
            ctx.expect("text after the retry", m.text, "Recovered.")
        ctx.expect(f"requests sent (HTTP {status}, then a retry)", ex.attempts, 2)
        if ex.waits is not None:
            if retry_after is not None:
                ctx.expect(f"retry waits (the provider asked for {retry_after} s)", ex.waits, [retry_after])
            elif len(ex.waits) != 1 or not ex.waits[0] > 0:
                ctx.fail("retry waits", "one positive wait", ex.waits)
        else:
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
    ex = answer(ctx, [Turn(text=text, chunk_size=4, faults=(MidStreamError(after=3, message=message),)), "Never reached."])
    expect_failure(ctx, ex, (ProviderError,), "an error event in the middle of the stream")
    if message not in said(ex):
        ctx.fail("the provider's error message", f"text containing {message!r}", said(ex))
    if any(isinstance(e, DoneEvent) for e in ex.events):
        ctx.fail("events", "no 'done' event", ex.outcome())
    ctx.expect("requests sent (a stream that failed part-way is not retried)", ex.attempts, 1)


def check_truncated(ctx: Context) -> None:
    text = "This answer is cut off when the connection drops part-way through."
    ex = answer(ctx, [Turn(text=text, chunk_size=4, faults=(Truncate(after=3),))])
    expect_failure(ctx, ex, (ProviderError,), "a stream whose connection dropped part-way")
    if any(isinstance(e, DoneEvent) for e in ex.events):
        ctx.fail("events", "no 'done' event", ex.outcome())


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

    ex = answer(ctx, [Turn(text=text, chunk_size=4)], request(abort_signal=AbortSignal()), on_event=abort_on_text)
    t = ex.terminal
    if not (isinstance(t, ErrorEvent) and t.reason == "aborted"):
        ctx.fail("after the abort signal is set mid-stream", "a terminal ErrorEvent(reason='aborted')", ex.outcome())
    if any(isinstance(e, DoneEvent) for e in ex.events):
        ctx.fail("events", "no 'done' event after the abort", ex.outcome())


# --- applicability ------------------------------------------------------------------------------


def _parallel_knob(wire: Wire, provider: Any) -> str | None:
    if not wire.parallel_knob:
        return f"{wire.name} has no knob to forbid parallel tool calls (wire.md §0.3)"
    if getattr(provider, "supports_parallel_tool_calls", True) is False:
        return f"the adapter declares supports_parallel_tool_calls = False ({type(provider).__name__})"
    return None


def _anthropic_only(wire: Wire, provider: Any) -> str | None:
    if wire.name != "anthropic":
        return f"on {wire.name} the parallel knob does not live in tool_choice, so tool_choice 'none' cannot conflict with it"
    return _parallel_knob(wire, provider)


def _reasoning(wire: Wire, provider: Any) -> str | None:
    return None if wire.reasoning else f"{wire.name} carries no reasoning or signature on the wire (wire.md §1)"


def _fragments(wire: Wire, provider: Any) -> str | None:
    return None if wire.fragments_arguments else f"{wire.name} sends each function call whole, never as argument fragments (wire.md §4.4)"


def _raw_arguments(wire: Wire, provider: Any) -> str | None:
    if wire.raw_arguments:
        return None
    return (
        f"{wire.name}'s functionCall.args is always a JSON object (a proto Struct) and calls arrive whole, so argument "
        "text that is broken, cut off or not an object cannot travel; the model's equivalent, finishReason "
        "MALFORMED_FUNCTION_CALL, is covered by stop.reasons (wire.md §4.3, §4.7)"
    )


def _error_flag(wire: Wire, provider: Any) -> str | None:
    if wire.error_flag == "none":
        return f"{wire.name} has no error flag on tool results; the error travels as the result's text (wire.md §0.3, loop.md §13 #57)"
    return None


def _overloaded(wire: Wire, provider: Any) -> str | None:
    return None if wire.overloaded_529 else f"only Anthropic answers HTTP 529 overloaded_error; {wire.name} has no such status (wire.md §6.3)"


CASES: tuple[Case, ...] = (
    Case("request.tools.declared", "Tool declarations reach the wire with their names, descriptions and parameter schemas unchanged.", "wire.md §0.3", check_tools_declared),
    Case("request.tool_choice.auto", "tool_choice 'auto' is sent in the protocol's form (or left to its default, auto).", "wire.md §0.3; loop.md §8.1", tool_choice_case("auto")),
    Case("request.tool_choice.required", "tool_choice 'required' makes a tool call mandatory in the protocol's form.", "wire.md §0.3; loop.md §13 #52", tool_choice_case("required")),
    Case("request.tool_choice.none", "tool_choice 'none' forbids tool calls in the protocol's form.", "wire.md §0.3, §5.2; loop.md §13 #54", tool_choice_case("none")),
    Case("request.tool_choice.forced", "A forced function is sent as the protocol's named-tool choice.", "wire.md §0.3; loop.md §13 #51, #52", tool_choice_case({"type": "function", "name": "get_time"})),
    Case("request.parallel.disabled", "parallel_tool_calls=False reaches the protocol's parallel knob.", "wire.md §0.3; loop.md §13 #50, #52", check_parallel_disabled, _parallel_knob),
    Case("request.parallel.default", "parallel_tool_calls None or True does not forbid parallel calls.", "loop.md §13 #50", check_parallel_default, _parallel_knob),
    Case("request.parallel.with_none", "parallel_tool_calls=False adds no disable_parallel_tool_use to tool_choice 'none'.", "wire.md §3.2; loop.md §13 #52", check_parallel_with_none, _anthropic_only),
    Case("request.no_tools", "A request without tools carries nothing tool-related, whatever tool_choice and parallel_tool_calls say.", "wire.md §1.2; loop.md §13 #53", check_no_tools),
    Case("request.history.tool_calls", "Assistant tool calls are echoed with the same ids, names and arguments, in order.", "wire.md §1.6, §2.6, §3.6, §4.6, §5.7", check_history_calls),
    Case("request.history.results", "Each tool result answers its call's id and carries its text.", "wire.md §0.3, §1.6, §2.6, §3.6, §4.6, §5.7", check_history_results),
    Case("request.history.is_error", "A tool result's is_error travels in the protocol's own convention, and only on errors.", "wire.md §0.3; loop.md §13 #56; DESIGN.md §3", check_history_is_error, _error_flag),
    Case("request.system", "The system prompt reaches the protocol's system slot.", "wire.md §1.2, §2.2, §3.1, §4.2, §5.2", check_system),
    Case("request.reasoning.passback", "Reasoning from an answer is passed back, with its signature, on the next request.", "wire.md §2.7, §3.6, §4.6, §5.8", check_reasoning_passback, _reasoning),
    Case("stream.text", "A plain text answer becomes one text block with stop reason 'stop'.", "wire.md §1.4, §2.4, §3.4, §4.4, §5.4", check_text),
    Case("stream.text_then_tool_call", "Text followed by a tool call keeps both blocks, in order.", "wire.md §1.7 #7, §3.7 #3, §5.8 #1", check_text_then_call),
    Case("stream.thinking", "Thinking is kept as a thinking block with its signature, before the text.", "wire.md §2.4, §3.4, §4.3, §5.4", check_thinking, _reasoning),
    Case("stream.tool_call", "One tool call keeps its id, name and arguments, with stop reason 'toolUse'.", "wire.md §0.3", check_one_call),
    Case("stream.parallel_calls", "Two tool calls in one answer are both kept, in order, with distinct ids.", "wire.md §1.4 #4, §4.4", check_parallel_calls),
    Case("stream.arguments.fragmented", "Arguments split into one-character fragments (inside escapes and emoji) join into the same value.", "wire.md §1.7 #3, §3.4, §5.4", check_fragmented_arguments, _fragments),
    Case("stream.arguments.empty", "A call with empty argument text has arguments {}.", "wire.md §1.7 #2, §3.4, §5.8 #2", check_empty_arguments),
    Case("stream.arguments.malformed", "Argument text that is not JSON is surfaced as raw_arguments, never swallowed into {}.", "wire.md §1.7 #1; loop.md §8.4", check_malformed_arguments, _raw_arguments),
    Case("stream.arguments.non_object", "Arguments that are JSON but not an object are kept as parsed, never replaced by {}.", "loop.md §8.4", check_non_object_arguments, _raw_arguments),
    Case("stream.length_mid_call", "A length stop inside a tool call keeps the call with its partial argument text as raw_arguments.", "wire.md §3.7 #1, §6.3 (truncation)", check_length_mid_call, _raw_arguments),
    Case("stream.unicode", "Non-ASCII text and arguments (accents, emoji, CJK, RTL, combining marks, escapes) arrive intact.", "wire.md §1.7 #3", check_unicode),
    Case("stream.utf8_split", "A body delivered 3 bytes at a time, splitting UTF-8 sequences, parses to the same message.", "wire.md §0 (SSE framing), §5.6", check_utf8_split),
    Case("stream.usage", "Token usage is reported on the message.", "wire.md §1.4 #6, §2.3, §3.4, §4.4, §5.4", check_usage),
    Case("stream.async", "astream() yields the same events as stream().", "DESIGN.md §4", check_async),
    Case("stop.reasons", "Every stop reason of the protocol maps to loopkit's (stop, toolUse, length, error).", "wire.md §0.2; loop.md §8.3", check_stop_reasons),
    Case("failure.http_400", "HTTP 400 fails the call with a BadRequestError carrying the provider's message, and is not retried.", "wire.md §6.3", http_error_case(400, (BadRequestError,))),
    Case("failure.auth", "Bad credentials fail the call with an authentication error and are not retried.", "wire.md §6.3", check_auth),
    Case("failure.http_429_retry_after", "HTTP 429 is retried after exactly the wait the provider asked for.", "wire.md §1.1, §3.1, §4.5, §5.1; DESIGN.md §4", retried_case(429, retry_after=1.5)),
    Case("failure.http_500", "HTTP 500 is retried and the retry's answer is used.", "wire.md §6.3; DESIGN.md §4", retried_case(500)),
    Case("failure.http_503", "HTTP 503 is retried and the retry's answer is used.", "wire.md §6.3; DESIGN.md §4", retried_case(503)),
    Case("failure.http_529", "HTTP 529 overloaded_error is retried and the retry's answer is used.", "wire.md §3.5", retried_case(529), _overloaded),
    Case("failure.retries_bounded", "Persistent 5xx answers are retried a bounded number of times, then fail.", "DESIGN.md §4", check_retries_bounded),
    Case("failure.mid_stream", "An error event mid-stream fails the call with the provider's message, without a 'done' or a retry.", "wire.md §6.3; loop.md §8.5", check_mid_stream),
    Case("failure.truncated", "A stream cut off part-way fails the call instead of ending as if complete.", "wire.md §5.6, §6.3", check_truncated),
    Case("failure.slow_stream", "Pauses between stream events do not change the message.", "wire.md §6.3", check_slow),
    Case("failure.abort", "Setting the abort signal mid-stream ends the call with ErrorEvent(reason='aborted').", "loop.md §8.5, §3.12", check_abort),
)
CASE_IDS: tuple[str, ...] = tuple(c.id for c in CASES)
