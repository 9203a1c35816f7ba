"""Replay and recording speed of loopkit cassettes, against the limit and against vcrpy.

For K = 10, 100, 1,000 and 10,000 recorded streamed interactions (distinct chat requests, each
answered by a 12-event SSE stream), it measures per-interaction cost of:

- replay through ``ReplayTransport`` (every interaction requested once, in order);
- a raw ``httpx.MockTransport`` serving the same chunks from a dict keyed by request body (the limit);
- vcrpy with the same traffic (plain vcrpy: YAML, match on method + uri + body), on a sample of
  requests because its per-request cost grows with K;
- vcrpy configured with loopkit's serializer and matchers (``make_vcr``), also sampled;

the load time of each loopkit cassette, and recording K interactions through
``RecordingTransport`` (including the save) and through vcrpy (K <= --vcr-record-max).

Budgets: replay <= 1.5x MockTransport per interaction, faster than vcrpy, and per-interaction
cost at 10,000 <= 1.5x that at 100; recording (with scrubbing, the secret scan and the save)
<= 2x MockTransport per interaction, flat from 10 to 1,000 interactions. Recording saves once per
K interactions into a new file; re-recording over the file of the previous round (mode ``all``
merges with it) is printed beside it. The fixed cost of a save's fsync is printed too: at K=10 it
is spread over only ten interactions.

Run: ``PYTHONPATH=. python benchmarks/bench_replay.py [--ks 10,100,1000,10000]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import httpx

from loopkit.recording import Cassette, RecordingTransport, ReplayTransport

URL = "https://api.openai.com/v1/chat/completions"


def request_body(i: int) -> dict:
    return {
        "model": "gpt-4o-mini",
        "stream": True,
        "messages": [
            {"role": "system", "content": "You are a helpful assistant. Answer briefly."},
            {"role": "user", "content": f"Question number {i}: what is {i} plus {i}?"},
        ],
        "tools": [{"type": "function", "function": {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}],
    }


def response_chunks(i: int) -> list[bytes]:
    words = f"The answer to question {i} is {2 * i} and that is all".split()
    events = [{"id": f"chatcmpl-{i}", "choices": [{"index": 0, "delta": {"content": w + " "}}]} for w in words]
    events.append({"id": f"chatcmpl-{i}", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return [b"data: " + json.dumps(e).encode() + b"\n\n" for e in events] + [b"data: [DONE]\n\n"]


HEADERS = [("content-type", "text/event-stream")]


class Chunks(httpx.SyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self):
        yield from self.chunks


def mock_server(k: int) -> httpx.MockTransport:
    table = {json.dumps(request_body(i), separators=(",", ":")).encode(): response_chunks(i) for i in range(k)}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=HEADERS, stream=Chunks(table[request.content]))

    return httpx.MockTransport(handler)


AUTH = {"authorization": "Bearer sk-proj-benchmarkKey0123456789abcdefABCDEF"}


def drive(client: httpx.Client, indexes: list[int], headers: dict[str, str] | None = None) -> float:
    """Seconds per request, streaming each body chunk by chunk."""
    # compact JSON, as loopkit's adapters (and httpx's json=) send it
    bodies = [json.dumps(request_body(i), separators=(",", ":")).encode() for i in indexes]
    start = time.perf_counter()
    for body in bodies:
        with client.stream("POST", URL, content=body, headers={"content-type": "application/json", **(headers or {})}) as r:
            for _ in r.iter_raw():
                pass
    return (time.perf_counter() - start) / len(bodies)


SAVES: list[float] = []  # seconds per interaction of each save in record_loopkit


def record_loopkit(path: Path, k: int, *, fresh: bool = True) -> float:
    """Seconds per interaction to record K interactions with an API key in every request (so the
    scrubber learns and removes it everywhere) and save the cassette once: scrubbing, secret scan,
    the lock, pretty JSON and the atomic write (one fsync) included.

    ``fresh``: a new cassette file (the budget's case). Otherwise the file of the previous round
    exists, so mode ``all`` reads and parses it at save and replaces what the new recording
    matches: a merge whose cost grows with the old file."""
    if fresh:
        path.unlink(missing_ok=True)
    server = mock_server(k)  # built outside the timing, as for MockTransport's figure
    start = time.perf_counter()
    cassette = Cassette(path, record_mode="all")
    opening = time.perf_counter() - start
    with httpx.Client(transport=RecordingTransport(server, cassette)) as client:
        requests = drive(client, list(range(k)), AUTH) * k  # the requests only, as for MockTransport
    saving = time.perf_counter()
    cassette.save()
    save = time.perf_counter() - saving
    SAVES.append(save / k)
    return (opening + requests + save) / k


def fsync_seconds(folder: Path, rounds: int = 9) -> float:
    """Median time of one small atomic write (temporary file, fsync, rename) in ``folder``: the
    fixed cost of every save, which MockTransport never pays."""
    from loopkit.recording._format import write_atomic

    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        write_atomic(folder / "fsync_probe.json", "{}\n")
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def mock_with_auth(k: int) -> float:
    """The same traffic straight to MockTransport: the recording's limit."""
    with httpx.Client(transport=mock_server(k)) as client:
        return drive(client, list(range(k)), AUTH)


def write_vcr_cassette(path: Path, k: int) -> None:
    """A plain vcrpy YAML cassette of the same traffic, written directly (recording it through
    vcrpy costs O(K^2); that is measured separately)."""
    import yaml

    interactions = [
        {
            "request": {"method": "POST", "uri": URL, "body": json.dumps(request_body(i)), "headers": {"content-type": ["application/json"]}},
            "response": {"status": {"code": 200, "message": "OK"}, "headers": {"content-type": ["text/event-stream"]}, "body": {"string": b"".join(response_chunks(i)).decode()}},
        }
        for i in range(k)
    ]
    path.write_text(yaml.dump({"version": 1, "interactions": interactions}, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))


def sample(k: int, n: int) -> list[int]:
    step = max(1, k // n)
    return list(range(0, k, step))[:n]


def vcr_replay(path: Path, k: int, n: int, *, loopkit_config: bool) -> float:
    import vcr

    if loopkit_config:
        from loopkit.recording._vcr import make_vcr

        v, name = make_vcr(record_mode="none"), str(path)
    else:
        v, name = vcr.VCR(record_mode="none", match_on=("method", "uri", "body")), str(path)
    with v.use_cassette(name, allow_playback_repeats=True):
        with httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(599))) as client:
            return drive(client, sample(k, n))


