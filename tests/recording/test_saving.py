"""Nothing recorded is lost (issue 11): record modes mean vcrpy's, a failed session saves nothing,
and writers of one cassette merge under a file lock (two pytest-xdist workers keep both)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from loopkit.errors import CassetteError, NoMatchingInteraction
from loopkit.recording import RECORD_MODES, Cassette, CassetteTransport, load_cassette_file, use_cassette
from loopkit.recording._bodies import chunk_bytes

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[2]
URL = "https://api.example.com"


def server(generation: str, hits: list[str]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        hits.append(request.url.path)
        return httpx.Response(200, headers={"content-type": "text/plain"}, text=f"{generation}:{request.url.path}")

    return httpx.MockTransport(answer)


# --- the same steps through loopkit and through vcrpy --------------------------------------------


def loopkit_session(path: Path, mode: str, paths: list[str], generation: str) -> tuple[bool, list[str]]:
    hits: list[str] = []
    try:
        with use_cassette(path, record_mode=mode, fail_unplayed=False) as cassette:
            with httpx.Client(transport=CassetteTransport(cassette, server(generation, hits))) as client:
                for p in paths:
                    client.get(URL + p)
    except (NoMatchingInteraction, CassetteError):
        return True, hits
    return False, hits


def loopkit_saved(path: Path) -> list[str] | None:
    if not path.exists():
        return None
    return [b"".join(chunk_bytes(i.response, where="")).decode() for i in load_cassette_file(path).interactions]


def vcr_session(path: Path, mode: str, paths: list[str], generation: str) -> tuple[bool, list[str]]:
    vcr = pytest.importorskip("vcr")
    from vcr.errors import CannotOverwriteExistingCassetteException

    hits: list[str] = []
    options = {"drop_unused_requests": True} if mode == "rewrite" else {}
    try:
        with vcr.VCR(record_mode="all" if mode == "rewrite" else mode, **options).use_cassette(str(path)):
            with httpx.Client(transport=server(generation, hits)) as client:
                for p in paths:
                    client.get(URL + p)
    except CannotOverwriteExistingCassetteException:
        return True, hits
    return False, hits


def vcr_saved(path: Path) -> list[str] | None:
    import yaml

    if not path.exists():
        return None
    data = yaml.safe_load(path.read_text())
    out = []
    for inter in data["interactions"]:
        body = inter["response"]["content"] if "content" in inter["response"] else inter["response"]["body"]["string"]
        out.append(body.decode() if isinstance(body, bytes) else body)
    return out


SYSTEMS = {"loopkit": (loopkit_session, loopkit_saved, "c.json"), "vcrpy": (vcr_session, vcr_saved, "c.yaml")}


def outcome(system: str, tmp: Path, mode: str, present: bool, request: str) -> tuple:
    session, saved, name = SYSTEMS[system]
    path = tmp / system / name
    path.parent.mkdir()
    if present:
        assert session(path, "once", ["/a"], "old") == (False, ["/a"])
    before = path.read_bytes() if present else None
    error, hits = session(path, mode, [request], "new")
    after = saved(path)
    unchanged = before is not None and path.read_bytes() == before
    return error, hits, after, unchanged


# what each mode does, one row per (mode, file, request): (raises, requests that reached the
# server, the bodies the file holds afterwards (None: no file), the file left byte for byte)
TABLE = {
    ("none", "absent", "/a"): (True, [], None, False),
    ("none", "present", "/a"): (False, [], ["old:/a"], True),
    ("none", "present", "/b"): (True, [], ["old:/a"], True),
    ("once", "absent", "/a"): (False, ["/a"], ["new:/a"], False),
    ("once", "present", "/a"): (False, [], ["old:/a"], True),
    ("once", "present", "/b"): (True, [], ["old:/a"], True),
    ("new_episodes", "absent", "/a"): (False, ["/a"], ["new:/a"], False),
    ("new_episodes", "present", "/a"): (False, [], ["old:/a"], True),
    ("new_episodes", "present", "/b"): (False, ["/b"], ["old:/a", "new:/b"], False),
    ("all", "absent", "/a"): (False, ["/a"], ["new:/a"], False),
    ("all", "present", "/a"): (False, ["/a"], ["new:/a"], False),
    ("all", "present", "/b"): (False, ["/b"], ["old:/a", "new:/b"], False),
    ("rewrite", "absent", "/a"): (False, ["/a"], ["new:/a"], False),
    ("rewrite", "present", "/a"): (False, ["/a"], ["new:/a"], False),
    ("rewrite", "present", "/b"): (False, ["/b"], ["new:/b"], False),
}


def test_the_table_covers_every_mode():
    assert {mode for mode, _, _ in TABLE} == set(RECORD_MODES)


@pytest.mark.parametrize(("mode", "file", "request_path"), list(TABLE))
def test_record_modes_keep_what_vcrpys_modes_keep(tmp_path, mode, file, request_path):
    """Regression: mode 'all' kept a different set of interactions from vcrpy's 'all'. Each row
    runs the same steps through loopkit and through vcrpy (``rewrite`` against vcrpy's ``all`` with
    ``drop_unused_requests``, which is what pytest-recording's ``rewrite`` amounts to)."""
    expected = TABLE[(mode, file, request_path)]
    mine = outcome("loopkit", tmp_path, mode, file == "present", request_path)
    theirs = outcome("vcrpy", tmp_path, mode, file == "present", request_path)
    assert mine == expected
    assert theirs[:3] == expected[:3]  # vcrpy re-serialises an unchanged file; loopkit leaves it alone


# --- a failed session saves nothing --------------------------------------------------------------


@pytest.mark.parametrize("mode", ["once", "new_episodes", "all", "rewrite"])
def test_a_block_that_fails_while_recording_leaves_the_file_byte_for_byte(tmp_path, mode):
    path = tmp_path / "c.json"
    hits: list[str] = []
    with use_cassette(path, record_mode="once") as cassette:
        with httpx.Client(transport=CassetteTransport(cassette, server("old", hits))) as client:
            client.get(URL + "/a")
            client.get(URL + "/b")
    if mode == "once":
        path.unlink()  # once records only into a file that does not exist
    before = path.read_bytes() if path.exists() else None
    with pytest.raises(RuntimeError, match="half-way"):
        with use_cassette(path, record_mode=mode) as cassette:
            with httpx.Client(transport=CassetteTransport(cassette, server("new", hits))) as client:
                client.get(URL + "/c")
                raise RuntimeError("the test failed half-way")
    assert cassette.recorded  # something was recorded, and dropped
    assert (path.read_bytes() if path.exists() else None) == before


# --- writers of one file merge under the lock ----------------------------------------------------


@pytest.mark.parametrize("mode", ["once", "new_episodes", "all", "rewrite"])
def test_two_writers_of_one_file_keep_both_interactions(tmp_path, mode):
    path = tmp_path / "c.json"
    hits: list[str] = []
    if mode != "once":
        with use_cassette(path, record_mode="once") as cassette:
            with httpx.Client(transport=CassetteTransport(cassette, server("old", hits))) as client:
                client.get(URL + "/a")
    first, second = Cassette(path, record_mode=mode), Cassette(path, record_mode=mode)  # both open before either saves
    for cassette, p in ((first, "/x"), (second, "/y")):
        with httpx.Client(transport=CassetteTransport(cassette, server("new", hits))) as client:
            client.get(URL + p)
    first.save()
    second.save()
    kept = {"once": ["new:/x", "new:/y"], "new_episodes": ["old:/a", "new:/x", "new:/y"], "all": ["old:/a", "new:/x", "new:/y"], "rewrite": ["new:/x", "new:/y"]}
    assert loopkit_saved(path) == kept[mode]


def test_saving_twice_appends_only_what_is_new(tmp_path):
    path = tmp_path / "c.json"
    hits: list[str] = []
    cassette = Cassette(path, record_mode="rewrite")
    with httpx.Client(transport=CassetteTransport(cassette, server("new", hits))) as client:
        client.get(URL + "/a")
        cassette.save()
        client.get(URL + "/b")
        cassette.save()
        cassette.save()
    assert loopkit_saved(path) == ["new:/a", "new:/b"]


def test_lock_files_stay_out_of_the_cassette_folder(tmp_path):
    path = tmp_path / "c.json"
    with use_cassette(path, record_mode="once") as cassette:
        with httpx.Client(transport=CassetteTransport(cassette, server("new", []))) as client:
            client.get(URL + "/a")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]


