"""Anthropic Messages: stream-parse throughput of loopkit's decoder vs the official SDK's own path
(``Stream`` -> ``MessageStream.get_final_message()``) on the same simulator bytes (a row of
``bench_wire.py``). Usage: python benchmarks/wire_anthropic.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loopkit import simulators  # noqa: E402
from loopkit.accumulate import accumulate  # noqa: E402
from loopkit.providers.anthropic import MessagesStreamDecoder  # noqa: E402
from loopkit.script import Turn, call  # noqa: E402
from loopkit.simulators import SimRequest  # noqa: E402


def _best(fn, reps: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def recorded_stream() -> list[bytes]:
    """A representative streamed answer as the simulator writes it (one chunk per SSE event)."""
    text = "The weather in Paris is mild today, with a light breeze and clouds. " * 20
    turn = Turn(
        thinking="Let me look up the weather for both cities before answering. " * 10,
        thinking_signature="EqQBCkYIBxgCKkD" * 8,
        text=text,
        tool_calls=[call("get_weather", {"location": "Paris, FR", "units": "c"}), call("get_weather", {"location": "Oslo, NO", "units": "c"})],
        chunk_size=12,
    )
    sim = simulators.create("anthropic", [turn])
    body = json.dumps({"model": "m", "max_tokens": 100, "stream": True, "messages": [{"role": "user", "content": "x"}]}).encode()
    resp = sim.handle(SimRequest(method="POST", path="/v1/messages", headers={"x-api-key": "k", "anthropic-version": "2023-06-01"}, body=body))
    return resp.chunks


def parse_rows(reps: int = 5) -> dict[str, float]:
    """MB/s of loopkit's decoder and of the official SDK's parser on the same chunks."""
    import anthropic
    import httpx2
    from anthropic._streaming import Stream
    from anthropic.lib.streaming import MessageStream
    from anthropic.types import RawMessageStreamEvent

    chunks = recorded_stream()
    size = sum(map(len, chunks))
    client = anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9")

    def ours() -> None:
        dec = MessagesStreamDecoder()
        events = [e for c in chunks for e in dec.feed(c)] + dec.close()
        accumulate(events)

    def sdk() -> None:
        response = httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=iter(chunks), request=httpx2.Request("POST", "http://127.0.0.1:9/v1/messages"))
        raw = Stream(cast_to=RawMessageStreamEvent, response=response, client=client)
        MessageStream(raw, output_format=anthropic.NOT_GIVEN).get_final_message()

    t_ours = _best(ours, reps * 4)
    t_sdk = _best(sdk, reps * 4)
    return {"bytes": size, "loopkit_MBps": size / t_ours / 1e6, "sdk_MBps": size / t_sdk / 1e6, "speedup_vs_sdk": t_sdk / t_ours}


def main() -> None:
    p = parse_rows()
    print(f"anthropic: stream parse of {p['bytes']} bytes: loopkit {p['loopkit_MBps']:.1f} MB/s, SDK {p['sdk_MBps']:.1f} MB/s, loopkit/SDK speed {p['speedup_vs_sdk']:.2f}x")


if __name__ == "__main__":
    main()