def vcr_record(path: Path, k: int) -> float:
    import vcr

    start = time.perf_counter()
    with vcr.VCR(record_mode="all", match_on=("method", "uri", "body")).use_cassette(str(path)):
        with httpx.Client(transport=mock_server(k)) as client:
            drive(client, list(range(k)))
    return (time.perf_counter() - start) / k


def medians(fns, k: int, minimum: int = 2000, min_rounds: int = 5) -> list[float]:
    """Median per-request time of each function, over enough rounds to make ``minimum`` requests
    (and at least ``min_rounds``); the functions take turns within each round so that a busy
    machine slows them alike."""
    rounds = max(min_rounds, minimum // k)
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            times[i].append(fn())
    return [sorted(t)[len(t) // 2] for t in times]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="10,100,1000,10000")
    ap.add_argument("--vcr-sample", type=int, default=20, help="requests replayed through vcrpy per K")
    ap.add_argument("--vcr-record-max", type=int, default=100, help="largest K recorded through vcrpy")
    args = ap.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="bench_replay_"))
    record_loopkit(tmp / "warmup.json", 50)  # imports, regex compilation, pydantic schemas
    rows = []
    for k in ks:
        path = tmp / f"loopkit_{k}.json"
        SAVES.clear()
        rec, rec_mock = medians([lambda: record_loopkit(path, k), lambda: mock_with_auth(k)], k, minimum=1000, min_rounds=3 if k < 1000 else 1)
        save = sorted(SAVES)[len(SAVES) // 2]
        rerec, rerec_mock = medians([lambda: record_loopkit(path, k, fresh=False), lambda: mock_with_auth(k)], k, minimum=300, min_rounds=3 if k < 1000 else 2)
        t = time.perf_counter()
        cassette = Cassette(path)
        load = time.perf_counter() - t

        def replay_once() -> float:
            with httpx.Client(transport=ReplayTransport(Cassette(path, data=cassette.file))) as client:
                return drive(client, list(range(k)))

        def mock_once() -> float:
            with httpx.Client(transport=mock_server(k)) as client:
                return drive(client, list(range(k)))

        replay, mock = medians([replay_once, mock_once], k)
        vpath = tmp / f"vcr_{k}.yaml"
        write_vcr_cassette(vpath, k)
        vcr_plain = vcr_replay(vpath, k, min(k, args.vcr_sample), loopkit_config=False)
        vcr_loopkit = vcr_replay(path, k, min(k, args.vcr_sample), loopkit_config=True)
        vrec = vcr_record(tmp / f"vcr_rec_{k}.yaml", k) if k <= args.vcr_record_max else None
        rows.append((k, replay, mock, vcr_plain, vcr_loopkit, load, rec, vrec, path.stat().st_size, rec_mock))
        print(
            f"K={k:>6}: replay {replay * 1e6:8.0f} us/req | MockTransport {mock * 1e6:6.0f} us/req ({replay / mock:4.2f}x) | "
            f"vcrpy {vcr_plain * 1e3:8.2f} ms/req | vcrpy+loopkit {vcr_loopkit * 1e3:7.2f} ms/req | "
            f"load {load * 1e3:8.1f} ms ({path.stat().st_size / 1e6:.1f} MB) | record {rec * 1e6:6.0f} us/req ({rec / rec_mock:4.2f}x, "
            f"of which the save {save * 1e6:5.0f} us/req) | re-record over the file {rerec / rerec_mock:4.2f}x"
            + (f" | vcrpy record {vrec * 1e3:7.2f} ms/req" if vrec is not None else ""),
            flush=True,
        )
    by_k = {r[0]: r for r in rows}
    print()
    worst = max(r[1] / r[2] for r in rows)
    print(f"replay / MockTransport, worst over K: {worst:.2f}x (budget <= 1.5x)")
    print(f"replay faster than vcrpy at every K: {all(r[1] < r[3] for r in rows)}")
    worst_rec = max(r[6] / r[9] for r in rows)
    print(f"recording (scrubbing, secret scan and save included) / MockTransport, worst over K: {worst_rec:.2f}x (budget <= 2x)")
    fsync = fsync_seconds(tmp)
    print(
        f"one atomic write with fsync on this disk: {fsync * 1e3:.1f} ms per save, "
        + ", ".join(f"{fsync / r[0] / r[9]:.2f}x MockTransport per interaction at K={r[0]}" for r in rows)
    )
    if len(rows) > 1:
        flat = max(r[6] / r[9] for r in rows) / min(r[6] / r[9] for r in rows)
        print(f"recording ratio, largest K over smallest: {flat:.2f} (flat is 1.0)")
    if 100 in by_k and 10000 in by_k:
        print(f"per-interaction replay cost at 10,000 / at 100: {by_k[10000][1] / by_k[100][1]:.2f}x (budget <= 1.5x)")
        print(f"per-interaction record cost at 10,000 / at 100: {by_k[10000][6] / by_k[100][6]:.2f}x")
        print(f"load time of the 10,000-interaction cassette: {by_k[10000][5] * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
