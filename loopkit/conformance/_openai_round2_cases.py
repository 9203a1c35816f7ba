"""OpenAI forms beyond the API's own traffic that real servers send: the reasoning fields of
OpenAI-compatible Chat servers, and a Responses stream whose items are never closed.
"""

from __future__ import annotations

from typing import Any

from ..messages import TextContent, ThinkingContent, ToolResultMessage, user
from ..script import MidStreamError, Turn, call
from ._case import Case, Context
from ._fixtures import PROMPT, accepted, answer, finished, kinds, only_calls, request
from ._harness import Exchange
from ._wire import Wire

# --- Chat: reasoning from OpenAI-compatible servers -----------------------------------------

REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Where OpenAI-compatible Chat servers put the model's reasoning, streamed (``delta.<field>``) and
not (``message.<field>``): DeepSeek and older vLLM ``reasoning_content``, vLLM >= 0.9 and
OpenRouter ``reasoning`` (docs/wire.md §1.3, §1.4, §1.7 #9)."""


def _chat_only(wire: Wire, provider: Any) -> str | None:
    if wire.name == "openai_chat":
        return None
    return f"only Chat Completions carries reasoning in a field of its own that compatible servers add ({wire.name} has its own reasoning blocks, covered by stream.thinking)"


def _empty_markers(field: str) -> Any:
    """The answer with every ``"<field>": null`` written ``"<field>": ""`` (streamed or whole)."""
    from ._detail_cases import _payloads

    def blank(data: Any) -> Any:
        holders = [data] + [c.get(k) for c in (data.get("choices") or []) for k in ("delta", "message")] if isinstance(data, dict) else []
        for h in holders:
            if isinstance(h, dict) and field in h and h[field] is None:
                h[field] = ""
        return data

    return lambda chunks: _payloads(chunks, blank)


def check_reasoning_fields(ctx: Context) -> None:
    """Three model calls of a loop against a server that sends reasoning in ``field``: thinking,
    text and a call; thinking and a call; thinking and text. Then an answer cut off by the token
    limit while it was still reasoning."""
    for field in REASONING_FIELDS:
        turns = [
            Turn(thinking=f"Paris first ({field}).", text="Checking Paris.", tool_calls=(call("get_weather", {"city": "Paris"}), call("get_time", {"tz": "Europe/Paris"})), chunk_size=4),
            Turn(thinking=f"Now Tokyo ({field}).", tool_calls=(call("get_time", {"tz": "Asia/Tokyo"}),), chunk_size=4),
            Turn(thinking=f"Both known ({field}).", text="Paris 18 C; Tokyo 09:30.", chunk_size=4),
        ]
        results = {"get_weather": "18 C, clear", "get_time": "09:30"}

        def next_request(done: list[Exchange]) -> Any:
            if not done:
                return request()
            if len(done) == len(turns) or done[-1].message is None:
                return None
            messages: list[Any] = [user(PROMPT)]
            for ex in done:
                assert ex.message is not None
                messages.append(ex.message)
                messages += [ToolResultMessage(tool_call_id=c.id, tool_name=c.name, content=[TextContent(text=results[c.name])]) for c in only_calls(ex.message)]
            return request(messages=messages)

        rounds = ctx.harness.run_rounds(turns, next_request, sim_options={"reasoning_field": field})
        want = [["thinking", "text", "toolCall", "toolCall"], ["thinking", "toolCall"], ["thinking", "text"]]
        for n, (ex, turn, blocks) in enumerate(zip(rounds, turns, want), start=1):
            m = finished(ctx, ex, f"model call {n} (reasoning in {field!r})")
            if m is None:
                return
            ctx.expect(f"content blocks of model call {n} (reasoning in {field!r}, before the rest)", kinds(m), blocks)
            ctx.expect(f"thinking of model call {n} (reasoning in {field!r})", [b.thinking for b in m.content if isinstance(b, ThinkingContent)], [turn.thinking])
            ctx.expect(f"text of model call {n} (reasoning in {field!r}), without the reasoning", m.text, turn.text or "")
            ctx.expect(f"tool calls of model call {n}", [(c.name, c.arguments) for c in only_calls(m)], [(c.name, c.arguments) for c in turn.tool_calls])
        if len(rounds) < len(turns):
            ctx.fail(f"model calls made (reasoning in {field!r})", len(turns), len(rounds))
            continue
        for n, ex in enumerate(rounds[1:], start=2):
            accepted(ctx, ex)
            # the reasoning is never echoed as the assistant's content
            ctx.expect(f"the assistant text echoed in request {n} (reasoning in {field!r})", ctx.wire.assistant_text(ex.body or {}), "Checking Paris.")
        # servers that mark "no reasoning here" with an empty string instead of null
        plain = finished(ctx, answer(ctx, [Turn(text="A plain answer.", chunk_size=5)], sim_options={"reasoning_field": field}, cut=_empty_markers(field)), f"an answer whose chunks carry {field!r}: \"\"")
        if plain is not None:
            ctx.expect(f"content blocks of an answer whose chunks carry {field!r}: \"\" (no reasoning)", kinds(plain), ["text"])
        cut = Turn(thinking=f"A long train of thought ({field}) that the token limit", stop_reason="length", chunk_size=6)
        m = finished(ctx, answer(ctx, [cut], sim_options={"reasoning_field": field}), f"an answer cut off while reasoning (in {field!r})")
        if m is not None:
            ctx.expect(f"content of an answer cut off while reasoning (in {field!r})", [(b.type, getattr(b, "thinking", None)) for b in m.content], [("thinking", cut.thinking)])
            ctx.expect(f"stop_reason of an answer cut off while reasoning (in {field!r})", m.stop_reason, "length")
            # that answer holds nothing Chat can send back: the next request is still one the API accepts
            ex = answer(ctx, ["Going on."], request(messages=[user(PROMPT), m, user("Go on.")]))
            accepted(ctx, ex)
            ctx.expect(f"the assistant text echoed after an answer of reasoning alone (in {field!r})", ctx.wire.assistant_text(ex.body or {}), "")


# --- Responses: items a stream never closes ----------------------------------------------

_ITEM_DONE_EVENTS = (
    b"event: response.output_item.done",
    b"event: response.content_part.done",
    b"event: response.output_text.done",
    b"event: response.refusal.done",
    b"event: response.function_call_arguments.done",
    b"event: response.reasoning_summary_part.done",
    b"event: response.reasoning_summary_text.done",
)


def _without_item_done(chunks: list[bytes]) -> list[bytes]:
    """The stream of a proxy that translates another API into Responses events and never closes an
    item: every item-level ``.done`` event left out, ``response.completed`` still sent
    (router-for-me/CLIProxyAPI issue #4860; docs/wire.md §2.7 #5)."""
    return [c for c in chunks if not c.startswith(_ITEM_DONE_EVENTS)]


def _responses_streams(wire: Wire, provider: Any) -> str | None:
    if wire.name == "openai_responses":
        return None
    return f"only the Responses API streams items that a separate event closes ({wire.name}'s blocks end with the answer or with their own event, covered by stream.blocks_ended)"


def _shown(m: Any) -> list[tuple[Any, ...]]:
    """A message's blocks as the caller sees them (a reasoning signature aside: it can only hold
    what streamed, not the finished item a done event carries)."""
    out: list[tuple[Any, ...]] = []
    for b in m.content:
        if isinstance(b, ThinkingContent):
            out.append(("thinking", b.thinking, b.redacted, bool(b.thinking_signature)))
        elif isinstance(b, TextContent):
            out.append(("text", b.text))
        else:
            out.append(("toolCall", b.id, b.name, b.arguments, b.raw_arguments, b.thought_signature))
    return out


def check_items_left_open(ctx: Context) -> None:
    """Each answer twice: as the API streams it, then with no item ever closed. The second must
    give the same message, and the same stop reason."""
    answers = {
        "reasoning, text and a call": Turn(thinking="Paris, then the answer.", text="Checking Paris.", tool_calls=(call("get_weather", {"city": "Paris", "units": "c"}),), chunk_size=5),
        "encrypted reasoning and text": Turn(redacted_thinking="gAAAA-conformance-encrypted", text="Sunny."),
        "a call cut off by the token limit": Turn(tool_calls=(call("get_weather", '{"city": "Par'),), stop_reason="length", chunk_size=3),
        "encrypted reasoning and a call": Turn(redacted_thinking="gAAAA-conformance-call", tool_calls=(call("get_weather", {"city": "Oslo"}),)),
        "two reasoning items (one encrypted) and a call": Turn(redacted_thinking="gAAAA-conformance-first", thinking="Then the call.", tool_calls=(call("get_time", {"tz": "UTC"}),)),
        "encrypted reasoning cut off by the token limit": Turn(redacted_thinking="gAAAA-conformance-cut", stop_reason="length"),
    }
    for what, turn in answers.items():
        whole = finished(ctx, answer(ctx, [turn]), f"{what}, streamed whole")
        ex = answer(ctx, [turn], cut=_without_item_done)
        m = finished(ctx, ex, f"{what}, with no item closed before response.completed")
        if whole is None or m is None:
            continue
        ctx.expect(f"the message of {what} whose items were never closed (as the caller sees it)", _shown(m), _shown(whole))
        ctx.expect(f"stop_reason of {what} whose items were never closed", m.stop_reason, whole.stop_reason)


# --- Chat: call ids repeated on every fragment ---------------------------------------------


def _ids_on_every_fragment(chunks: list[bytes]) -> list[bytes]:
    """Every argument fragment of a call carries the call's ``id`` and ``type`` again, as LiteLLM's
    proxy (BerriAI/litellm issue #20480), DeepSeek and Qwen send them."""
    from ._detail_cases import _payloads

    ids: dict[Any, Any] = {}

    def repeat(data: Any) -> Any:
        for choice in data.get("choices") or () if isinstance(data, dict) else ():
            for frag in (choice.get("delta") or {}).get("tool_calls") or ():
                if frag.get("id"):
                    ids[frag.get("index")] = frag["id"]
                elif frag.get("index") in ids:
                    frag.update(id=ids[frag["index"]], type="function")
        return data

    return _payloads(chunks, repeat)


def check_ids_repeated(ctx: Context) -> None:
    a, b = ("call_" + "0cnfA1b2C3d4E5f6G7h8i9", "call_" + "1cnfJ0k1L2m3N4o5P6q7r8")
    turn = Turn(text="Checking both.", tool_calls=(call("get_weather", {"city": "Paris", "units": "c"}, id=a), call("get_time", {"tz": "Asia/Tokyo"}, id=b)), chunk_size=3)
    whole = finished(ctx, answer(ctx, [turn]), "two calls streamed as the API does")
    m = finished(ctx, answer(ctx, [turn], cut=_ids_on_every_fragment), "two calls whose every fragment repeats the call's id")
    if whole is not None and m is not None:
        ctx.expect("content blocks when every fragment repeats its call's id", kinds(m), kinds(whole))
        ctx.expect("tool calls (id, name, arguments) when every fragment repeats its call's id", [(c.id, c.name, c.arguments) for c in only_calls(m)], [(a, "get_weather", {"city": "Paris", "units": "c"}), (b, "get_time", {"tz": "Asia/Tokyo"})])


# --- Chat: usage of OpenAI-compatible servers ---------------------------------------------


def _null_details(data: Any) -> Any:
    """vLLM's usage object: ``prompt_tokens_details`` and ``completion_tokens_details`` null."""
    usage = data.get("usage") if isinstance(data, dict) else None
    if isinstance(usage, dict):
        data["usage"] = {**usage, "prompt_tokens_details": None, "completion_tokens_details": None}
    return data


def check_usage_without_details(ctx: Context) -> None:
    from ..messages import Usage
    from ._detail_cases import _payloads

    ex = answer(ctx, [Turn(text="Hi.", usage=Usage(input=11, output=7, total_tokens=18))], cut=lambda chunks: _payloads(chunks, _null_details))
    m = finished(ctx, ex, "an answer whose usage details are null")
    if m is not None:
        u = m.usage
        ctx.expect("usage (input, output, cache_read, cache_write, total) of an answer whose usage details are null", (u.input, u.output, u.cache_read, u.cache_write, u.total_tokens), (11, 7, 0, 0, 18))


# --- OpenAI: error objects of other shapes ------------------------------------------------

_SHAPED = "The upstream provider failed (conformance, shaped error)"


def _openai_only(wire: Wire, provider: Any) -> str | None:
    if wire.name in ("openai_chat", "openai_responses"):
        return None
    return f"the shapes are those of OpenAI's error objects and the servers that copy them ({wire.name} has its own, covered by failure.mid_stream)"


def _reshape(edit: Any, streamed: bool) -> Any:
    """A cut that applies ``edit(data) -> data`` to the answer's error payloads: a stream's error
    frame (a Chat ``{"error": ...}`` chunk, a Responses ``error`` or ``response.failed`` event), or
    the whole body of a non-streamed answer."""
    from ._detail_cases import _payloads

    def is_error(data: Any) -> bool:
        return isinstance(data, dict) and ("error" in data or data.get("type") in ("error", "response.failed"))

    return lambda chunks: _payloads(chunks, lambda data: edit(data) if is_error(data) or not streamed else data)


def _error_shapes(wire: Wire, streamed: bool) -> list[tuple[str, Turn, Any, str | None, str | None]]:
    """(what, turn, edit, message, error_type) for each real shape the protocol's errors come in."""
    mid = Turn(text="This answer fails part-way.", chunk_size=4, faults=(MidStreamError(after=2, message=_SHAPED, error_type="server_error"),))
    failed = Turn(text="Partial", error=_SHAPED)
    if wire.name == "openai_chat" and streamed:
        return [
            # OpenRouter: an error object with a numeric code and no type (its errors and debugging page)
            ("OpenRouter's error chunk (code 502, no type)", mid, lambda d: {"error": {"code": 502, "message": _SHAPED}}, _SHAPED, "502"),
            # OpenRouter mid-stream: the error next to a choice that finishes with "error"
            ("OpenRouter's mid-stream error (finish_reason error)", mid, lambda d: {"id": "gen-1", "object": "chat.completion.chunk", "created": 1, "model": "m", "error": {"code": "server_error", "message": _SHAPED}, "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]}, _SHAPED, "server_error"),
            # Hugging Face TGI: the message alone, its type beside it
            ("TGI's error chunk (a bare message and error_type)", mid, lambda d: {"error": _SHAPED, "error_type": "validation"}, _SHAPED, "validation"),
        ]
    if wire.name == "openai_chat":
        # OpenRouter answers an error met while the model produced the output with HTTP 200 and the error as the body
        return [("OpenRouter's HTTP 200 body holding an error (code 502)", Turn(text="Never shown."), lambda d: {"error": {"code": 502, "message": _SHAPED, "metadata": {"provider_name": "conformance"}}}, _SHAPED, "502")]
    null_error = ("response.failed whose error is null (Azure OpenAI)", failed, lambda d: {**d, "response": {**d["response"], "error": None}} if "response" in d else {**d, "error": None}, None, None)
    if not streamed:
        return [null_error]
    return [
        # the nested error event with a null code, as OpenAI sent it before any output
        ("an error event whose code is null", mid, lambda d: {"type": "error", "sequence_number": 2, "error": {"type": "service_unavailable_error", "code": None, "message": _SHAPED, "param": None}}, _SHAPED, "service_unavailable_error"),
        null_error,
    ]


def check_error_shapes(ctx: Context) -> None:
    from ..errors import ProviderError
    from ..events import DoneEvent
    from ._failure_cases import expect_error_details, expect_failure, said
    from ._harness import MAX_RETRIES

    for what, turn, edit, message, error_type in _error_shapes(ctx.wire, ctx.streamed):
        ex = answer(ctx, [turn] * (MAX_RETRIES + 1), cut=_reshape(edit, ctx.streamed))
        expect_failure(ctx, ex, (ProviderError,), what)
        if any(isinstance(e, DoneEvent) for e in ex.events):
            ctx.fail(f"events of {what}", "no 'done' event", ex.outcome())
        if message is not None and message not in said(ex):
            ctx.fail(f"the provider's error message ({what})", f"text containing {message!r}", said(ex))
        if error_type is not None:
            expect_error_details(ctx, ex, status=None, error_type=error_type)


# --- every protocol: an assistant message of several text blocks -------------------------


def check_history_text_blocks(ctx: Context) -> None:
    """An assistant message of two text blocks (an answer streamed as two, or written by another
    provider) is echoed with both texts, in order, nothing but white space between them."""
    import re

    from ..messages import AssistantMessage

    first, second = "Paris first.", "Then Tokyo."
    messages = [user(PROMPT), AssistantMessage(content=[TextContent(text=first), TextContent(text=second)]), user("And tomorrow?")]
    ex = answer(ctx, ["Tomorrow looks the same."], request(messages=messages))
    accepted(ctx, ex)
    echoed = ctx.wire.assistant_text(ex.body or {})
    if not re.fullmatch(re.escape(first) + r"\s*" + re.escape(second), echoed):
        ctx.fail("the assistant text echoed (both blocks, in order)", f"{first!r}, white space, {second!r}", echoed)


# --- every protocol: deltas are yielded as they arrive ------------------------------------

_LONG_TEXT = "The forecast, word by word: " + " ".join(f"w{n:02d}" for n in range(40)) + "."
_LONG_THINKING = "Reasoning, step by step: " + " ".join(f"s{n:02d}" for n in range(40)) + "."
_LONG_ARGUMENTS = '{"city": "' + "-".join(f"c{n:02d}" for n in range(40)) + '"}'  # sent exactly as written


def _first_half(chunks: list[bytes]) -> list[bytes]:
    """The stream ends cleanly half-way (its content is long, so inside the block that carries it)."""
    return chunks[: len(chunks) // 2]


def check_deltas_as_they_arrive(ctx: Context) -> None:
    """A stream cut off half-way through a long block: the delta events yielded before the call
    fails already hold the start of that block (text, reasoning, arguments), in order."""
    from ..errors import ProviderError
    from ..events import TextDeltaEvent, ThinkingDeltaEvent, ToolCallDeltaEvent
    from ._failure_cases import expect_failure

    blocks: list[tuple[str, Turn, type, str]] = [("text", Turn(text=_LONG_TEXT, chunk_size=4), TextDeltaEvent, _LONG_TEXT)]
    if ctx.wire.reasoning:
        from ._fixtures import SIGNATURE

        blocks.append(("reasoning", Turn(thinking=_LONG_THINKING, thinking_signature=SIGNATURE, text="Done.", chunk_size=4), ThinkingDeltaEvent, _LONG_THINKING))
    if ctx.wire.fragments_arguments:
        blocks.append(("tool-call arguments", Turn(tool_calls=(call("get_weather", _LONG_ARGUMENTS),), chunk_size=4), ToolCallDeltaEvent, _LONG_ARGUMENTS))
    for what, turn, kind, whole in blocks:
        ex = answer(ctx, [turn], cut=_first_half)
        expect_failure(ctx, ex, (ProviderError,), f"a stream that ends half-way through its {what}")
        deltas = [e.delta for e in ex.events if isinstance(e, kind)]
        got = "".join(d if isinstance(d, str) else repr(d) for d in deltas)
        if not got or not whole.startswith(got) or got == whole:
            ctx.fail(f"the {what} delta events yielded before the stream broke off half-way, joined", f"the start of {whole!r} (not empty, not all of it)", got)


OPENAI_ROUND2_CASES: tuple[Case, ...] = (
    Case(
        "stream.thinking.reasoning_fields",
        "Reasoning that OpenAI-compatible Chat servers send (reasoning_content or reasoning, streamed or whole) becomes a thinking block before the text and calls, and is never echoed back as the assistant's content.",
        "docs/wire.md §1.3, §1.4, §1.7 #9",
        check_reasoning_fields,
        _chat_only,
    ),
    Case(
        "stream.items_left_open",
        "A Responses stream that never closes its items (no output_item.done or other item-level done event before response.completed, as translating proxies send) keeps what streamed: the same thinking, text and calls as the whole stream.",
        "docs/wire.md §2.4, §2.7 #5",
        check_items_left_open,
        _responses_streams,
        streamed_only=True,
    ),
    Case(
        "stream.events.as_they_arrive",
        "Text, reasoning and argument deltas are yielded as their wire events arrive: a stream that breaks off half-way through a block has already yielded the start of it.",
        "docs/loop-contract.md §7.6",
        check_deltas_as_they_arrive,
        streamed_only=True,
    ),
    Case(
        "failure.error_shapes",
        "OpenAI error objects in the other real shapes (a code and no type, a numeric code, a bare message, a null code, a response.failed whose error is null) fail the call with the provider's message and type, never a 'done'.",
        "docs/wire.md §1.5, §2.5",
        check_error_shapes,
        _openai_only,
    ),
    Case(
        "stream.usage.null_details",
        "A Chat usage object whose prompt_tokens_details and completion_tokens_details are null (as vLLM sends it) counts every prompt token as input, none cached.",
        "docs/wire.md §1.3, §1.4 #6",
        check_usage_without_details,
        _chat_only,
    ),
    Case(
        "request.history.text_blocks",
        "An assistant message of two text blocks is echoed with both texts, in order.",
        "docs/wire.md §1.6, §2.6, §3.6, §4.6, §5.7",
        check_history_text_blocks,
    ),
    Case(
        "stream.tool_call_ids_repeated",
        "Chat tool calls whose every argument fragment repeats the call's id and type (LiteLLM's proxy, DeepSeek, Qwen) stay one call each, with that id and the whole arguments.",
        "docs/wire.md §1.4 #8, §1.7 #5",
        check_ids_repeated,
        _chat_only,
        streamed_only=True,
    ),
)
