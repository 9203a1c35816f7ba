"""Each kind of expectation both passing and failing: a scenario that should fail must fail, with
the right check named and the right expected / actual text. Run on the scripted provider and on
Bedrock (adapter + simulator), so the wire-side checks run too."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from loopkit.errors import ScriptExhausted
from loopkit.scenario import Scenario, ScenarioResult
from loopkit.scenario.checks import check_all

BASE: dict[str, Any] = {
    "name": "base",
    "prompt": "Do three things.",
    "tools": {"add": "add", "fail": {"kind": "raises", "message": "boom"}, "tick": "counter"},
    "script": [
        {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}, "id": "c1"}, {"name": "fail", "id": "c2"}, {"name": "tick", "id": "c3"}]},
        "done",
    ],
    "expect": {"end": {"reason": "stop"}},
}
PROVIDERS = ["scripted", "bedrock"]


def outcome(provider: str, expect: dict[str, Any], **changes: Any) -> ScenarioResult:
    data = copy.deepcopy(BASE)
    data.update(changes)
    data["expect"] = {"end": {"reason": "stop"}, **expect}
    return Scenario(**data).run(provider)


# (expect, None when it passes, else (check, fragment of expected, fragment of actual) of the first failure)
CASES: list[tuple[str, dict[str, Any], tuple[str, str, str] | None]] = [
    ("end.reason ok", {"end": {"reason": "stop"}}, None),
    ("end.reason bad", {"end": {"reason": "error"}}, ("end.reason", "'error'", "'stop'")),
    ("model_calls ok", {"end": {"model_calls": 2}}, None),
    ("model_calls bad", {"end": {"model_calls": 3}}, ("end.model_calls", "3", "2")),
    ("end.text equals", {"end": {"text": "done"}}, None),
    ("end.text equals bad", {"end": {"text": "Done"}}, ("end.text", "equal 'Done'", "'done'")),
    ("end.text contains bad", {"end": {"text": {"contains": "nope"}}}, ("end.text", "contain 'nope'", "'done'")),
    ("end.text regex", {"end": {"text": {"regex": "^d.ne$"}}}, None),
    ("end.text regex bad", {"end": {"text": {"regex": "^x"}}}, ("end.text", "match /^x/", "'done'")),
    ("end.error bad", {"end": {"error": {"contains": "oops"}}}, ("end.error", "contain 'oops'", "''")),
    ("end.pending ok", {"end": {"pending": []}}, None),
    ("end.pending bad", {"end": {"pending": ["later"]}}, ("end.pending", "['later']", "[]")),
    ("call ok", {"calls": [{"round": 1, "call": 1, "executed": True, "is_error": False, "text": "3"}]}, None),
    ("call by id ok", {"calls": [{"id": "c2", "executed": True, "is_error": True, "text": {"contains": "boo", "regex": "m$"}}]}, None),
    ("call executed bad", {"calls": [{"round": 1, "call": 1, "executed": False}]}, ("calls[0] (round 1 call 1).executed", "false", "true")),
    ("call is_error bad", {"calls": [{"id": "c1", "is_error": True}]}, ("calls[0] (call 'c1').is_error", "true", "false (text '3')")),
    ("call text bad", {"calls": [{"id": "c1", "text": {"contains": "4"}}]}, ("calls[0] (call 'c1').text", "contain '4'", "'3'")),
    ("call missing", {"calls": [{"round": 3, "call": 1, "executed": True}]}, ("calls[0] (round 3 call 1)", "a tool call at round 3 call 1", "no such call (the run's calls: r1c1=add")),
    ("skipped bad", {"skipped": [{"id": "c3"}]}, ("skipped[0] (call 'c3')", "an error result 'Skipped due to queued user message.'", "ok result '1'")),
    ("executions ok", {"executions": {"add": 1, "fail": 1, "tick": 1}}, None),
    ("executions bad", {"executions": {"tick": 0}}, ("executions.tick", "0", "1")),
    ("next_request ok", {"next_request": [{"model_call": 2, "result_for": {"id": "c2"}, "is_error": True, "text": "boom"}]}, None),
    ("next_request is_error bad", {"next_request": [{"model_call": 2, "result_for": {"id": "c1"}, "is_error": True}]}, ("next_request[0] request.is_error", "true", "false")),
    ("next_request text bad", {"next_request": [{"model_call": 2, "result_for": {"round": 1, "call": 2}, "text": "bang"}]}, ("next_request[0] request.text", "equal 'bang'", "'boom'")),
    ("next_request too early", {"next_request": [{"model_call": 1, "result_for": {"id": "c1"}, "is_error": False}]}, ("next_request[0] request", "model call 1 to carry the result of call 'c1'", "it carried results for []")),
    ("next_request no such call", {"next_request": [{"model_call": 5, "result_for": {"id": "c1"}}]}, ("next_request[0]", "model call 5", "only 2 model call(s) were made")),
    ("requests ok", {"requests": [{"model_call": 1, "tool_choice": None, "tools": ["add", "fail", "tick"]}, {"model_call": 2, "parallel_tool_calls": None}]}, None),
    ("requests tool_choice bad", {"requests": [{"model_call": 2, "tool_choice": "required"}]}, ("requests[0] (model call 2).tool_choice", "'required'", "None")),
    ("requests tools bad", {"requests": [{"model_call": 1, "tools": ["add"]}]}, ("requests[0] (model call 1).tools", "['add']", "['add', 'fail', 'tick']")),
    ("events ok", {"events": ["agent_start", {"tool_execution_end": {"call": 2, "is_error": True, "text": "boom"}}, {"turn_end": {"round": 2}}, {"agent_end": {"reason": "stop"}}]}, None),
    ("events order bad", {"events": [{"turn_end": {"round": 2}}, {"tool_execution_end": {"call": 2}}]}, ("events[1]", "turn_end(round=2) → tool_execution_end(call=2)", "no tool_execution_end(call=2) after the earlier matches")),
    ("events filter bad", {"events": [{"tool_execution_end": {"call": 1, "is_error": True}}]}, ("events[0]", "tool_execution_end(call=1, is_error=True)", "events were: agent_start")),
    ("sleeps ok", {"sleeps": []}, None),
    ("sleeps bad", {"sleeps": [1.0]}, ("sleeps", "[1.0]", "[]")),
]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("label", "expect", "failure"), CASES, ids=[c[0] for c in CASES])
def test_expectation(provider: str, label: str, expect: dict[str, Any], failure: tuple[str, str, str] | None) -> None:
    result = outcome(provider, expect)
    if failure is None:
        assert result.status == "passed", result.report()
        return
    assert result.status == "failed" and not result.passed
    first = result.failures[0]
    check, expected, actual = failure
    assert first.check == check, result.report()
    assert expected in first.expected, result.report()
    assert actual in first.actual, result.report()
    assert check in result.report()  # the rendered diff names the check


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unused_turns_fail_the_scenario(provider: str) -> None:
    result = outcome(provider, {}, script=[*BASE["script"], "never used"])
    assert [f.check for f in result.failures] == ["script"]
    assert "1 of 3 turn(s) never used" in result.failures[0].actual


@pytest.mark.parametrize("driver", ["sync", "async"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_script_running_out_propagates_out_of_the_scenario_runner(provider: str, driver: str) -> None:
    """Regression (issue 11): a scenario whose script runs out passed on the scripted provider
    (its expected end was the quiet error stop); a harness error is never a scenario's result."""
    data = copy.deepcopy(BASE)
    data.update(script=[BASE["script"][0]], expect={"end": {"reason": "error"}})
    with pytest.raises(ScriptExhausted, match=r"^scenario .*\[%s\]: .*script exhausted: request #2 needs turn 2" % provider):
        Scenario(**data).run(provider, driver=driver)


