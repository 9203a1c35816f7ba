"""The canonical event sequences of docs/loop-contract.md as syrupy snapshots (one line per event),
plus direct assertions of each trace's key properties.

Each event is rendered when it is emitted (so ``message_start`` shows the partial message as it
was then, before any delta). Ids come from the script (``call(..., id="c1")``) and timestamps from ``TickClock()``, so the
snapshots are byte-stable. §3.16 is loopkit's form: the run ends with
``agent_end reason=max_iterations``.
"""

from __future__ import annotations

import pytest
from _trace import render_event, types

from loopkit import TickClock, run, tool
from loopkit.events import AgentEnd, ToolExecutionEnd, TurnEnd
from loopkit.fakes import ScriptedProvider
from loopkit.messages import AssistantMessage, ToolResultMessage, UserMessage
from loopkit.runtime import MessageQueue
from loopkit.script import Turn, call


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def echo(text: str, on_update) -> str:
    """Echo the text, reporting progress once."""
    on_update({"echoing": text})
    return text


@tool
def boom(kind: str) -> str:
    """Raise an exception of the given kind."""
    if kind == "value":
        raise ValueError("boom")
    if kind == "key":
        raise KeyError("x")
    raise TimeoutError()


TOOLS = [add, echo, boom]


class Polls:
    """A steering or follow-up callback that answers poll number n from ``answers`` and records
    how many model calls had been made at each poll."""

    def __init__(self, answers: dict[int, list[str]] | None = None) -> None:
        self.answers = answers or {}
        self.provider: ScriptedProvider | None = None
        self.at: list[int] = []

    def __call__(self) -> list[str]:
        assert self.provider is not None
        self.at.append(len(self.provider.requests))
        return self.answers.get(len(self.at), [])


def trace(turns, *, steering: Polls | None = None, follow_ups: Polls | None = None, **kw):
    provider = ScriptedProvider(turns, chunk_size=8)
    for cb in (steering, follow_ups):
        if cb is not None:
            cb.provider = provider
    lines: list[str] = []
    r = run(
        provider, "hi", tools=TOOLS, steering=steering, follow_ups=follow_ups, clock=TickClock(),
        on_event=lambda e: lines.append(render_event(e)), **kw,
    )  # fmt: skip
    return r, provider, "\n".join(lines)


def test_3_1_pure_text_reply(snapshot):
    steering, follow = Polls(), Polls()
    r, p, lines = trace(["Hello there, friend."], steering=steering, follow_ups=follow)
    assert lines == snapshot
    assert types(r.events) == ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "turn_end", "agent_end"]
    assert r.events[-1].messages == r.messages and [m.role for m in r.messages] == ["user", "assistant"]
    assert steering.at == [0, 1] and follow.at == [1]
    assert r.reason == "stop"


def test_3_2_one_tool_call(snapshot):
    r, p, lines = trace([Turn(text="Adding.", tool_calls=[call("add", {"a": 2, "b": 3}, id="c1")]), "The sum is 5."])
    assert lines == snapshot
    assert types(r.events) == [
        "agent_start", "turn_start", "message_start", "message_end",
        "message_start", "message_end",
        "tool_execution_start", "tool_execution_end", "message_start", "message_end",
        "turn_end",
        "turn_start", "message_start", "message_end", "turn_end",
        "agent_end",
    ]  # fmt: skip
    u, a1, r1, a2 = r.messages
    assert a1.stop_reason == "toolUse" and r1.text == "5" and not r1.is_error
    assert r.events[-1].messages == [u, a1, r1, a2]


def test_3_3_two_parallel_calls_run_sequentially_in_content_order(snapshot):
    calls = [call("echo", {"text": "one"}, id="c1"), call("echo", {"text": "two"}, id="c2")]
    r, p, lines = trace([Turn(tool_calls=calls), "Both echoed."], parallel_tool_calls=False)
    assert lines == snapshot
    tool_events = [e.type + ":" + e.tool_call_id for e in r.events if e.type.startswith("tool_")]
    assert tool_events == [
        "tool_execution_start:c1", "tool_execution_update:c1", "tool_execution_end:c1",
        "tool_execution_start:c2", "tool_execution_update:c2", "tool_execution_end:c2",
    ]  # fmt: skip
    turn_end = next(e for e in r.events if isinstance(e, TurnEnd))
    assert [m.tool_call_id for m in turn_end.tool_results] == ["c1", "c2"]
    assert p.requests[0].parallel_tool_calls is False


def test_3_3_duplicate_call_ids_are_not_deduplicated(snapshot):
    calls = [call("add", {"a": 1, "b": 1}, id="dup"), call("add", {"a": 2, "b": 2}, id="dup")]
    r, p, lines = trace([Turn(tool_calls=calls), "ok"])
    assert lines == snapshot
    assert [(m.tool_call_id, m.text) for m in r.tool_results] == [("dup", "2"), ("dup", "4")]


def test_3_4_unknown_tool(snapshot):
    r, p, lines = trace([Turn(tool_calls=[call("ghost", {"x": 1}, id="c1")]), "Sorry."])
    assert lines == snapshot
    end = next(e for e in r.events if isinstance(e, ToolExecutionEnd))
    assert end.is_error and end.result.content[0].text == "Tool ghost not found"
    assert r.tool_results[0].is_error
    assert "tool_execution_update" not in types(r.events)
    assert len(p.requests) == 2


