"""Event-stream decoder throughput: loopkit's EventStreamDecoder vs botocore's EventStreamBuffer.

Both decode the same bytes (the recorded Bedrock tool-use stream, repeated), fed in the same
chunks, and must yield the same messages. Budget: loopkit at least as fast as botocore.

Run: ``PYTHONPATH=. python benchmarks/bench_eventstream.py [--repeat 200] [--rounds 5]``
"""

from __future__ import annotations

import argparse
import base64
import time
from pathlib import Path

from botocore.eventstream import EventStreamBuffer

from loopkit.eventstream import EventStreamDecoder

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "bedrock" / "converse_stream_tool_use.bin.b64"


def _chunks(data: bytes, size: int | None) -> list[bytes]:
    if size is None:
        return [data]
    return [data[i : i + size] for i in range(0, len(data), size)]


def _loopkit(chunks: list[bytes]) -> list[tuple[dict, bytes]]:
    decoder = EventStreamDecoder()
    out = []
    for chunk in chunks:
        for m in decoder.feed(chunk):
            out.append((m.headers, m.payload))
    decoder.close()
    return out


def _botocore(chunks: list[bytes]) -> list[tuple[dict, bytes]]:
    buffer = EventStreamBuffer()
    out = []
    for chunk in chunks:
        buffer.add_data(chunk)
        for m in buffer:
            out.append((m.headers, m.payload))
    return out


def _best(fn, chunks, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn(chunks)
        best = min(best, time.perf_counter() - t0)
    return best


CHUNKINGS = (("one message per chunk", 0), ("1 KiB chunks", 1024), ("64 B chunks", 64), ("whole body", None))


def rows(repeat: int = 200, rounds: int = 5) -> list[dict]:
    """MB/s and messages/s of loopkit's decoder and botocore's on the recorded stream, per chunking."""
    data = base64.b64decode(FIXTURE.read_text()) * repeat
    out = []
    for label, size in CHUNKINGS:
        if size == 0:
            chunks = []
            pos = 0
            while pos < len(data):
                total = int.from_bytes(data[pos : pos + 4], "big")
                chunks.append(data[pos : pos + total])
                pos += total
        else:
            chunks = _chunks(data, size)
        ours = _loopkit(chunks)
        assert ours == _botocore(chunks), "decoders disagree"
        t_ours = _best(_loopkit, chunks, rounds)
        t_theirs = _best(_botocore, chunks, rounds)
        out.append({
            "chunking": label,
            "bytes": len(data),
            "messages": len(ours),
            "loopkit_MBps": len(data) / t_ours / 1e6,
            "botocore_MBps": len(data) / t_theirs / 1e6,
            "loopkit_msgps": len(ours) / t_ours,
            "botocore_msgps": len(ours) / t_theirs,
        })
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="copies of the recorded stream")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (best is kept)")
    args = parser.parse_args()
    print(f"recorded Bedrock stream x{args.repeat}; best of {args.rounds}")
    print(f"{'chunking':<22}{'decoder':<10}{'MB/s':>9}{'msg/s':>12}{'vs botocore':>13}")
    for r in rows(args.repeat, args.rounds):
        print(f"{r['chunking']:<22}{'loopkit':<10}{r['loopkit_MBps']:>9.1f}{r['loopkit_msgps']:>12,.0f}{r['loopkit_MBps'] / r['botocore_MBps']:>12.1f}x")
        print(f"{'':<22}{'botocore':<10}{r['botocore_MBps']:>9.1f}{r['botocore_msgps']:>12,.0f}")


if __name__ == "__main__":
    main()
