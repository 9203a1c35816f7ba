"""Stream parsing: the message a provider builds from each kind of answer its protocol can send."""

from __future__ import annotations

import json

from ..events import ErrorEvent
from ..messages import TextContent, ThinkingContent, ToolResultMessage, Usage, user
from ..provider import ModelRequest
from ..script import Turn, call
from ._case import Context
from ._fixtures import (
    PROMPT,
    SIGNATURE,
    UNICODE_ARGS,
    UNICODE_TEXT,
    answer,
    call_ids,
    finished,
    kinds,
    only_calls,
    request,
)
from ._harness import Exchange, is_provider_failure, turn_from


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


def check_same_tool_twice(ctx: Context) -> None:
    a, b = call_ids(ctx.wire)
    turn = Turn(tool_calls=(call("get_weather", {"city": "Paris"}, id=a), call("get_weather", {"city": "Tokyo", "units": "f"}, id=b)), chunk_size=3)
    m = finished(ctx, answer(ctx, [turn]))
    if m is None:
        return
    calls = only_calls(m)
    ctx.expect(
        "two calls of one tool (id, name, arguments), in order",
        [(c.id, c.name, c.arguments) for c in calls],
        [(a, "get_weather", {"city": "Paris"}), (b, "get_weather", {"city": "Tokyo", "units": "f"})],
    )
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


def check_ids_across_calls(ctx: Context) -> None:
    def next_request(done: list[Exchange]) -> ModelRequest | None:
        if not done:
            return request()
        if len(done) == 2 or done[-1].message is None:
            return None
        calls = only_calls(done[-1].message)
        results = [ToolResultMessage(tool_call_id=c.id, tool_name=c.name, content=[TextContent(text="18 C")]) for c in calls]
        return request(messages=[user(PROMPT), done[-1].message, *results])

    turn = Turn(tool_calls=(call("get_weather", {"city": "Paris"}),))  # no id: the wire's own (or none, on Gemini)
    rounds = ctx.harness.run_rounds([turn, turn], next_request)
    ids = []
    for n, ex in enumerate(rounds, 1):
        m = finished(ctx, ex, f"model call {n}")
        if m is not None:
            ids += [c.id for c in only_calls(m)]
    if len(rounds) == 2 and len(ids) == 2 and (not all(ids) or ids[0] == ids[1]):
        ctx.fail("tool call ids of two successive calls through one provider", "two distinct non-empty ids", ids)


def check_stop_reasons(ctx: Context) -> None:
    for case in ctx.wire.stop_cases():
        ex = answer(ctx, [turn_from(case.turn)], sim_options=case.sim_options)
        if "error" in case.expected and is_provider_failure(ex):
            t = ex.terminal
            if ex.error is None and isinstance(t, ErrorEvent):
                if not t.error_message:
                    ctx.fail(f"the ErrorEvent for wire stop reason {case.wire!r}", "an error_message saying why", t.error_message)
                if case.error_type is not None:
                    ctx.expect(f"the error_type of the ErrorEvent for wire stop reason {case.wire!r}", t.error_type, case.error_type)
                if t.usage is None or not t.usage.input:
                    ctx.fail(f"the usage of the ErrorEvent for wire stop reason {case.wire!r} (the tokens were spent)", "the answer's usage", t.usage)
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
    ctx.expect("usage (cache_read, cache_write) of an answer that used no cache", (m.usage.cache_read, m.usage.cache_write), (0, 0))


