"""The drivers (run / arun), callbacks, abort, Runtime.exec and its tool resolution, nested exec
(docs/loop-contract.md), history continuation and MessageQueue."""

from __future__ import annotations

import asyncio

import pytest
from _trace import render, render_event, types

import loopkit.runtime
from loopkit import AbortSignal, RunFailed, Runtime, TickClock, ToolRegistry, UsageError, arun, run, tool
from loopkit.events import ToolExecutionUpdate
from loopkit.fakes import FunctionProvider, ScriptedProvider
from loopkit.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from loopkit.runtime import MessageQueue
from loopkit.script import MidStreamError, Turn, call


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def aadd(a: int, b: int, on_update) -> int:
    """Add two integers, asynchronously, reporting progress."""
    on_update("half")
    await asyncio.sleep(0)
    on_update("done")
    return a + b


@tool
def progress(steps: int, on_update) -> str:
    """Report progress, synchronously."""
    for i in range(steps):
        on_update({"step": i + 1, "of": steps})
    return "ok"


def script():
    """A session that exercises text, thinking, sync and async tools, an unknown tool, an error
    result and steering."""
    return [
        Turn(thinking="plan", text="Working.", tool_calls=[call("add", {"a": 1, "b": 2}, id="c1"), call("aadd", {"a": 3, "b": 4}, id="c2")]),
        Turn(tool_calls=[call("progress", {"steps": 2}, id="c3"), call("ghost", id="c4"), call("add", {"a": "x"}, id="c5")]),
        "All done.",
    ]


TOOLS = [add, aadd, progress]


# --- run vs arun ------------------------------------------------------------------------------


def test_run_and_arun_give_identical_event_sequences():
    sync = run(ScriptedProvider(script(), chunk_size=3), "go", tools=TOOLS, clock=TickClock(), steering=MessageQueue())
    asyn = asyncio.run(arun(ScriptedProvider(script(), chunk_size=3), "go", tools=TOOLS, clock=TickClock(), steering=MessageQueue()))
    assert render(sync.events) == render(asyn.events)
    assert sync.messages == asyn.messages
    assert (sync.reason, sync.model_calls, sync.text) == (asyn.reason, asyn.model_calls, asyn.text) == ("stop", 3, "All done.")
    assert [(m.tool_call_id, m.is_error, m.text.splitlines()[0]) for m in sync.tool_results] == [
        ("c1", False, "3"),
        ("c2", False, "7"),
        ("c3", False, "ok"),
        ("c4", True, "Tool ghost not found"),
        ("c5", True, 'Validation failed for tool "add":'),
    ]


@pytest.mark.parametrize("driver", ["run", "arun"])
def test_sync_and_async_tools_and_on_update_in_both_drivers(driver):
    turns = [Turn(tool_calls=[call("aadd", {"a": 1, "b": 1}, id="c1"), call("progress", {"steps": 2}, id="c2")]), "ok"]
    provider = ScriptedProvider(turns)
    if driver == "run":
        r = run(provider, "go", tools=TOOLS, clock=TickClock())
    else:
        r = asyncio.run(arun(provider, "go", tools=TOOLS, clock=TickClock()))
    lines = [render_event(e) for e in r.events if e.type.startswith("tool_")]
    assert lines == [
        'tool_execution_start c1 aadd args={"a": 1, "b": 1}',
        'tool_execution_update c1 aadd partial="half"',
        'tool_execution_update c1 aadd partial="done"',
        'tool_execution_end c1 aadd is_error=False "2"',
        'tool_execution_start c2 progress args={"steps": 2}',
        'tool_execution_update c2 progress partial={"of": 2, "step": 1}',
        'tool_execution_update c2 progress partial={"of": 2, "step": 2}',
        'tool_execution_end c2 progress is_error=False "ok"',
    ]
    upd = next(e for e in r.events if isinstance(e, ToolExecutionUpdate))
    assert upd.args == {"a": 1, "b": 1} and upd.tool_name == "aadd"


def test_arun_accepts_async_steering_and_follow_up_callbacks():
    asked = []

    async def steering():
        asked.append("steer")
        return ["more"] if asked.count("steer") == 2 else []

    async def follow_ups():
        asked.append("follow")
        return []

    r = asyncio.run(arun(ScriptedProvider(["one", "two"]), "go", steering=steering, follow_ups=follow_ups, clock=TickClock()))
    assert [m.text for m in r.messages] == ["go", "one", "more", "two"]
    assert asked == ["steer", "steer", "steer", "follow"]


