"""The scenario pytest plugin end to end with pytester: opt-in collection from the folders the ini
option names, one item per scenario × provider with readable ids, skips with reasons, strict
xfails, failure reports, malformed files, tool references that do not import, provider selection
and snapshots. (Spreading items over xdist workers is measured by benchmarks/bench_scenarios.py.)"""

from __future__ import annotations

from importlib.metadata import entry_points

pytest_plugins = ["pytester"]

# installed, the plugin loads through its pytest11 entry point; from a bare checkout, by name
PLUGIN_ARGS = () if any(ep.value == "loopkit.pytest_scenarios" for ep in entry_points(group="pytest11")) else ("-p", "loopkit.pytest_scenarios")

TEXT = """
name: hello
script: [Hello.]
expect:
  end: {reason: stop, model_calls: 1, text: Hello.}
"""
WRONG = """
name: wrong
script: [Hello.]
expect:
  end: {reason: stop, model_calls: 2}
"""
OPT_IN = "[pytest]\nloopkit_scenarios = scenarios\n"
ABORTED = """
name: aborted
script: [{text: x, aborted: true}]
xfail: {scripted: "expected to fail here"}
expect:
  end: {reason: stop}
"""


def test_collects_one_item_per_scenario_and_provider(pytester) -> None:
    pytester.mkdir("scenarios")
    pytester.makeini(OPT_IN)
    pytester.mkdir("scenarios/basics")
    (pytester.path / "scenarios/basics/hello.yaml").write_text(TEXT)
    result = pytester.runpytest(*PLUGIN_ARGS, "--collect-only", "-q", "scenarios")
    result.stdout.fnmatch_lines(
        [
            "scenarios/basics/hello.yaml::hello[[]scripted[]]",
            "scenarios/basics/hello.yaml::hello[[]openai_chat[]]",
            "scenarios/basics/hello.yaml::hello[[]openai_responses[]]",
            "scenarios/basics/hello.yaml::hello[[]anthropic[]]",
            "scenarios/basics/hello.yaml::hello[[]gemini[]]",
            "scenarios/basics/hello.yaml::hello[[]bedrock[]]",
            "6 tests collected*",
        ]
    )


def test_outcomes_pass_fail_skip_and_strict_xfail(pytester) -> None:
    pytester.mkdir("scenarios")
    pytester.makeini(OPT_IN)
    (pytester.path / "scenarios/hello.yaml").write_text(TEXT)
    (pytester.path / "scenarios/wrong.yaml").write_text(WRONG)
    (pytester.path / "scenarios/aborted.yaml").write_text(ABORTED)
    result = pytester.runpytest(*PLUGIN_ARGS, "--loopkit-provider", "scripted", "--loopkit-provider", "bedrock", "-rsx", "scenarios")
    # hello passes on both; wrong fails on both; aborted: xfail on scripted, skipped (no wire form) on bedrock
    result.assert_outcomes(passed=2, failed=2, skipped=1, xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "*end.model_calls*2*1*",
            "*SKIPPED*an aborted stop comes from the caller's abort signal*",
            "*XFAIL*aborted.yaml::aborted[[]scripted[]]*expected to fail here*",
        ]
    )


def test_ini_option_chooses_the_folders(pytester) -> None:
    pytester.mkdir("cases")
    pytester.mkdir("other")
    (pytester.path / "cases/hello.yaml").write_text(TEXT)
    (pytester.path / "other/not_a_scenario.yaml").write_text("just: data\n")
    pytester.makeini("[pytest]\nloopkit_scenarios = cases\n")
    result = pytester.runpytest(*PLUGIN_ARGS, "--loopkit-provider", "scripted", ".")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["loopkit scenarios: cases"])


def test_paths_are_relative_to_the_ini_file_and_may_name_single_files(pytester) -> None:
    pytester.mkdir("project")
    pytester.mkdir("project/checks")
    (pytester.path / "project/checks/hello.yaml").write_text(TEXT)
    (pytester.path / "project/checks/other.yaml").write_text(WRONG)
    (pytester.path / "project/pyproject.toml").write_text('[tool.pytest.ini_options]\nloopkit_scenarios = ["checks/hello.yaml"]\n')
    result = pytester.runpytest(*PLUGIN_ARGS, "--loopkit-provider", "scripted", "-c", "project/pyproject.toml", "project")
    result.assert_outcomes(passed=1)