# --- through pytest ------------------------------------------------------------------------------

XDIST_TEST = """
import os, time
from pathlib import Path

import httpx
import pytest


def server(request):
    return httpx.Response(200, headers={"content-type": "text/plain"}, text="answer:" + request.url.path)


def record(cassette, barrier, n):
    # wait (a while) until the other worker has opened the cassette too, so that both hold the
    # file as it was before either saves: the race the lock and the merge must win
    (barrier / f"ready-{n}").touch()
    deadline = time.monotonic() + 20
    while os.environ.get("PYTEST_XDIST_WORKER") and len(list(barrier.glob("ready-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    with httpx.Client(transport=cassette.transport(httpx.MockTransport(server))) as client:
        assert client.get(f"https://api.example.com/item/{n}").text == f"answer:/item/{n}"


# collected as [1-once, 1-new_episodes, 2-once, 2-new_episodes]: xdist's load scheduling sends
# the first two to one worker and the last two to the other, so each worker records into both files
@pytest.mark.parametrize("mode", ["once", "new_episodes"])
@pytest.mark.parametrize("n", [1, 2])
def test_worker(request, mode, n):
    request.node.add_marker(pytest.mark.loopkit_cassette(f"shared-{mode}.json", record_mode=mode, fail_unplayed=False))
    barrier = Path(os.environ["BARRIER"]) / mode
    barrier.mkdir(exist_ok=True)
    record(request.getfixturevalue("loopkit_cassette"), barrier, n)
"""


