"""OpenAI forms beyond the API's own traffic that real servers send: the reasoning fields of
OpenAI-compatible Chat servers, and a Responses stream whose items are never closed.
"""

from __future__ import annotations

from typing import Any

from ..messages import TextContent, ThinkingContent, ToolResultMessage, user
from ..script import Turn, call
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


def check_reasoning_fields(ctx: Context) -> None:
    """Three model calls of a loop against a server that sends reasoning in ``field``: thinking,
    text and a call; thinking and a call; thinking and text. Then an answer cut off by the token
    limit while it was still reasoning."""
    for field in REASONING_FIELDS:
        turns = [
            Turn(thinking=f"Paris first ({field}).", text="Checking Paris.", tool_calls=(call("get_weather", {"city": "Paris"}),), chunk_size=4),
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
        want = [["thinking", "text", "toolCall"], ["thinking", "toolCall"], ["thinking", "text"]]
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
        cut = Turn(thinking=f"A long train of thought ({field}) that the token limit", stop_reason="length", chunk_size=6)
        m = finished(ctx, answer(ctx, [cut], sim_options={"reasoning_field": field}), f"an answer cut off while reasoning (in {field!r})")
        if m is not None:
            ctx.expect(f"content of an answer cut off while reasoning (in {field!r})", [(b.type, getattr(b, "thinking", None)) for b in m.content], [("thinking", cut.thinking)])
            ctx.expect(f"stop_reason of an answer cut off while reasoning (in {field!r})", m.stop_reason, "length")


OPENAI_ROUND2_CASES: tuple[Case, ...] = (
    Case(
        "stream.thinking.reasoning_fields",
        "Reasoning that OpenAI-compatible Chat servers send (reasoning_content or reasoning, streamed or whole) becomes a thinking block before the text and calls, and is never echoed back as the assistant's content.",
        "docs/wire.md §1.3, §1.4, §1.7 #9",
        check_reasoning_fields,
        _chat_only,
    ),
)
