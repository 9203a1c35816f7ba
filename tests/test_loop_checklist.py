"""docs/loop-contract.md: one test per [core] item that concerns the loop engine, named after its
number, plus ``test_fix_*`` tests that pin loopkit's documented departures from OpenProgram
(docs/loop-contract.md §6). Items 50, 51, 52 and 56 are wire-adapter mappings and are tested with the
adapters, not here.
"""

from __future__ import annotations

import pytest
from _trace import render_event, types

from loopkit import AbortSignal, Runtime, RunFailed, TickClock, ToolResult, UsageError, run, tool
from loopkit.errors import StreamError
from loopkit.events import (
    AgentEnd,
    AgentStart,
    DoneEvent,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnEnd,
)
from loopkit.fakes import FunctionProvider, ScriptedProvider
from loopkit.messages import AssistantMessage, TextContent, ToolResultMessage, UserMessage
from loopkit.runtime import MessageQueue
from loopkit.script import MidStreamError, Turn, call


# --- tools and helpers ------------------------------------------------------------------------


class Log:
    """Records what each tool executed with."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []


@pytest.fixture
def log() -> Log:
    return Log()


@pytest.fixture
def tools(log: Log) -> list:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        log.calls.append(("add", {"a": a, "b": b}))
        return a + b

    @tool
    def echo(text: str) -> str:
        """Echo the text."""
        log.calls.append(("echo", {"text": text}))
        return text

    @tool
    def fail(message: str = "boom") -> str:
        """Raise ValueError(message)."""
        log.calls.append(("fail", {"message": message}))
        raise ValueError(message)

    return [add, echo, fail]


def go(turns, *, tools=(), prompt="hi", **kw):
    """Run a script with a deterministic clock; returns (result, provider)."""
    provider = ScriptedProvider(turns, chunk_size=kw.pop("chunk_size", 4))
    result = run(provider, prompt, tools=list(tools), clock=TickClock(), **kw)
    return result, provider


def tool_turn(*calls):
    return Turn(tool_calls=list(calls))


def index_of(events, predicate, start=0):
    for i in range(start, len(events)):
        if predicate(events[i]):
            return i
    raise AssertionError("no matching event")


class Poller:
    """A steering / follow-up callback that answers from a list and logs when it was polled
    (as the number of model calls made so far)."""

    def __init__(self, provider_box: list, answers: dict[int, list] | None = None) -> None:
        self.box = provider_box
        self.answers = answers or {}
        self.polls: list[int] = []

    def __call__(self):
        self.polls.append(len(self.box[0].requests))
        return self.answers.get(len(self.polls), [])


def steered_run(turns, *, steering_answers=None, follow_answers=None, tools=(), **kw):
    provider = ScriptedProvider(turns, chunk_size=4)
    box = [provider]
    steer = Poller(box, steering_answers) if steering_answers is not None else None
    follow = Poller(box, follow_answers) if follow_answers is not None else None
    result = run(provider, "hi", tools=list(tools), steering=steer, follow_ups=follow, clock=TickClock(), **kw)
    return result, provider, steer, follow


# --- [core] items -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "turns",
    [
        ["hello"],
        [tool_turn(call("add", {"a": 1, "b": 2}, id="c1")), "3"],
        [Turn(error="overloaded")],
        [tool_turn(call("add", {"a": 1, "b": 2}, id="c1"))] * 3,
    ],
    ids=["text", "tool", "error", "cap"],
)
def test_item_01_one_agent_start_first_one_agent_end_last(turns, tools):
    r, _ = go(turns, tools=tools, max_iterations=2)
    assert isinstance(r.events[0], AgentStart)
    assert isinstance(r.events[-1], AgentEnd)
    assert sum(isinstance(e, AgentStart) for e in r.events) == 1
    assert sum(isinstance(e, AgentEnd) for e in r.events) == 1


def test_item_02_turn_start_right_after_agent_start_before_prompt_events():
    r, _ = go(["hello"], prompt=["one", "two"])
    assert types(r.events)[:6] == ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end"]
    first_assistant = index_of(r.events, lambda e: isinstance(e, MessageStart) and isinstance(e.message, AssistantMessage))
    assert [e.type for e in r.events[:first_assistant]].count("turn_start") == 1


def test_item_03_every_later_model_call_has_its_own_turn_start_and_each_round_one_turn_end(tools):
    turns = [tool_turn(call("add", {"a": 1, "b": 2}, id="c1")), tool_turn(call("echo", {"text": "x"}, id="c2")), "done"]
    r, p = go(turns, tools=tools)
    assert r.model_calls == len(p.requests) == 3
    seq = types(r.events)
    assistant_starts = [i for i, e in enumerate(r.events) if isinstance(e, MessageStart) and isinstance(e.message, AssistantMessage)]
    for i in assistant_starts[1:]:
        prev = [e for e in r.events[:i] if not isinstance(e, MessageUpdate)]
        assert prev[-1].type == "turn_start"
    assert seq.count("turn_start") == 3
    assert seq.count("turn_end") == 3
    # each turn_end closes the round opened by the preceding turn_start
    opened = 0
    for t in seq:
        if t == "turn_start":
            assert opened == 0
            opened = 1
        elif t == "turn_end":
            assert opened == 1
            opened = 0


def test_item_04_prompt_messages_start_and_end_with_the_same_object_in_order():
    u1, u2 = UserMessage(content="one"), UserMessage(content="two")
    r, _ = go(["ok"], prompt=[u1, u2])
    ev = r.events[2:6]
    assert [type(e) for e in ev] == [MessageStart, MessageEnd, MessageStart, MessageEnd]
    assert ev[0].message is u1 and ev[1].message is u1
    assert ev[2].message is u2 and ev[3].message is u2


def test_item_05_assistant_message_start_updates_then_exactly_one_end_with_the_final_message():
    r, _ = go([Turn(text="hello world", thinking="hmm")], chunk_size=3)
    i = index_of(r.events, lambda e: isinstance(e, MessageStart) and isinstance(e.message, AssistantMessage))
    j = index_of(r.events, lambda e: isinstance(e, MessageEnd) and isinstance(e.message, AssistantMessage))
    assert all(isinstance(e, MessageUpdate) for e in r.events[i + 1 : j])
    assert j - i - 1 > 0
    ends = [e for e in r.events if isinstance(e, MessageEnd) and isinstance(e.message, AssistantMessage)]
    assert len(ends) == 1
    final = ends[0].message
    assert final is r.messages[-1]
    assert final.text == "hello world" and final.content[0].thinking == "hmm"


def test_item_06_each_delta_event_after_start_gives_exactly_one_update_carrying_it():
    stream = [
        StartEvent(api="x", provider="x", model="m"),
        ThinkingStartEvent(content_index=0),
        ThinkingDeltaEvent(content_index=0, delta="th"),
        ThinkingEndEvent(content_index=0),
        TextStartEvent(content_index=1),
        TextDeltaEvent(content_index=1, delta="a"),
        TextDeltaEvent(content_index=1, delta="b"),
        TextEndEvent(content_index=1),
        ToolCallStartEvent(content_index=2, id="c1", name="nope"),
        ToolCallDeltaEvent(content_index=2, delta="{}"),
        ToolCallEndEvent(content_index=2),
        DoneEvent(reason="toolUse"),
    ]
    answers = iter([stream, "done"])
    r = run(FunctionProvider(lambda req: next(answers)), "hi", clock=TickClock())
    updates = [e for e in r.events if isinstance(e, MessageUpdate)]
    first_round = updates[: len(stream) - 2]
    assert [u.event for u in first_round] == stream[1:-1]
    assert all(u.event is s for u, s in zip(first_round, stream[1:-1]))


def test_item_08_without_a_start_event_message_start_final_comes_right_before_message_end():
    final = AssistantMessage(content=[TextContent(text="whole")], stop_reason="stop", timestamp=7)
    r = run(FunctionProvider(lambda req: final), "hi", clock=TickClock())
    i = index_of(r.events, lambda e: isinstance(e, MessageStart) and isinstance(e.message, AssistantMessage))
    assert isinstance(r.events[i + 1], MessageEnd)
    assert r.events[i].message is final and r.events[i + 1].message is final


def test_item_09_pure_text_reply_ends_with_turn_end_a_empty_then_agent_end_prompt_a():
    r, _ = go(["hello"])
    u, a = r.messages
    end, agent_end = r.events[-2], r.events[-1]
    assert isinstance(end, TurnEnd) and end.message is a and end.tool_results == []
    assert isinstance(agent_end, AgentEnd) and agent_end.messages == [u, a]
    assert agent_end.reason == "stop"


@pytest.mark.parametrize("stop_reason", ["stop", "length", "toolUse"])
def test_item_10_tool_calls_detected_from_content_whatever_the_stop_reason(stop_reason, tools, log):
    turns = [Turn(tool_calls=[call("echo", {"text": "x"}, id="c1")], stop_reason=stop_reason), "done"]
    r, _ = go(turns, tools=tools)
    assert log.calls == [("echo", {"text": "x"})]
    assert r.messages[1].stop_reason == stop_reason
    assert isinstance(r.messages[2], ToolResultMessage) and r.messages[2].text == "x"


@pytest.mark.parametrize("kind", ["error", "aborted"])
def test_item_12_tool_calls_in_error_or_aborted_message_never_execute(kind, tools, log):
    stop = Turn(tool_calls=[call("echo", {"text": "x"}, id="c1")], **({"error": "bad"} if kind == "error" else {"aborted": True}))
    r, _ = go([stop], tools=tools)
    assert log.calls == []
    assert not any(isinstance(e, ToolExecutionStart) for e in r.events)
    assert r.messages[-1].stop_reason == kind
    assert [c.id for c in r.messages[-1].tool_calls] == ["c1"]


@pytest.mark.parametrize("kind", ["error", "aborted"])
def test_item_13_error_or_aborted_stop_ends_message_turn_and_run_with_no_further_call(kind):
    stop = Turn(text="part", **({"error": "bad"} if kind == "error" else {"aborted": True}))
    r, p = go([stop, "never used"])
    assert types(r.events)[-3:] == ["message_end", "turn_end", "agent_end"]
    a = r.events[-3].message
    assert a.stop_reason == kind
    assert r.events[-2].message is a and r.events[-2].tool_results == []
    assert r.events[-1].reason == kind
    assert len(p.requests) == 1 and r.model_calls == 1


def test_item_14_tool_start_then_updates_then_end_then_result_message(tools):
    @tool
    def slow(n: int, on_update) -> str:
        """Report progress n times."""
        for i in range(n):
            on_update({"step": i})
        return "finished"

    r, _ = go([tool_turn(call("slow", {"n": 2}, id="c1")), "done"], tools=[slow])
    seq = [render_event(e) for e in r.events if e.type.startswith("tool_") or isinstance(getattr(e, "message", None), ToolResultMessage)]
    assert seq == [
        'tool_execution_start c1 slow args={"n": 2}',
        'tool_execution_update c1 slow partial={"step": 0}',
        'tool_execution_update c1 slow partial={"step": 1}',
        'tool_execution_end c1 slow is_error=False "finished"',
        'message_start toolResult c1 slow ok "finished" @2',
        'message_end toolResult c1 slow ok "finished" @2',
    ]


def test_item_14_an_update_after_the_call_finished_is_refused_not_emitted():
    """Regression: a kept on_update called from the next tool emitted c1's update inside c2's events."""
    kept = {}

    @tool
    def first(on_update) -> str:
        """Keep the callback."""
        kept["update"] = on_update
        return "1"

    @tool
    def second() -> str:
        """Call the first call's callback late."""
        kept["update"]("late")
        return "2"

    r, _ = go([tool_turn(call("first", id="c1"), call("second", id="c2")), "done"], tools=[first, second])
    assert [e.type for e in r.events if e.type.startswith("tool_")] == ["tool_execution_start", "tool_execution_end"] * 2
    assert r.tool_results[1].is_error
    assert r.tool_results[1].text == 'on_update was called for tool call c1 ("first") after that call had finished'


