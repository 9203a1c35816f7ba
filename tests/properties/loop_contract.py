"""The loop's contract (docs/loop-contract.md-§5, §13 [core]) as checks over one finished run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loopkit.events import (
    AgentEnd,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from loopkit.loop import SKIPPED_TEXT
from loopkit.messages import AssistantMessage, ToolResultMessage, UserMessage
from loopkit.tools import Tool

SCHEMAS = {
    "echo": {"type": "object", "properties": {"text": {"type": "string", "maxLength": 20}}, "required": ["text"], "additionalProperties": False},
    "add": {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 100}, "b": {"type": "integer"}}, "required": ["a", "b"]},
    "flaky": {"type": "object", "properties": {"mode": {"enum": ["ok", "value", "key", "empty", "runtime"]}}, "required": ["mode"]},
}


class Probe:
    """Tools that record, for each execution, how many loop events had been emitted before it
    (so an execution can be tied to the ToolExecutionStart right before it, even with duplicate
    call ids), and that raise assorted exceptions on demand."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.executed: list[int] = []

    def on_event(self, event: Any) -> None:
        self.events.append(event)

    def tools(self) -> list[Tool]:
        def echo(text: str) -> str:
            self.executed.append(len(self.events))
            return text

        def add(a: int, b: int) -> int:
            self.executed.append(len(self.events))
            return a + b

        def flaky(mode: str) -> str:
            self.executed.append(len(self.events))
            errors = {"value": ValueError("bad value"), "key": KeyError("k"), "empty": TimeoutError(), "runtime": RuntimeError("")}
            if mode in errors:
                raise errors[mode]
            return "fine"

        return [Tool(name=n, execute=f, parameters=SCHEMAS[n]) for n, f in (("echo", echo), ("add", add), ("flaky", flaky))]


def check_run(result: Any, requests: Sequence[Any], probe: Probe, *, cap: int | None, schedules: Sequence[Any]) -> None:
    """Every [core] invariant the issue lists, over one finished run."""
    events = result.events
    assert events == probe.events, "on_event saw a different event sequence than RunResult.events"
    # the run ends, within the cap, with a reason
    assert result.reason in ("stop", "error", "max_iterations")
    assert result.model_calls == len(requests)
    if cap is not None:
        assert result.model_calls <= max(1, cap)
        if result.reason == "max_iterations":
            assert result.model_calls == max(1, cap)
    _check_events(events, result)
    _check_results_follow_calls(result.messages)
    _check_skips(events, probe.executed)
    _check_requests(requests)
    for schedule in schedules:
        if schedule is None:
            continue
        seen = result.messages + result.pending
        for m in schedule.returned:
            assert sum(x is m for x in seen) == 1, f"{schedule.label} message {m.text!r} lost or duplicated"
        for m in schedule.messages:
            if not any(m is r for r in schedule.returned):
                assert not any(x is m for x in seen), f"{m.text!r} appeared without being polled"
        injected = [x for x in result.messages if any(x is m for m in schedule.returned)]
        order = [m for m in schedule.returned if any(m is x for x in injected)]
        assert injected == order, "queued messages were injected out of order"


