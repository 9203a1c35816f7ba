"""The pytest plugin's fixtures, tested end to end with pytester."""

from __future__ import annotations

from importlib.metadata import entry_points

pytest_plugins = ["pytester"]

# installed, the plugin loads through its pytest11 entry point; from a bare checkout, by name
PLUGIN_ARGS = () if any(ep.value == "loopkit.pytest_plugin" for ep in entry_points(group="pytest11")) else ("-p", "loopkit.pytest_plugin")


def test_scripted_provider_fixture_fails_on_unused_turns(pytester) -> None:
    pytester.makepyfile(
        """
        import loopkit

        def test_uses_all(scripted_provider, loopkit_clock):
            p = scripted_provider(["hi"])
            assert loopkit.run(p, "x", clock=loopkit_clock).text == "hi"

        def test_leaves_one(scripted_provider):
            p = scripted_provider(["hi", "unused"])
            loopkit.run(p, "x")
        """
    )
    result = pytester.runpytest(*PLUGIN_ARGS)
    result.assert_outcomes(passed=2, errors=1)  # the test body passes; its teardown errors
    result.stdout.fnmatch_lines(["*1 of 2 turn(s) never used*"])


def test_incomplete_ok_marker_allows_unused_turns(pytester) -> None:
    pytester.makepyfile(
        """
        import loopkit, pytest

        @pytest.mark.loopkit_incomplete_ok
        def test_leaves_one(scripted_provider):
            loopkit.run(scripted_provider(["hi", "unused"]), "x")
        """
    )
    pytester.runpytest(*PLUGIN_ARGS).assert_outcomes(passed=1)


def test_scripted_delays_are_recorded_not_slept(pytester) -> None:
    pytester.makepyfile(
        """
        import time, loopkit
        from loopkit.script import Delay, Turn

        def test_slow_stream(scripted_provider, loopkit_simulator):
            started = time.perf_counter()
            p = scripted_provider([Turn(text="late", faults=[Delay(seconds=30)])])
            assert loopkit.run(p, "x").text == "late"
            assert scripted_provider.sleeps == [30]
            sim = loopkit_simulator("anthropic", [Turn(text="late", faults=[Delay(seconds=20)])])
            from loopkit.providers import adapter_class
            adapter = adapter_class("anthropic")(model="m", base_url=sim.base_url, api_key="k")
            assert loopkit.run(adapter, "x").text == "late"
            assert loopkit_simulator.sleeps == [20]
            assert time.perf_counter() - started < 10
        """
    )
    pytester.runpytest(*PLUGIN_ARGS).assert_outcomes(passed=1)


SNAPSHOT_TEST = """
import itertools, uuid
import loopkit
from loopkit.fakes import ScriptedProvider
from loopkit.script import Turn, call
from loopkit.serde import dump_messages

@loopkit.tool
def add(a: int, b: int) -> int:
    "Add."
    return a + b

def test_run(loopkit_snapshot):
    # random ids and the wall clock: a plain snapshot would differ on every run
    ids = lambda: "toolu_" + uuid.uuid4().hex
    turns = [Turn(tool_calls=[call("add", {"a": 1, "b": 2})]), "ANSWER"]
    result = loopkit.run(ScriptedProvider(turns, ids=ids), "go", tools=[add])
    assert result == loopkit_snapshot
    assert dump_messages(result.messages) == loopkit_snapshot
"""


def test_loopkit_snapshot_is_deterministic_and_still_catches_a_change(pytester) -> None:
    pytester.makepyfile(test_snap=SNAPSHOT_TEST.replace("ANSWER", "3"))
    pytester.runpytest(*PLUGIN_ARGS, "--snapshot-update").assert_outcomes(passed=1)
    stored = (pytester.path / "__snapshots__" / "test_snap.ambr").read_text()
    assert "timestamp" not in stored and "'id': 'call_1'" in stored and "'tool_call_id': 'call_1'" in stored
    pytester.runpytest(*PLUGIN_ARGS).assert_outcomes(passed=1)  # a new run, new ids, new clock: same snapshot
    pytester.makepyfile(test_snap=SNAPSHOT_TEST.replace("ANSWER", "4"))
    changed = pytester.runpytest(*PLUGIN_ARGS)
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(["*'text': '4'*"])
