"""Anthropic Messages rows for bench_wire: loop rounds through adapter + simulator, stream parsing.

1. Microseconds per loop round, R rounds of one ``add`` tool call then a text answer, through
   ``AnthropicProvider`` + ``AnthropicSimulator`` on the in-process transport (streamed), beside
   ``ScriptedProvider`` and the floor: one ``json.dumps`` + ``json.loads`` of each round's request
   body (a real API is sent the whole history every round).
2. Stream-parse throughput on the same recorded bytes (a simulator stream with text, thinking and
   tool calls, split per SSE event): loopkit's ``MessagesStreamDecoder`` + ``accumulate`` against
   the official SDK's own path (``Stream`` -> ``MessageStream.get_final_message()``).

Budgets (issue 3): a round <= 300 us at R=10 and <= 3x the floor at R=100 and R=1000; the codec
at least as fast as the SDK's parser. Usage: python benchmarks/wire_anthropic.py [--reps N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import loopkit  # noqa: E402
import simulators  # noqa: E402
from loopkit.accumulate import accumulate  # noqa: E402
from loopkit.fakes import ScriptedProvider  # noqa: E402
from loopkit.providers.anthropic import AnthropicProvider, MessagesStreamDecoder  # noqa: E402
from loopkit.script import Turn, call  # noqa: E402
from simulators import SimRequest  # noqa: E402


@loopkit.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script(rounds: int) -> list[Turn]:
    turns = [Turn(tool_calls=[call("add", {"a": i, "b": 1}, id=f"toolu_{i:06d}")]) for i in range(rounds)]
    return turns + [Turn(text="done")]


def _best(fn, reps: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def loop_rows(rounds: int, reps: int) -> dict[str, float]:
    """us per round: adapter + simulator, ScriptedProvider, and the json floor."""
    holder: dict[str, object] = {}

    def through_simulator() -> None:
        sim = simulators.create("anthropic", script(rounds), chunk_size=64)
        provider = AnthropicProvider(model="claude-bench", api_key="k", transport=simulators.transport(sim))
        result = loopkit.run(provider, "go", tools=[add])
        assert result.reason == "stop" and result.model_calls == rounds + 1, result
        holder["sim"] = sim

    def scripted() -> None:
        result = loopkit.run(ScriptedProvider(script(rounds), chunk_size=64), "go", tools=[add])
        assert result.reason == "stop"

    wire = _best(through_simulator, reps)
    fake = _best(scripted, reps)
    bodies = [r.json for r in holder["sim"].requests]  # type: ignore[attr-defined]

    def floor() -> None:
        for b in bodies:
            json.loads(json.dumps(b, ensure_ascii=False, separators=(",", ":")))

    base = _best(floor, reps)
    n = rounds + 1
    return {"adapter_sim_us": wire / n * 1e6, "scripted_us": fake / n * 1e6, "floor_us": base / n * 1e6, "ratio_to_floor": wire / base}


def httpx_request_us(reps: int) -> float:
    """us for one bare httpx streamed request on a MockTransport: a fixed cost of every round
    that no codec can remove (HttpProvider sends through httpx)."""
    import httpx

    client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, content=b"x")))

    def hundred() -> None:
        for _ in range(100):
            with client.stream("POST", "http://sim/v1/messages", content=b"{}") as r:
                r.read()

    return _best(hundred, reps) / 100 * 1e6


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


def parse_rows(reps: int) -> dict[str, float]:
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


def rows(rounds: int, reps: int = 5) -> dict[str, object]:
    """The bench_wire row for one R: ``us_per_round`` through AnthropicProvider + the in-process
    simulator, beside ScriptedProvider and the json floor (same keys as the other protocols'
    rows, plus the extras)."""
    row = loop_rows(rounds, reps)
    return {"protocol": "anthropic", "rounds": rounds, "us_per_round": row["adapter_sim_us"], **row}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    print(f"anthropic: one bare httpx request on a MockTransport: {httpx_request_us(args.reps):.1f} us")
    print("anthropic: us per loop round (adapter + in-process simulator, streamed)")
    print(f"{'R':>6} {'adapter+sim':>12} {'scripted':>10} {'json floor':>11} {'x floor':>8}")
    for r in (10, 100, 1000):
        row = rows(r, reps=args.reps if r < 1000 else max(1, args.reps // 2))
        print(f"{r:>6} {row['adapter_sim_us']:>12.1f} {row['scripted_us']:>10.1f} {row['floor_us']:>11.1f} {row['ratio_to_floor']:>8.2f}")
    p = parse_rows(args.reps)
    print(f"anthropic: stream parse of {p['bytes']} bytes: loopkit {p['loopkit_MBps']:.1f} MB/s, SDK {p['sdk_MBps']:.1f} MB/s, loopkit/SDK speed {p['speedup_vs_sdk']:.2f}x")


if __name__ == "__main__":
    main()
