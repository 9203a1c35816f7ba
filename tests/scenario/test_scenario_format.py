"""The scenario format: every broken file in ``broken/`` is reported with file, line, column, the
path of the offending key and what was expected; shorthands and code-built scenarios validate."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopkit.errors import ScenarioError, UsageError
from loopkit.scenario import Scenario, ScenarioFileError, load_all
from loopkit.scenario.loader import load_path, load_text
from loopkit.script import HttpFault, Turn, call

BROKEN = Path(__file__).parent / "broken"

# file -> every problem as (line, column, path, a fragment of the message)
EXPECTED: dict[str, list[tuple[int, int, str, str]]] = {
    "bad_event.yaml": [
        (6, 7, "expect.events[1]", "unknown event type 'tool_execution_ends' (did you mean 'tool_execution_end'?)"),
        (7, 28, "expect.events[2].tool_execution_end.is_eror", "unknown key 'is_eror' (did you mean 'is_error'?); expected one of: type, round, call"),
    ],
    "bad_regex.yaml": [(3, 29, "expect.end.text", "regex '(unclosed' does not compile")],
    "bad_stop_reason.yaml": [(3, 18, "script[0].stop_reason", "input should be 'stop', 'length', 'toolUse', 'error' or 'aborted' (got 'finished')")],
    "bad_tool_kind.yaml": [(2, 8, "tools.sum", "unknown tool kind 'ad' (did you mean 'add'?); expected one of echo, add, raises")],
    "call_by_both.yaml": [(5, 7, "expect.calls[0]", "address a call by round and call, or by id, not both")],
    "duplicate_key.yaml": [(4, 1, "script", "duplicate key 'script' (the first is on line 1)")],
    "empty.yaml": [(1, 1, "", "the file is empty; expected a mapping with name, script and expect")],
    "field_not_for_kind.yaml": [(2, 9, "tools.echo", "key(s) seconds do not apply to a 'echo' tool; it takes kind, description")],
    "missing_expect.yaml": [(1, 1, "", "missing required key 'expect'")],
    "not_a_mapping.yaml": [(1, 1, "", "a scenario is a mapping with name, script and expect; got list")],
    "not_yaml.yaml": [(5, 1, "", "not valid YAML: while scanning a quoted scalar (line 2, column 11) found unexpected end of stream")],
    "steering_without_point.yaml": [(3, 5, "steering[0]", "say when with exactly one of at_start: true, after_call")],
    "two_faults_in_one.yaml": [(3, 9, "script[0].faults[0]", "a fault is exactly one of http, mid_stream_error, truncate, delay")],
    "unknown_key.yaml": [(4, 23, "expect.end.model_call", "unknown key 'model_call' (did you mean 'model_calls'?); expected one of: reason, model_calls, text, error, pending")],
    "unknown_provider.yaml": [(1, 23, "providers[1]", "unknown provider 'antropic' (did you mean 'anthropic'?)")],
    "wrong_types.yaml": [
        (2, 19, "config.max_iterations", "input should be a valid integer, unable to parse string as an integer (got 'three')"),
        (3, 12, "config.retries", "input should be greater than or equal to 0 (got -1)"),
        (6, 32, "script[0].tool_calls[0].arguments", "expected a valid dictionary or a valid string (got 5)"),
        (8, 36, "expect.end.model_calls", "input should be a valid integer"),
    ],
}


def test_every_broken_file_has_expectations() -> None:
    assert sorted(p.name for p in BROKEN.glob("*.yaml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_file_reports_every_problem_with_line_and_column(name: str) -> None:
    path = BROKEN / name
    with pytest.raises(ScenarioFileError) as info:
        load_path(path)
    got = [(p.line, p.column, p.path) for p in info.value.problems]
    assert got == [(line, col, where) for line, col, where, _ in EXPECTED[name]]
    for problem, (_, _, _, fragment) in zip(info.value.problems, EXPECTED[name]):
        assert problem.source == str(path)
        assert fragment in problem.message
        assert str(problem).startswith(f"{path}:{problem.line}:{problem.column}: ")
    assert isinstance(info.value, ScenarioError)


def test_load_all_reports_problems_of_every_file_together() -> None:
    with pytest.raises(ScenarioFileError) as info:
        load_all([BROKEN])
    assert {Path(p.source).name for p in info.value.problems} == set(EXPECTED)
    assert str(info.value).startswith(f"{sum(map(len, EXPECTED.values()))} problem(s) in ")


def test_xfail_for_an_unknown_provider_points_at_the_key() -> None:
    with pytest.raises(ScenarioFileError) as info:
        load_text("name: x\nscript: [Hi.]\nxfail: {antropic: because}\nexpect:\n  end: {reason: stop}\n", source="x.yaml")
    (problem,) = info.value.problems
    assert (problem.line, problem.column, problem.path) == (3, 9, "xfail.antropic")


def test_shorthands_expand_to_the_long_form() -> None:
    short = load_text(
        """
        name: s
        prompt: Hi.
        tools: {add: add}
        script: [Hello.]
        steering: [{poll: 1, messages: Stop.}]
        expect:
          end: {reason: stop, text: Hello.}
          events: [agent_start, {turn_end: {round: 1}}]
        """.replace("\n        ", "\n")
    )
    long = load_text(
        """
        name: s
        prompt: [Hi.]
        tools: {add: {kind: add}}
        script: [{text: Hello.}]
        steering: [{poll: 1, messages: [Stop.]}]
        expect:
          end: {reason: stop, text: {equals: Hello.}}
          events: [{type: agent_start}, {type: turn_end, round: 1}]
        """.replace("\n        ", "\n")
    )
    assert short == long


def test_name_defaults_to_the_file_stem(tmp_path: Path) -> None:
    f = tmp_path / "my_case.yaml"
    f.write_text("script: [Hi.]\nexpect:\n  end: {reason: stop}\n")
    assert Scenario.load(f).name == "my_case"


def test_a_scenario_built_in_code_takes_turn_objects() -> None:
    s = Scenario(
        name="coded",
        tools={"add": "add"},
        script=[Turn(faults=[HttpFault(status=429, retry_after=1)]), Turn(tool_calls=[call("add", {"a": 1, "b": 2}, id="c1")]), "3"],
        config={"retries": 1},
        expect={"end": {"reason": "stop", "model_calls": 2}, "calls": [{"id": "c1", "text": "3"}], "sleeps": [1.0]},
    )
    result = s.run("scripted")
    assert result.passed and result.status == "passed" and result.failures == []


def test_a_scenario_built_in_code_reports_problems_by_path() -> None:
    with pytest.raises(ScenarioFileError) as info:
        Scenario(name="x", script=["Hi."], expect={"end": {"reason": "done"}})
    (problem,) = info.value.problems
    assert (problem.source, problem.line, problem.path) == ("<code>", 0, "expect.end.reason")
    assert str(problem).startswith("<code>: expect.end.reason: input should be 'stop'")


def test_turn_objects_round_trip_through_the_file_form() -> None:
    from loopkit.messages import Usage
    from loopkit.scenario import _turn_data
    from loopkit.scenario.model import TurnDef
    from loopkit.script import Delay, MidStreamError, Truncate

    turn = Turn(
        text="t", thinking="th", thinking_signature="s", tool_calls=[call("add", {"a": 1}, id="c"), call("x", '{"broken')],
        stop_reason="length", usage=Usage(input=1, output=2, total_tokens=3), chunk_size=2,
        faults=[HttpFault(status=503, retry_after=1.5, headers={"x-a": "b"}), MidStreamError(after=2, message="m"), Truncate(after=3), Delay(seconds=1, after=1)],
    )  # fmt: skip
    assert TurnDef.model_validate(_turn_data(turn)).to_turn() == turn


def test_an_unknown_provider_name_in_code_is_a_usage_error() -> None:
    s = Scenario(name="x", script=["Hi."], expect={"end": {"reason": "stop"}})
    with pytest.raises(UsageError, match=r"unknown provider 'antropic' \(did you mean 'anthropic'\?\)"):
        s.run("antropic")
