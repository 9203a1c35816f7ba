"""OpenAI Chat Completions: stream-parse throughput of loopkit's codec vs the openai SDK's own parser on the
same simulator bytes (a row of ``bench_wire.py``). Usage: python benchmarks/wire_openai_chat.py
"""

from __future__ import annotations

import json

from _openai_wire_bench import big_turn, parse_rows as measure, sim_chunks

from loopkit.accumulate import accumulate
from loopkit.providers.openai_chat import ChatStreamDecoder


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


def parse_rows() -> dict:
    """Stream-parse throughput on a long text + three tool calls, as the simulator streams it."""
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True, "stream_options": {"include_usage": True}}
    return measure("openai_chat", sim_chunks("openai_chat", "/v1/chat/completions", body, big_turn()), _loopkit, _sdk)


if __name__ == "__main__":
    print(json.dumps(parse_rows()))
