"""OpenAI forms no earlier case sent: a refusal streamed in pieces, reasoning that resumes after
text, a prompt read whole from the cache, error objects without a type, bare and repeated
reasoning items, and Responses items that are never announced by output_item.added.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ProviderError
from ..messages import ThinkingContent, Usage
from ..script import MidStreamError, Turn, call
from ._case import Case, Context
from ._fixtures import answer, call_ids, finished, kinds
from ._wire import Wire

_OPENAI = ("openai_chat", "openai_responses")


def _openai(wire: Wire, provider: Any) -> str | None:
    return None if wire.name in _OPENAI else f"the form is one of OpenAI's APIs and the servers that copy them, not {wire.name}'s"


def _chat(wire: Wire, provider: Any) -> str | None:
    return None if wire.name == "openai_chat" else f"only Chat Completions carries reasoning in a field of its own ({wire.name} has reasoning blocks)"


def _responses(wire: Wire, provider: Any) -> str | None:
    return None if wire.name == "openai_responses" else f"only the Responses API has reasoning items and output_item events ({wire.name} has neither)"


def _frames(chunks: list[bytes]) -> list[bytes]:
    """The stream cut into its events, each with its closing blank line."""
    return [f + b"\n\n" for f in b"".join(chunks).split(b"\n\n") if f.strip()]


def _data(frame: bytes) -> Any:
    for line in frame.decode("utf-8").split("\n"):
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            return json.loads(line[5:])
    return None


# --- a refusal's error_message -------------------------------------------------------------

_REFUSAL = "I can't help with that request, sorry."


def check_refusal_message(ctx: Context) -> None:
    """OpenAI sends a refusal as text and nothing else: the error stop's message (what a run
    reports as its error) is that text, whole, however many pieces it streamed in."""
    ex = answer(ctx, [Turn(refusal=_REFUSAL, chunk_size=4)])
    if ex.error is not None or ex.message is None:
        ctx.fail("a refused answer", "an error stop", ex.outcome())
        return
    ctx.expect("stop_reason of a refusal", ex.message.stop_reason, "error")
    if _REFUSAL not in (ex.message.error_message or ""):
        ctx.fail(
            "the error_message of a refusal (the refusal, whole)",
            f"text containing {_REFUSAL!r}",
            ex.message.error_message,
        )


# --- Chat: reasoning that resumes after text ---------------------------------------------------


def _reasoning_after_text(chunks: list[bytes]) -> list[bytes]:
    """The first content piece moved before the reasoning: the model writes a little, reasons,
    then writes the rest (interleaved thinking, as compatible servers stream it)."""
    frames = _frames(chunks)

    def has(frame: bytes, key: str) -> bool:
        data = _data(frame)
        return isinstance(data, dict) and any((c.get("delta") or {}).get(key) for c in data.get("choices") or ())

    reasoning = [i for i, f in enumerate(frames) if has(f, "reasoning_content")]
    text = [i for i, f in enumerate(frames) if has(f, "content")]
    if not reasoning or not text:
        raise AssertionError("the Chat simulator sent no reasoning or no text")  # the suite's own setup
    first = frames.pop(text[0])
    frames.insert(reasoning[0], first)
    return frames


def check_reasoning_after_text(ctx: Context) -> None:
    turn = Turn(
        thinking="Paris first, then the details.",
        text="Checking Paris now.",
        chunk_size=4,
    )
    m = finished(
        ctx,
        answer(
            ctx,
            [turn],
            sim_options={"reasoning_field": "reasoning_content"},
            cut=_reasoning_after_text,
        ),
        "an answer whose reasoning resumes after some text",
    )
    if m is None:
        return
    ctx.expect(
        "the text of an answer whose reasoning resumes after some text (all of it, no reasoning in it)",
        m.text,
        turn.text,
    )
    ctx.expect(
        "the thinking of an answer whose reasoning resumes after some text, joined",
        "".join(b.thinking for b in m.content if isinstance(b, ThinkingContent)),
        turn.thinking,
    )


# --- usage: a prompt read whole from the cache ---------------------------------------------


def check_usage_all_cached(ctx: Context) -> None:
    ex = answer(
        ctx,
        [
            Turn(
                text="Hi.",
                usage=Usage(input=0, output=7, cache_read=40, total_tokens=47),
            )
        ],
    )
    m = finished(ctx, ex, "an answer whose prompt was read whole from the cache")
    if m is not None:
        u = m.usage
        ctx.expect(
            "usage (input, output, cache_read, cache_write, total) of an answer whose prompt was read whole from the cache",
            (u.input, u.output, u.cache_read, u.cache_write, u.total_tokens),
            (0, 7, 40, 0, 47),
        )


# --- error objects: the body, and no made-up type ---------------------------------------------

_SHAPED = "The upstream provider failed (conformance, round 3)"


def _shapes(wire: Wire, streamed: bool) -> list[tuple[str, Turn, Any]]:
    mid = Turn(
        text="This answer fails part-way.",
        chunk_size=4,
        faults=(MidStreamError(after=2, message=_SHAPED, error_type="server_error"),),
    )
    failed = Turn(text="Partial", error=_SHAPED)
    if wire.name == "openai_chat" and streamed:
        return [
            (
                "TGI's error chunk (a bare message and error_type)",
                mid,
                lambda d: {"error": _SHAPED, "error_type": "validation"},
            ),
            (
                "an error chunk whose object has a message alone (no type, no code)",
                mid,
                lambda d: {"error": {"message": _SHAPED}},
            ),
        ]
    if wire.name == "openai_chat":
        return [
            (
                "an HTTP 200 body holding an error with a message alone",
                Turn(text="Never shown."),
                lambda d: {"error": {"message": _SHAPED}},
            )
        ]

    def failed_with(error: Any) -> Any:
        return lambda d: {**d, "response": {**d["response"], "error": error}} if "response" in d else {**d, "error": error}

    return [
        (
            "response.failed whose error is null (Azure OpenAI)",
            failed,
            failed_with(None),
        ),
        (
            "response.failed whose error has a null code",
            failed,
            failed_with({"code": None, "message": _SHAPED}),
        ),
    ]


def check_error_details(ctx: Context) -> None:
    """ProviderError.body holds what the provider sent (its message is in it), and an error that
    names no type has no error_type made up from the missing value ('None', 'null')."""
    from ._failure_cases import expect_failure
    from ._harness import MAX_RETRIES
    from ._openai_round2_cases import _reshape

    for what, turn, edit in _shapes(ctx.wire, ctx.streamed):
        ex = answer(ctx, [turn] * (MAX_RETRIES + 1), cut=_reshape(edit, ctx.streamed))
        expect_failure(ctx, ex, (ProviderError,), what)
        if not isinstance(ex.error, ProviderError):
            continue
        if ex.error.error_type is not None and str(ex.error.error_type).lower() in ("none", "null", ""):
            ctx.fail(f"the error_type of {what} (it names none)", "None or a type of the adapter's own", ex.error.error_type)
        body = ex.error.body
        if "null" not in what and _SHAPED not in json.dumps(body, default=str):
            ctx.fail(
                f"ProviderError.body of {what} (the provider's error, decoded)",
                f"the error as sent, holding {_SHAPED!r}",
                body,
            )


# --- Responses: reasoning items -------------------------------------------------------------


def _bare_reasoning(data: Any) -> Any:
    """Reasoning items with no summary and no encrypted_content, as the API sends them when the
    request asks for neither (``reasoning.summary`` unset, no ``include``)."""

    def strip(item: Any) -> None:
        if isinstance(item, dict) and item.get("type") == "reasoning":
            item.pop("encrypted_content", None)
            item["summary"] = []

    if isinstance(data, dict):
        strip(data.get("item"))
        for holder in (data, data.get("response")):
            for item in (holder or {}).get("output") or () if isinstance(holder, dict) else ():
                strip(item)
    return data


def check_bare_reasoning_item(ctx: Context) -> None:
    from ._detail_cases import _payloads

    turn = Turn(redacted_thinking="gAAAA-conformance-bare", text="Sunny.")
    m = finished(
        ctx,
        answer(ctx, [turn], cut=lambda chunks: _payloads(chunks, _bare_reasoning)),
        "an answer with a bare reasoning item",
    )
    if m is None:
        return
    ctx.expect("the text of an answer with a bare reasoning item", m.text, "Sunny.")
    redacted = [b for b in m.content if isinstance(b, ThinkingContent) and b.redacted]
    if redacted:
        ctx.fail(
            "thinking blocks marked redacted (a reasoning item with no encrypted_content hides nothing)",
            [],
            [(b.thinking, b.redacted) for b in redacted],
        )


def check_two_reasoning_items(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    turn = Turn(
        redacted_thinking="gAAAA-conformance-first",
        thinking="Then the call.",
        text="Checking Paris.",
        tool_calls=(call("get_weather", {"city": "Paris"}, id=a),),
    )
    ex = answer(ctx, [turn])
    m = finished(ctx, ex, "an answer of two reasoning items, text and a call")
    if m is None:
        return
    ctx.expect(
        "content blocks of an answer of two reasoning items, text and a call",
        kinds(m),
        ["thinking", "thinking", "text", "toolCall"],
    )
    ctx.expect(
        "the thinking blocks (redacted, thinking)",
        [(b.redacted, "" if b.redacted else b.thinking) for b in m.content if isinstance(b, ThinkingContent)],
        [(True, ""), (False, "Then the call.")],
    )
    ctx.expect("text", m.text, "Checking Paris.")
    ctx.expect(
        "tool calls",
        [(c.id, c.name, c.arguments) for c in m.tool_calls],
        [(a, "get_weather", {"city": "Paris"})],
    )
    indexes = [
        e.content_index for e in ex.events if e.type in ("text_start", "thinking_start", "toolcall_start", "toolcall_end") and (e.type != "toolcall_end" or getattr(e, "tool_call", None) is not None)
    ]
    if len(set(indexes)) != len(indexes):
        ctx.fail("content_index of each block (one per block)", "distinct", indexes)


# --- Responses: thinking from another adapter whose signature is JSON --------------------------

_FOREIGN_SIGNATURES = {
    "a JSON object that is no reasoning item": json.dumps({"type": "thought", "provider": "another", "signature": "c2lnbmVk"}),
    "a JSON number": "1234567890",
}


def check_foreign_json_signature(ctx: Context) -> None:
    """Thinking written by another adapter whose signature happens to be JSON (an object of its
    own, a bare number) is no reasoning item of this API: the next request leaves it out (or
    sends it in a form the API accepts) and passes no such signature back."""
    from ..messages import AssistantMessage, TextContent, user
    from ._fixtures import PROMPT, accepted, request

    for what, signature in _FOREIGN_SIGNATURES.items():
        other = AssistantMessage(
            content=[
                ThinkingContent(thinking="Paris is in France.", thinking_signature=signature),
                TextContent(text="It is sunny in Paris."),
            ],
            stop_reason="stop",
        )
        ex = answer(
            ctx,
            ["Still sunny."],
            request(messages=[user(PROMPT), other, user("And tomorrow?")]),
        )
        accepted(ctx, ex)
        if ex.error is not None and not isinstance(ex.error, ProviderError):
            ctx.fail(
                f"building a request after thinking whose signature is {what}",
                "a request",
                ex.outcome(),
            )
        passed = [sig for _, sig in ctx.wire.reasoning_passed_back(ex.body or {})]
        if signature in [json.dumps(p, separators=(",", ":")) if not isinstance(p, str) else p for p in passed]:
            ctx.fail(
                f"reasoning passed back after thinking whose signature is {what}",
                "none of it",
                passed,
            )


# --- Responses: items never announced -------------------------------------------------------


def _without_added(chunks: list[bytes]) -> list[bytes]:
    """No ``response.output_item.added``: each item shows up with its own events and its
    ``output_item.done``, which carries the whole item."""
    return [f for f in _frames(chunks) if not f.startswith(b"event: response.output_item.added")]


def check_items_never_added(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    turn = Turn(
        thinking="Paris, then the answer.",
        text="Checking Paris.",
        tool_calls=(call("get_weather", {"city": "Paris", "units": "c"}, id=a),),
        chunk_size=5,
    )
    whole = finished(ctx, answer(ctx, [turn]), "reasoning, text and a call, streamed whole")
    m = finished(
        ctx,
        answer(ctx, [turn], cut=_without_added),
        "reasoning, text and a call, with no output_item.added",
    )
    if whole is None or m is None:
        return
    ctx.expect(
        "content blocks when no item was announced by output_item.added",
        kinds(m),
        kinds(whole),
    )
    ctx.expect(
        "tool calls (id, name, arguments) when no item was announced by output_item.added",
        [(c.id, c.name, c.arguments) for c in m.tool_calls],
        [(c.id, c.name, c.arguments) for c in whole.tool_calls],
    )
    ctx.expect("text when no item was announced by output_item.added", m.text, whole.text)
    ctx.expect(
        "thinking when no item was announced by output_item.added",
        [b.thinking for b in m.content if isinstance(b, ThinkingContent)],
        [b.thinking for b in whole.content if isinstance(b, ThinkingContent)],
    )
    ctx.expect(
        "stop_reason when no item was announced by output_item.added",
        m.stop_reason,
        whole.stop_reason,
    )


OPENAI_ROUND3_CASES: tuple[Case, ...] = (
    Case(
        "kind.refusal.message",
        "An OpenAI refusal (Chat's refusal field, a Responses refusal part), streamed in pieces or whole, ends with an error stop whose error_message is the whole refusal.",
        "docs/wire.md §0.2, §1.7 #8",
        check_refusal_message,
        _openai,
    ),
    Case(
        "stream.thinking.after_text",
        "Chat reasoning that resumes after some text (interleaved thinking) is kept as thinking, and the text before and after it as text, nothing lost.",
        "docs/wire.md §1.4, §1.7 #9",
        check_reasoning_after_text,
        _chat,
        streamed_only=True,
    ),
    Case(
        "stream.usage.all_cached",
        "A prompt read whole from the cache counts 0 input tokens and all of them as cache reads.",
        "docs/wire.md §1.4 #6, §2.3",
        check_usage_all_cached,
        _openai,
    ),
    Case(
        "failure.error_shapes.details",
        "An OpenAI error object (TGI's bare message, one with a message alone, a response.failed whose error is null or has a null code) keeps what was sent in ProviderError.body, and gets no error_type made up from a missing one.",
        "docs/wire.md §1.5, §2.5; loopkit.errors.ProviderError",
        check_error_details,
        _openai,
    ),
    Case(
        "stream.reasoning.bare_item",
        "A Responses reasoning item with neither summary nor encrypted_content (the API's default) is never marked redacted; the text after it is kept.",
        "docs/wire.md §2.3, §2.4, §2.6",
        check_bare_reasoning_item,
        _responses,
    ),
    Case(
        "stream.reasoning.two_items",
        "Two Responses reasoning items (one encrypted), then text and a call, give four blocks in order, each with its own content_index.",
        "docs/wire.md §2.3, §2.4",
        check_two_reasoning_items,
        _responses,
    ),
    Case(
        "request.reasoning.foreign_signature",
        "Thinking from another adapter whose signature is JSON but no reasoning item (an object of its own, a bare number) is not sent back as a Responses reasoning item, and the request is one the API accepts.",
        "docs/wire.md §2.6",
        check_foreign_json_signature,
        _responses,
    ),
    Case(
        "stream.items_never_added",
        "A Responses stream that announces no item with output_item.added (each item known from its own events and its output_item.done) gives the same message as the whole stream.",
        "docs/wire.md §2.4, §2.7 #6",
        check_items_never_added,
        _responses,
        streamed_only=True,
    ),
)
