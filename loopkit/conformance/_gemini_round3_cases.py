"""Histories and stream endings a shallow adapter gets wrong: the result it makes up for a call
that never ran, user messages and answers with empty texts, call ids of any form, and a last chunk
whose blank line never came.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage, user
from ..script import Turn
from ._case import Case, Context
from ._cross_cases import _failed_history
from ._fixtures import PROMPT, accepted, answer, call_ids, finished, request
from ._form_cases import user_parts


def _said(text: str) -> str:
    """What a sent result says: its text, or the strings of the JSON object it travels as (Gemini's
    ``{"error": text}``)."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, Mapping):
        return "".join(v for v in value.values() if isinstance(v, str))
    return text


def check_failed_answer_result(ctx: Context) -> None:
    """An adapter may answer the calls of an answer that ended in error or was aborted instead of
    leaving them out (Gemini's must answer every call of a model turn it sends); the result it
    makes up answers the call by the id the call goes with, is an error where the protocol has an
    error flag (the call never ran: the model must not read it as the tool's output), and says so
    in words."""
    a, b = call_ids(ctx.wire)
    answered_any = False
    for stop, call_id in (("error", a), ("aborted", b)):
        what = f"a history holding an answer that ended in {stop!r} with a tool call that never ran"
        ex = answer(ctx, ["Trying again: it is 18 C in Paris."], request(messages=_failed_history(ctx, stop)))
        if ex.failure() is not None:
            if not ex.bodies:  # the adapter failed before any request went out: nothing for the API to judge
                ctx.fail(f"{what}: the request", "a request sent to the API", ex.failure())
            continue  # whether the API accepts the history is request.history.failed_answer's to judge
        body = ex.body or {}
        echoed = [c for c in ctx.wire.echoed_calls(body) if c.name == "get_weather"]
        if not echoed:
            continue  # left out: request.history.failed_answer's other accepted form
        answered_any = True
        sent_id = echoed[0].id  # call_id, or None where the protocol's call id is optional and not sent
        results = ctx.wire.results(body)
        mine = [r for r in results if r.id == sent_id]
        if not ctx.expect(f"{what}: the ids of the results sent (one answering the call echoed as {sent_id!r})", [r.id for r in results], [sent_id]):
            continue
        r = mine[0]
        if r.error is False:
            ctx.fail(f"{what}: the result made up for it ({ctx.wire.error_flag})", "an error result: the call never ran", r.text)
        if not _said(r.text).strip():
            ctx.fail(f"{what}: the text of the result made up for it", "words saying the call never ran (any)", r.text)
    if not answered_any:
        ctx.note("the adapter leaves a failed answer's calls out, so it makes up no result")


def check_empty_user_message(ctx: Context) -> None:
    """A user message can hold nothing to send (no blocks, an empty string, an empty text beside a
    real one: a UI's empty follow-up); the APIs refuse an empty content or an empty text part
    (Gemini: "required oneof field 'data'", Anthropic and Bedrock: empty or blank text), so the
    request must still be one the API accepts, and send the texts there are, none made up."""
    messages = [
        user(PROMPT),
        AssistantMessage(content=[TextContent(text="It is 18 C in Paris.")], stop_reason="stop"),
        UserMessage(content=[]),
        user(""),
        UserMessage(content=[TextContent(text=""), TextContent(text="And in Tokyo?")]),
    ]
    ex = answer(ctx, ["Tokyo is 22 C."], request(messages=messages))
    accepted(ctx, ex)
    m = finished(ctx, ex, "a history holding user messages with nothing to send")
    if m is not None:
        ctx.expect("the answer's text", m.text, "Tokyo is 22 C.")
    texts = [p[1] for p in user_parts(ctx.wire.name, ex.body) if p[0] == "text"]
    ctx.expect("the user texts sent that say something (empty ones may go or stay)", [t for t in texts if t], [PROMPT, "And in Tokyo?"])


def check_empty_text_before_call(ctx: Context) -> None:
    """An answer can hold an empty text block before its call (Anthropic streams one before a
    tool_use when the model says nothing first); the APIs refuse an empty text part, so the echo
    leaves it out, or sends it in a form the API accepts, and keeps the call after it."""
    a, _ = call_ids(ctx.wire)
    assistant = AssistantMessage(content=[TextContent(text=""), ToolCall(id=a, name="get_weather", arguments={"city": "Paris"})], stop_reason="toolUse")
    result = ToolResultMessage(tool_call_id=a, tool_name="get_weather", content=[TextContent(text="18 C")])
    ex = answer(ctx, ["It is 18 C in Paris."], request(messages=[user(PROMPT), assistant, result]))
    accepted(ctx, ex)
    body = ex.body or {}
    ctx.expect("the calls echoed (name, arguments)", [(c.name, c.arguments) for c in ctx.wire.echoed_calls(body)], [("get_weather", {"city": "Paris"})])
    ctx.expect("the results sent (text)", [_said(r.text) for r in ctx.wire.results(body)], ["18 C"])


