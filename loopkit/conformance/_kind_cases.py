"""Stop and content kinds: refusals, content filters, stop sequences, paused turns, redacted
thinking, reasoning tokens and usage spread over several events.

Each case scripts one kind with the protocol-neutral :class:`~loopkit.script.Turn` fields; the
simulator writes it as the real API does. A case does not apply where the API has no form for
its kind (the simulator's own reason is shown). What loopkit expects of an adapter:

- a refusal is an ``error`` stop with ``error_type`` ``"refusal"`` and the refusal's text in the
  message text or ``error_message``; a content filter is an ``error`` stop with an ``error_type``
  naming the filter. Neither may look like a clean ``stop``;
- a stop sequence and Anthropic's ``pause_turn`` are a ``stop`` with the text kept;
- redacted thinking is kept as a redacted :class:`~loopkit.messages.ThinkingContent` and sent back
  unchanged on the next request;
- reasoning tokens are part of the output count, and usage spread over several stream events adds
  up to the final counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolResultMessage,
    Usage,
    user,
)
from ..script import Turn, call
from ._case import Case, Context
from ._fixtures import PROMPT, call_ids, finished, request
from ._harness import Exchange
from ._wire import Wire

REFUSAL = "I can't help with that request."
REDACTED = "RW5jcnlwdGVkIHJlYXNvbmluZyBkYXRh"  # base64, as Bedrock's redactedContent blob needs
USAGE = Usage(input=11, output=50, total_tokens=61)


def _sendable(turn: Turn) -> Any:
    """Applicability: None when the protocol's simulator can send ``turn``, else its reason."""

    def applies(wire: Wire, provider: Any) -> str | None:
        import loopkit.simulators as simulators

        problem = simulators.simulator_class(wire.name).cannot_send(turn)
        return None if problem is None else f"the {wire.name} API cannot send {problem[0]!r}: {problem[1]}"

    return applies


def _ended(ctx: Context, ex: Exchange) -> AssistantMessage | None:
    """The message of a call that ran to its terminal event (a ``done`` or an ``error`` stop)."""
    if ex.error is not None or ex.contract is not None or ex.message is None:
        ctx.fail("the call", "a complete stream ending in a terminal event", ex.outcome())
        return None
    return ex.message


# --- the turns ----------------------------------------------------------------------------------

REFUSAL_TURN = Turn(refusal=REFUSAL, usage=USAGE)
FILTER_TURN = Turn(text="Here is how to", content_filter=True, usage=USAGE)
STOP_SEQUENCE_TURN = Turn(text="One, two, three", stop_sequence="FOUR", usage=USAGE)
PAUSE_TURN = Turn(text="Still searching the web", pause_turn=True, usage=USAGE)
SPLIT_TURN = Turn(text="The answer comes in many small pieces.", usage=USAGE, split_usage=True, chunk_size=4)
REASONING_TURN = Turn(text="Forty-two.", usage=USAGE, reasoning_tokens=30)


def check_refusal(ctx: Context) -> None:
    m = _ended(ctx, ctx.harness.run(request(), [REFUSAL_TURN]))
    if m is None:
        return
    ctx.expect("stop_reason of a refusal (never a clean stop)", m.stop_reason, "error")
    ctx.expect("error_type of a refusal", m.error_type, "refusal")
    ctx.expect("usage of a refused answer (input, output)", (m.usage.input, m.usage.output), (USAGE.input, USAGE.output))
    if REFUSAL not in (m.error_message or "") + m.text:
        ctx.fail("the refusal's text (in the text or error_message)", REFUSAL, {"text": m.text, "error_message": m.error_message})


def check_content_filter(ctx: Context) -> None:
    m = _ended(ctx, ctx.harness.run(request(), [FILTER_TURN]))
    if m is None:
        return
    ctx.expect("stop_reason of a filtered answer (never a clean stop)", m.stop_reason, "error")
    ctx.expect("usage of a filtered answer (input, output)", (m.usage.input, m.usage.output), (USAGE.input, USAGE.output))
    if not m.error_type:
        ctx.fail("error_type of a filtered answer", "the filter's name (content_filter, SAFETY, content_filtered, refusal ...)", m.error_type)


def check_stop_sequence(ctx: Context) -> None:
    m = finished(ctx, ctx.harness.run(request(), [STOP_SEQUENCE_TURN]))
    if m is None:
        return
    ctx.expect("stop_reason at a stop sequence", m.stop_reason, "stop")
    ctx.expect("text", m.text, "One, two, three")


def check_pause_turn(ctx: Context) -> None:
    m = finished(ctx, ctx.harness.run(request(), [PAUSE_TURN]))
    if m is None:
        return
    ctx.expect("stop_reason of a paused turn", m.stop_reason, "stop")
    ctx.expect("text of a paused turn", m.text, "Still searching the web")