def test_nothing_is_collected_without_the_ini_option(pytester) -> None:
    """An unrelated project's scenarios/login.yaml is not loopkit's business."""
    pytester.mkdir("scenarios")
    (pytester.path / "scenarios/login.yaml").write_text("steps:\n  - open: /login\n  - type: {user: bob}\n")
    pytester.makepyfile(test_app="def test_app():\n    assert True\n")
    result = pytester.runpytest(*PLUGIN_ARGS)
    result.assert_outcomes(passed=1)
    assert result.ret == 0
    assert "loopkit scenarios" not in result.stdout.str()


def test_a_tool_reference_that_does_not_import_fails_its_items_and_the_session_goes_on(pytester) -> None:
    pytester.mkdir("scenarios")
    pytester.makeini(OPT_IN)
    pytester.mkpydir("myagent")
    (pytester.path / "myagent/tools.py").write_text("def lookup_weather(city: str) -> str:\n    return 'sunny'\n")
    (pytester.path / "scenarios/typo.yaml").write_text(
        "tools: {lookup: 'myagent.tools:lookup_wether'}\nscript: [Hi.]\nexpect:\n  end: {reason: stop}\n"
    )
    (pytester.path / "scenarios/hello.yaml").write_text(TEXT)
    pytester.makepyfile(test_after="def test_after():\n    assert True\n")
    result = pytester.runpytest(*PLUGIN_ARGS, "--loopkit-provider", "scripted", "--loopkit-provider", "anthropic", "-p", "no:randomly")
    assert result.ret == 1, result.stdout.str()  # tests failed; not 3 (internal error)
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(["*scenarios/typo.yaml: tool 'lookup'*'myagent.tools' has no attribute 'lookup_wether'*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_a_malformed_file_is_a_collection_error_with_line_numbers(pytester) -> None:
    pytester.mkdir("scenarios")
    pytester.makeini(OPT_IN)
    (pytester.path / "scenarios/bad.yaml").write_text("script: [Hi.]\nexpect:\n  end: {reason: stopped}\n")
    result = pytester.runpytest(*PLUGIN_ARGS, "scenarios")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*scenarios/bad.yaml:3:17: expect.end.reason: input should be 'stop'*(got 'stopped')*"])


def test_an_unknown_provider_option_is_a_usage_error(pytester) -> None:
    result = pytester.runpytest(*PLUGIN_ARGS, "--loopkit-provider", "antropic")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--loopkit-provider: unknown provider 'antropic' (did you mean 'anthropic'?)*"])


def test_snapshot_of_the_transcript(pytester) -> None:
    pytester.mkdir("scenarios")
    pytester.makeini(OPT_IN)
    (pytester.path / "scenarios/snap.yaml").write_text(TEXT.replace("name: hello", "name: snap") + "  snapshot: true\n")
    first = pytester.runpytest(*PLUGIN_ARGS, "--loopkit-provider", "scripted", "--snapshot-update", "scenarios")
    first.assert_outcomes(passed=1)
    stored = (pytester.path / "scenarios/__snapshots__/snap.ambr").read_text()
    assert "# name: snap[scripted]" in stored and "'text': 'Hello.'" in stored
    again = pytester.runpytest(*PLUGIN_ARGS, "--loopkit-provider", "scripted", "--loopkit-provider", "bedrock", "scenarios")
    again.assert_outcomes(passed=1, failed=1)  # bedrock has no stored snapshot yet
    (pytester.path / "scenarios/__snapshots__/snap.ambr").write_text(stored.replace("'Hello.'", "'Bye.'"))
    changed = pytester.runpytest(*PLUGIN_ARGS, "--loopkit-provider", "scripted", "scenarios")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(["*the transcript differs from its snapshot*"])



def test_a_path_that_does_not_exist_is_a_usage_error(pytester) -> None:
    pytester.makeini("[pytest]\nloopkit_scenarios = scenarois\n")
    result = pytester.runpytest(*PLUGIN_ARGS)
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*loopkit_scenarios (ini option, relative to the ini file): no such file or folder: */scenarois*"])