def test_item_15_calls_run_in_content_order_each_after_the_previous_result(tools, log):
    calls = [call("echo", {"text": t}, id=f"c{i}") for i, t in enumerate("abc", 1)]
    r, _ = go([tool_turn(*calls), "done"], tools=tools)
    assert [c[1]["text"] for c in log.calls] == ["a", "b", "c"]
    for k in (1, 2):
        end_k = index_of(r.events, lambda e: isinstance(e, MessageEnd) and getattr(e.message, "tool_call_id", None) == f"c{k}")
        start_next = index_of(r.events, lambda e: isinstance(e, ToolExecutionStart) and e.tool_call_id == f"c{k + 1}")
        assert end_k < start_next


def test_item_17_turn_end_lists_one_result_per_call_in_content_order(tools):
    calls = [call("echo", {"text": "a"}, id="c1"), call("ghost", {}, id="c2"), call("add", {"a": 1, "b": 1}, id="c3")]
    r, _ = go([tool_turn(*calls), "done"], tools=tools)
    te = next(e for e in r.events if isinstance(e, TurnEnd))
    assert [(m.tool_call_id, m.tool_name) for m in te.tool_results] == [("c1", "echo"), ("c2", "ghost"), ("c3", "add")]
    assert [m.is_error for m in te.tool_results] == [False, True, False]


