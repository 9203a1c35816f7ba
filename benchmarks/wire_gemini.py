"""Gemini wire figures: stream-parse throughput of loopkit's codec vs google-genai's own parser.

Both sides parse the same recorded bytes, delivered in the same chunks (per SSE event, as the
server writes them):

- ``wire``: bytes -> parsed chunks. loopkit: :class:`GeminiStreamDecoder.feed` (SSE lines, JSON,
  stream events). google-genai: ``HttpResponse.segments()`` over an ``httpx2.Response`` (its line
  decoder and JSON), plus the ``json.dumps``/``json.loads`` round trip ``request_streamed`` and
  ``generate_content_stream`` do on every chunk.
- ``typed``: bytes -> the objects a caller uses. loopkit: events folded into an AssistantMessage.
  google-genai: each chunk converted and validated into ``types.GenerateContentResponse`` (what
  ``generate_content_stream`` yields).

Run: ``PYTHONPATH=. python benchmarks/wire_gemini.py``; ``benchmarks/bench_wire.py`` prints these
rows beside the other protocols' and the loop-round figures.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loopkit import simulators
from loopkit.accumulate import accumulate
from loopkit.providers.gemini import GeminiStreamDecoder
from loopkit.script import Turn, call

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "gemini"


def recorded_streams() -> dict[str, list[bytes]]:
    """Named streams as the list of chunks the server wrote (one SSE event per chunk)."""
    exchange = json.loads((FIXTURES / "exchange_stream_function_roundtrip.json").read_text())
    raw = {
        "fixture text (3 events)": (FIXTURES / "stream_text.sse").read_bytes(),
        "fixture call+signature (2 events)": exchange[0]["response"]["body"].encode("utf-8"),
        "fixture text after tool (2+ events)": exchange[1]["response"]["body"].encode("utf-8"),
    }
    out = {name: [e + b"\r\n\r\n" for e in body.split(b"\r\n\r\n") if e] for name, body in raw.items()}
    sim = simulators.create("gemini", [Turn(text="Grüße aus Köln! " * 200, tool_calls=[call("lookup", {"q": "x" * 50})] * 3, chunk_size=32)])
    resp = sim.handle(simulators.SimRequest(method="POST", path="/v1beta/models/gemini-2.5-flash:streamGenerateContent", query={"alt": "sse"},
                                            headers={"x-goog-api-key": "k"}, body=b'{"contents":[{"role":"user","parts":[{"text":"x"}]}]}'))  # fmt: skip
    out[f"simulator long text + 3 calls ({len(resp.chunks)} events)"] = resp.chunks
    return out


def loopkit_wire(chunks: list[bytes]) -> int:
    decoder = GeminiStreamDecoder(lambda: "gcall_1")
    n = 0
    for c in chunks:
        n += len(decoder.feed(c))
    return n + len(decoder.close())


def loopkit_typed(chunks: list[bytes]) -> Any:
    decoder = GeminiStreamDecoder(lambda: "gcall_1")
    events = []
    for c in chunks:
        events += decoder.feed(c)
    return accumulate(events + decoder.close())


def _sdk_segments(chunks: list[bytes]) -> Any:
    import httpx2
    from google.genai._api_client import HttpResponse

    class Chunks(httpx2.SyncByteStream):
        def __iter__(self):
            return iter(chunks)

    response = httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=Chunks())
    return HttpResponse(response.headers, response).segments()


def sdk_wire(chunks: list[bytes]) -> int:
    n = 0
    for segment in _sdk_segments(chunks):
        json.loads(json.dumps(segment))  # request_streamed dumps, generate_content_stream loads
        n += 1
    return n


def sdk_typed(chunks: list[bytes]) -> Any:
    from google.genai import types
    from google.genai.models import _GenerateContentResponse_from_mldev

    out = []
    for segment in _sdk_segments(chunks):
        data = _GenerateContentResponse_from_mldev(json.loads(json.dumps(segment)), None, None)
        out.append(types.GenerateContentResponse._from_response(response=data, kwargs={}))
    return out


def _best(fn: Callable[[list[bytes]], Any], chunks: list[bytes], budget: float = 0.3) -> float:
    """Best seconds per call over repeated runs (the minimum is the least noisy estimate)."""
    fn(chunks)
    best = float("inf")
    deadline = time.perf_counter() + budget
    while time.perf_counter() < deadline:
        t = time.perf_counter()
        for _ in range(5):
            fn(chunks)
        best = min(best, (time.perf_counter() - t) / 5)
    return best


def parse_rows() -> list[dict[str, Any]]:
    """Per stream: MB/s for loopkit and google-genai, wire level and typed level."""
    rows = []
    for name, chunks in recorded_streams().items():
        size = sum(len(c) for c in chunks)
        row: dict[str, Any] = {"stream": name, "bytes": size}
        for label, fn in (("loopkit_wire", loopkit_wire), ("sdk_wire", sdk_wire), ("loopkit_typed", loopkit_typed), ("sdk_typed", sdk_typed)):
            row[label] = size / _best(fn, chunks) / 1e6
        rows.append(row)
    return rows


def main() -> None:
    print("Gemini stream parse throughput, MB/s (higher is better; same bytes, same chunks)")
    print(f"{'stream':44} {'bytes':>7} {'loopkit wire':>13} {'sdk wire':>9} {'loopkit typed':>14} {'sdk typed':>10}")
    for r in parse_rows():
        print(f"{r['stream']:44} {r['bytes']:>7} {r['loopkit_wire']:>13.1f} {r['sdk_wire']:>9.1f} {r['loopkit_typed']:>14.1f} {r['sdk_typed']:>10.1f}")


if __name__ == "__main__":
    main()
