"""OpenAI Responses wire figures for bench_wire: µs per loop round through
OpenAIResponsesProvider + the in-process simulator (vs ScriptedProvider and the JSON floor) at R=10,
100, 1000, and stream-parse throughput of loopkit's codec vs the openai SDK's own parser
(``SSEDecoder`` + ``ResponseStreamEvent`` + ``ResponseStreamState``) on the same bytes.

Budgets (issue 3): codec at least as fast as the SDK; a round <= 300 µs at R=10 and <= 3x the
floor at R=100 and R=1000.

Usage: python benchmarks/wire_openai_responses.py
"""

from __future__ import annotations

from _openai_wire_bench import big_turn, loop_rows, main, parse_rows, sim_chunks

from loopkit.accumulate import accumulate
from loopkit.providers.openai_responses import OpenAIResponsesProvider, ResponsesStreamDecoder


def rows(rounds: int) -> dict:
    """One row of per-round figures for ``rounds`` tool rounds."""
    return loop_rows("openai_responses", OpenAIResponsesProvider, rounds)


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


def parse() -> dict:
    """Stream-parse throughput on a long text + three tool calls, as the simulator streams it."""
    body = {"model": "m", "input": "x", "stream": True}
    return parse_rows("openai_responses", sim_chunks("openai_responses", "/v1/responses", body, big_turn()), _loopkit, _sdk)


if __name__ == "__main__":
    main(rows, parse)