def test_item_18_next_request_ends_with_assistant_then_all_its_results_in_order(tools):
    calls = [call("echo", {"text": "a"}, id="c1"), call("add", {"a": 1, "b": 2}, id="c2")]
    r, p = go([tool_turn(*calls), "done"], tools=tools)
    seen = p.requests[1].messages
    assert isinstance(seen[-3], AssistantMessage) and [c.id for c in seen[-3].tool_calls] == ["c1", "c2"]
    assert [(m.tool_call_id, m.text) for m in seen[-2:]] == [("c1", "a"), ("c2", "3")]
    assert seen == r.messages[:4]
    # the first request saw only the prompt
    assert [m.role for m in p.requests[0].messages] == ["user"]


def test_item_19_tool_execution_start_args_are_the_raw_arguments(tools, log):
    r, _ = go([tool_turn(call("add", {"a": " 2 ", "b": "3"}, id="c1")), "done"], tools=tools)
    start = next(e for e in r.events if isinstance(e, ToolExecutionStart))
    assert start.args == {"a": " 2 ", "b": "3"}
    assert log.calls == [("add", {"a": 2, "b": 3})]
    assert r.messages[1].tool_calls[0].arguments == {"a": " 2 ", "b": "3"}


def test_item_20_unknown_tool_gives_exact_not_found_text_and_runs_nothing(tools, log):
    r, _ = go([tool_turn(call("ghost", {"x": 1}, id="c1")), "done"], tools=tools)
    end = next(e for e in r.events if isinstance(e, ToolExecutionEnd))
    assert end.is_error is True and end.result.content[0].text == "Tool ghost not found"
    assert r.messages[2].is_error is True and r.messages[2].text == "Tool ghost not found"
    assert log.calls == []
    assert r.reason == "stop" and r.text == "done"


