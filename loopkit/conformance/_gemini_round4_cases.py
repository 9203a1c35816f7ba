"""A streamed call that another call interrupts: Vertex's ``willContinue`` says the next part
continues the open call, so a part that names another function while it is open is a broken
stream, never more arguments of the open call.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ProviderError, WireError
from ..script import Turn, call
from ._case import Case, Context
from ._failure_cases import expect_failure
from ._fixtures import answer, only_calls
from ._wire import Wire
from ._wire_form_cases import STREAMED_ARGS_A, STREAMED_ARGS_B


def _streamed_calls(wire: Wire, provider: Any) -> str | None:
    return None if wire.streamed_calls else f"{wire.name} streams tool-call arguments in one form only (docs/wire.md §0.3)"


def _without_first_closing_part(wire: Wire, chunks: list[bytes]) -> list[bytes]:
    """The answer in the streamed-call form, less the part that closes its first call: the next
    call's opening part, which names its function, then arrives while the first is still open."""
    streamed = wire.stream_calls(chunks)
    for i, chunk in enumerate(streamed):
        if b'{"functionCall": {}}' in chunk:
            return streamed[:i] + streamed[i + 1 :]
    raise AssertionError("the streamed-call form has no closing part to drop")  # the suite's own rewriting changed


def check_streamed_call_interrupted(ctx: Context) -> None:
    """Two streamed calls, the first one's closing part missing: the second call's opening part
    (``{"name": "get_time", "willContinue": true}``) comes while ``get_weather`` is open. The
    answer fails, or (an adapter that reads the name as the open call's end) holds both calls,
    each with its own arguments; never one call holding the other's arguments or name."""
    turn = Turn(tool_calls=(call("get_weather", STREAMED_ARGS_A), call("get_time", STREAMED_ARGS_B)), chunk_size=5)
    ex = answer(ctx, [turn], cut=lambda chunks: _without_first_closing_part(ctx.wire, chunks))
    m = ex.message
    if ex.error is None and m is not None and m.stop_reason not in ("error", "aborted"):
        got = [(c.name, c.arguments) for c in only_calls(m)]
        if got != [("get_weather", STREAMED_ARGS_A), ("get_time", STREAMED_ARGS_B)]:
            ctx.fail(
                "a streamed call interrupted by a part naming another function (willContinue was true)",
                "a failed call (the stream is broken), or both calls each with its own arguments",
                json.dumps(got, ensure_ascii=False)[:400],
            )
        return
    expect_failure(ctx, ex, (ProviderError, WireError), "a streamed call interrupted by a part naming another function")


GEMINI_ROUND4_CASES: tuple[Case, ...] = (
    Case(
        "stream.streamed_call_interrupted",
        "A part that names another function while a Vertex streamed call is open (its last part said willContinue) fails the answer or starts that call; it never adds to the open call.",
        "docs/wire.md §4.4 (Vertex streamFunctionCallArguments); google-genai types FunctionCall.will_continue",
        check_streamed_call_interrupted,
        _streamed_calls,
        streamed_only=True,
    ),
)
