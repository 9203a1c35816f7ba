"""Forms an answer or a request takes that the other cases do not send: an error from a proxy in
front of the API (none of its headers), a user message with blank text, a Bedrock content block
with only its stop (an empty text block), a reasoning signature in more than one delta."""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import PermissionDeniedError
from ..messages import TextContent, ThinkingContent, UserMessage, user
from ..script import HttpFault, Turn
from ._case import Case, Context
from ._fixtures import PROMPT, SIGNATURE, accepted, answer, finished, kinds, request
from ._kind_cases import REDACTED
from ._wire import Wire

# the simulator options that make a protocol's error answer look like a proxy's: none of the
# API's own error headers (Bedrock names the shape in x-amzn-errortype, docs/wire.md §5.5)
_PROXY_OPTIONS: dict[str, dict[str, Any]] = {"bedrock": {"errortype_header": False}}


def check_proxy_error(ctx: Context) -> None:
    """A proxy in front of the API answers 403 in plain text, with none of the API's headers:
    the call fails by the status, names no error type (nothing named one), and the error's body
    is not made up (None, or the text as sent)."""
    text = "Forbidden: blocked by the egress proxy (conformance)"
    what = "HTTP 403 in plain text from a proxy (none of the API's error headers)"
    ex = answer(ctx, [Turn(faults=(HttpFault(status=403, body=text),)), "Never reached."], sim_options=_PROXY_OPTIONS.get(ctx.wire.name))
    if not isinstance(ex.error, PermissionDeniedError):
        ctx.fail(what, "a PermissionDeniedError raised", ex.outcome())
        return
    ctx.expect(f"{what}: the error's HTTP status", ex.error.status, 403)
    ctx.expect(f"{what}: the error's error_type (no header or body named one)", ex.error.error_type, None)
    ctx.expect_in(f"{what}: the error's body (ProviderError.body: the answer decoded, or None)", ex.error.body, [None, text])
    ctx.expect(f"{what}: requests sent (a 403 is not retried)", ex.attempts, 1)


def check_blank_user_text(ctx: Context) -> None:
    """An empty user message and a blank text block beside real text (a template's empty slot)
    are sent in a form the API accepts (Anthropic and Bedrock reject blank text), and the real
    text still arrives."""
    messages = [user(""), UserMessage(content=[TextContent(text=" \n"), TextContent(text=PROMPT)])]
    ex = answer(ctx, ["Sunny in Paris."], request(messages=messages))
    accepted(ctx, ex)
    if PROMPT not in json.dumps(ex.body or {}, ensure_ascii=False):
        ctx.fail("the request body", f"the prompt {PROMPT!r} in it", ex.body)


def _bedrock_streamed(wire: Wire, provider: Any) -> str | None:
    if wire.name != "bedrock":
        return f"{wire.name} starts each block with its own start event; only ConverseStream opens text blocks on their first delta and has nothing but the stop for an empty one"
    return None


def _bedrock_reasoning_deltas(wire: Wire, provider: Any) -> str | None:
    if wire.name != "bedrock":
        return f"{wire.name}'s signature comes whole (one event, or a field of the part it signs); only ConverseStream's reasoningContent deltas carry it as a delta"
    return None


def _stop_chunk(ctx: Context, chunks: list[bytes]) -> int:
    for i, chunk in enumerate(chunks):
        if ctx.wire.is_terminal(chunk):
            return i
    raise AssertionError(f"the {ctx.wire.name} simulator sent no terminal event")  # the suite's own setup