def test_run_awaits_async_steering_and_follow_up_callbacks():
    """Regression: the sync driver handed the coroutine to the loop ("not iterable")."""
    polls = []

    async def steering():
        polls.append("steer")
        return ["more"] if polls.count("steer") == 2 else []

    async def follow_ups():
        polls.append("follow")
        return ["again"] if polls.count("follow") == 1 else []

    r = run(ScriptedProvider(["one", "two", "three"]), "go", steering=steering, follow_ups=follow_ups, clock=TickClock())
    assert [m.text for m in r.messages] == ["go", "one", "more", "two", "again", "three"]


def test_run_inside_a_running_event_loop_still_awaits_async_tools():
    async def main():
        return run(ScriptedProvider([Turn(tool_calls=[call("aadd", {"a": 2, "b": 2}, id="c1")]), "ok"]), "go", tools=TOOLS, clock=TickClock())

    r = asyncio.run(main())
    assert r.tool_results[0].text == "4" and r.reason == "stop"


def test_on_event_sees_every_event_as_it_happens():
    seen = []
    r = run(ScriptedProvider([Turn(tool_calls=[call("add", {"a": 1, "b": 1}, id="c1")]), "ok"]), "go", tools=[add], on_event=seen.append, clock=TickClock())
    assert seen == r.events
    assert all(a is b for a, b in zip(seen, r.events))


def test_on_event_runs_before_the_next_step():
    """The callback is called synchronously: when it sees tool_execution_start, the tool has not run."""
    ran = []

    @tool
    def mark() -> str:
        """Mark."""
        ran.append("tool")
        return "x"

    def on_event(e):
        if e.type == "tool_execution_start":
            ran.append("start-event")

    run(ScriptedProvider([Turn(tool_calls=[call("mark", id="c1")]), "ok"]), "go", tools=[mark], on_event=on_event)
    assert ran == ["start-event", "tool"]


# --- abort ------------------------------------------------------------------------------------


@pytest.mark.parametrize("driver", ["run", "arun"])
def test_abort_before_a_model_call_ends_with_aborted_and_no_call(driver):
    signal = AbortSignal()
    signal.abort("stop")
    provider = ScriptedProvider(["never"])
    if driver == "run":
        r = run(provider, "go", abort_signal=signal)
    else:
        r = asyncio.run(arun(provider, "go", abort_signal=signal))
    assert r.reason == "aborted" and provider.requests == [] and r.model_calls == 0
    assert types(r.events) == ["agent_start", "turn_start", "message_start", "message_end", "agent_end"]


def test_abort_between_rounds_stops_before_the_next_model_call():
    signal = AbortSignal()
    provider = ScriptedProvider(["first", "never"])

    def steering():
        if not provider.requests:
            return []
        signal.abort("user")  # arrives together with a steering message after round 1
        return ["again"]

    r = run(provider, "go", abort_signal=signal, steering=steering)
    assert r.reason == "aborted" and len(provider.requests) == 1
    assert [m.text for m in r.pending] == ["again"]


@pytest.mark.parametrize("driver", ["run", "arun"])
def test_abort_during_tools_gives_remaining_calls_error_results(driver):
    signal = AbortSignal()
    executed = []

    @tool
    def work(n: int) -> int:
        """Work; the second call aborts the run."""
        executed.append(n)
        if n == 2:
            signal.abort("user")
        return n

    calls = [call("work", {"n": i}, id=f"c{i}") for i in (1, 2, 3, 4)]
    provider = ScriptedProvider([Turn(tool_calls=calls), "never"])
    if driver == "run":
        r = run(provider, "go", tools=[work], abort_signal=signal, clock=TickClock())
    else:
        r = asyncio.run(arun(provider, "go", tools=[work], abort_signal=signal, clock=TickClock()))
    assert executed == [1, 2]
    assert [(m.tool_call_id, m.is_error, m.text) for m in r.tool_results] == [
        ("c1", False, "1"),
        ("c2", False, "2"),
        ("c3", True, "Skipped: the run was aborted."),
        ("c4", True, "Skipped: the run was aborted."),
    ]
    assert r.reason == "aborted" and len(provider.requests) == 1
    assert types(r.events)[-2:] == ["turn_end", "agent_end"] and r.events[-1].reason == "aborted"


