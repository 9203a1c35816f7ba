"""turns() and scripts() draw every stop and content kind, only as each protocol can send it, and a
generated turn ends the run the way docs/loop-contract.md says its kind does, on every protocol's
simulator and built-in adapter."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st
from strategy_schemas import first_match

import loopkit
from loopkit import simulators
from loopkit.errors import UsageError
from loopkit.fakes import ScriptedProvider
from loopkit.messages import ThinkingContent
from loopkit.providers import adapter_class
from loopkit.retry import RetryPolicy
from loopkit.script import KINDS, Script, Turn, UnsupportedTurn
from loopkit.strategies import PROTOCOLS, TURN_KINDS, expressible_kinds, scripts, sessions, turns
from loopkit.strategies._turns import REFUSALS


@loopkit.tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first.
        b: the second.
    """
    return a + b


TOOLS = [add]
SEQUENCES = ("</answer>", "STOP")
# what a content filter is called in error_type: each wire's own name for it
FILTER_TYPES = {"openai_chat": "content_filter", "openai_responses": "content_filter", "anthropic": "refusal", "gemini": "SAFETY", "bedrock": "content_filtered"}
FEW = settings(max_examples=10)


def kinds_of(turn: Turn) -> tuple[str, ...]:
    return turn.kinds + (("wire_stop_reason",) if turn.wire_stop_reason is not None else ())


def ending_of(turn: Turn) -> str | None:
    return next((k for k in kinds_of(turn) if k in ("length", "stop_sequence", "refusal", "content_filter", "pause_turn", "wire_stop_reason")), None)


def run_on(protocol: str, script: list[Turn | str], stream: bool) -> tuple[Any, simulators.Simulator]:
    sim = simulators.create(protocol, script)
    adapter = adapter_class(protocol)(
        model="m",
        api_key="k",
        base_url="http://sim" + sim.base_path,
        transport=simulators.transport(sim, sleep=lambda seconds: None),
        retry=RetryPolicy(sleep=lambda seconds: None),
        stream=stream,
    )
    return loopkit.run(adapter, "go", tools=TOOLS, clock=loopkit.TickClock()), sim


# --- what each protocol can send comes from its simulator ---------------------------------------


def test_the_protocol_neutral_kinds_and_the_wire_stop_values_are_all_there():
    assert TURN_KINDS == (*KINDS, "wire_stop_reason")
    assert expressible_kinds(None) == KINDS
    assert set(PROTOCOLS) == set(simulators.PROTOCOLS)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("kind", TURN_KINDS)
def test_a_kind_is_drawn_exactly_where_the_simulator_builds_it(protocol, kind):
    if kind in expressible_kinds(protocol):
        turn = first_match(turns(protocol, kinds={kind}), lambda t: True, examples=5)
        assert kind in kinds_of(turn)
        simulators.create(protocol, [turn])  # its simulator builds it
        return
    with pytest.raises(UsageError, match=f"cannot send {kind!r}"):
        turns(protocol, kinds={kind})
    # and the simulator does refuse such a turn (drawn for ScriptedProvider, which reads every kind)
    turn = first_match(turns(kinds={kind}), lambda t: True, examples=5)
    with pytest.raises(UnsupportedTurn) as info:
        simulators.create(protocol, [turn])
    assert info.value.kind == kind


def draws_all(strategy: st.SearchStrategy[Any], wanted: set[str], examples: int) -> None:
    seen: set[str] = set()

    def all_seen(value: Any) -> bool:
        seen.update(k for t in (value if isinstance(value, Script) else [value]) for k in kinds_of(t))
        return seen == wanted

    first_match(strategy, all_seen, examples=examples)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_default_draws_every_kind_the_protocol_can_send(protocol):
    draws_all(turns(protocol), set(expressible_kinds(protocol)), examples=100)


def test_scripts_draw_every_kind_by_default():
    draws_all(scripts(TOOLS, protocol="anthropic", malformed=False), set(TURN_KINDS), examples=150)


def test_from_type_turns_draw_the_kinds_that_end_a_run_with_stop():
    from loopkit.strategies._register import message_strategies

    draws_all(message_strategies()[Turn], set(KINDS) - {"refusal", "content_filter"}, examples=150)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@FEW
@given(data=st.data())
def test_every_generated_script_builds_on_its_protocol(protocol, data):
    script = data.draw(scripts(TOOLS, protocol=protocol, max_turns=5))
    able = set(expressible_kinds(protocol))
    assert all(set(kinds_of(t)) <= able for t in script)
    simulators.create(protocol, script)  # no UnsupportedTurn


