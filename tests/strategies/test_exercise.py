"""ExerciseProvider: a model with no script that calls every tool, valid then invalid, through the real loop."""

from __future__ import annotations

import pytest

import loopkit
from loopkit.errors import UsageError
from loopkit.strategies import ExerciseProvider
from loopkit.tools import Tool, tool

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string", "minLength": 1}, "days": {"type": "integer", "minimum": 1, "maximum": 7}},
    "required": ["city"],
    "additionalProperties": False,
}


def weather(city: str, days: int = 1) -> str:
    return f"{city}: sunny for {int(days)} day(s)"


@tool
def add(a: int, b: int) -> int:
    """Add.

    Args:
        a: first.
        b: second.
    """
    return int(a) + int(b)


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


TOOLS = [add, ping, Tool(name="weather", execute=weather, parameters=WEATHER)]


def test_every_tool_is_called_valid_then_invalid_then_a_summary():
    model = ExerciseProvider(seed=1)
    result = loopkit.run(model, "go", tools=TOOLS)
    assert result.reason == "stop"
    calls = [(r.tool, r.valid) for r in model.results]
    # ping's invalid call adds a key its schema forbids (additionalProperties)
    assert calls[:3] == [("add", True), ("ping", True), ("weather", True)]
    assert ("add", False) in calls and ("weather", False) in calls
    assert all(r.is_error is False for r in model.results if r.valid)
    assert all(r.is_error is True for r in model.results if not r.valid)
    assert model.problems == []
    model.assert_ok()
    final = result.messages[-1]
    assert final.content[0].text == model.summary()
    assert "0 problem(s)." in model.summary()
    assert len(model.requests) == 3  # valid calls in one turn, invalid ones in the next, then the text


def test_the_same_seed_gives_the_same_run_and_another_seed_other_arguments():
    a, b, c = ExerciseProvider(seed=4), ExerciseProvider(seed=4), ExerciseProvider(seed=5)
    for model in (a, b, c):
        loopkit.run(model, "go", tools=TOOLS)
    assert a.results == b.results and a.summary() == b.summary()
    assert [r.arguments for r in a.results] != [r.arguments for r in c.results]


def test_one_call_per_turn_when_parallel_calls_are_off():
    model = ExerciseProvider(seed=1, tools=["add", "weather"])
    result = loopkit.run(model, "go", tools=TOOLS, parallel_tool_calls=False)
    assert result.reason == "stop"
    assert [len(m.tool_calls) for m in result.messages if isinstance(m, loopkit.AssistantMessage) and m.tool_calls] == [1, 1, 1, 1]
    assert {r.tool for r in model.results} == {"add", "weather"}


def test_problems_name_the_tool_and_what_went_wrong():
    def lenient(city, days=1):  # accepts anything: its own schema is not enforced
        return "ok"

    class Lenient(Tool):
        def prepare(self, raw_args):
            return dict(raw_args), None

    @tool
    def broken(n: int) -> int:
        """Always fails.

        Args:
            n: a number.
        """
        raise RuntimeError("database is down")

    model = ExerciseProvider(seed=2)
    loopkit.run(model, "go", tools=[Lenient(name="weather", execute=lenient, parameters=WEATHER), broken])
    problems = "\n".join(model.problems)
    assert "weather: arguments breaking" in problems and "were accepted" in problems
    assert "broken: valid arguments" in problems and "database is down" in problems
    with pytest.raises(AssertionError, match="mishandled"):
        model.assert_ok()


def test_bad_settings_are_usage_errors():
    with pytest.raises(UsageError, match="seed"):
        ExerciseProvider(seed="1")
    with pytest.raises(UsageError, match="list of tool names"):
        ExerciseProvider(tools="add")
    # a wrong setup is a harness error: it leaves the run as itself, never a quiet error stop
    with pytest.raises(UsageError, match="does not offer"):
        loopkit.run(ExerciseProvider(tools=["nope"]), "go", tools=TOOLS)


def test_arguments_accepts_a_tool_object():
    from hypothesis import given, settings

    from loopkit.strategies import arguments, violations

    @settings(max_examples=20, database=None)
    @given(arguments(TOOLS[2]), violations(TOOLS[2]))
    def check(valid, broken):
        assert TOOLS[2].prepare(valid)[1] is None
        assert TOOLS[2].prepare(broken.value)[0] is None

    check()