def test_abort_signal_reaches_tools_and_the_provider():
    signal = AbortSignal()
    got = {}

    @tool
    def peek(signal) -> str:
        """Look at the signal."""
        got["tool"] = signal
        return "ok"

    provider = ScriptedProvider([Turn(tool_calls=[call("peek", id="c1")]), "ok"])
    run(provider, "go", tools=[peek], abort_signal=signal)
    assert got["tool"] is signal
    assert all(req.abort_signal is signal for req in provider.requests)


# --- Runtime.exec -----------------------------------------------------------------------------


def registry():
    reg = ToolRegistry()

    @reg.tool(source="math")
    def plus(a: int, b: int) -> int:
        """Add."""
        return a + b

    @reg.tool(source="text")
    def upper(text: str) -> str:
        """Upper-case."""
        return text.upper()

    @reg.tool(source="text")
    def lower(text: str) -> str:
        """Lower-case."""
        return text.lower()

    return reg


def exec_names(**options) -> list[str]:
    provider = ScriptedProvider(["ok"])
    assert Runtime(provider, registry=registry()).exec("go", **options) == "ok"
    return provider.requests[0].tool_names


def test_exec_without_tools_sends_the_whole_registry():
    assert exec_names() == ["plus", "upper", "lower"]


def test_exec_default_registry_is_the_global_one(monkeypatch):
    monkeypatch.setattr(loopkit.runtime, "default_registry", registry())
    provider = ScriptedProvider(["ok"])
    Runtime(provider).exec("go")
    assert provider.requests[0].tool_names == ["plus", "upper", "lower"]


@pytest.mark.parametrize(
    ("options", "names"),
    [
        ({"toolset": "none"}, []),
        ({"tools": []}, []),
        ({"tools_allow": ["upper"]}, ["upper"]),
        ({"tools_deny": ["upper"]}, ["plus", "lower"]),
        ({"tools_source": "text"}, ["upper", "lower"]),
        ({"tools_source": ["math"], "tools_deny": "plus"}, []),
        ({"tools": [add], "tools_deny": ["add"]}, []),
        ({"tools": [add, progress], "tools_allow": ["progress"]}, ["progress"]),
        ({"tools": [add], "toolset": "none"}, ["add"]),
    ],
    ids=lambda v: repr(v) if isinstance(v, dict) else None,
)
def test_exec_tool_resolution(options, names):
    assert exec_names(**options) == names


def test_exec_unknown_names_in_allow_or_deny_are_usage_errors():
    with pytest.raises(UsageError, match="unknown tool 'nope'"):
        exec_names(tools_allow=["nope"])
    with pytest.raises(UsageError, match="Unknown toolset 'mine'"):
        exec_names(toolset="mine")


def test_exec_returns_the_final_text_and_keeps_the_result():
    provider = ScriptedProvider([Turn(tool_calls=[call("add", {"a": 1, "b": 2}, id="c1")]), Turn(text="three")])
    rt = Runtime(provider, clock=TickClock())
    assert rt.exec("go", tools=[add]) == "three"
    assert rt.last_result is not None and rt.last_result.model_calls == 2


def test_exec_defaults_to_20_model_calls_and_sends_no_tool_choice():
    """spec §7.1/§7.2 and docs/loop-contract.md §6: exec's cap defaults to 20; exec forwards no "auto"."""
    provider = FunctionProvider(lambda req: Turn(tool_calls=[call("add", {"a": 1, "b": 1})]))
    with pytest.raises(RunFailed) as info:
        Runtime(provider).exec("go", tools=[add])
    assert info.value.result.model_calls == 20 == len(provider.requests)
    assert {(r.tool_choice, r.parallel_tool_calls) for r in provider.requests} == {(None, None)}


@pytest.mark.parametrize(
    ("turns", "reason", "match"),
    [
        ([Turn(error="quota exhausted")], "error", "quota exhausted"),
        ([Turn(aborted=True)], "aborted", "aborted"),
        ([Turn(tool_calls=[call("add", {"a": 1, "b": 1})])] * 2, "max_iterations", "max_iterations after 2 model call"),
    ],
)
def test_exec_raises_run_failed_unless_the_run_stops_normally(turns, reason, match):
    rt = Runtime(ScriptedProvider(turns))
    with pytest.raises(RunFailed, match=match) as info:
        rt.exec("go", tools=[add], max_iterations=2)
    assert info.value.result.reason == reason
    assert rt.last_result is info.value.result