@settings(max_examples=40)
@given(turns(stop_sequences=SEQUENCES, tools=TOOLS))
def test_kind_arguments_make_sense(turn):
    assert kinds_of(turn) and not set(kinds_of(turn)) & {"refusal", "content_filter", "wire_stop_reason"}
    if turn.stop_sequence is not None:
        assert turn.stop_sequence in SEQUENCES and turn.stop_sequence not in (turn.text or "")
    if turn.reasoning_tokens is not None:
        assert turn.usage is not None and 1 <= turn.reasoning_tokens <= turn.usage.output
    if turn.split_usage:
        assert turn.usage is not None
    if turn.usage is not None:
        assert turn.usage.total_tokens == turn.usage.input + turn.usage.output
    if ending_of(turn) is not None:
        assert not turn.tool_calls  # an ending stops a text answer


def test_refusals_come_alone_where_the_api_sends_nothing_else():
    chat = first_match(turns("openai_chat", kinds={"refusal"}), lambda t: True)
    assert chat.refusal and chat.text is None and not chat.tool_calls
    anthropic = first_match(turns("anthropic", kinds={"refusal"}), lambda t: t.text is not None)
    assert anthropic.refusal and anthropic.text


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: turns("openai_chat", kinds={"pause_turn"}), "cannot send 'pause_turn'"),
        (lambda: scripts(TOOLS, protocol="gemini", kinds={"refusal"}), "cannot send 'refusal'"),
        (lambda: turns(kinds={"wire_stop_reason"}), "give protocol="),
        (lambda: turns(kinds={"nope"}), "unknown kind"),
        (lambda: turns(kinds="refusal"), "collection of kind names"),
        (lambda: turns(kinds=()), "at least one kind"),
        (lambda: turns("nope"), "unknown protocol"),
        (lambda: turns(stop_sequences=[""]), "non-empty strings"),
        (lambda: scripts(TOOLS, stop_sequences="END"), "non-empty strings"),
        (lambda: sessions(TOOLS, protocol="anthropic", kinds={"wire_stop_reason"}), "ScriptedProvider"),
    ],
)
def test_bad_input_raises_eagerly(call, message):
    with pytest.raises(UsageError, match=message):
        call()


# --- defaults -----------------------------------------------------------------------------------


@settings(max_examples=20)
@given(scripts(TOOLS))
def test_without_a_protocol_the_default_never_ends_a_run_with_an_error(script):
    assert not any(t.refusal is not None or t.content_filter or t.wire_stop_reason for t in script)
    result = loopkit.run(ScriptedProvider(script, sleep=lambda s: None), "go", tools=TOOLS, clock=loopkit.TickClock())
    assert result.reason == "stop"


def test_without_a_protocol_the_error_kinds_are_drawn_when_asked_for():
    script = first_match(scripts(TOOLS, kinds={"refusal"}), lambda s: s[0].refusal is not None)
    result = loopkit.run(ScriptedProvider(script), "go", tools=TOOLS)
    assert (result.reason, result.messages[1].error_type) == ("error", "refusal")


def test_kinds_can_be_turned_off():
    script = first_match(scripts(TOOLS, kinds=()), lambda s: len(s) >= 4, examples=200)
    assert not any(kinds_of(t) for t in script)


@FEW
@given(sessions(TOOLS, protocol="anthropic", max_turns=3))
def test_sessions_draw_the_kinds_their_scripted_provider_reads(session):
    assert not any(t.wire_stop_reason for t in session.script)
    assert session.run().reason in ("stop", "error", "max_iterations")


# --- shrinking ----------------------------------------------------------------------------------


# every ending, and two content kinds (they shrink alike: a flag each, and split_usage's usage is
# the same draw as reasoning_tokens')
@pytest.mark.parametrize("kind", [k for k in TURN_KINDS if k != "split_usage"])
def test_a_turn_shrinks_to_the_one_kind_a_failure_needs(kind):
    found = find(turns("anthropic"), lambda t: kind in kinds_of(t), settings=settings(max_examples=500, database=None, derandomize=True))
    assert kinds_of(found) == (kind,) and not found.tool_calls and len(found.text or "") <= 1
    if found.refusal is not None:
        assert found.refusal == REFUSALS[0]


def test_a_script_shrinks_to_the_turn_a_failure_needs():
    found = find(
        scripts(TOOLS, protocol="anthropic", kinds={"content_filter"}),
        lambda s: any(t.content_filter for t in s),
        settings=settings(max_examples=100, database=None, derandomize=True),
    )
    assert len(found) == 2 and found[1] == Turn(text="done")
    assert found[0] == Turn(content_filter=True)