def check_opaque_ids(ctx: Context) -> None:
    """Call ids are opaque strings: ids in the protocol's style whose tail is all digits (as
    compatible servers and resumed histories hold) go back exactly as they came, on each call and
    on its result; an adapter that tells its own made-up ids apart must not take these for them."""
    a, b = ctx.wire.call_id_prefix + "20251201093000", ctx.wire.call_id_prefix + "0000000042"
    assistant = AssistantMessage(
        content=[ToolCall(id=a, name="get_weather", arguments={"city": "Paris"}), ToolCall(id=b, name="get_time", arguments={"tz": "Asia/Tokyo"})],
        stop_reason="toolUse",
    )
    results = [ToolResultMessage(tool_call_id=i, tool_name=n, content=[TextContent(text=t)]) for i, n, t in ((a, "get_weather", "18 C"), (b, "get_time", "09:30"))]
    ex = answer(ctx, ["Paris 18 C, Tokyo 09:30."], request(messages=[user(PROMPT), assistant, *results]))
    accepted(ctx, ex)
    body = ex.body or {}
    ctx.expect("the ids of the calls echoed", [c.id for c in ctx.wire.echoed_calls(body)], [a, b])
    ctx.expect("the ids of their results", [r.id for r in ctx.wire.results(body)], [a, b])


def _gemini_only(what: str) -> Any:
    return lambda wire, provider: None if wire.name == "gemini" else f"{wire.name}: {what}"


def _last_chunk_unterminated(chunks: list[bytes]) -> list[bytes]:
    """The last chunk (finishReason, and the last text piece, where Gemini and the simulator put
    it) without its blank line: its ``data:`` line and line end, then the body ends."""
    return [*chunks[:-1], chunks[-1].rstrip(b"\r\n") + b"\r\n"]


def check_last_chunk_unterminated(ctx: Context) -> None:
    """Gemini's stream has no terminator: the chunk with finishReason ends the answer. When the
    body ends right after that chunk's ``data:`` line, before its blank line, the chunk is whole
    and the answer complete (google-genai reads each ``data:`` line as it arrives), so its text
    counts and the answer ends cleanly."""
    text = "It is 18 C in Paris, clear skies."
    ex = answer(ctx, [Turn(text=text, chunk_size=8)], cut=_last_chunk_unterminated)
    m = finished(ctx, ex, "a stream whose finishReason chunk (with the last text) lost its closing blank line")
    if m is not None:
        ctx.expect("text (the last piece came in the finishReason chunk)", m.text, text)
        ctx.expect("stop_reason", m.stop_reason, "stop")


GEMINI_ROUND3_CASES: tuple[Case, ...] = (
    Case("request.history.failed_answer_result", "A result an adapter makes up for a call that never ran (an answer that ended in error or was aborted) answers the call by its id, is an error where the protocol has an error flag, and says so in words.", "docs/loop-contract.md §1.5, §2.3, §7.2; docs/wire.md §4.6", check_failed_answer_result),
    Case("request.history.empty_user_message", "User messages with nothing to send (no blocks, an empty string, an empty text beside a real one) still make a request the API accepts, with the texts there are and none made up.", "docs/loop-contract.md §7.2; docs/wire.md §4.6, §5.7", check_empty_user_message),
    Case("request.history.empty_text_before_call", "An answer holding an empty text before its tool call is sent in a form the API accepts, with the call and its result.", "docs/loop-contract.md §7.2; docs/wire.md §3.6, §4.6, §5.7", check_empty_text_before_call),
    Case("request.history.opaque_ids", "Call ids whose tail is all digits go back exactly as they came, on each call and its result: ids are opaque, never taken for ones the adapter made up.", "docs/loop-contract.md §7.2, §7.4; docs/wire.md §4.6", check_opaque_ids),
    Case("stream.last_chunk_unterminated", "A Gemini stream that ends right after its finishReason chunk's data line, before the blank line, is a complete answer, that chunk's text included.", "docs/wire.md §4.4; google-genai reads each data: line as it arrives", check_last_chunk_unterminated, _gemini_only("its streams end with a terminal event the SSE framing must close (docs/wire.md §0)"), streamed_only=True),
)
