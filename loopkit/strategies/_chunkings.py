"""``chunkings()``: the ways a network can split one byte stream."""

from __future__ import annotations

from typing import Any, TypeVar

from hypothesis import strategies as st

from ..errors import UsageError

T = TypeVar("T", bytes, str)


def _awkward_cuts(data: bytes | str) -> list[int]:
    """Cut positions a parser is most likely to get wrong: inside a UTF-8 sequence, around each
    line end (between ``\\r`` and ``\\n`` too), and just after ``data:``/``event:`` field names."""
    cuts: set[int] = set()
    if isinstance(data, bytes):
        cuts.update(i for i in range(1, len(data)) if 0x80 <= data[i] < 0xC0)  # continuation byte
        newline, fields = b"\n", (b"data:", b"event:")
        cr = b"\r"
    else:
        newline, fields, cr = "\n", ("data:", "event:"), "\r"  # type: ignore[assignment]
    i = data.find(newline)  # type: ignore[arg-type]
    while i != -1:
        cuts.update((i, i + 1))
        if i > 0 and data[i - 1 : i] == cr:
            cuts.add(i - 1)
        i = data.find(newline, i + 1)  # type: ignore[arg-type]
    for f in fields:
        j = data.find(f)  # type: ignore[arg-type]
        while j != -1:
            cuts.update((j + 1, j + len(f)))
            j = data.find(f, j + 1)  # type: ignore[arg-type]
    return sorted(c for c in cuts if 0 < c < len(data))


def chunkings(data: T, *, min_chunks: int = 1, max_chunks: int | None = None) -> st.SearchStrategy[list[T]]:
    """Lists of non-empty pieces whose concatenation is ``data``, cut anywhere.

    Cuts favour the awkward places: inside a multi-byte UTF-8 character, between ``\\r`` and
    ``\\n``, on either side of a line end (so an SSE event's blank line is split), and inside a
    ``data:`` field name; one byte per chunk is among the cases. Empty ``data`` gives ``[]``.

    Args:
        data: the bytes (or text) of a whole stream.
        min_chunks: fewest pieces (at most ``len(data)``).
        max_chunks: most pieces (None: one per byte at most).

    Example::

        @given(chunkings(sse_bytes))
        def test_any_chunking_parses_the_same(chunks):
            assert decode(chunks) == decode([sse_bytes])
    """
    if not isinstance(data, (bytes, str)):
        raise UsageError(f"chunkings(data) takes bytes or str, got {type(data).__name__}; encode the stream first")
    n = len(data)
    if min_chunks < 1 or (max_chunks is not None and max_chunks < min_chunks):
        raise UsageError(f"chunkings(min_chunks={min_chunks}, max_chunks={max_chunks}): need 1 <= min_chunks <= max_chunks")
    if n == 0:
        return st.just([])
    if min_chunks > n:
        raise UsageError(f"chunkings(min_chunks={min_chunks}) asks for more pieces than the {n} bytes of data allow")
    hi = n if max_chunks is None else max_chunks
    hi = min(hi, n)
    awkward = _awkward_cuts(data)
    cut = st.integers(min_value=1, max_value=n - 1) if n > 1 else st.nothing()
    if awkward:
        cut = st.sampled_from(awkward) | cut

    def split(cuts: Any) -> list[T]:
        points = [0, *sorted(cuts), n]
        return [data[a:b] for a, b in zip(points, points[1:])]

    every_byte = st.just(list(range(1, n))) if n <= hi else st.nothing()
    cut_sets = st.sets(cut, min_size=min_chunks - 1, max_size=hi - 1) if n > 1 else st.just(set())
    return st.one_of(cut_sets, every_byte).map(split)