def check_stop_without_delta(ctx: Context) -> None:
    """ConverseStream opens a text block on its first delta (there is no contentBlockStart for
    text), so an empty text block is a contentBlockStop alone: it ends nothing the answer holds,
    and the answer around it is whole."""
    from loopkit.simulators import _eventstream

    text = "Sunny in Paris."

    def empty_block_after_text(chunks: list[bytes]) -> list[bytes]:
        i = _stop_chunk(ctx, chunks)
        return [*chunks[:i], _eventstream.event("contentBlockStop", _eventstream.json_bytes({"contentBlockIndex": 1})), *chunks[i:]]

    m = finished(ctx, answer(ctx, [Turn(text=text)], cut=empty_block_after_text), "an answer with an empty text block (its contentBlockStop alone) after the text")
    if m is None:
        return
    ctx.expect("content blocks", kinds(m), ["text"])
    ctx.expect("text", m.text, text)
    ctx.expect("stop_reason", m.stop_reason, "stop")


def _split_delta(chunks: list[bytes], member: bytes, value: str, cut: int) -> list[bytes]:
    """``chunks`` with the reasoningContent delta carrying ``member`` sent as two deltas, ``value``
    cut at ``cut`` characters."""
    from loopkit.simulators import _eventstream

    for i, chunk in enumerate(chunks):
        if b'"' + member + b'"' in chunk:
            index = int(re.search(rb'"contentBlockIndex":\s*(\d+)', chunk).group(1))  # type: ignore[union-attr]
            parts = [
                _eventstream.event("contentBlockDelta", _eventstream.json_bytes({"contentBlockIndex": index, "delta": {"reasoningContent": {member.decode(): piece}}}))
                for piece in (value[:cut], value[cut:])
            ]
            return [*chunks[:i], *parts, *chunks[i + 1 :]]
    raise AssertionError(f"the simulator sent no {member.decode()} delta")  # the suite's own setup


def check_signature_fragments(ctx: Context) -> None:
    """A delta is a fragment: a reasoning signature (or a redacted block's data) sent in two
    reasoningContent deltas is joined, as the AWS SDKs' stream readers join every delta, and
    passed back whole."""
    thought = "The user wants the weather in Paris."
    m = finished(
        ctx,
        answer(ctx, [Turn(thinking=thought, thinking_signature=SIGNATURE, text="Sunny.")], cut=lambda chunks: _split_delta(chunks, b"signature", SIGNATURE, 7)),
        "an answer whose reasoning signature comes in two deltas",
    )
    if m is not None:
        ctx.expect("content blocks", kinds(m), ["thinking", "text"])
        signatures = [b.thinking_signature for b in m.content if isinstance(b, ThinkingContent)]
        ctx.expect("thinking signature (its two deltas joined)", signatures, [SIGNATURE])
    # base64 cut at a multiple of 4 characters: each part is a blob of its own, the join the same data
    m = finished(
        ctx,
        answer(ctx, [Turn(redacted_thinking=REDACTED, text="Sunny.")], cut=lambda chunks: _split_delta(chunks, b"redactedContent", REDACTED, 16)),
        "an answer whose redacted reasoning comes in two deltas",
    )
    if m is not None:
        blocks = [b for b in m.content if isinstance(b, ThinkingContent)]
        ctx.expect("redacted thinking (its two deltas joined)", [(b.redacted, b.thinking_signature) for b in blocks], [(True, REDACTED)])


BEDROCK_ROUND3_CASES: tuple[Case, ...] = (
    Case("failure.proxy_error_untyped", "An HTTP error from a proxy in front of the API (plain text, none of the API's error headers) fails by its status, claims no error type and keeps no invented body.", "docs/wire.md §5.5, §6.3", check_proxy_error),
    Case("request.user_text_blank", "An empty user message or a blank text block beside real text is sent in a form the API accepts, and the real text still arrives.", "docs/wire.md §3.6, §5.7", check_blank_user_text),
    Case("stream.block_stop_without_delta", "A contentBlockStop that no delta opened (an empty text block) ends nothing, and the answer around it is whole.", "docs/wire.md §5.4", check_stop_without_delta, _bedrock_streamed, streamed_only=True),
    Case("stream.signature_fragments", "A reasoning signature or redacted block sent in two deltas is joined, and kept whole.", "docs/wire.md §5.4", check_signature_fragments, _bedrock_reasoning_deltas, streamed_only=True),
)
