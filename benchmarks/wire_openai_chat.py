"""OpenAI Chat Completions wire figures for bench_wire: µs per loop round through
OpenAIChatProvider + the in-process simulator (vs ScriptedProvider and the JSON floor) at R=10,
100, 1000, and stream-parse throughput of loopkit's codec vs the openai SDK's own parser
(``SSEDecoder`` + ``ChatCompletionChunk`` + ``ChatCompletionStreamState``) on the same bytes.

Budgets (issue 3): codec at least as fast as the SDK; a round <= 300 µs at R=10 and <= 3x the
floor at R=100 and R=1000.

Usage: python benchmarks/wire_openai_chat.py
"""

from __future__ import annotations

from _openai_wire_bench import big_turn, loop_rows, main, parse_rows, sim_chunks

from loopkit.accumulate import accumulate
from loopkit.providers.openai_chat import ChatStreamDecoder, OpenAIChatProvider


def rows(rounds: int) -> dict:
    """One row of per-round figures for ``rounds`` tool rounds."""
    return loop_rows("openai_chat", OpenAIChatProvider, rounds)


def _loopkit(chunks: list[bytes]) -> object:
    decoder = ChatStreamDecoder()
    events = []
    for c in chunks:
        events += decoder.feed(c)
    return accumulate(events + decoder.close())


def _sdk(chunks: list[bytes]) -> object:
    import json

    from openai._models import construct_type
    from openai._streaming import SSEDecoder
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state = ChatCompletionStreamState()
    for sse in SSEDecoder().iter_bytes(iter(chunks)):
        if sse.data.startswith("[DONE]"):
            break
        state.handle_chunk(construct_type(type_=ChatCompletionChunk, value=json.loads(sse.data)))
    return state.get_final_completion()


def parse() -> dict:
    """Stream-parse throughput on a long text + three tool calls, as the simulator streams it."""
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True, "stream_options": {"include_usage": True}}
    return parse_rows("openai_chat", sim_chunks("openai_chat", "/v1/chat/completions", body, big_turn()), _loopkit, _sdk)


if __name__ == "__main__":
    main(rows, parse)