def _check_events(events: list[Any], result: Any) -> None:
    assert isinstance(events[0], AgentStart) and isinstance(events[1], TurnStart)
    assert isinstance(events[-1], AgentEnd) and events[-1].reason == result.reason
    assert sum(isinstance(e, AgentStart) for e in events) == 1
    assert sum(isinstance(e, AgentEnd) for e in events) == 1
    assert sum(isinstance(e, TurnStart) for e in events) == sum(isinstance(e, TurnEnd) for e in events)
    open_message = None
    open_tool = None
    ended: list[Any] = []
    round_results: list[ToolResultMessage] = []
    round_assistant = None
    for e in events[1:-1]:
        if isinstance(e, MessageStart):
            assert open_message is None and open_tool is None, "a message started inside another message or tool execution"
            open_message = e.message
        elif isinstance(e, MessageUpdate):
            assert open_message is e.message, "message_update outside its message"
        elif isinstance(e, MessageEnd):
            assert open_message is e.message, "message_end without its message_start"
            open_message = None
            ended.append(e.message)
            if isinstance(e.message, AssistantMessage):
                round_assistant, round_results = e.message, []
            elif isinstance(e.message, ToolResultMessage):
                round_results.append(e.message)
        elif isinstance(e, ToolExecutionStart):
            assert open_message is None and open_tool is None, "tool executions overlap"
            open_tool = e
        elif isinstance(e, ToolExecutionUpdate):
            assert open_tool is not None and open_tool.tool_call_id == e.tool_call_id
        elif isinstance(e, ToolExecutionEnd):
            assert open_tool is not None and (open_tool.tool_call_id, open_tool.tool_name) == (e.tool_call_id, e.tool_name)
            open_tool = None
        elif isinstance(e, TurnEnd):
            assert e.message is round_assistant, "turn_end names another round's message"
            assert e.tool_results == round_results and all(a is b for a, b in zip(e.tool_results, round_results))
        elif isinstance(e, TurnStart):
            assert open_message is None and open_tool is None
    assert open_message is None and open_tool is None
    # agent_end.messages: the prompt, then every message emitted with message_end, in order
    assert events[-1].messages == result.messages
    assert all(a is b for a, b in zip(result.messages, ended)) and len(result.messages) == len(ended)


def _check_results_follow_calls(messages: list[Any]) -> None:
    for i, m in enumerate(messages):
        if not isinstance(m, AssistantMessage):
            continue
        following = messages[i + 1 :]
        if m.stop_reason in ("error", "aborted"):
            assert not following or not isinstance(following[0], ToolResultMessage), "a failed answer's calls ran"
            continue
        calls = m.tool_calls
        got = following[: len(calls)]
        assert len(got) == len(calls), "a tool call has no result"
        for call, res in zip(calls, got):
            assert isinstance(res, ToolResultMessage), "a tool call's result is missing or out of order"
            assert (res.tool_call_id, res.tool_name) == (call.id, call.name)
            assert res.is_error or res.text != SKIPPED_TEXT
        rest = following[len(calls) :]
        assert not rest or not isinstance(rest[0], ToolResultMessage), "a round has more results than calls"
        skipped = [r.text == SKIPPED_TEXT for r in got]
        if True in skipped:
            first = skipped.index(True)
            assert all(skipped[first:]), "a call after a skipped call was not skipped"


def _check_skips(events: list[Any], executed: list[int]) -> None:
    starts = [i for i, e in enumerate(events) if isinstance(e, ToolExecutionStart)]
    ran_after: dict[int, int] = {}
    for position in executed:
        start = max(i for i in starts if i < position)
        ran_after[start] = ran_after.get(start, 0) + 1
    for start in starts:
        end = next(e for e in events[start:] if isinstance(e, ToolExecutionEnd))
        runs = ran_after.get(start, 0)
        assert runs <= 1, "a tool call executed twice"
        if end.result.text == SKIPPED_TEXT:
            assert runs == 0, "a skipped call was executed"
        elif runs:
            assert end.result.text != SKIPPED_TEXT, "an executed call was reported as skipped"


def _check_requests(requests: Sequence[Any]) -> None:
    for prev, cur in zip(requests, requests[1:]):
        before, now = prev.messages, cur.messages
        assert all(a is b for a, b in zip(before, now)) and len(now) > len(before), "history was rewritten"
        added = now[len(before) :]
        answer = added[0]
        assert isinstance(answer, AssistantMessage)
        calls = answer.tool_calls
        results = added[1 : 1 + len(calls)]
        assert [(r.tool_call_id, r.tool_name) for r in results] == [(c.id, c.name) for c in calls], (
            "the next request does not carry every result of the previous round"
        )
        assert all(isinstance(m, UserMessage) for m in added[1 + len(calls) :])
