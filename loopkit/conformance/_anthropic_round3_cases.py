"""Anthropic forms the earlier cases did not send (spliced streams, an error object as a 200 body,
an error event opening the stream), and forms every protocol has that no case sent: a length
stop inside a call, a last event without its blank line, an empty user message.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ConnectionClosedError, ProviderError
from ..messages import user
from ..script import MidStreamError, Turn, call
from ._case import Case, Context
from ._fixtures import PROMPT, accepted, answer, call_ids, finished, kinds, request
from ._harness import Exchange
from ._wire import Wire


def _anthropic(wire: Wire, provider: Any) -> str | None:
    return None if wire.name == "anthropic" else f"the form is Anthropic's own ({wire.name}'s answers have no such event)"


def _ended_once(ctx: Context, ex: Exchange, what: str) -> None:
    """Every block the stream started got exactly one end event, before the terminal event."""
    starts: dict[int, str] = {}
    ends: dict[int, list[str]] = {}
    terminal_seen = False
    for e in ex.events:
        if e.type in ("done", "error"):
            terminal_seen = True
        elif e.type in ("text_start", "thinking_start", "toolcall_start"):
            starts[e.content_index] = e.type.removesuffix("_start")
        elif e.type in ("text_end", "thinking_end", "toolcall_end"):
            if terminal_seen:
                ctx.fail(
                    f"events of {what}",
                    "every end event before the terminal event",
                    ex.outcome(),
                )
            ends.setdefault(e.content_index, []).append(e.type.removesuffix("_end"))
    ctx.expect(
        f"the end events of each started block of {what} (content_index: kinds)",
        {i: ends.get(i, []) for i in starts},
        {i: [kind] for i, kind in starts.items()},
    )


# --- every protocol: a length stop leaves no block open ----------------------------------------


def check_blocks_ended_at_length(ctx: Context) -> None:
    """An answer cut off by the token limit inside its last block (a call, where the wire streams
    argument text; else the text): the API sends no end for that block (Anthropic §3.7 #1), the
    adapter still ends each block it started, once, before the terminal event."""
    a, _ = call_ids(ctx.wire)
    if ctx.wire.raw_arguments:
        turn = Turn(
            text="Checking Paris.",
            tool_calls=(call("get_weather", '{"city": "Par', id=a),),
            stop_reason="length",
            chunk_size=3,
        )
    else:
        turn = Turn(
            text="A long answer that the token limit",
            stop_reason="length",
            chunk_size=3,
        )
    ex = answer(ctx, [turn])
    m = finished(ctx, ex, "an answer cut off by the token limit inside its last block")
    if m is None:
        return
    ctx.expect("stop_reason of an answer cut off by the token limit", m.stop_reason, "length")
    _ended_once(ctx, ex, "an answer cut off by the token limit inside its last block")


# --- Anthropic: a second message_start in one stream --------------------------------------------


def _events(chunks: list[bytes]) -> list[tuple[str, Any]]:
    """The stream as (event name, payload) pairs."""
    out = []
    for frame in b"".join(chunks).split(b"\n\n"):
        name, data = "", None
        for line in frame.decode("utf-8").split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data = json.loads(line[5:])
        if name or data is not None:
            out.append((name, data))
    return out


def _frames(events: list[tuple[str, Any]]) -> list[bytes]:
    return [f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode() for name, data in events]


def _spliced(chunks: list[bytes]) -> list[bytes]:
    """A text block, then (without its content_block_stop) a second message_start whose blocks
    number again from 0: two answers spliced into one stream (docs/wire.md §3.7 #5)."""
    events = _events(chunks)
    first = next(data for name, data in events if name == "message_start")
    out: list[tuple[str, Any]] = []
    for name, data in events:
        if name == "content_block_stop" and data.get("index") == 0:
            continue  # the first answer's text is never closed
        if name == "content_block_start" and data.get("index") == 1:
            out.append(
                (
                    "message_start",
                    {
                        **first,
                        "message": {
                            **first["message"],
                            "id": first["message"]["id"] + "_2",
                        },
                    },
                )
            )
        if name.startswith("content_block") and isinstance(data.get("index"), int) and data["index"] >= 1:
            data = {**data, "index": data["index"] - 1}
        out.append((name, data))
    return _frames(out)


def check_spliced_message_start(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    turn = Turn(
        text="Let me check.",
        tool_calls=(call("get_weather", {"city": "Paris"}, id=a),),
        chunk_size=4,
    )
    ex = answer(ctx, [turn], cut=_spliced)
    m = finished(ctx, ex, "a stream holding a second message_start")
    if m is None:
        return
    ctx.expect(
        "start events of a stream holding a second message_start",
        [e.type for e in ex.events].count("start"),
        1,
    )
    ctx.expect(
        "content blocks of a stream holding a second message_start (the first answer's, then the second's)",
        kinds(m),
        ["text", "toolCall"],
    )
    ctx.expect("text of a stream holding a second message_start", m.text, "Let me check.")
    ctx.expect(
        "tool calls of a stream holding a second message_start",
        [(c.id, c.name, c.arguments) for c in m.tool_calls],
        [(a, "get_weather", {"city": "Paris"})],
    )
    _ended_once(ctx, ex, "a stream holding a second message_start")


# --- every server-sent-event stream: the last event without its blank line ----------------------


def _sse(wire: Wire, provider: Any) -> str | None:
    if wire.name == "bedrock":
        return "Bedrock streams binary event-stream frames, not server-sent events"
    return None


def _unterminated(chunks: list[bytes]) -> list[bytes]:
    body = b"".join(chunks)
    return [body.rstrip(b"\r\n") + b"\n"]


def check_unterminated_last_event(ctx: Context) -> None:
    """A body that ends right after its last ``data:`` line: the SSE standard drops that event, and
    a reader that keeps it is as right; either way the call completes or fails as a stream closed
    too early, never with another exception."""
    a, _ = call_ids(ctx.wire)
    turn = Turn(
        text="Checking Paris.",
        tool_calls=(call("get_weather", {"city": "Paris"}, id=a),),
    )
    ex = answer(ctx, [turn], cut=_unterminated)
    if isinstance(ex.error, ConnectionClosedError):
        return
    m = finished(ctx, ex, "a stream whose last event has no blank line after it")
    if m is not None:
        ctx.expect(
            "content blocks of a stream whose last event has no blank line after it",
            kinds(m),
            ["text", "toolCall"],
        )
        ctx.expect(
            "tool calls of a stream whose last event has no blank line after it",
            [(c.id, c.name, c.arguments) for c in m.tool_calls],
            [(a, "get_weather", {"city": "Paris"})],
        )


# --- every protocol: an empty user message ------------------------------------------------------


def check_empty_user_message(ctx: Context) -> None:
    """An empty user message (a chat box sent with nothing typed) before the prompt: the request
    is still one the API accepts (Anthropic and Bedrock refuse an empty text block)."""
    ex = answer(ctx, ["Sunny in Paris."], request(messages=[user(""), user(PROMPT)]))
    accepted(ctx, ex)


# --- Anthropic: errors where an answer was expected ---------------------------------------------

_OVERLOADED = "Overloaded (conformance)"


def _error_instead(chunks: list[bytes]) -> list[bytes]:
    """The whole answer replaced by the API's error object: a stream of one ``event: error``
    (an error met after the 200 went out, before any message), or a JSON body that is the error
    object itself (as relays answer with HTTP 200)."""
    error = {
        "type": "error",
        "error": {"type": "overloaded_error", "message": _OVERLOADED},
    }
    if any(b"data:" in c for c in chunks):
        return _frames([("error", error)])
    return [json.dumps(error).encode()]


def check_error_instead_of_answer(ctx: Context) -> None:
    from ._failure_cases import expect_failure, said
    from ._harness import MAX_RETRIES

    ex = answer(ctx, [Turn(text="Never shown.")] * (MAX_RETRIES + 1), cut=_error_instead)
    expect_failure(ctx, ex, (ProviderError,), "an answer that is the API's error object")
    if any(e.type == "done" for e in ex.events):
        ctx.fail(
            "events of an answer that is the API's error object",
            "no 'done' event",
            ex.outcome(),
        )
    if _OVERLOADED not in said(ex):
        ctx.fail("the provider's error message", f"text containing {_OVERLOADED!r}", said(ex))
    got = ex.error.error_type if isinstance(ex.error, ProviderError) else getattr(ex.terminal, "error_type", None)
    ctx.expect("the error's error_type (the provider's own)", got, "overloaded_error")


def check_error_event_first(ctx: Context) -> None:
    """An ``overloaded_error`` event that opens the stream is, in Anthropic's words, what "would
    normally correspond to an HTTP 529 in a non-streaming context": a transient error. Nothing has
    been shown yet, so it may be retried (loopkit's adapter does, as it retries a 529), or fail the
    call (the official SDK's stream reader retries no in-stream error) with the provider's message
    and an error that says it is transient (``ProviderError.retryable``, as a 529's
    ``OverloadedError`` does), so that a caller's retry policy can act on it. An
    ``invalid_request_error`` there is no transient error: it fails the call, with no retry."""
    from ._failure_cases import expect_failure, said

    for error_type, transient in (
        ("overloaded_error", True),
        ("invalid_request_error", False),
    ):
        message = f"{error_type} before any content (conformance)"
        ex = answer(
            ctx,
            [
                Turn(
                    text="Never shown.",
                    faults=(MidStreamError(after=0, message=message, error_type=error_type),),
                ),
                "Recovered.",
            ],
        )
        if transient and ex.error is None:
            m = finished(ctx, ex, f"a stream that began with an {error_type} event, retried")
            if m is not None:
                ctx.expect(f"text after the retry of {error_type}", m.text, "Recovered.")
            ctx.expect(
                f"requests sent ({error_type} before any content, then a retry)",
                ex.attempts,
                2,
            )
            continue
        what = f"a stream that began with an {error_type} event" + (", not retried" if transient else "")
        expect_failure(ctx, ex, (ProviderError,), what)
        ctx.expect(
            f"requests sent ({error_type} before any content, {'not retried' if transient else 'not transient: no retry'})",
            ex.attempts,
            1,
        )
        if message not in said(ex):
            ctx.fail(
                "the provider's error message",
                f"text containing {message!r}",
                said(ex),
            )
        if transient and isinstance(ex.error, ProviderError) and not ex.error.retryable:
            ctx.fail(
                f"{what}: ProviderError.retryable (HTTP 529's in-stream form is transient)",
                True,
                ex.error.retryable,
            )


ANTHROPIC_ROUND3_CASES: tuple[Case, ...] = (
    Case(
        "stream.blocks_ended.length_stop",
        "An answer cut off by the token limit inside its last block (a call's arguments, or the text) still ends every block it started, once, before the terminal event.",
        "docs/loop-contract.md §7.6; docs/wire.md §3.7 #1",
        check_blocks_ended_at_length,
    ),
    Case(
        "stream.spliced_message_start",
        "A second message_start in one Anthropic stream (spliced answers) closes the blocks left open, appends the new blocks after them, and starts the message only once.",
        "docs/wire.md §3.7 #5",
        check_spliced_message_start,
        _anthropic,
        streamed_only=True,
    ),
    Case(
        "stream.last_event_unterminated",
        "A server-sent-event body that ends right after its last data line (no blank line) either completes the answer or fails as a stream closed early (ConnectionClosedError), never with another exception.",
        "docs/wire.md §0 (SSE framing); docs/loop-contract.md §7.6",
        check_unterminated_last_event,
        _sse,
        streamed_only=True,
    ),
    Case(
        "request.history.empty_user_message_first",
        "An empty user message opening the history is sent in a form the API accepts (never as an empty text block).",
        "docs/wire.md §3.6; docs/loop-contract.md §7.2",
        check_empty_user_message,
    ),
    Case(
        "failure.error_instead_of_answer",
        "An Anthropic answer that is the API's error object (a stream of one error event, or a 200 body that is the error) fails the call with its message and type, never a 'done'.",
        "docs/wire.md §3.5",
        check_error_instead_of_answer,
        _anthropic,
    ),
    Case(
        "failure.error_event_first",
        "An Anthropic overloaded_error event that opens the stream (HTTP 529's in-stream form) is retried, or fails the call with the provider's message and an error marked retryable; an invalid_request_error there fails the call without a retry.",
        "docs/wire.md §0 (retries), §3.5, §3.7 #6; Anthropic streaming docs, Error events",
        check_error_event_first,
        _anthropic,
        streamed_only=True,
    ),
)
