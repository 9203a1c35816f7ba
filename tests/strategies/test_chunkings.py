"""chunkings(): every split concatenates back, and the awkward splits happen."""

from __future__ import annotations

import pytest
from hypothesis import given

from strategy_schemas import first_match

from loopkit.errors import UsageError
from loopkit.strategies import chunkings

SSE = 'event: message\r\ndata: {"text": "héllo 👋"}\r\n\r\ndata: [DONE]\n\n'.encode()


@given(chunkings(SSE))
def test_chunks_concatenate_to_the_data(chunks):
    assert b"".join(chunks) == SSE
    assert all(chunks)


@given(chunkings(SSE, min_chunks=3, max_chunks=5))
def test_bounds_hold(chunks):
    assert 3 <= len(chunks) <= 5


@given(chunkings("data: ä\n\n"))
def test_text_splits_as_text(chunks):
    assert "".join(chunks) == "data: ä\n\n"


def _splits_utf8(chunks):
    return any(c and 0x80 <= c[0] < 0xC0 for c in chunks)


def test_splits_inside_a_utf8_sequence():
    chunks = first_match(chunkings(SSE), _splits_utf8)
    assert _splits_utf8(chunks)


def test_splits_between_cr_and_lf():
    chunks = first_match(chunkings(SSE), lambda cs: any(a.endswith(b"\r") and b.startswith(b"\n") for a, b in zip(cs, cs[1:])))
    assert len(chunks) >= 2


def test_one_byte_per_chunk_is_a_case():
    data = b"data: x\n\n"
    assert first_match(chunkings(data), lambda cs: len(cs) == len(data)) == [bytes([b]) for b in data]


def test_empty_data_has_no_chunks():
    assert first_match(chunkings(b""), lambda cs: True) == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: chunkings([b"a"]), "bytes or str"),
        (lambda: chunkings(b"abc", min_chunks=0), "min_chunks"),
        (lambda: chunkings(b"abc", min_chunks=3, max_chunks=2), "min_chunks"),
        (lambda: chunkings(b"ab", min_chunks=3), "more pieces"),
    ],
)
def test_bad_input_raises_eagerly(call, message):
    with pytest.raises(UsageError, match=message):
        call()
