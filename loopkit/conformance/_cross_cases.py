"""Cases every protocol shares: who an error names and what it keeps, and a failed answer in the history."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ProviderError
from ..messages import AssistantMessage, TextContent, ToolCall, user
from ..script import HttpFault, MidStreamError, Truncate, Turn, call
from ._case import Case, Context
from ._fixtures import PROMPT, accepted, answer, call_ids, finished, request
from ._harness import Exchange


def _holds(value: Any, text: str) -> bool:
    """Whether a decoded JSON value holds ``text`` in one of its strings, at any depth."""
    if isinstance(value, str):
        return text in value
    if isinstance(value, Mapping):
        return any(_holds(v, text) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds(v, text) for v in value)
    return False


def _expect_identity(ctx: Context, ex: Exchange, what: str, name: str, *, message: str | None = None) -> None:
    """A raised ProviderError names ``name``; with ``message``, the answer was JSON holding it and
    the error's ``body`` is that answer, decoded (an object holding the message)."""
    err = ex.error
    if not isinstance(err, ProviderError):
        return  # whether the call fails, and how, is the failure cases' to judge; an ErrorEvent has neither field
    if name:
        ctx.expect(f"{what}: the provider the error names (ProviderError.provider, as the adapter's messages name it)", err.provider, name)
    elif not err.provider:
        ctx.fail(f"{what}: the provider the error names (ProviderError.provider)", "a non-empty name", err.provider)
    if message is not None and not (isinstance(err.body, Mapping) and _holds(err.body, message)):
        ctx.fail(f"{what}: the error's body (ProviderError.body: the provider's error answer, decoded)", f"a JSON object holding {message!r}", err.body)


