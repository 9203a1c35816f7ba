"""OpenAI Responses: stream-parse throughput of loopkit's codec vs the openai SDK's own parser on the
same simulator bytes (a row of ``bench_wire.py``). Usage: python benchmarks/wire_openai_responses.py
"""

from __future__ import annotations

import json

from _openai_wire_bench import big_turn, parse_rows as measure, sim_chunks

from loopkit.accumulate import accumulate
from loopkit.providers.openai_responses import ResponsesStreamDecoder


def _loopkit(chunks: list[bytes]) -> object:
    decoder = ResponsesStreamDecoder()
    events = []
    for c in chunks:
        events += decoder.feed(c)
    return accumulate(events + decoder.close())


def _sdk(chunks: list[bytes]) -> object:
    import json

    from openai import omit
    from openai._models import construct_type
    from openai._streaming import SSEDecoder
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    state = ResponseStreamState(input_tools=omit, text_format=omit)
    for sse in SSEDecoder().iter_bytes(iter(chunks)):
        state.handle_event(construct_type(type_=ResponseStreamEvent, value=json.loads(sse.data)))
    return state._completed_response


def parse_rows() -> dict:
    """Stream-parse throughput on a long text + three tool calls, as the simulator streams it."""
    body = {"model": "m", "input": "x", "stream": True}
    return measure("openai_responses", sim_chunks("openai_responses", "/v1/responses", body, big_turn()), _loopkit, _sdk)


if __name__ == "__main__":
    print(json.dumps(parse_rows()))
