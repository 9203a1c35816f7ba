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