def test_run_result_sums_usage_over_model_calls():
    turns = [Turn(tool_calls=[call("add", {"a": 1, "b": 1}, id="c1")], usage=Usage(input=10, output=2, total_tokens=12)), Turn(text="2", usage=Usage(input=15, output=1, total_tokens=16))]
    r = run(ScriptedProvider(turns), "go", tools=[add])
    assert (r.usage.input, r.usage.output, r.usage.total_tokens) == (25, 3, 28)
    assert r.messages[1].usage.input == 10  # each message keeps its own call's usage


def test_exec_needs_a_provider():
    with pytest.raises(UsageError, match="needs a provider"):
        Runtime().exec("go")


def test_aexec_runs_on_asyncio():
    rt = Runtime(ScriptedProvider([Turn(tool_calls=[call("aadd", {"a": 1, "b": 1}, id="c1")]), "two"]), registry=ToolRegistry([aadd]))
    assert asyncio.run(rt.aexec("go")) == "two"


class Nested:
    """A tool body (sync or async) that runs a nested exec with no tools= and no provider."""

    def __init__(self, is_async: bool = False) -> None:
        self.inner_result = None
        self.is_async = is_async

    def tools(self):
        @tool
        def echo(text: str) -> str:
            """Echo."""
            return text

        def body(task: str) -> str:
            rt = Runtime()
            answer = rt.exec(task)
            self.inner_result = rt.last_result
            return answer

        async def abody(task: str) -> str:
            await asyncio.sleep(0)
            return body(task)

        delegate = tool(abody if self.is_async else body, name="delegate", description="Hand the task to a nested exec.")
        return [delegate, echo]


def nested_script():
    return [
        Turn(tool_calls=[call("delegate", {"task": "sub-task"}, id="o1")]),  # outer call 1
        Turn(tool_calls=[call("echo", {"text": "a"}, id="i1")]),  # inner call 1
        Turn(tool_calls=[call("echo", {"text": "b"}, id="i2")]),  # inner call 2
        Turn(text="inner done"),  # inner call 3
        Turn(text="outer done"),  # outer call 2
    ]


@pytest.mark.parametrize("body", ["sync-tool", "async-tool"])
@pytest.mark.parametrize("driver", ["run", "arun"])
def test_nested_exec_inherits_outer_tools_and_provider_but_not_loop_options(driver, body):
    """spec §7.4 / item 66: the nested exec uses the outer provider (it consumes the outer
    script's next turns) and tools, but not tool_choice, parallel_tool_calls or max_iterations."""
    nested = Nested(is_async=body == "async-tool")
    provider = ScriptedProvider(nested_script())
    kw = dict(tools=nested.tools(), tool_choice="required", parallel_tool_calls=False, max_iterations=2, clock=TickClock())
    r = run(provider, "go", **kw) if driver == "run" else asyncio.run(arun(provider, "go", **kw))
    assert r.reason == "stop" and r.text == "outer done" and r.model_calls == 2
    assert r.tool_results[0].text == "inner done"
    inner = nested.inner_result
    assert inner.model_calls == 3 and inner.reason == "stop"  # more than the outer cap of 2
    provider.assert_complete()
    seen = [(q.tool_choice, q.parallel_tool_calls, q.tool_names) for q in provider.requests]
    outer = ("required", False, ["delegate", "echo"])
    inner_opts = (None, None, ["delegate", "echo"])
    assert seen == [outer, inner_opts, inner_opts, inner_opts, outer]
    # the inner run's messages do not leak into the outer history
    assert [m.text for m in provider.requests[1].messages] == ["sub-task"]
    assert [getattr(m, "tool_call_id", m.role) for m in provider.requests[4].messages] == ["user", "assistant", "o1"]


def test_nested_exec_with_explicit_tools_and_policy():
    seen = {}

    @tool
    def delegate() -> str:
        """Nested exec that narrows the inherited tools."""
        Runtime().exec("sub", tools_deny=["delegate"])
        seen["inner"] = provider.requests[-1].tool_names
        Runtime().exec("sub", tools=[])
        seen["none"] = provider.requests[-1].tool_names
        return "x"

    provider = ScriptedProvider([Turn(tool_calls=[call("delegate", id="o1")]), "a", "b", "c"])
    run(provider, "go", tools=[delegate, add])
    assert seen == {"inner": ["add"], "none": []}


def test_exec_outside_a_run_does_not_inherit_from_a_finished_run():
    run(ScriptedProvider(["x"]), "go", tools=[add])
    with pytest.raises(UsageError, match="needs a provider"):
        Runtime().exec("go")