def test_item_21_schema_violation_gives_validation_text_and_execute_is_not_called(tools, log):
    r, _ = go([tool_turn(call("add", {"a": "x"}, id="c1")), "done"], tools=tools)
    res = r.messages[2]
    assert res.is_error is True
    assert res.text.startswith('Validation failed for tool "add":\n')
    assert "Received arguments:" in res.text
    assert log.calls == []


def test_item_26_tool_exception_gives_str_of_exception_and_the_run_continues(tools):
    @tool
    def missing(key: str) -> str:
        """Look a key up."""
        return {}[key]

    r, p = go([tool_turn(call("fail", {"message": "boom"}, id="c1"), call("missing", {"key": "x"}, id="c2")), "done"], tools=[*tools, missing])
    assert [(m.is_error, m.text) for m in r.tool_results] == [(True, "boom"), (True, "'x'")]
    assert r.reason == "stop" and len(p.requests) == 2


def test_item_28_successful_tool_result_passes_content_and_details_through():
    @tool
    def look() -> ToolResult:
        """Return a rich result."""
        return ToolResult(content=[TextContent(text="a"), TextContent(text="b")], details={"rows": 2})

    r, _ = go([tool_turn(call("look", {}, id="c1")), "done"], tools=[look])
    end = next(e for e in r.events if isinstance(e, ToolExecutionEnd))
    res = r.tool_results[0]
    assert end.is_error is False and res.is_error is False
    assert [b.text for b in res.content] == ["a", "b"] and res.details == {"rows": 2}
    assert end.result.details == {"rows": 2}