def test_two_xdist_workers_recording_into_one_cassette_keep_both(pytester, monkeypatch, tmp_path):
    """Regression: two workers recording into one file (modes once and new_episodes) lost one
    worker's interaction, so replay then failed."""
    pytest.importorskip("xdist")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("BARRIER", str(tmp_path))
    pytester.makepyfile(test_shared=XDIST_TEST)
    folder = pytester.path / "cassettes"  # where the plugin resolves a marker's relative path
    folder.mkdir()
    existing = folder / "shared-new_episodes.json"  # new_episodes adds to a file that exists
    with use_cassette(existing, record_mode="once") as cassette:
        with httpx.Client(transport=CassetteTransport(cassette, server("answer", []))) as client:
            client.get(URL + "/item/0")
    # three interpreters start (the controller, two workers): without the plugins this test does
    # not use, each starts in a third of the time
    unused = [a for p in ("hypothesispytest", "syrupy", "anyio", "langsmith_plugin", "examples") for a in ("-p", f"no:{p}")]
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *unused, "-p", "xdist", "-n", "2")
    result.assert_outcomes(passed=4)
    for name, urls in (("shared-once.json", ["/item/1", "/item/2"]), ("shared-new_episodes.json", ["/item/0", "/item/1", "/item/2"])):
        assert sorted(i.request.url.removeprefix(URL) for i in load_cassette_file(folder / name).interactions) == urls, name
    # replay only (the default mode none, no xdist): a lost interaction would be a miss
    replay = XDIST_TEST.replace("record_mode=mode, ", "")
    pytester.makepyfile(test_shared=replay)
    pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist").assert_outcomes(passed=4)


FAILING_TEST = """
import httpx


def server(request):
    return httpx.Response(200, headers={"content-type": "text/plain"}, text="GENERATION:" + request.url.path)


def test_agent(loopkit_cassette):
    with httpx.Client(transport=loopkit_cassette.transport(httpx.MockTransport(server))) as client:
        client.get("https://api.example.com/one")
        FAIL_HALF_WAY
        client.get("https://api.example.com/two")
"""


@pytest.mark.parametrize("mode", ["all", "rewrite", "new_episodes"])
def test_a_test_that_fails_while_recording_keeps_the_old_cassette_byte_for_byte(pytester, mode):
    """Regression: ``--loopkit-record=all`` on a test that failed half-way replaced a good
    two-interaction cassette with a partial one."""
    pytester.makepyfile(test_agent=FAILING_TEST.replace("GENERATION", "old").replace("FAIL_HALF_WAY", "pass"))
    pytester.runpytest("-p", "no:cacheprovider", "--loopkit-record=once").assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_agent" / "test_agent.json"
    before = cassette.read_bytes()
    assert len(load_cassette_file(cassette).interactions) == 2
    pytester.makepyfile(test_agent=FAILING_TEST.replace("GENERATION", "new").replace("FAIL_HALF_WAY", "assert False, 'half-way'"))
    if mode == "new_episodes":
        pytester.path.joinpath("test_agent.py").write_text(
            FAILING_TEST.replace("GENERATION", "new").replace("FAIL_HALF_WAY", "client.get('https://api.example.com/three'); assert False, 'half-way'")
        )
    pytester.runpytest("-p", "no:cacheprovider", f"--loopkit-record={mode}").assert_outcomes(failed=1)
    assert cassette.read_bytes() == before


def test_record_help_says_where_loopkit_differs_from_vcrpy(pytester, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # help text wraps at the terminal's width, and may break "pytest-recording" at its hyphen
    out = pytester.runpytest("--help").stdout.str()
    flat = " ".join(out.split())
    assert "--loopkit-record=MODE" in flat
    for words in ("as in vcrpy", "rewrite", "pytest-recording", "a test that fails saves nothing", "file lock"):
        assert words in flat, words


def test_vcrpy_glue_saves_nothing_on_an_exception_and_knows_rewrite(tmp_path):
    from loopkit.recording import make_vcr

    path = tmp_path / "v.json"
    hits: list[str] = []

    def session(mode: str, paths: list[str], generation: str, fail: bool = False) -> None:
        with make_vcr(record_mode=mode).use_cassette(str(path)):
            with httpx.Client(transport=server(generation, hits)) as client:
                for p in paths:
                    client.get(URL + p)
                if fail:
                    raise RuntimeError("the test failed half-way")

    session("once", ["/a", "/b"], "old")
    before = path.read_bytes()
    with pytest.raises(RuntimeError):
        session("all", ["/a"], "new", fail=True)
    assert path.read_bytes() == before
    session("rewrite", ["/b"], "new")
    assert loopkit_saved(path) == ["new:/b"]
