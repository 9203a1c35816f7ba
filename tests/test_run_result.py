"""RunResult's accessors: the calls the loop acted on, the calls of one tool, the errors fed back,
and the result of one call."""

from __future__ import annotations

import pytest

import loopkit
from loopkit.fakes import ScriptedProvider
from loopkit.script import Turn, call


@loopkit.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _run(turns, **options):
    return loopkit.run(ScriptedProvider(turns), "go", tools=[add], clock=loopkit.TickClock(), **options)


def test_tool_calls_calls_to_and_tool_errors_read_like_the_behaviour() -> None:
    result = _run(
        [
            Turn(tool_calls=[call("add", {"a": 1, "b": 2}, id="c1"), call("lookup", {"q": "x"}, id="c2")]),
            Turn(tool_calls=[call("add", {"a": "one", "b": 2}, id="c3")]),
            "done",
        ]
    )
    assert [c.id for c in result.tool_calls] == ["c1", "c2", "c3"]
    assert [c.arguments for c in result.calls_to("add")] == [{"a": 1, "b": 2}, {"a": "one", "b": 2}]
    assert result.calls_to("missing") == []
    assert [e.tool_call_id for e in result.tool_errors] == ["c2", "c3"]
    assert "lookup" in result.tool_errors[0].text
    assert result.result_for("c1").text == "3"
    assert result.result_for(result.calls_to("add")[1]).is_error


def test_each_call_pairs_with_its_result_by_position_even_with_duplicate_ids() -> None:
    result = _run([Turn(tool_calls=[call("add", {"a": 1, "b": 1}, id="same"), call("add", {"a": 2, "b": 2}, id="same")]), "ok"])
    first, second = result.tool_calls
    assert (result.result_for(first).text, result.result_for(second).text) == ("2", "4")
    assert result.result_for("same").text == "2"  # by id: the first result with it


def test_calls_of_an_error_stop_are_not_counted() -> None:
    result = _run([Turn(tool_calls=[call("add", {"a": 1, "b": 1}, id="never")], error="overloaded")])
    assert result.reason == "error"
    assert result.tool_calls == [] and result.tool_results == []
    with pytest.raises(LookupError, match=r"no tool result for call 'never' in this run \(results for: none\)"):
        result.result_for("never")


def test_a_generated_session_runs_with_the_tools_it_was_generated_for() -> None:
    from hypothesis import given, settings

    from loopkit.strategies import sessions

    seen = []

    @settings(max_examples=5, database=None, derandomize=True)
    @given(sessions([add], malformed=False, steering=False, follow_ups=False))
    def check(session) -> None:
        result = session.run()
        assert [r.tool_call_id for r in result.tool_results] == [c.id for c in result.tool_calls]
        assert all(not r.text.startswith("Tool add not found") for r in result.tool_results)
        assert session.run([]).model_calls == result.model_calls  # the old form still works
        seen.append(len(result.calls_to("add")))

    check()
    assert any(seen), "no generated session called add"