@settings(max_examples=30)
@given(scripts(TOOLS, protocol="anthropic"))
def test_the_default_scripts_stay_small(script):
    assert len(script) <= 5  # max_turns=4, and the final text
    for t in script:
        assert len(t.text or "") <= 30 and len(t.refusal or "") <= 60 and len(t.tool_calls) <= 3


# --- each kind ends the run as the loop contract says, on every protocol --------------------------


def check_run(protocol: str, turn: Turn, result: Any, sim: simulators.Simulator) -> None:
    """docs/loop-contract.md §1.1, §1.5, §2.1 and §7.3 for one generated turn followed by 'done'."""
    answer = result.messages[1]
    assert answer.role == "assistant"
    ending = ending_of(turn)
    if ending == "refusal":
        assert (result.reason, answer.stop_reason, answer.error_type) == ("error", "error", "refusal")
        assert turn.refusal in (answer.error_message or "") + answer.text
    elif ending == "content_filter":
        assert (result.reason, answer.stop_reason, answer.error_type) == ("error", "error", FILTER_TYPES[protocol])
        assert answer.error_message
    elif ending == "wire_stop_reason" and answer.stop_reason == "error":
        # a stop value that means an error says which one it was
        assert result.reason == "error" and answer.error_type == turn.wire_stop_reason
    else:
        assert result.reason == "stop" and answer.error_message is None
        if ending == "length":
            assert answer.stop_reason == "length" and answer.text == turn.text
        elif ending in ("stop_sequence", "pause_turn"):
            assert answer.stop_reason == "stop" and answer.text == (turn.text or "")
        elif ending == "wire_stop_reason":
            assert answer.stop_reason in ("stop", "length", "toolUse")
        else:
            assert answer.stop_reason == ("toolUse" if turn.tool_calls else "stop")
            assert answer.text == (turn.text or "")
    if answer.stop_reason != "error":
        # tool calls run whatever the stop reason; then the model is asked again
        assert len(result.tool_results) == len(turn.tool_calls) and all(not r.is_error for r in result.tool_results)
        assert result.model_calls == (2 if turn.tool_calls else 1)
    else:
        assert result.model_calls == 1 and result.tool_results == []
    if turn.usage is not None:  # reasoning tokens are output tokens; split usage adds up
        assert (answer.usage.input, answer.usage.output) == (turn.usage.input, turn.usage.output)
    if turn.redacted_thinking is not None:
        redacted = [b for b in answer.content if isinstance(b, ThinkingContent) and b.redacted]
        assert len(redacted) == 1 and turn.redacted_thinking in (redacted[0].thinking_signature or "")
        if result.model_calls == 2:  # sent back unchanged
            assert turn.redacted_thinking in sim.requests[1].body.decode()


@pytest.mark.parametrize("protocol", PROTOCOLS)
@settings(max_examples=15)
@given(data=st.data())
def test_each_kind_ends_the_run_as_the_loop_contract_says(protocol, data):
    turn = data.draw(turns(protocol, stop_sequences=SEQUENCES, tools=TOOLS), label="turn")
    stream = data.draw(st.booleans(), label="stream")
    result, sim = run_on(protocol, [turn, "done"], stream)
    check_run(protocol, turn, result, sim)


def test_the_scripted_provider_ends_each_kind_the_same_way():
    @settings(max_examples=25)
    @given(turns(kinds=KINDS, tools=TOOLS))
    def check(turn):
        result = loopkit.run(ScriptedProvider([turn, "done"]), "go", tools=TOOLS)
        answer = result.messages[1]
        if turn.refusal is not None or turn.content_filter:
            assert result.reason == "error" and answer.error_type == ("refusal" if turn.refusal is not None else "content_filter")
        else:
            assert result.reason == "stop" and answer.stop_reason == ("length" if turn.stop_reason == "length" else "toolUse" if turn.tool_calls else "stop")

    check()


@pytest.mark.parametrize("protocol", PROTOCOLS)
@FEW
@given(data=st.data())
def test_whole_generated_scripts_run_on_every_protocol(protocol, data):
    script = data.draw(scripts(TOOLS, protocol=protocol, malformed=False, max_turns=3), label="script")
    stream = data.draw(st.booleans(), label="stream")
    result, sim = run_on(protocol, script, stream)
    assert result.reason in ("stop", "error")
    for m in result.messages:
        if m.role == "assistant" and m.stop_reason == "error":
            assert m.error_type or m.error_message  # an error stop says why
    if not any(t.faults or t.error for t in script):
        # without faults the run ends at the first turn that has no tool calls or ends in an error
        end = next(i for i, t in enumerate(script) if not t.tool_calls or ending_of(t) in ("refusal", "content_filter"))
        assert result.model_calls == end + 1 and sim.used == end + 1