def test_item_32_steering_is_polled_once_before_the_first_model_call():
    _, _, steer, _ = steered_run(["hello"], steering_answers={})
    assert steer.polls[0] == 0
    assert steer.polls.count(0) == 1


def test_item_33_steering_from_the_initial_poll_is_injected_after_prompt_before_first_call():
    r, p, _, _ = steered_run(["hello"], steering_answers={1: ["wait, also this"]})
    assert [m.text for m in p.requests[0].messages] == ["hi", "wait, also this"]
    assert types(r.events)[:7] == ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "message_start"]
    assert types(r.events).count("turn_start") == 1


def test_item_34_steering_is_polled_after_each_executed_tool_call(tools):
    calls = [call("echo", {"text": "a"}, id="c1"), call("ghost", {}, id="c2"), call("fail", {}, id="c3")]
    r, _, steer, _ = steered_run([tool_turn(*calls), "done"], steering_answers={}, tools=tools)
    # start, after c1, c2, c3 (all during model call 1), after turn_end 1, after turn_end 2
    assert steer.polls == [0, 1, 1, 1, 1, 2]


def test_item_35_calls_after_steering_get_start_end_error_and_skip_text(tools):
    calls = [call("echo", {"text": t}, id=f"c{i}") for i, t in enumerate("abc", 1)]
    r, _, _, _ = steered_run([tool_turn(*calls), "done"], steering_answers={2: ["stop that"]}, tools=tools)
    for cid in ("c2", "c3"):
        evs = [e for e in r.events if getattr(e, "tool_call_id", None) == cid]
        assert [e.type for e in evs] == ["tool_execution_start", "tool_execution_end"]
        assert evs[1].is_error is True and evs[1].result.text == "Skipped due to queued user message."
        msg = next(m for m in r.tool_results if m.tool_call_id == cid)
        assert msg.is_error is True and msg.text == "Skipped due to queued user message."


def test_item_36_skipped_calls_never_execute_and_get_no_updates(log):
    @tool
    def work(n: int, on_update) -> int:
        """Work with progress."""
        log.calls.append(("work", {"n": n}))
        on_update(n)
        return n

    calls = [call("work", {"n": i}, id=f"c{i}") for i in (1, 2, 3)]
    r, _, _, _ = steered_run([tool_turn(*calls), "done"], steering_answers={2: ["stop"]}, tools=[work])
    assert log.calls == [("work", {"n": 1})]
    updates = [e.tool_call_id for e in r.events if e.type == "tool_execution_update"]
    assert updates == ["c1"]


def test_item_37_injected_steering_follows_all_previous_results_including_skipped(tools):
    calls = [call("echo", {"text": t}, id=f"c{i}") for i, t in enumerate("abc", 1)]
    r, p, _, _ = steered_run([tool_turn(*calls), "done"], steering_answers={2: ["S"]}, tools=tools)
    seen = p.requests[1].messages
    assert [getattr(m, "tool_call_id", m.role) for m in seen] == ["user", "assistant", "c1", "c2", "c3", "user"]
    assert seen[-1].text == "S"


def test_item_38_injected_messages_are_emitted_after_the_new_rounds_turn_start():
    r, _, _, _ = steered_run(["one", "two", "three"], steering_answers={2: ["S"]}, follow_answers={1: ["F"]})
    lines = [render_event(e) for e in r.events if e.type != "message_update"]
    for text in ("S", "F"):
        i = next(k for k, line in enumerate(lines) if line.startswith(f'message_start user "{text}"'))
        assert lines[i - 1] == "turn_start"
        assert lines[i + 1].startswith(f'message_end user "{text}"')
        assert lines[i + 2].startswith("message_start assistant")


def test_item_39_steering_polled_after_turn_end_keeps_a_text_reply_going():
    r, p, steer, _ = steered_run(["one", "two"], steering_answers={2: ["more"]})
    assert steer.polls == [0, 1, 2]
    assert len(p.requests) == 2 and r.reason == "stop"
    assert p.requests[1].messages[-1].text == "more"
    te = index_of(r.events, lambda e: isinstance(e, TurnEnd))
    assert types(r.events[te:])[:4] == ["turn_end", "turn_start", "message_start", "message_end"]