def check_error_identity(ctx: Context) -> None:
    """Every ProviderError an adapter raises says which provider raised it, with the name its
    messages carry (one name, so a caller can tell errors and answers of one provider apart), and
    keeps the provider's error answer, decoded, when the wire sent one as JSON."""
    hello = answer(ctx, ["Hello."])
    m = finished(ctx, hello, "a plain answer (to read the provider name the adapter's messages carry)")
    name = m.provider if m is not None else ""
    if m is not None and not name:
        ctx.note("the adapter's messages name no provider: only a non-empty ProviderError.provider is checked")
    message = "Invalid request (HTTP 400 from the conformance suite, error identity)"
    ex = answer(ctx, [Turn(faults=(HttpFault(status=400, message=message, error_type=ctx.wire.error_types[0]),)), "Never reached."])
    _expect_identity(ctx, ex, "HTTP 400 with the protocol's JSON error body", name, message=message)
    ex = answer(ctx, [Turn(faults=(HttpFault(status=400, body="Bad gateway request (conformance)"),)), "Never reached."])
    _expect_identity(ctx, ex, "HTTP 400 with a plain-text body", name)
    if not ctx.streamed:
        return
    text = "An answer that fails part-way through, to see who the error names."
    stream_message = "Upstream model failure (conformance, error identity)"
    ex = answer(ctx, [Turn(text=text, chunk_size=6, faults=(MidStreamError(after=2, message=stream_message, error_type=ctx.wire.error_types[1]),)), "Never reached."])
    _expect_identity(ctx, ex, "an error event in the middle of the stream", name, message=stream_message)
    event = ctx.wire.generic_error_event("InternalFailure", "The stream failed (conformance, error identity)")
    if event is not None:  # an untyped error event (Bedrock's): its code and message travel in headers, no body
        ex = answer(ctx, [Turn(text=text, chunk_size=6), "Never reached."], cut=lambda chunks: [*chunks[:3], event])
        _expect_identity(ctx, ex, "an untyped error event in the middle of the stream", name)
    ex = answer(ctx, [Turn(text=text, chunk_size=6, faults=(Truncate(after=2),))])
    _expect_identity(ctx, ex, "a stream whose connection dropped part-way", name)
    a, _ = call_ids(ctx.wire)
    turn = Turn(text=text, tool_calls=(call("get_weather", {"city": "Paris"}, id=a),), chunk_size=6)

    def before_terminal(chunks: list[bytes]) -> list[bytes]:
        ends = [i for i, chunk in enumerate(chunks) if ctx.wire.is_terminal(chunk)]
        return chunks[: ends[0] if ends else -1]

    def mid_event(chunks: list[bytes]) -> list[bytes]:
        return chunks[:2] + [chunks[2][: len(chunks[2]) // 2]]

    for what, cut in (("a stream that ends cleanly before its terminal event", before_terminal), ("a stream that ends half-way through an event", mid_event)):
        ex = answer(ctx, [turn], cut=cut)
        _expect_identity(ctx, ex, what, name)


def _failed_history(ctx: Context, stop: str) -> list[Any]:
    """A prompt, an answer that ended in ``stop`` part-way through a tool call (the run ended
    there, so the call never ran and has no result), and the user asking again."""
    a, b = call_ids(ctx.wire)
    call_id = a if stop == "error" else b
    failed = AssistantMessage(
        content=[TextContent(text="Let me check the weather."), ToolCall(id=call_id, name="get_weather", arguments={"city": "Paris"})],
        stop_reason=stop,  # type: ignore[arg-type]
        error_message="Overloaded" if stop == "error" else "Request was aborted",
    )
    return [user(PROMPT), failed, user("Please try again.")]


def check_failed_answer_history(ctx: Context) -> None:
    """The API refuses a tool call that no result answers in the next message (Anthropic, Chat,
    Responses and Bedrock answer 400), so an answer that failed with its call unrun must travel in
    a form the API accepts: left out, or with its call answered."""
    a, b = call_ids(ctx.wire)
    for stop, call_id in (("error", a), ("aborted", b)):
        what = f"a history holding an answer that ended in {stop!r} with a tool call that never ran"
        ex = answer(ctx, ["Trying again: it is 18 C in Paris."], request(messages=_failed_history(ctx, stop)))
        accepted(ctx, ex)
        m = finished(ctx, ex, what)
        if m is not None:
            ctx.expect(f"{what}: the answer's text", m.text, "Trying again: it is 18 C in Paris.")
        body = ex.body or {}
        echoed = [c.id for c in ctx.wire.echoed_calls(body)]
        answered = {r.id for r in ctx.wire.results(body)}
        if call_id in echoed and call_id not in answered and None not in answered:
            ctx.fail(f"{what}: its call on the wire", "left out, or answered by a result", f"echoed as {call_id!r} with no result")


def check_empty_answer_history(ctx: Context) -> None:
    """A model can answer with nothing at all (Anthropic's empty ``end_turn``, an empty text), and
    the caller goes on; the APIs refuse an assistant turn without content (Anthropic: "all messages
    must have non-empty content", Bedrock and Gemini: empty content or parts), so the empty answer
    must travel in a form the API accepts."""
    for what, content in (("no content at all", []), ("one empty text", [TextContent(text="")])):
        messages = [user(PROMPT), AssistantMessage(content=content, stop_reason="stop"), user("Are you there?")]
        ex = answer(ctx, ["Yes: it is 18 C in Paris."], request(messages=messages))
        accepted(ctx, ex)
        m = finished(ctx, ex, f"a history holding an answer with {what}")
        if m is not None:
            ctx.expect(f"a history holding an answer with {what}: the answer's text", m.text, "Yes: it is 18 C in Paris.")


CROSS_CASES: tuple[Case, ...] = (
    Case(
        "failure.error_identity",
        "Every ProviderError names the provider the adapter's messages name and keeps the provider's error answer, decoded, when it was JSON: after HTTP errors, error events mid-stream and a stream cut short.",
        "docs/loop-contract.md §7.5",
        check_error_identity,
    ),
    Case(
        "request.history.failed_answer",
        "An answer that ended in error or was aborted, with a tool call that never ran, is sent in a form the API accepts (never as an unanswered call).",
        "docs/loop-contract.md §1.5, §7.2; docs/wire.md §1.6, §2.6, §3.6, §5.7",
        check_failed_answer_history,
    ),
    Case(
        "request.history.empty_answer",
        "An answer with no content (nothing at all, or one empty text) is sent in a form the API accepts when the conversation goes on.",
        "docs/loop-contract.md §7.2; docs/wire.md §3.6, §4.6, §5.7",
        check_empty_answer_history,
    ),
)
