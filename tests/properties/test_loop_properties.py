"""Property tests of loopkit's loop: any script, any steering and follow-up schedule, any cap.

The default (CI) profile keeps these to a few seconds; ``--hypothesis-profile=deep`` searches long.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from loop_contract import Probe, check_run

import loopkit
from loopkit.fakes import ScriptedProvider
from loopkit.runtime import TickClock
from loopkit.script import Script, Turn
from loopkit.strategies import follow_up_schedules, scripts, sessions, steering_schedules

TOOL_SPECS = Probe().tools()  # for the strategies: names and schemas only


def _padded(script: Script, *schedules) -> Script:
    # every delivered batch can add a round; pad so a run never outlives its script
    extra = sum(len(s.messages) for s in schedules if s is not None) + 1
    return Script([*script, *[Turn(text=f"pad {i}") for i in range(extra)]])


def _run(script, steering, follow_ups, cap):
    probe = Probe()
    provider = ScriptedProvider(_padded(script, steering, follow_ups), sleep=lambda s: None)
    result = loopkit.run(
        provider,
        "go",
        tools=probe.tools(),
        steering=steering,
        follow_ups=follow_ups,
        max_iterations=cap,
        on_event=probe.on_event,
        clock=TickClock(),
    )
    check_run(result, provider.requests, probe, cap=cap, schedules=[steering, follow_ups])
    return result


@given(
    scripts(TOOL_SPECS, max_turns=4, protocol="anthropic"),
    st.none() | steering_schedules(max_poll=10),
    st.none() | follow_up_schedules(max_poll=3),
    st.none() | st.integers(min_value=-1, max_value=6),
)
def test_loop_contract_holds_for_any_script_and_schedule(script, steering, follow_ups, cap):
    _run(script, steering, follow_ups, cap)


@given(scripts(TOOL_SPECS, max_turns=3, max_calls=3), steering_schedules(min_messages=1, max_poll=6))
def test_steering_mid_round_skips_the_rest(script, steering):
    """Steering that lands between two tool calls skips the later ones and never overwrites a
    finished result with "skipped"."""
    _run(script, steering, None, None)


@given(scripts(TOOL_SPECS, max_turns=5, malformed=False, final_text=None), st.integers(min_value=1, max_value=3))
def test_the_cap_is_never_silent(script, cap):
    result = _run(Script([*script, Turn(text="end")]), None, None, cap)
    if result.reason == "max_iterations":
        assert isinstance(result.events[-1], loopkit.AgentEnd) and result.events[-1].reason == "max_iterations"


@given(scripts(TOOL_SPECS, max_turns=3), follow_up_schedules(min_messages=1, max_poll=2), st.none() | steering_schedules(max_poll=6))
def test_follow_ups_are_injected_or_returned(script, follow_ups, steering):
    result = _run(script, steering, follow_ups, None)
    if result.reason == "stop":
        assert follow_ups.returned == [m for m in result.messages if m in follow_ups.messages]


@given(st.data())
def test_nothing_a_tool_raises_escapes(data):
    """Tools raising with and without messages: every call still gets a result with text."""
    probe = Probe()
    modes = data.draw(st.lists(st.sampled_from(["ok", "value", "key", "empty", "runtime"]), min_size=1, max_size=4))
    turns = [Turn(tool_calls=tuple(loopkit.call("flaky", {"mode": m}) for m in modes)), Turn(text="done")]
    provider = ScriptedProvider(turns)
    result = loopkit.run(provider, "go", tools=probe.tools(), on_event=probe.on_event)
    check_run(result, provider.requests, probe, cap=None, schedules=[])
    assert result.reason == "stop"
    for mode, res in zip(modes, result.tool_results):
        assert res.is_error == (mode != "ok") and res.text.strip()


@given(sessions(TOOL_SPECS, protocol="gemini"))
def test_whole_sessions_keep_the_contract(session):
    probe = Probe()
    result = session.run(probe.tools(), on_event=probe.on_event)
    check_run(result, session.provider.requests, probe, cap=session.max_iterations, schedules=[session.steering, session.follow_ups])