def test_item_39_no_extra_poll_after_turn_end_when_steering_arrived_during_tools(tools):
    """spec §2 step 4.9 / §5.1: steering returned after the last call is injected next round, and
    the post-turn_end poll is skipped for that round."""
    calls = [call("echo", {"text": "a"}, id="c1"), call("echo", {"text": "b"}, id="c2")]
    r, p, steer, _ = steered_run([tool_turn(*calls), "done"], steering_answers={3: ["S"]}, tools=tools)
    assert steer.polls == [0, 1, 1, 2]  # start, after c1, after c2 (-> S), after the last turn_end
    assert not any(m.is_error for m in r.tool_results)
    assert p.requests[1].messages[-1].text == "S"


def test_item_40_follow_ups_polled_only_when_the_loop_would_stop_and_start_a_new_round(tools):
    turns = [tool_turn(call("echo", {"text": "a"}, id="c1")), "first", "second"]
    r, p, _, follow = steered_run(turns, follow_answers={1: ["F"]}, tools=tools)
    assert follow.polls == [2, 3]  # never during the tool round, once per would-be stop
    assert len(p.requests) == 3 and p.requests[2].messages[-1].text == "F"
    assert sum(isinstance(e, AgentStart) for e in r.events) == 1
    assert sum(isinstance(e, AgentEnd) for e in r.events) == 1


@pytest.mark.parametrize("kind", ["error", "aborted"])
def test_item_41_no_steering_or_follow_up_poll_after_error_or_aborted_stop(kind):
    stop = Turn(**({"error": "bad"} if kind == "error" else {"aborted": True}))
    r, _, steer, follow = steered_run([stop], steering_answers={}, follow_answers={})
    assert steer.polls == [0]
    assert follow.polls == []
    assert r.reason == kind


def test_item_58_provider_raising_mid_stream_with_raise_errors_escapes_with_no_turn_or_agent_end():
    """With ``raise_errors=True`` loopkit gives the raw behaviour of spec §3.13."""
    seen: list = []
    p = ScriptedProvider([Turn(text="partial answer", faults=[MidStreamError(after=3, message="kaput")])], chunk_size=4)
    with pytest.raises(StreamError, match="kaput"):
        run(p, "hi", on_event=seen.append, raise_errors=True, clock=TickClock())
    assert types(seen, updates=True) == ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_update", "message_update"]


def test_item_64_continuation_rejects_empty_or_assistant_tail_before_any_event():
    seen: list = []
    p = ScriptedProvider(["x"])
    with pytest.raises(UsageError, match="nothing to run"):
        run(p, None, history=[], on_event=seen.append)
    tail = [UserMessage(content="q"), AssistantMessage(content=[TextContent(text="a")])]
    with pytest.raises(UsageError, match="last message is an assistant"):
        run(p, None, history=tail, on_event=seen.append)
    assert seen == [] and p.requests == []


@pytest.mark.parametrize("scenario", ["text", "tools+steering", "follow-up", "error", "cap"])
def test_item_68_agent_end_messages_are_prompts_plus_every_later_message_end(scenario, tools):
    c = call("echo", {"text": "a"}, id="c1")
    kw: dict = {}
    if scenario == "text":
        turns = ["hello"]
    elif scenario == "tools+steering":
        turns = [tool_turn(c, call("add", {"a": 1, "b": 2}, id="c2")), "done"]
        kw["steering"] = MessageQueue()
        kw["steering"].put("S")
    elif scenario == "follow-up":
        turns = ["one", "two"]
        kw["follow_ups"] = MessageQueue("F")
    elif scenario == "error":
        turns = [Turn(text="x", error="bad")]
    else:
        turns = [tool_turn(c)] * 2
        kw["max_iterations"] = 2
    r, _ = go(turns, tools=tools, prompt=["p1", "p2"], **kw)
    ended = [e.message for e in r.events if isinstance(e, MessageEnd)]
    agent_end = r.events[-1]
    assert agent_end.messages == ended
    assert all(a is b for a, b in zip(agent_end.messages, ended))
    assert [m.text for m in ended[:2]] == ["p1", "p2"]
    assert r.messages == agent_end.messages