def test_3_5_invalid_arguments(snapshot):
    r, p, lines = trace([Turn(tool_calls=[call("add", {"a": "three"}, id="c1")]), "Oops."])
    assert lines == snapshot
    text = r.tool_results[0].text
    assert r.tool_results[0].is_error
    assert text.splitlines()[0] == 'Validation failed for tool "add":'
    assert text.endswith('Received arguments:\n{\n  "a": "three"\n}')


@pytest.mark.parametrize(("kind", "text"), [("value", "boom"), ("key", "'x'"), ("timeout", "TimeoutError")])
def test_3_6_tool_raises(kind, text, snapshot):
    r, p, lines = trace([Turn(tool_calls=[call("boom", {"kind": kind}, id="c1")]), "Handled."])
    assert lines == snapshot
    assert (r.tool_results[0].is_error, r.tool_results[0].text) == (True, text)
    assert r.reason == "stop" and len(p.requests) == 2


def test_3_7_steering_after_the_first_of_three_calls(snapshot):
    steering = Polls({2: ["Actually, stop."]})
    calls = [call("echo", {"text": t}, id=f"c{i}") for i, t in enumerate(["a", "b", "c"], 1)]
    r, p, lines = trace([Turn(tool_calls=calls), "Stopped."], steering=steering)
    assert lines == snapshot
    seen = p.requests[1].messages
    assert [getattr(m, "tool_call_id", m.role) for m in seen] == ["user", "assistant", "c1", "c2", "c3", "user"]
    assert [m.text for m in seen[3:5]] == ["Skipped due to queued user message."] * 2
    assert all(m.is_error for m in seen[3:5])
    # polls: at start, after c1, after the second turn_end (none after skipped calls)
    assert steering.at == [0, 1, 2]
    updates = [e.tool_call_id for e in r.events if e.type == "tool_execution_update"]
    assert updates == ["c1"]


def test_3_8_steering_at_the_initial_poll(snapshot):
    r, p, lines = trace(["Noted."], steering=Polls({1: ["Also: be brief."]}))
    assert lines == snapshot
    assert types(r.events)[:8] == ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "message_start", "message_end"]
    assert isinstance(r.events[4].message, UserMessage) and r.events[4].message.text == "Also: be brief."
    assert types(r.events).count("turn_start") == 1


def test_3_9_steering_after_a_pure_text_reply(snapshot):
    r, p, lines = trace(["First.", "Second."], steering=Polls({2: ["One more thing."]}))
    assert lines == snapshot
    assert len(p.requests) == 2 and p.requests[1].messages[-1].text == "One more thing."
    first_end = types(r.events).index("turn_end")
    assert types(r.events)[first_end : first_end + 4] == ["turn_end", "turn_start", "message_start", "message_end"]


def test_3_10_follow_up_messages(snapshot):
    follow = Polls({1: ["And then?"]})
    r, p, lines = trace(["First.", "Second."], follow_ups=follow)
    assert lines == snapshot
    assert follow.at == [1, 2]
    assert [m.text for m in r.events[-1].messages] == ["hi", "First.", "And then?", "Second."]
    assert types(r.events).count("agent_start") == 1 and types(r.events).count("agent_end") == 1


def test_3_11_provider_error_event(snapshot):
    steering, follow = Polls(), Polls()
    turn = Turn(text="Let me", tool_calls=[call("add", {"a": 1, "b": 1}, id="c1")], error="upstream overloaded")
    r, p, lines = trace([turn], steering=steering, follow_ups=follow)
    assert lines == snapshot
    a = r.messages[-1]
    assert isinstance(a, AssistantMessage) and a.stop_reason == "error" and a.error_message == "upstream overloaded"
    assert types(r.events)[-3:] == ["message_end", "turn_end", "agent_end"]
    assert "tool_execution_start" not in types(r.events)
    assert steering.at == [0] and follow.at == []
    assert r.events[-1].reason == "error"


def test_3_12_aborted_event(snapshot):
    r, p, lines = trace([Turn(text="Let me", aborted=True)], steering=Polls(), follow_ups=Polls())
    assert lines == snapshot
    assert r.messages[-1].stop_reason == "aborted"
    assert types(r.events)[-3:] == ["message_end", "turn_end", "agent_end"]
    assert r.events[-1].reason == "aborted" and len(p.requests) == 1


def test_3_16_max_iterations_cap(snapshot):
    turns = [Turn(text="I will call", tool_calls=[call("add", {"a": i, "b": i}, id=f"c{i}")]) for i in (1, 2, 3)]
    follow = MessageQueue("never injected")
    r, p, lines = trace(turns, max_iterations=3, follow_ups=follow)
    assert lines == snapshot
    assert len(p.requests) == 3 and r.model_calls == 3
    assert len(r.tool_results) == 3
    assert types(r.events)[-6:] == ["tool_execution_start", "tool_execution_end", "message_start", "message_end", "turn_end", "agent_end"]
    end = r.events[-1]
    assert isinstance(end, AgentEnd) and end.reason == "max_iterations"
    assert isinstance(end.messages[-1], ToolResultMessage)
    assert types(r.events).count("turn_start") == 3
    # the cap stops a tool round, so the follow-up queue is never polled and nothing is lost
    assert follow.polls == 0 and follow.items == ["never injected"] and end.pending == []