# --- history continuation (item 64) ----------------------------------------------------------


def test_continuation_from_history_with_prompt_none():
    history = [
        UserMessage(content="what is 1+2?"),
        AssistantMessage(content=[ToolCall(id="h1", name="add", arguments={"a": 1, "b": 2})], stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="h1", tool_name="add", content=[TextContent(text="3")]),
    ]
    provider = ScriptedProvider(["It is 3."])
    r = run(provider, None, history=history, tools=[add], clock=TickClock())
    assert r.reason == "stop" and r.text == "It is 3."
    assert provider.requests[0].messages == history
    assert [m.role for m in r.messages] == ["assistant"]  # only the new messages
    assert types(r.events)[:3] == ["agent_start", "turn_start", "message_start"]
    assert r.events[-1].messages == r.messages
    assert len(history) == 3  # the caller's list is not appended to


def test_history_is_sent_before_the_prompt():
    history = [UserMessage(content="earlier"), AssistantMessage(content=[TextContent(text="reply")])]
    provider = ScriptedProvider(["ok"])
    r = run(provider, "now", history=history)
    assert [m.text for m in provider.requests[0].messages] == ["earlier", "reply", "now"]
    assert [m.text for m in r.messages] == ["now", "ok"]


@pytest.mark.parametrize("history", [None, []])
def test_continuation_without_history_is_a_usage_error(history):
    with pytest.raises(UsageError, match="nothing to run"):
        run(ScriptedProvider(["x"]), None, history=history)


def test_continuation_from_an_assistant_tail_is_a_usage_error_in_both_drivers():
    history = [UserMessage(content="q"), AssistantMessage(content=[TextContent(text="a")])]
    with pytest.raises(UsageError, match="last message is an assistant"):
        run(ScriptedProvider(["x"]), None, history=history)
    with pytest.raises(UsageError, match="last message is an assistant"):
        asyncio.run(arun(ScriptedProvider(["x"]), None, history=history))


def test_bad_arguments_to_run_are_usage_errors():
    with pytest.raises(UsageError, match="stream"):
        run(object(), "go")
    with pytest.raises(UsageError, match="list of tools"):
        run(ScriptedProvider(["x"]), "go", tools="add")
    with pytest.raises(UsageError, match="prompt is a string or a message"):
        run(ScriptedProvider(["x"]), ["ok", 3])


# --- MessageQueue -----------------------------------------------------------------------------


def test_message_queue_all_mode_hands_over_everything_on_one_poll():
    q = MessageQueue("a", "b")
    provider = ScriptedProvider(["one", "two"])
    r = run(provider, "go", steering=q, clock=TickClock())
    assert [m.text for m in provider.requests[0].messages] == ["go", "a", "b"]
    assert [m.text for m in r.messages] == ["go", "a", "b", "one"]
    assert q.polls == 2 and q.items == []


def test_message_queue_one_at_a_time_mode_hands_over_one_message_per_poll():
    q = MessageQueue("a", "b", mode="one-at-a-time")
    provider = ScriptedProvider(["one", "two", "three"])
    r = run(provider, "go", follow_ups=q, clock=TickClock())
    assert [m.text for m in r.messages] == ["go", "one", "a", "two", "b", "three"]
    assert q.polls == 3


def test_message_queue_put_and_messages():
    msg = UserMessage(content="as a message", timestamp=99)
    q = MessageQueue()
    assert q() == []
    q.put("x", msg)
    assert q() == ["x", msg] and q() == []
    r = run(ScriptedProvider(["ok"]), "go", steering=MessageQueue(msg))
    assert r.messages[1] is msg


def test_message_queue_rejects_an_unknown_mode():
    with pytest.raises(UsageError, match="one-at-a-time"):
        MessageQueue(mode="some")


def test_a_callback_returning_garbage_is_a_usage_error():
    with pytest.raises(UsageError, match="callback returned int; expected str or a message"):
        run(ScriptedProvider(["x"]), "go", steering=lambda: [1])


# --- the Provider seam: either method is enough -----------------------------------------------


class SyncOnly:
    """A provider that is not a BaseProvider and implements only ``stream``."""

    def __init__(self, text: str) -> None:
        self.text = text

    def stream(self, request):
        from loopkit.fakes import CallIds, turn_events

        return iter(turn_events(Turn(text=self.text), ids=CallIds()))