# --- loopkit's deliberate departures (docs/loop-contract.md §6) -------------------------------------------


@pytest.mark.parametrize(("cap", "calls"), [(1, 1), (3, 3), (60, 60), (0, 1), (-5, 1)])
def test_fix_cap_is_max_1_n_with_no_clamp_to_50(cap, calls):
    """Items 42 and §3.16: loopkit caps at ``max(1, max_iterations)`` with no clamp into [1, 50]."""
    provider = FunctionProvider(lambda req: Turn(tool_calls=[call("ghost")]))
    r = run(provider, "go", max_iterations=cap, clock=TickClock())
    assert r.model_calls == len(provider.requests) == calls
    assert r.reason == "max_iterations"


def test_fix_no_cap_when_max_iterations_is_none():
    """Item 43: with no ``max_iterations`` loopkit has no cap at all (OpenProgram stops at 50)."""
    provider = FunctionProvider(lambda req: "done" if req.call_number > 75 else Turn(tool_calls=[call("ghost")]))
    r = run(provider, "go", clock=TickClock())
    assert r.model_calls == 76 and r.reason == "stop" and r.text == "done"


def test_fix_q2_cap_is_never_silent(tools, log):
    """Items 44-46 / Q2: at the cap the last round's tools have run, the run ends with
    ``AgentEnd(reason="max_iterations")`` after the round's turn_end, and exec raises instead
    of returning a tool-calling message's text."""
    turns = [Turn(text="I will call", tool_calls=[call("echo", {"text": str(i)}, id=f"c{i}")]) for i in (1, 2)]
    r, p = go(turns, tools=tools, max_iterations=2)
    assert [c[1]["text"] for c in log.calls] == ["1", "2"]
    assert types(r.events)[-2:] == ["turn_end", "agent_end"]
    assert r.events[-1].reason == "max_iterations" and r.reason == "max_iterations"
    assert isinstance(r.messages[-1], ToolResultMessage)
    with pytest.raises(RunFailed, match="max_iterations") as info:
        Runtime(ScriptedProvider(turns), clock=TickClock()).exec("go", tools=tools, max_iterations=2)
    assert info.value.result.reason == "max_iterations"


def test_fix_q1_steering_polled_at_the_cap_is_returned_in_pending(tools):
    """Item 47 / Q1: steering dequeued after the last permitted round is not injected but is
    returned on ``AgentEnd.pending`` (OpenProgram drops it)."""
    queue = MessageQueue()
    provider = ScriptedProvider([tool_turn(call("echo", {"text": "a"}, id="c1"))])

    def steering():
        if len(provider.requests) == 1 and queue.polls >= 2:
            queue.put("late steering")
        return queue()

    r = run(provider, "hi", tools=tools, steering=steering, max_iterations=1, clock=TickClock())
    assert r.reason == "max_iterations"
    assert [m.text for m in r.pending] == ["late steering"]
    assert [m.text for m in r.events[-1].pending] == ["late steering"]
    assert all(getattr(m, "text", None) != "late steering" for m in r.messages)


def test_fix_q1_follow_up_polled_at_the_cap_is_returned_in_pending():
    """Item 47 / Q1: a follow-up polled when the cap is already used up comes back in pending."""
    r, p = go(["only answer"], max_iterations=1, follow_ups=MessageQueue("F1", "F2"))
    assert r.reason == "max_iterations" and len(p.requests) == 1
    assert [m.text for m in r.pending] == ["F1", "F2"]
    assert r.events[-1].pending == r.pending


def test_fix_q8_tools_may_return_str_or_any_json_value():
    """Item 29 / Q8: a non-ToolResult return value is a result, not a crash."""

    @tool
    def as_dict() -> dict:
        """Return a dict."""
        return {"a": [1, 2], "ü": None}

    @tool
    def as_int() -> int:
        """Return an int."""
        return 7

    @tool
    def as_str() -> str:
        """Return a string."""
        return "plain"

    calls = [call("as_dict", id="c1"), call("as_int", id="c2"), call("as_str", id="c3")]
    r, _ = go([tool_turn(*calls), "done"], tools=[as_dict, as_int, as_str])
    assert [(m.is_error, m.text) for m in r.tool_results] == [(False, '{"a": [1, 2], "ü": null}'), (False, "7"), (False, "plain")]
    assert sum(isinstance(e, ToolExecutionEnd) for e in r.events) == 3


