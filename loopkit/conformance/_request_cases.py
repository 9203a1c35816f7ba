"""Request mapping: what the simulator received, read through the suite's own reading of the wire."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..messages import (
    TextContent,
    ToolResultMessage,
    user,
)
from ..script import ScriptedCall, Turn
from ._case import Context
from ._fixtures import (
    CLOCK,
    PROMPT,
    SIGNATURE,
    SYSTEM,
    TOOLS,
    TWICE_CALLS,
    WEATHER,
    accepted,
    answer,
    call_ids,
    finished,
    history,
    only_calls,
    request,
    twice_history,
)
from ._wire import MISSING


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


def check_tools_strict(ctx: Context) -> None:
    tools = (replace(WEATHER, strict=True), CLOCK, replace(WEATHER, name="get_forecast", description="Tomorrow's weather.", strict=False))
    ex = answer(ctx, ["OK."], request(tools=tools))
    accepted(ctx, ex)
    declared = ctx.wire.tools(ex.body or {}) or []
    ctx.expect("declared tool names, in order", [d.name for d in declared], [t.name for t in tools])
    not_strict = [False] if ctx.wire.strict_by_default else [MISSING, False]
    for spec, d in zip(tools, declared):
        allowed = [True] if spec.strict else not_strict
        ctx.expect_in(f"{ctx.wire.strict} of {spec.name} (ToolSpec.strict={spec.strict})", d.strict, allowed)


def check_max_tokens(ctx: Context) -> None:
    ex = answer(ctx, ["OK."], request(max_tokens=321))
    accepted(ctx, ex)
    ctx.expect("the answer-length cap for max_tokens=321", ctx.wire.max_tokens(ex.body or {}), 321)
    ex = answer(ctx, ["OK."], request())
    accepted(ctx, ex)
    sent = ctx.wire.max_tokens(ex.body or {})
    if not (sent is MISSING or (type(sent) is int and sent > 0)):
        ctx.fail("the answer-length cap for max_tokens=None", "absent, or the adapter's positive default", sent)


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
    for choice in (None, "auto", "required", {"type": "function", "name": "get_time"}):
        ex = answer(ctx, ["OK."], request(tool_choice=choice, parallel_tool_calls=False))
        accepted(ctx, ex)
        ctx.expect(f"parallel calls disabled on the wire (tool_choice={choice!r})", ctx.wire.parallel_disabled(ex.body or {}), True)
        if choice is not None:
            expected = ctx.wire.expected_choice(choice, [t.name for t in TOOLS])
            ctx.expect_in(f"tool_choice {choice!r} alongside parallel_tool_calls=False", ctx.wire.tool_choice(ex.body or {}), expected)


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
    ctx.expect("the assistant's text echoed before its calls", ctx.wire.assistant_text(ex.body or {}), "Let me check both.")


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


def check_history_same_tool_twice(ctx: Context) -> None:
    ex = answer(ctx, ["Paris is clear; Tokyo is rainy."], request(messages=twice_history(ctx.wire)))
    accepted(ctx, ex)
    ids = call_ids(ctx.wire)
    body = ex.body or {}
    echoed = [(c.id, c.name, c.arguments) for c in ctx.wire.echoed_calls(body)]
    expected = [(i, name, args) for i, (name, args, _) in zip(ids, TWICE_CALLS)]
    if ctx.wire.name == "gemini":  # functionCall.id is optional on this wire; when sent it must be the same
        echoed = [(e if i is None else i, n, args) for (i, n, args), (e, _, _) in zip(echoed, expected)] + echoed[len(expected) :]
    ctx.expect("two calls of one tool echoed (id, name, arguments), in order", echoed, expected)
    results = ctx.wire.results(body)
    ctx.expect("number of tool results sent", len(results), 2)
    for n, (r, cid, (_, args, text)) in enumerate(zip(results, ids, TWICE_CALLS)):
        if text not in r.text:
            ctx.fail(f"result {n + 1} carries the text of the call with {args}", text, r.text)
        if r.id is not None or ctx.wire.name != "gemini":  # without ids, Gemini pairs by order
            ctx.expect(f"result {n + 1} ({text!r}) answers call id", r.id, cid)


def check_history_argument_types(ctx: Context) -> None:
    messages = history(ctx.wire)
    ex = answer(ctx, ["Paris is clear; Tokyo's zone was not found."], request(messages=messages))
    accepted(ctx, ex)
    kind = ctx.wire.arguments_sent_as
    want = "a string of JSON" if kind is str else "a JSON object"
    for c in ctx.wire.echoed_calls(ex.body or {}):
        if not isinstance(c.sent, kind):
            ctx.fail(f"the arguments of echoed call {c.name!r} on {ctx.wire.name}", want, c.sent)


def check_history_is_error(ctx: Context) -> None:
    ex = answer(ctx, ["Paris is clear; Tokyo's zone was not found."], request(messages=history(ctx.wire)))
    accepted(ctx, ex)
    results = ctx.wire.results(ex.body or {})
    flags = [r.error for r in results]
    ctx.expect(f"error flags ({ctx.wire.error_flag}) of [success, error] results", flags, [False, True])


def check_none_after_tool_round(ctx: Context) -> None:
    ex = answer(ctx, ["Paris is clear."], request(messages=history(ctx.wire), tool_choice="none"))
    accepted(ctx, ex)
    echoed = ctx.wire.echoed_calls(ex.body or {})
    ctx.expect("tool calls still echoed in the history", len(echoed), 2)
    if ctx.wire.name != "bedrock":  # Converse has no `none`, and needs toolConfig once tools were used (§5.2)
        ctx.expect_in("tool_choice 'none' on the wire", ctx.wire.tool_choice(ex.body or {}), ctx.wire.expected_choice("none", []))


def check_empty_error_result(ctx: Context) -> None:
    _, b = call_ids(ctx.wire)
    messages = history(ctx.wire)
    messages[-1] = ToolResultMessage(tool_call_id=b, tool_name="get_time", content=[], is_error=True)
    ex = answer(ctx, ["Tokyo failed."], request(messages=messages))
    accepted(ctx, ex)
    results = ctx.wire.results(ex.body or {})
    ctx.expect("number of tool results sent", len(results), 2)


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
    if ctx.wire.name in ("anthropic", "bedrock"):  # the signature signs the text: both go back (§3.6, §5.8)
        texts = [text for text, sig in ctx.wire.reasoning_passed_back(second.body or {}) if sig == SIGNATURE]
        ctx.expect("the thinking text passed back with its signature", texts, ["The user wants the weather."])



PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAAAAAIAAQ4iGwoAAAAASUVORK5CYII="  # a 1x1 PNG


