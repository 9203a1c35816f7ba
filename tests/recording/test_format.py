"""The cassette file: strict loading with file+field errors, pretty output, atomic concurrent writes."""

from __future__ import annotations

import json
import multiprocessing
import os

import pytest

from loopkit.errors import CassetteError
from loopkit.recording import (
    CassetteFile,
    Interaction,
    RecordedRequest,
    RecordedResponse,
    dump_cassette,
    load_cassette_file,
    parse_cassette,
    write_atomic,
)
from loopkit.recording._format import Chunk

GOOD = {
    "format_version": 1,
    "interactions": [
        {
            "request": {"method": "POST", "url": "https://x/v1", "headers": [["content-type", "application/json"]], "json": {"a": 1}},
            "response": {"status": 200, "chunks": [{"t": 0.01, "text": "data: 1\n\n"}]},
        }
    ],
}


def _with(path: list, value):
    data = json.loads(json.dumps(GOOD))
    target = data
    for p in path[:-1]:
        target = target[p]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(data)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "c.json: not valid JSON"),
        ("[]", "c.json: a cassette is a JSON object, got list"),
        (_with(["format_version"], 2), "c.json: format_version 2 is newer than this loopkit reads (1); upgrade loopkit"),
        (_with(["format_version"], KeyError), "c.json: format_version: expected 1, got None"),
        (_with(["format_version"], "1"), "c.json: format_version: expected 1, got '1'"),
        (_with(["interactions", 0, "request", "method"], 5), "c.json: interactions[0].request.method: Input should be a valid string"),
        (_with(["interactions", 0, "response", "status"], KeyError), "c.json: interactions[0].response.status: Field required"),
        (_with(["interactions", 0, "response", "chunks", 0, "base64"], "AA=="), "interactions[0].response.chunks[0]: Value error, a chunk holds exactly one"),
        (_with(["interactions", 0, "response", "chunks", 0, "t"], -1), "interactions[0].response.chunks[0]: Value error, 't' must not be negative"),
        (_with(["interactions", 0, "request", "colour"], "red"), "interactions[0].request.colour: Extra inputs are not permitted"),
        (_with(["interactions", 0, "response"], KeyError), "interactions[0]: Value error, 'request' and 'response' go together"),
    ],
)
def test_malformed_or_future_files_name_file_and_field(tmp_path, text, message):
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(CassetteError) as info:
        load_cassette_file(path)
    assert message in str(info.value)


def test_missing_file_is_a_cassette_error(tmp_path):
    with pytest.raises(CassetteError, match="cannot read cassette"):
        load_cassette_file(tmp_path / "nope.json")


def test_round_trip_is_stable_and_pretty():
    """Dump -> parse -> dump is identical; short containers stay on one line; JSON null bodies survive."""
    data = json.loads(_with(["interactions", 0, "request", "json"], None))
    file = parse_cassette(json.dumps(data))
    text = dump_cassette(file)
    assert dump_cassette(parse_cassette(text)) == text
    assert '"json": null' in text
    assert '{"t": 0.01, "text": "data: 1\\n\\n"}' in text
    assert text.startswith('{\n  "format_version": 1,')


def _writer(args):
    path, n, rounds = args
    big = "x" * (20_000 + n * 997)  # different sizes make a torn write visible
    for r in range(rounds):
        file = CassetteFile(
            meta={"writer": n, "round": r},
            interactions=[Interaction(request=RecordedRequest(method="GET", url=f"https://x/{n}"), response=RecordedResponse(status=200, chunks=[Chunk(text=big)]))],
        )
        write_atomic(path, dump_cassette(file))
    return n


def _reader(args):
    path, rounds = args
    seen = set()
    for _ in range(rounds):
        try:
            file = load_cassette_file(path)
        except CassetteError as exc:
            if "cannot read" in str(exc):
                continue
            raise
        seen.add(file.meta["writer"])
    return seen


def test_concurrent_writers_never_tear_a_file(tmp_path):
    """Four processes rewrite the same cassette while a fifth keeps loading it: every load is a
    whole file from one writer, and no temporary file is left behind."""
    path = str(tmp_path / "shared.json")
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(5) as pool:
        reader = pool.apply_async(_reader, ((path, 400),))
        done = pool.map(_writer, [(path, n, 25) for n in range(4)])
        seen = reader.get(timeout=60)
    assert sorted(done) == [0, 1, 2, 3]
    assert seen <= {0, 1, 2, 3}
    assert load_cassette_file(path).meta["round"] == 24
    assert os.listdir(tmp_path) == ["shared.json"]


def test_concurrent_writers_of_different_cassettes(tmp_path):
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        pool.map(_writer, [(str(tmp_path / f"c{n}.json"), n, 5) for n in range(4)])
    for n in range(4):
        assert load_cassette_file(tmp_path / f"c{n}.json").meta == {"writer": n, "round": 4}


def test_recording_namespace_is_sorted_and_complete():
    import loopkit.recording as rec

    assert list(rec.__all__) == sorted(set(rec.__all__))
    assert [n for n in rec.__all__ if not hasattr(rec, n)] == []
