"""Properties: any chunking of any body survives record -> save -> load -> replay exactly, and
scrubbing across chunk boundaries equals scrubbing the whole text."""

from __future__ import annotations

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from loopkit.recording import Cassette, CassetteFile, RecordingTransport, ReplayTransport, dump_cassette, parse_cassette
from loopkit.recording._scrub import scrub_text, scrub_texts

from ._servers import Chunked

SECRETS = ["sk-proj-abcdefghijklmnopqrstuv", "AKIAIOSFODNN7EXAMPLE", "Bearer abc.def-ghi_jkl", "héllo ✓", "\r\n\r\n", "data: "]


def split(data, cuts):
    cuts = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]


@settings(max_examples=60)
@given(
    body=st.one_of(st.binary(max_size=200), st.lists(st.sampled_from(SECRETS[3:]) | st.text(max_size=8), max_size=12).map(lambda p: "".join(p).encode())),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=10),
    ctype=st.sampled_from(["text/event-stream", "application/octet-stream", "application/vnd.amazon.eventstream"]),
)
def test_any_chunking_replays_exactly(body, cuts, ctype):
    chunks = split(body, cuts)
    cassette = Cassette(None, record_mode="all")
    server = httpx.MockTransport(lambda r: httpx.Response(200, headers={"content-type": ctype}, stream=Chunked(chunks)))
    with httpx.Client(transport=RecordingTransport(server, cassette)) as c:
        with c.stream("GET", "https://x/stream") as r:
            assert list(r.iter_raw()) == chunks
    reloaded = Cassette(None, data=parse_cassette(dump_cassette(cassette.file)))
    with httpx.Client(transport=ReplayTransport(reloaded)) as c:
        with c.stream("GET", "https://x/stream") as r:
            assert list(r.iter_raw()) == chunks


@given(pieces=st.lists(st.sampled_from(SECRETS) | st.text(alphabet="ab -:\n", max_size=6), max_size=12), cuts=st.lists(st.integers(0, 300), max_size=8))
def test_scrubbing_across_chunks_equals_scrubbing_the_whole(pieces, cuts):
    text = "".join(pieces)
    parts = split(text, cuts)
    out = scrub_texts(parts)
    assert len(out) == len(parts)
    assert "".join(out) == scrub_text(text)


def test_empty_cassette_round_trips():
    assert dump_cassette(parse_cassette(dump_cassette(CassetteFile()))) == '{"format_version": 1}\n'