STEER = {
    "steering": [{"after_call": {"round": 1, "call": 1}, "messages": "Stop."}],
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_skipped_passes_for_calls_skipped_by_steering(provider: str) -> None:
    result = outcome(provider, {"skipped": [{"id": "c2"}, {"round": 1, "call": 3}], "executions": {"fail": 0, "tick": 0}}, **STEER)
    assert result.status == "passed", result.report()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_skipped_fails_for_a_call_that_ran(provider: str) -> None:
    result = outcome(provider, {"skipped": [{"id": "c1"}]}, **STEER)
    assert [f.check for f in result.failures] == ["skipped[0] (call 'c1')", "skipped[0] (call 'c1').executed"]


def _doctored(provider: str, expect: dict[str, Any], edit: Any) -> list[str]:
    """Run, then change the simulator's record of the wire body and check again: a wire check
    must notice what the neutral request cannot show."""
    data = copy.deepcopy(BASE)
    data["expect"] = {"end": {"reason": "stop"}, **expect}
    scenario = Scenario(**data)
    result = scenario.run(provider)
    assert result.status == "passed", result.report()
    record = result.record
    record.wire = [json.loads(json.dumps(b)) for b in record.wire]
    edit(record.wire)
    return [str(f) for f in check_all(scenario.model.expect, record)]


def test_wire_check_sees_a_result_sent_without_its_error_status() -> None:
    def drop_status(bodies: list[Any]) -> None:
        for block in bodies[1]["messages"][-1]["content"]:
            block["toolResult"].pop("status", None)

    got = _doctored("bedrock", {"next_request": [{"model_call": 2, "result_for": {"id": "c2"}, "is_error": True, "text": "boom"}]}, drop_status)
    assert got == ['next_request[0] wire (bedrock: toolResult.status "error").is_error: expected true, got false']


def test_wire_check_sees_a_missing_result_and_wrong_text() -> None:
    def edit(bodies: list[Any]) -> None:
        content = bodies[1]["messages"][-1]["content"]
        content[0]["toolResult"]["content"] = [{"text": "33"}]
        del content[1]

    got = _doctored(
        "bedrock",
        {"next_request": [{"model_call": 2, "result_for": {"id": "c1"}, "text": "3"}, {"model_call": 2, "result_for": {"id": "c2"}, "is_error": True}]},
        edit,
    )
    assert got[0] == "next_request[0] wire (bedrock: toolResult.status \"error\").text: expected equal '3', got '33'"
    assert got[1].startswith("next_request[1] wire (bedrock: toolResult.status \"error\"): expected a tool result for [c2] in the body of model call 2")


def test_wire_check_sees_a_tool_choice_the_request_did_not_ask_for() -> None:
    data = copy.deepcopy(BASE)
    data["config"] = {"tool_choice": "auto"}
    data["expect"] = {"end": {"reason": "stop"}, "requests": [{"model_call": 1, "tool_choice": "auto", "tools": ["add", "fail", "tick"]}]}
    scenario = Scenario(**data)
    result = scenario.run("bedrock")
    assert result.status == "passed", result.report()
    result.record.wire[0]["toolConfig"]["toolChoice"] = {"any": {}}
    result.record.wire[0]["toolConfig"]["tools"].pop()
    got = [str(f) for f in check_all(scenario.model.expect, result.record)]
    assert got == [
        "requests[0] (model call 1) wire (bedrock).tool_choice: expected 'auto', got 'required'",
        "requests[0] (model call 1) wire (bedrock).tools: expected ['add', 'fail', 'tick'], got ['add', 'fail']",
    ]


def test_xfail_turns_a_failure_into_xfailed_and_a_pass_into_xpassed() -> None:
    failing = outcome("scripted", {"end": {"model_calls": 9}}, xfail={"scripted": "known bug"})
    assert failing.status == "xfailed" and failing.passed and failing.xfail_reason == "known bug"
    passing = outcome("scripted", {}, xfail={"scripted": "known bug"})
    assert passing.status == "xpassed" and not passing.passed
    assert "remove the xfail" in passing.report()


def test_a_provider_that_cannot_express_the_scenario_is_skipped_with_the_reason() -> None:
    result = outcome("gemini", {}, config={"parallel_tool_calls": False})
    assert result.status == "skipped" and not result.passed and result.record is None
    assert "parallel_tool_calls" in result.skip_reason
    restricted = outcome("bedrock", {}, providers=["scripted"])
    assert restricted.status == "skipped" and restricted.skip_reason == "the scenario runs only on scripted"


def test_result_renders_as_rich_diff() -> None:
    import io

    from rich.console import Console

    result = outcome("scripted", {"end": {"model_calls": 3}})
    buf = io.StringIO()
    Console(file=buf, width=100, color_system=None).print(result)
    text = buf.getvalue()
    assert "✗ base [scripted]: failed" in text
    assert "end.model_calls" in text and "expected" in text and "actual" in text
    assert "→ fail({}) [c2]" in text and "✗ fail [c2]: boom" in text