def test_fix_q9_exception_with_empty_message_gives_the_class_name():
    """Item 27 / Q9: ``TimeoutError()`` gives ``"TimeoutError"``, never an empty error text."""

    @tool
    def slow() -> str:
        """Time out."""
        raise TimeoutError()

    r, _ = go([tool_turn(call("slow", id="c1")), "done"], tools=[slow])
    assert r.tool_results[0].is_error is True and r.tool_results[0].text == "TimeoutError"


def test_fix_q13_non_object_or_broken_arguments_get_an_error_result_never_empty_args(log, tools):
    """Q13: argument text that is not a JSON object is answered with an is_error result that
    quotes it; the tool is not called with ``{}``."""
    calls = [call("echo", "[1, 2]", id="c1"), call("echo", '{"text": "x', id="c2")]
    r, _ = go([tool_turn(*calls), "done"], tools=tools)
    assert log.calls == []
    first, second = r.tool_results
    assert first.is_error and "expected a JSON object, got an array" in first.text and "1," in first.text
    assert second.is_error and "not valid JSON" in second.text and '{"text": "x' in second.text
    assert next(e for e in r.events if isinstance(e, ToolExecutionStart)).args == [1, 2]


def test_fix_q14_stream_without_terminal_event_is_an_error_stop(log, tools):
    """Items 60-61 / Q14: a stream that stops without done/error ends the run with an error
    assistant message (with message_end), and its tool calls do not run."""
    partial = [StartEvent(), ToolCallStartEvent(content_index=0, id="c1", name="echo"), ToolCallDeltaEvent(content_index=0, delta='{"text": "a"}'), ToolCallEndEvent(content_index=0)]
    for events in (partial, []):
        r = run(FunctionProvider(lambda req, ev=events: list(ev)), "hi", tools=tools, clock=TickClock())
        assert r.reason == "error"
        a = r.messages[-1]
        assert a.stop_reason == "error" and a.error_message.startswith("StreamProtocolError: ")
        assert "terminal event" in a.error_message
        assert types(r.events)[-3:] == ["message_end", "turn_end", "agent_end"]
        assert sum(isinstance(e, MessageStart) and isinstance(e.message, AssistantMessage) for e in r.events) == 1
        assert any(isinstance(e, MessageEnd) and e.message is a for e in r.events)
    assert log.calls == []


def test_fix_item_59_provider_exception_becomes_an_error_message_and_reason_error():
    """Items 58-59 / §3.13: by default a provider that raises ends the run with an assistant
    message (stop_reason error, ``"<Type>: <msg>"``) and ``AgentEnd(reason="error")``."""
    p = ScriptedProvider([Turn(text="partial answer", faults=[MidStreamError(after=3, message="kaput")])], chunk_size=4)
    r = run(p, "hi", clock=TickClock())
    assert r.reason == "error" and isinstance(r.error, StreamError)
    a = r.messages[-1]
    assert a.stop_reason == "error" and a.error_message == "StreamError: scripted: kaput"
    assert types(r.events)[-3:] == ["message_end", "turn_end", "agent_end"]


def test_fix_q7_abort_signal_stops_the_remaining_calls_and_the_run(tools, log):
    """Item 62 / Q7: loopkit checks the abort signal before every tool call and model call;
    the run ends with reason ``aborted`` (OpenProgram keeps going)."""
    signal = AbortSignal()

    @tool
    def stopper() -> str:
        """Abort the run."""
        signal.abort("user pressed stop")
        return "stopping"

    calls = [call("stopper", id="c1"), call("echo", {"text": "a"}, id="c2")]
    r, p = go([tool_turn(*calls), "never"], tools=[stopper, *tools], abort_signal=signal)
    assert log.calls == []
    assert r.reason == "aborted" and len(p.requests) == 1
    skipped = r.tool_results[1]
    assert skipped.is_error and skipped.text == "Skipped: the run was aborted."
    assert types(r.events)[-2:] == ["turn_end", "agent_end"]