def check_async(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    turn = Turn(text="Checking.", tool_calls=(call("get_weather", {"city": "Paris"}, id=a),))
    sync = answer(ctx, [turn])
    asyn = answer(ctx, [turn], use_async=True)
    finished(ctx, sync, "stream()")
    finished(ctx, asyn, "astream()")
    ctx.expect("astream() events equal stream() events", asyn.events, sync.events)



def check_model_named(ctx: Context) -> None:
    m = finished(ctx, answer(ctx, ["Hi."]), "a request naming no model")
    if m is not None and not (isinstance(m.model, str) and m.model):
        ctx.fail("the message's model when the request names none (the adapter's)", "a non-empty name", m.model)
    model = ctx.wire.model_id
    for use_async in (False, True):
        via = "astream()" if use_async else "stream()"
        m = finished(ctx, answer(ctx, ["Hi."], request(model=model), use_async=use_async), f"{via} for model {model!r}")
        if m is None:
            continue
        ctx.expect(f"{via}: the message's model (the request's ModelRequest.model)", m.model, model)
        for field in ("api", "provider"):
            if not (isinstance(getattr(m, field), str) and getattr(m, field)):
                ctx.fail(f"{via}: the message's {field} (from the start event)", "a non-empty name", getattr(m, field))


def check_blocks_ended(ctx: Context) -> None:
    a, b = call_ids(ctx.wire)
    thinking = dict(thinking="The user wants both.", thinking_signature=SIGNATURE) if ctx.wire.reasoning else {}
    turn = Turn(**thinking, text="Checking both.", tool_calls=(call("get_weather", {"city": "Paris"}, id=a), call("get_time", {"tz": "Asia/Tokyo"}, id=b)))
    ex = answer(ctx, [turn])
    if finished(ctx, ex) is None:
        return
    starts: dict[int, str] = {}
    ends: dict[int, list[str]] = {}
    for e in ex.events:
        if e.type in ("text_start", "thinking_start", "toolcall_start"):
            starts[e.content_index] = e.type.removesuffix("_start")
        elif e.type in ("text_end", "thinking_end", "toolcall_end"):
            ends.setdefault(e.content_index, []).append(e.type.removesuffix("_end"))
    # (a call may also arrive whole, as one end event carrying it: a non-streamed body's)
    ctx.expect("the end events of each started block (content_index: kinds)", {i: ends.get(i, []) for i in starts}, {i: [kind] for i, kind in starts.items()})
    twice = {i: kinds for i, kinds in ends.items() if len(kinds) > 1}
    if twice:
        ctx.fail("blocks ended more than once (content_index: kinds)", {}, twice)


def check_ends_at_terminal(ctx: Context) -> None:
    """What follows the terminal event (Bedrock's metadata) may be missing: the answer is complete."""
    a, _ = call_ids(ctx.wire)
    turn = Turn(text="Let me check.", tool_calls=(call("get_weather", {"city": "Paris"}, id=a),))

    def through_terminal(chunks: list[bytes]) -> list[bytes]:
        for i, chunk in enumerate(chunks):
            if ctx.wire.is_terminal(chunk):
                return chunks[: i + 1]
        raise AssertionError(f"the {ctx.wire.name} simulator sent no terminal event")  # the suite's own setup

    m = finished(ctx, answer(ctx, [turn], cut=through_terminal), "a stream that ends with its terminal event")
    if m is None:
        return
    ctx.expect("content blocks", kinds(m), ["text", "toolCall"])
    ctx.expect("stop_reason", m.stop_reason, "toolUse")


def check_server_tool_blocks(ctx: Context) -> None:
    """A tool the server ran itself (its call and result blocks) is not a call for the loop to run."""
    a, _ = call_ids(ctx.wire)
    turn = Turn(text="Let me check.", tool_calls=(call("get_weather", {"city": "Paris"}, id=a),))

    def with_server_tool(chunks: list[bytes]) -> list[bytes]:
        if not ctx.streamed:
            return [json.dumps(ctx.wire.with_server_tool_body(json.loads(b"".join(chunks)))).encode()]
        for i, chunk in enumerate(chunks):
            if ctx.wire.is_terminal(chunk):
                return chunks[:i] + ctx.wire.server_tool_events(2) + chunks[i:]  # blocks 0 and 1: the text and the call
        raise AssertionError(f"the {ctx.wire.name} simulator sent no terminal event")  # the suite's own setup

    m = finished(ctx, answer(ctx, [turn], cut=with_server_tool), "an answer with a server-side tool")
    if m is None:
        return
    ctx.expect("content blocks (the server's tool dropped)", kinds(m), ["text", "toolCall"])
    ctx.expect("tool calls (id, name, arguments)", [(c.id, c.name, c.arguments) for c in only_calls(m)], [(a, "get_weather", {"city": "Paris"})])
    ctx.expect("stop_reason", m.stop_reason, "toolUse")
