"""Details of a round trip a shallow adapter gets wrong: signatures that must go back on the part
they came with, ids the adapter made up that a resumed history already holds, the API's own token
total, an in-stream error's own retry wait, and a body read in one piece.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from ..messages import TextContent, ThinkingContent, ToolResultMessage, Usage, user
from ..script import MidStreamError, ScriptedCall, Turn, call
from ._case import Case, Context
from ._fixtures import PROMPT, accepted, answer, call_ids, finished, only_calls, request
from ._wire import MISSING, Wire

THINKING_SIG = base64.b64encode(b"conformance-thinking-signature").decode()
TEXT_SIG = base64.b64encode(b"conformance-text-signature").decode()
CALL_SIG = base64.b64encode(b"conformance-call-signature").decode()


def _part_signatures(wire: Wire, provider: Any) -> str | None:
    return None if wire.part_signatures else f"{wire.name} puts no signature on text or call parts (docs/wire.md §1-§5)"


def _model_parts(body: Any) -> list[list[Mapping[str, Any]]]:
    """The parts of each model turn of a Gemini request, in order (both JSON spellings read)."""
    return [
        [p for p in c.get("parts") or [] if isinstance(p, Mapping)]
        for c in (body or {}).get("contents") or []
        if isinstance(c, Mapping) and c.get("role") == "model"
    ]


def _describe(p: Mapping[str, Any]) -> tuple[Any, ...]:
    """(kind, text or name, id, signature) of one echoed part."""
    sig = p.get("thoughtSignature", p.get("thought_signature", MISSING))
    fc = p.get("functionCall", p.get("function_call"))
    if isinstance(fc, Mapping):
        return ("call", fc.get("name", MISSING), fc.get("id", MISSING), sig)
    kind = "thought" if p.get("thought") is True else "text"
    return (kind, p.get("text", MISSING), MISSING, sig)


def check_part_signatures(ctx: Context) -> None:
    """Two answers, each signed where Gemini signs: thinking and text, then two calls (the first
    with the API's id and a signature). The next request echoes every signature on its own part,
    the thinking as a thought, the id on the call and on its response, and nothing made up."""
    a, _ = call_ids(ctx.wire)
    first = answer(ctx, [Turn(thinking="Two lookups.", thinking_signature=THINKING_SIG, text="Checking.", chunk_size=4)],
                   cut=lambda chunks: ctx.wire.sign_text(chunks, TEXT_SIG))  # fmt: skip
    m1 = finished(ctx, first, "an answer with signed thinking and signed text")
    turn = Turn(text="Both now.", tool_calls=(ScriptedCall(name="get_weather", arguments={"city": "Paris"}, id=a, thought_signature=CALL_SIG), call("get_time", {"tz": "Asia/Tokyo"})))
    m2 = finished(ctx, answer(ctx, [turn]), "an answer with a signed call")
    if m1 is None or m2 is None:
        return
    got = [(b.type, b.thinking_signature if isinstance(b, ThinkingContent) else b.text_signature) for b in m1.content if isinstance(b, (TextContent, ThinkingContent))]
    ctx.expect("blocks of the first answer (type, signature)", got, [("thinking", THINKING_SIG), ("text", TEXT_SIG)])
    got = [(b.type, b.text_signature if isinstance(b, TextContent) else b.thought_signature) for b in m2.content]
    ctx.expect("blocks of the second answer (type, signature: none where the API sent none)", got, [("text", None), ("toolCall", CALL_SIG), ("toolCall", None)])
    calls = only_calls(m2)
    if len(calls) != 2:
        return
    results = [ToolResultMessage(tool_call_id=c.id, tool_name=c.name, content=[TextContent(text=t)]) for c, t in zip(calls, ("18 C", "09:30"))]
    ex = answer(ctx, ["Paris 18 C, Tokyo 09:30."], request(messages=[user("Think first."), m1, user(PROMPT), m2, *results]))
    accepted(ctx, ex)
    turns = [[_describe(p) for p in parts] for parts in _model_parts(ex.body)]
    expected = [
        [("thought", "Two lookups.", MISSING, THINKING_SIG), ("text", "Checking.", MISSING, TEXT_SIG)],
        [("text", "Both now.", MISSING, MISSING), ("call", "get_weather", a, CALL_SIG), ("call", "get_time", MISSING, MISSING)],
    ]
    ctx.expect("the model turns echoed, part by part (kind, text or name, id, signature)", turns, expected)
    ctx.expect("the visible text echoed (thinking stays a thought)", ctx.wire.assistant_text(ex.body or {}), "Checking.Both now.")
    sent = ctx.wire.results(ex.body or {})
    ctx.expect("the ids of the results (the API's id on its call's result; none made up)", [r.id for r in sent], [a, None])


def check_ids_resumed(ctx: Context) -> None:
    """A new provider resumes a history whose calls came without ids: the ids it makes up for the
    next answer's calls are none of the history's."""
    first = answer(ctx, [Turn(tool_calls=(call("get_weather", {"city": "Paris"}), call("get_time", {"tz": "UTC"})))])
    m = finished(ctx, first, "model call 1")
    if m is None:
        return
    old = [c.id for c in only_calls(m)]
    results = [ToolResultMessage(tool_call_id=c.id, tool_name=c.name, content=[TextContent(text="ok")]) for c in only_calls(m)]
    second = answer(ctx, [Turn(tool_calls=(call("get_weather", {"city": "Tokyo"}),))], request(messages=[user(PROMPT), m, *results]))
    m2 = finished(ctx, second, "model call 2, by a new provider given call 1's history")
    if m2 is None:
        return
    new = [c.id for c in only_calls(m2)]
    if not new or not all(new) or set(new) & set(old):
        ctx.fail("the id of a call sent without one, given a history holding calls " + repr(old), "a non-empty id that no call in the history has", new)
    sent = [r.id for r in ctx.wire.results(second.body or {})]
    echoed = [c.id for c in ctx.wire.echoed_calls(second.body or {})]
    ctx.expect("the ids sent on the results of calls that came without one (as on their calls)", sent, echoed)


def _total_beyond(wire: Wire, provider: Any) -> str | None:
    return None if wire.total_beyond_counts else f"{wire.name}'s token total is the sum of the counts it reports (docs/wire.md §0)"


def check_usage_total(ctx: Context) -> None:
    ex = answer(ctx, [Turn(text="Searched.", usage=Usage(input=11, output=7, total_tokens=18))], cut=lambda chunks: ctx.wire.add_to_total(chunks, 25))
    m = finished(ctx, ex)
    if m is not None:
        ctx.expect(f"usage.total_tokens (the API's total, with 25 tokens of {ctx.wire.total_beyond_counts})", m.usage.total_tokens, 43)
        ctx.expect("usage (input, output)", (m.usage.input, m.usage.output), (11, 7))


def _stream_retry_info(wire: Wire, provider: Any) -> str | None:
    return None if wire.stream_error_retry_info else f"{wire.name}'s in-stream errors carry no retry wait (docs/wire.md §6.3)"


def check_stream_error_retry_delay(ctx: Context) -> None:
    message = "Quota exceeded before any content (conformance)"
    fault = MidStreamError(after=0, message=message, error_type="RESOURCE_EXHAUSTED")
    ex = answer(ctx, [Turn(text="Never shown.", faults=(fault,)), "Recovered."], cut=lambda chunks: ctx.wire.with_retry_info(chunks, 1.5))
    m = finished(ctx, ex, "a call whose stream began with a transient error event asking for a 1.5 s wait")
    if m is not None:
        ctx.expect("text after the retry", m.text, "Recovered.")
    ctx.expect("requests sent (the error event, then a retry)", ex.attempts, 2)
    if ex.waits is None:
        ctx.note("retry waits not observed: the factory takes no retry=")
    else:
        ctx.expect(f"retry waits (the error event's {ctx.wire.stream_error_retry_info} asked for 1.5 s)", ex.waits, [1.5])


def check_one_read(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    turn = Turn(text="Checking Paris.", tool_calls=(call("get_weather", {"city": "Paris"}, id=a), call("get_time", {"tz": "Asia/Tokyo"})), chunk_size=3)
    split = finished(ctx, answer(ctx, [turn]), "the answer, one event per read")
    whole = finished(ctx, answer(ctx, [turn], rechunk=1 << 30), "the answer, every event in one read")
    if split is None or whole is None:
        return
    ctx.expect("text", whole.text, "Checking Paris.")
    ctx.expect("tool calls (name, arguments)", [(c.name, c.arguments) for c in only_calls(whole)], [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Asia/Tokyo"})])
    ctx.expect("stop_reason", whole.stop_reason, split.stop_reason)


GEMINI_ROUND2_CASES: tuple[Case, ...] = (
    Case("request.history.part_signatures", "Every signature the answer carried goes back on the part it came with (thinking as a thought, text, the call with its id), the API's call id on its result, and no signature or id the API did not send.", "docs/wire.md §4.3, §4.6, §4.7 #7; Gemini thought signatures: return every part with its signature", check_part_signatures, _part_signatures),
    Case("stream.ids_resumed", "A new provider resuming a history whose calls came without ids gives the next calls ids none of the history's calls has, and sends no made-up id.", "docs/loop-contract.md §7.4; docs/wire.md §4.6, §4.7 #3", check_ids_resumed, lambda w, p: None if w.calls_without_ids else f"{w.name} sends every call with its id (docs/wire.md §0.3)"),
    Case("stream.usage_total", "usage.total_tokens is the API's own total, which also counts tokens beyond input and output.", "docs/wire.md §4.3; google-genai types GenerateContentResponseUsageMetadata.tool_use_prompt_token_count", check_usage_total, _total_beyond),
    Case("failure.stream_error_retry_delay", "A transient error event that opens the stream and asks for a wait is retried after exactly that wait.", "docs/wire.md §4.5, §6.3", check_stream_error_retry_delay, _stream_retry_info, streamed_only=True),
    Case("stream.one_read", "A body that arrives in one read (every event in one chunk) parses to the same message.", "docs/wire.md §0 (SSE framing), §5.6", check_one_read),
)