def check_redacted_thinking(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)

    def next_request(done: list[Exchange]) -> Any:
        if not done:
            return request()
        if len(done) > 1 or done[0].message is None:
            return None
        calls = [b for b in done[0].message.content if b.type == "toolCall"]
        results = [ToolResultMessage(tool_call_id=c.id, tool_name=c.name, content=[TextContent(text="18 C")]) for c in calls]
        return request(messages=[user(PROMPT), done[0].message, *results])

    first = Turn(redacted_thinking=REDACTED, tool_calls=(call("get_weather", {"city": "Paris"}, id=a),))
    rounds = ctx.harness.run_rounds([first, Turn(text="18 C in Paris.")], next_request)
    m = finished(ctx, rounds[0], "model call 1")
    if m is None:
        return
    blocks = [b for b in m.content if isinstance(b, ThinkingContent)]
    ctx.expect("redacted thinking blocks (redacted, opaque data kept)", [(b.redacted, REDACTED in (b.thinking_signature or "")) for b in blocks], [(True, True)])
    if len(rounds) < 2 or not rounds[1].bodies:
        ctx.fail("the next request", "sent, with the redacted thinking in the history", "not sent")
        return
    ctx.expect("redacted thinking sent back unchanged", _echoed_redacted(ctx.wire.name, rounds[1].bodies[0]), [REDACTED])


def _echoed_redacted(protocol: str, body: Any) -> list[Any]:
    """The redacted-thinking data in a request body, as each API carries it back (a Responses
    reasoning item, an Anthropic ``redacted_thinking`` block, a Bedrock ``redactedContent``)."""
    if not isinstance(body, Mapping):
        return []
    if protocol == "openai_responses":
        return [i.get("encrypted_content") for i in body.get("input") or () if isinstance(i, Mapping) and i.get("type") == "reasoning" and not i.get("summary")]
    out = []
    for m in body.get("messages") or ():
        if not isinstance(m, Mapping) or m.get("role") != "assistant" or not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if not isinstance(b, Mapping):
                continue
            if protocol == "anthropic" and b.get("type") == "redacted_thinking":
                out.append(b.get("data"))
            elif protocol == "bedrock" and isinstance(b.get("reasoningContent"), Mapping) and "redactedContent" in b["reasoningContent"]:
                out.append(b["reasoningContent"]["redactedContent"])
    return out


def check_split_usage(ctx: Context) -> None:
    m = finished(ctx, ctx.harness.run(request(), [SPLIT_TURN]))
    if m is None:
        return
    ctx.expect("usage (input, output) added up over the stream", (m.usage.input, m.usage.output), (USAGE.input, USAGE.output))


def check_reasoning_tokens(ctx: Context) -> None:
    m = finished(ctx, ctx.harness.run(request(), [REASONING_TURN]))
    if m is None:
        return
    ctx.expect("usage.output (reasoning tokens included)", m.usage.output, USAGE.output)


KIND_CASES: tuple[Case, ...] = (
    Case("kind.refusal", "A refusal is an 'error' stop with error_type 'refusal' and its text kept, never a clean stop.", "SDK types: Chat message.refusal, Responses refusal part, Anthropic stop_reason refusal", check_refusal, _sendable(REFUSAL_TURN)),
    Case("kind.content_filter", "An answer blocked by a content filter is an 'error' stop naming the filter, never a clean stop.", "SDK types: finish_reason / incomplete reason content_filter, SAFETY, content_filtered", check_content_filter, _sendable(FILTER_TURN)),
    Case("kind.stop_sequence", "An answer ended by a stop sequence is a 'stop' with its text.", "SDK types: stop_reason / stopReason stop_sequence; finish_reason stop", check_stop_sequence, _sendable(STOP_SEQUENCE_TURN)),
    Case("kind.pause_turn", "A paused turn (pause_turn) is a 'stop' with its text kept.", "SDK types: Anthropic StopReason pause_turn", check_pause_turn, _sendable(PAUSE_TURN)),
    Case("kind.redacted_thinking", "Redacted thinking is kept with its opaque data and sent back unchanged on the next request.", "SDK types: RedactedThinkingBlock, redactedContent, reasoning encrypted_content", check_redacted_thinking, _sendable(Turn(redacted_thinking=REDACTED))),
    Case("kind.usage_split", "Usage spread over several stream events adds up to the final counts.", "SDK types: Anthropic MessageDeltaUsage; Gemini usage_metadata per chunk", check_split_usage, _sendable(SPLIT_TURN)),
    Case("kind.reasoning_tokens", "Reasoning tokens are counted in the output, even where the API reports them apart.", "SDK types: reasoning_tokens, thinking_tokens, thoughts_token_count", check_reasoning_tokens, _sendable(REASONING_TURN)),
)