class AsyncOnly(SyncOnly):
    """Implements only ``astream``."""

    stream = None  # type: ignore[assignment]

    async def astream(self, request):
        from loopkit.fakes import CallIds, turn_events

        for event in turn_events(Turn(text=self.text), ids=CallIds()):
            yield event


def test_arun_drives_a_stream_only_provider_and_run_an_astream_only_one():
    """Regression: each driver used to call only its own method and end with an AttributeError."""
    r = asyncio.run(arun(SyncOnly("from stream"), "go"))
    assert (r.reason, r.text) == ("stop", "from stream")
    r = run(AsyncOnly("from astream"), "go")
    assert (r.reason, r.text) == ("stop", "from astream")


def test_run_steps_an_astream_only_provider_from_inside_a_running_event_loop():
    """Regression: sync ``run()`` called from async code tried to run a second event loop in the
    same thread; the provider's astream now runs on a worker thread's loop."""

    async def caller() -> tuple[str, str]:
        r = run(AsyncOnly("from a running loop"), "go")
        return r.reason, r.text

    assert asyncio.run(caller()) == ("stop", "from a running loop")


def test_an_astream_failure_reaches_run_from_inside_a_running_event_loop():
    class Failing(AsyncOnly):
        async def astream(self, request):
            raise ConnectionError("upstream went away")
            yield  # pragma: no cover

    async def caller():
        return run(Failing("x"), "go")

    r = asyncio.run(caller())
    assert r.reason == "error"
    assert "ConnectionError: upstream went away" in r.messages[-1].error_message


# --- run and arun agree on every kind of run --------------------------------------------------


def scenarios():
    signal_holder: dict = {}

    @tool
    def stop_run() -> str:
        """Abort the run."""
        signal_holder["signal"].abort()
        return "stopping"

    c = lambda name, args=None, i="c1": call(name, args or {}, id=i)  # noqa: E731
    return {
        "text": dict(turns=["hello"]),
        "tools": dict(turns=script()),
        "steering": dict(turns=[Turn(tool_calls=[c("add", {"a": 1, "b": 1}), c("add", {"a": 2, "b": 2}, "c2")]), "ok"], steering=["S"]),
        "follow-up": dict(turns=["one", "two"], follow_ups=["F"]),
        "error": dict(turns=[Turn(text="x", error="bad")]),
        "aborted-stop": dict(turns=[Turn(aborted=True)]),
        "cap": dict(turns=[Turn(tool_calls=[c("add", {"a": 1, "b": 1})])] * 2, max_iterations=2, follow_ups=["lost?"]),
        "mid-stream": dict(turns=[Turn(text="abcdef", faults=[MidStreamError(after=2)])]),
        "no-terminal": dict(events=[]),
        "abort": dict(turns=[Turn(tool_calls=[c("stop_run"), c("add", {"a": 1, "b": 1}, "c2")])], abort=True, extra=[stop_run], holder=signal_holder),
    }


@pytest.mark.parametrize("name", list(scenarios()))
def test_run_and_arun_agree(name):
    def once(driver):
        sc = scenarios()[name]
        if "events" in sc:
            provider = FunctionProvider(lambda req: list(sc["events"]))
        else:
            provider = ScriptedProvider(sc["turns"], chunk_size=3)
        kw = dict(tools=[*TOOLS, *sc.get("extra", [])], clock=TickClock(), max_iterations=sc.get("max_iterations"))
        if "steering" in sc:
            kw["steering"] = MessageQueue(*sc["steering"])
        if "follow_ups" in sc:
            kw["follow_ups"] = MessageQueue(*sc["follow_ups"])
        if sc.get("abort"):
            kw["abort_signal"] = sc["holder"]["signal"] = AbortSignal()
        r = run(provider, "go", **kw) if driver == "run" else asyncio.run(arun(provider, "go", **kw))
        return r

    a, b = once("run"), once("arun")
    assert render(a.events) == render(b.events)
    assert (a.reason, a.model_calls, [m.text for m in a.pending]) == (b.reason, b.model_calls, [m.text for m in b.pending])
    assert type(a.error) is type(b.error)
    assert a.events[-1].reason == a.reason == EXPECTED_REASON[name]


EXPECTED_REASON = {
    "text": "stop", "tools": "stop", "steering": "stop", "follow-up": "stop", "error": "error",
    "aborted-stop": "aborted", "cap": "max_iterations", "mid-stream": "error", "no-terminal": "error",
    "abort": "aborted",
}  # fmt: skip
