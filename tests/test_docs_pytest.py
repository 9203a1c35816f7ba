"""docs/pytest.md is true: its python blocks run as written (in order, one namespace, from the
repository root), and each complete test file it shows (a ``text`` block whose first line is
``# test_<name>.py``) passes under pytest with loopkit's plugins, run twice where it records a
snapshot or a cassette the first time."""

from __future__ import annotations

import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "pytest.md"
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
TEST_FILES = {m.group(1): body for lang, body in BLOCKS if lang == "text" and (m := re.match(r"# (test_\w+\.py)\n", body))}
_INSTALLED = {ep.value for ep in entry_points(group="pytest11")}
PLUGIN_ARGS = [a for m in ("loopkit.pytest_plugin", "loopkit.pytest_cassettes") if m not in _INSTALLED for a in ("-p", m)]


def test_python_blocks_run_as_written(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "docs_pytest"}
    blocks = [body for lang, body in BLOCKS if lang == "python"]
    assert blocks
    for body in blocks:
        exec(compile(body, str(DOC), "exec"), namespace)


def test_the_page_shows_complete_test_files() -> None:
    assert set(TEST_FILES) == {"test_agent.py", "test_simulator.py", "test_snapshot.py", "test_recording.py"}


@pytest.mark.parametrize("name", sorted(TEST_FILES))
def test_each_test_file_passes(pytester, monkeypatch, name: str) -> None:
    # the inner run is a plain session even when this suite runs under pytest-xdist (syrupy prints
    # no report in an xdist worker)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    # saved under another name: the suite's own test modules (test_snapshot, ...) are imported already
    pytester.makepyfile(**{"test_doc_" + name[5:-3]: TEST_FILES[name]})
    first = ["--snapshot-update"] if "snapshot" in TEST_FILES[name] else []
    pytester.runpytest(*PLUGIN_ARGS, *first).assert_outcomes(passed=1)
    if name == "test_recording.py":
        assert (pytester.path / "cassettes" / "adder" / "anthropic.json").is_file()
    if first or name == "test_recording.py":  # the second run replays what the first stored
        again = pytester.runpytest(*PLUGIN_ARGS)
        again.assert_outcomes(passed=1)
        assert "snapshot" not in name or "2 snapshots passed" in again.stdout.str()


def test_every_fixture_marker_and_option_is_documented(pytester) -> None:
    text = DOC.read_text(encoding="utf-8")
    for fixture in ("scripted_provider", "loopkit_simulator", "loopkit_clock", "loopkit_snapshot", "loopkit_cassette"):
        assert f"### `{fixture}`" in text, fixture
    for name in ("loopkit_incomplete_ok", "loopkit_cassette(", "--loopkit-record", "--loopkit-provider", "--loopkit-adapter", "loopkit_scenarios", "loopkit_cassette_dir"):
        assert name in text, name
    # and nothing the plugins register is missing from the page
    result = pytester.runpytest(*PLUGIN_ARGS, "-p", "no:randomly", "--help")
    options = set(re.findall(r"(--loopkit-[\w-]+)", result.stdout.str()))
    inis = set(re.findall(r"^  (loopkit_\w+) ", result.stdout.str(), re.M))
    assert options and inis
    assert all(o in text for o in options | inis), (options | inis) - {o for o in options | inis if o in text}
    fixtures = pytester.runpytest(*PLUGIN_ARGS, "--fixtures").stdout.str()
    for name in re.findall(r"^(loopkit_\w+|scripted_provider)\b", fixtures, re.M):
        assert f"`{name}`" in text, name
