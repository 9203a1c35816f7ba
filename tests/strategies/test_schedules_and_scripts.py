"""steering_schedules(), follow_up_schedules() and scripts() generate what they claim."""

from __future__ import annotations

import json

import pytest
from hypothesis import given

import loopkit
from strategy_schemas import first_match

from loopkit.errors import UsageError
from loopkit.fakes import ScriptedProvider
from loopkit.messages import UserMessage
from loopkit.script import HttpFault, MidStreamError, Script, Turn
from loopkit.strategies import Schedule, follow_up_schedules, scripts, sessions, steering_schedules



@loopkit.tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first.
        b: the second.
    """
    return a + b


TOOLS = [add]


@given(steering_schedules(max_messages=4, max_poll=5))
def test_schedules_hand_over_each_message_once_on_its_poll(schedule):
    assert 0 <= len(schedule.messages) <= 4 and all(1 <= p <= 5 for p in schedule.deliveries)
    got = [schedule() for _ in range(6)]
    for poll, items in enumerate(got, 1):
        assert items == list(schedule.deliveries.get(poll, ()))
    assert schedule.returned == schedule.messages and schedule.polls == 6
    texts = [m.text for m in schedule.messages]
    assert texts == [f"steer {i}" for i in range(1, len(texts) + 1)]  # unique, in delivery order


@given(follow_up_schedules(min_messages=1, max_messages=2))
def test_follow_up_schedules_are_labelled(schedule):
    assert schedule.label == "follow-up" and 1 <= len(schedule.messages) <= 2
    assert all(m.text.startswith("follow-up ") for m in schedule.messages)


def test_several_messages_on_one_poll_occur():
    s = first_match(steering_schedules(min_messages=2), lambda s: any(len(v) > 1 for v in s.deliveries.values()))
    assert any(len(v) > 1 for v in s.deliveries.values())


def test_a_schedule_drives_the_loop_and_fresh_restarts_it():
    schedule = Schedule({2: ["use 10 instead"]})
    provider = ScriptedProvider([Turn(tool_calls=(loopkit.call("add", {"a": 1, "b": 2}), loopkit.call("add", {"a": 3, "b": 4}))), "ok", "done"])

    result = loopkit.run(provider, "go", tools=[add], steering=schedule)
    assert [r.text for r in result.tool_results] == ["3", "Skipped due to queued user message."]
    assert schedule.returned[0] in result.messages
    again = schedule.fresh()
    assert again.polls == 0 and again.returned == [] and again.deliveries == schedule.deliveries


@given(scripts(TOOLS, max_turns=3))
def test_scripts_end_with_the_final_text_and_hold_calls(script):
    assert isinstance(script, Script) and script[-1] == Turn(text="done")
    assert 2 <= len(script) <= 4
    for turn in script[:-1]:
        for call in turn.tool_calls:
            assert isinstance(call.arguments, (dict, str))


def test_scripts_cut_the_last_call_when_the_token_limit_stops_them():
    script = first_match(scripts(TOOLS), lambda s: any(t.stop_reason == "length" and t.tool_calls for t in s))
    turn = next(t for t in script if t.stop_reason == "length")
    last = turn.tool_calls[-1].arguments
    assert isinstance(last, str)
    with pytest.raises(ValueError):
        json.loads(last)


def test_scripts_mix_in_the_protocols_faults():
    script = first_match(scripts(TOOLS, protocol="anthropic"), lambda s: any(t.faults for t in s))
    fault = next(t for t in script if t.faults).faults[0]
    assert isinstance(fault, (HttpFault, MidStreamError)) or type(fault).__name__ in ("Truncate", "Delay")


@given(scripts(TOOLS, malformed=False, max_turns=2, final_text=None, min_turns=1))
def test_well_formed_scripts_run_cleanly(script):
    provider = ScriptedProvider([*script, "end"], sleep=lambda s: None)
    result = loopkit.run(provider, "go", tools=TOOLS)
    assert result.reason == "stop"
    assert all(not r.is_error for r in result.tool_results)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: steering_schedules(min_messages=3, max_messages=1), "min_messages"),
        (lambda: follow_up_schedules(max_poll=0), "max_poll"),
        (lambda: scripts(TOOLS, min_turns=5, max_turns=2), "min_turns"),
        (lambda: scripts(TOOLS, max_calls=0), "max_calls"),
        (lambda: scripts(TOOLS, protocol="nope"), "unknown protocol"),
        (lambda: Schedule({0: ["x"]}), "start at 1"),
        (lambda: Schedule({1: "x"}), "wrap it"),
    ],
)
def test_bad_input_raises_eagerly(call, message):
    with pytest.raises(UsageError, match=message):
        call()


def test_schedule_accepts_messages():
    m = UserMessage(content="hi")
    assert Schedule({1: [m]})() == [m]


@given(sessions(TOOLS, protocol="openai_chat"))
def test_sessions_run_through_the_loop(session):
    assert isinstance(session.script, Script)
    result = session.run(TOOLS)
    assert result.reason in ("stop", "error", "max_iterations")
    if session.max_iterations is not None:
        assert result.model_calls <= session.max_iterations
    assert session.provider.requests and len(session.provider.requests) == result.model_calls


def test_sessions_validate_the_cap():
    with pytest.raises(UsageError, match="max_iterations"):
        sessions(TOOLS, max_iterations=0)
