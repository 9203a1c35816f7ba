"""ScriptedProvider and FunctionProvider: streaming, request recording, script exhaustion,
faults (with and without retries), and bad input that must fail with a typed error."""

from __future__ import annotations

import asyncio

import pytest
from _trace import types

from loopkit import ModelRequest, TickClock, Tool, ToolDefinitionError, UserMessage, arun, run, tool
from loopkit.errors import (
    BadRequestError,
    ConnectionClosedError,
    IncompleteScript,
    RateLimitError,
    ScriptError,
    ScriptExhausted,
    ServerError,
    StreamError,
    StreamProtocolError,
)
from loopkit.events import (
    DoneEvent,
    ErrorEvent,
    MessageUpdate,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from loopkit.fakes import CallIds, FunctionProvider, ScriptedProvider
from loopkit.messages import AssistantMessage, TextContent, ToolCall, Usage
from loopkit.retry import RetryPolicy
from loopkit.script import Delay, HttpFault, MidStreamError, Script, Truncate, Turn, call
from loopkit.tools import adapt_tool


def request(*texts: str) -> ModelRequest:
    return ModelRequest([UserMessage(content=t) for t in texts or ("hi",)])


def deltas(events, kind=TextDeltaEvent):
    return [e.delta for e in events if isinstance(e, kind)]


# --- streaming --------------------------------------------------------------------------------


def test_scripted_provider_streams_text_in_chunk_size_deltas():
    p = ScriptedProvider(["abcdefgh"], chunk_size=3)
    events = list(p.stream(request()))
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done"]
    assert deltas(events) == ["abc", "def", "gh"]
    assert events[-1].reason == "stop"


def test_a_turn_can_override_the_chunk_size():
    p = ScriptedProvider([Turn(text="abcdef", chunk_size=2)], chunk_size=100)
    assert deltas(p.stream(request())) == ["ab", "cd", "ef"]


def test_turn_events_order_thinking_text_calls_and_usage():
    usage = Usage(input=10, output=5, total_tokens=15)
    turn = Turn(thinking="hmm", thinking_signature="sig", text="ok", tool_calls=[call("f", {"x": "long value"})], usage=usage)
    events = list(ScriptedProvider([turn], chunk_size=5).stream(request()))
    assert [e.type for e in events] == [
        "start",
        "thinking_start", "thinking_delta", "thinking_end",
        "text_start", "text_delta", "text_end",
        "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_end",
        "done",
    ]  # fmt: skip
    assert [e.content_index for e in events[1:-1]] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2]
    assert deltas(events, ThinkingDeltaEvent) == ["hmm"]
    assert "".join(deltas(events, ToolCallDeltaEvent)) == '{"x": "long value"}'
    assert events[-1].reason == "toolUse" and events[-1].usage is usage
    assert events[1 + 2].thinking_signature == "sig"


def test_every_delta_becomes_a_message_update_in_the_run():
    p = ScriptedProvider(["abcdefgh"], chunk_size=3)
    r = run(p, "hi")
    updates = [e.event for e in r.events if isinstance(e, MessageUpdate)]
    assert deltas(updates) == ["abc", "def", "gh"]


def test_broken_argument_strings_are_sent_exactly_as_written():
    p = ScriptedProvider([Turn(tool_calls=[call("f", '{"a": 1', id="x")])], chunk_size=3)
    events = list(p.stream(request()))
    assert "".join(deltas(events, ToolCallDeltaEvent)) == '{"a": 1'


def test_call_ids_are_deterministic_and_unique_across_calls():
    p = ScriptedProvider([Turn(tool_calls=[call("f"), call("g", id="mine")]), Turn(tool_calls=[call("f")])])
    ids = [[e.id for e in p.stream(request()) if isinstance(e, ToolCallStartEvent)] for _ in range(2)]
    assert ids == [["call_1", "mine"], ["call_2"]]
    custom = CallIds("toolu_")
    assert [custom(), custom()] == ["toolu_1", "toolu_2"]


@pytest.mark.parametrize(("turn", "reason", "message"), [(Turn(error="bad gateway"), "error", "bad gateway"), (Turn(aborted=True), "aborted", "aborted")])
def test_error_and_aborted_turns_end_with_an_error_event(turn, reason, message):
    last = list(ScriptedProvider([turn]).stream(request()))[-1]
    assert isinstance(last, ErrorEvent) and (last.reason, last.error_message) == (reason, message)


# --- what the model saw -----------------------------------------------------------------------


def test_requests_record_what_the_model_saw_on_each_call():
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    p = ScriptedProvider([Turn(tool_calls=[call("add", {"a": 1, "b": 2}, id="c1")]), "3"])
    run(p, "what is 1+2?", tools=[add], tool_choice="auto", parallel_tool_calls=False, model="m1", system="be terse")
    first, second = p.requests
    assert [m.role for m in first.messages] == ["user"]
    assert [m.role for m in second.messages] == ["user", "assistant", "toolResult"]
    assert second.messages[-1].text == "3"
    assert [q.call_number for q in p.requests] == [1, 2]
    assert first.tool_names == ["add"] and first.tools[0].parameters["required"] == ["a", "b"]
    assert (first.tool_choice, first.parallel_tool_calls, first.model, first.system) == ("auto", False, "m1", "be terse")


def test_a_recorded_request_does_not_grow_with_the_run():
    p = ScriptedProvider(["one", "two"])
    run(p, "hi", follow_ups=iter([["again"], []]).__next__)
    assert len(p.requests[0].messages) == 1 and len(p.requests[1].messages) == 3


# --- running out, leftovers -------------------------------------------------------------------


def test_script_exhausted_names_the_call_number():
    p = ScriptedProvider(["only"])
    list(p.stream(request()))
    with pytest.raises(ScriptExhausted, match=r"ScriptedProvider: script exhausted: request #2 needs turn 2, but the script has 1 turn") as info:
        p.stream(request())
    assert (info.value.call_number, info.value.turns) == (2, 1)


def test_a_run_that_outlives_its_script_raises_script_exhausted_never_an_error_stop():
    @tool
    def noop() -> str:
        """Do nothing."""
        return ""

    p = ScriptedProvider([Turn(tool_calls=[call("noop", id="c1")])])
    with pytest.raises(ScriptExhausted, match=r"request #2 needs turn 2") as info:
        run(p, "hi", tools=[noop])
    assert info.value.call_number == 2
    with pytest.raises(ScriptExhausted):
        run(ScriptedProvider([]), "hi", raise_errors=True)


def test_assert_complete_reports_unused_turns():
    p = ScriptedProvider(["a", "b", "c"])
    run(p, "hi")
    with pytest.raises(IncompleteScript, match=r"^ScriptedProvider: 2 of 3 turn\(s\) never used \(turns 2..3\)$"):
        p.assert_complete()
    q = ScriptedProvider(["a"])
    run(q, "hi")
    q.assert_complete()


# --- faults -----------------------------------------------------------------------------------


def test_http_fault_without_retry_raises_the_typed_error_at_once():
    p = ScriptedProvider([Turn(faults=[HttpFault(status=429, retry_after=2)]), "unused"])
    with pytest.raises(RateLimitError) as info:
        list(p.stream(request()))
    assert (info.value.status, info.value.retry_after, info.value.retryable) == (429, 2, True)
    r = run(ScriptedProvider([Turn(faults=[HttpFault(status=503, message="down")])]), "hi")
    assert r.reason == "error" and isinstance(r.error, ServerError)
    assert r.messages[-1].error_message == "ServerError: scripted 503: down"


def test_http_fault_with_a_retry_policy_consumes_the_next_turn_after_injected_waits():
    waits: list[float] = []
    delays: list[float] = []
    turns = [Turn(faults=[HttpFault(status=429)]), Turn(faults=[HttpFault(status=529, retry_after=3)]), "finally"]
    p = ScriptedProvider(turns, retry=RetryPolicy(max_retries=2, base_delay=0.5, sleep=waits.append), sleep=delays.append)
    r = run(p, "hi")
    assert r.reason == "stop" and r.text == "finally"
    assert waits == [0.5, 3] and delays == []  # the policy's sleep, as HttpProvider uses it
    assert len(p.requests) == 1 and r.model_calls == 1
    p.assert_complete()


def test_retries_give_up_after_max_retries_and_never_retry_a_400():
    waits: list[float] = []
    p = ScriptedProvider([Turn(faults=[HttpFault(status=500)])] * 3, retry=RetryPolicy(max_retries=1, base_delay=1, sleep=waits.append))
    r = run(p, "hi")
    assert r.reason == "error" and isinstance(r.error, ServerError) and waits == [1]
    waits.clear()
    p = ScriptedProvider([Turn(faults=[HttpFault(status=400)]), "x"], retry=RetryPolicy(max_retries=3, sleep=waits.append))
    r = run(p, "hi")
    assert isinstance(r.error, BadRequestError) and waits == []


def test_mid_stream_error_cuts_the_stream_after_n_events():
    p = ScriptedProvider([Turn(text="abcdefgh", faults=[MidStreamError(after=3, message="oops", error_type="server_error")])], chunk_size=2)
    got = []
    with pytest.raises(StreamError, match="oops"):
        for e in p.stream(request()):
            got.append(e.type)
    assert got == ["start", "text_start", "text_delta"]
    r = run(ScriptedProvider([Turn(text="abcdefgh", faults=[MidStreamError(after=3)])], chunk_size=2), "hi")
    assert r.reason == "error" and r.messages[-1].text == "ab"
    assert r.messages[-1].error_type == "StreamError"


def test_truncate_closes_the_connection_after_n_events():
    p = ScriptedProvider([Turn(text="abcd", faults=[Truncate(after=2)])], chunk_size=2)
    got = []
    with pytest.raises(ConnectionClosedError):
        for e in p.stream(request()):
            got.append(e.type)
    assert got == ["start", "text_start"]


def test_delay_faults_use_the_injected_sleep():
    waits: list[tuple[float, int]] = []
    seen: list[str] = []
    p = ScriptedProvider([Turn(text="ab", faults=[Delay(seconds=2), Delay(seconds=0.25, after=2)])], chunk_size=1, sleep=lambda s: waits.append((s, len(seen))))
    for e in p.stream(request()):
        seen.append(e.type)
    # 2 s before the response starts, 0.25 s before event number 2 (after start and text_start)
    assert waits == [(2, 0), (0.25, 2)]
    assert seen == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]


def test_turn_rejects_bad_fields_with_script_errors():
    with pytest.raises(ScriptError, match="stop_reason"):
        Turn(stop_reason="finished")
    with pytest.raises(ScriptError, match="not a fault"):
        Turn(faults=["slow"])
    with pytest.raises(ScriptError, match="chunk_size"):
        Turn(chunk_size=0)
    with pytest.raises(ScriptError, match=r"script\[1\].tool_calls\[0\]"):
        Script.from_data(["hi", {"tool_calls": [{"arguments": {}}]}])


# --- FunctionProvider -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        lambda req: "plain text",
        lambda req: Turn(text="plain text"),
        lambda req: AssistantMessage(content=[TextContent(text="plain text")]),
        lambda req: [StartEvent(), TextStartEvent(content_index=0), TextDeltaEvent(content_index=0, delta="plain text"), TextEndEvent(content_index=0), DoneEvent()],
    ],
    ids=["str", "Turn", "AssistantMessage", "events"],
)
@pytest.mark.parametrize("driver", ["run", "arun"])
def test_function_provider_answer_forms(answer, driver):
    p = FunctionProvider(answer)
    r = run(p, "hi") if driver == "run" else asyncio.run(arun(p, "hi"))
    assert (r.reason, r.text) == ("stop", "plain text")
    assert len(p.requests) == 1 and p.requests[0].messages[0].text == "hi"


@pytest.mark.parametrize("driver", ["run", "arun", "run-in-loop"])
def test_function_provider_with_an_async_function(driver):
    async def answer(req: ModelRequest) -> str:
        await asyncio.sleep(0)
        return f"call {req.call_number}"

    p = FunctionProvider(answer)
    if driver == "run":
        r = run(p, "hi")
    elif driver == "arun":
        r = asyncio.run(arun(p, "hi"))
    else:

        async def main():
            return run(p, "hi")

        r = asyncio.run(main())
    assert (r.reason, r.text) == ("stop", "call 1")


def test_function_provider_sees_the_request_and_can_end_the_loop():
    def answer(req: ModelRequest):
        if req.call_number == 1:
            return Turn(tool_calls=[call("ghost", id="g1")])
        return f"saw {len(req.messages)} messages, last is {req.messages[-1].role}"

    r = run(FunctionProvider(answer), "hi")
    assert r.text == "saw 3 messages, last is toolResult"


def test_function_provider_http_fault_raises_the_typed_error():
    r = run(FunctionProvider(lambda req: Turn(faults=[HttpFault(status=429)])), "hi")
    assert r.reason == "error" and isinstance(r.error, RateLimitError)


# --- bad input: garbage from a provider, bad tool definitions ---------------------------------


@pytest.mark.parametrize(
    ("events", "problem"),
    [
        ([StartEvent(), "garbage"], "not a stream event: 'garbage'"),
        ([StartEvent(), {"type": "text_delta", "delta": "x"}], "not a stream event: {'type': 'text_delta'"),
        ([StartEvent(), TextDeltaEvent(content_index=0, delta="x")], "event for a TextContent at content_index 0, which was never started"),
        ([StartEvent(), TextStartEvent(content_index=0), ToolCallDeltaEvent(content_index=0, delta="{}")], "event for a ToolCall at content_index 0, which was never started"),
        ([StartEvent(), TextStartEvent(content_index=1)], "block started at content_index 1, but the message has 0 blocks"),
        (
            [StartEvent(), ToolCallStartEvent(content_index=0, id="c", name="f"), ToolCallEndEvent(content_index=0), ToolCallDeltaEvent(content_index=0, delta="{")],
            "toolcall_delta for the ToolCall at content_index 0 after its toolcall_end",
        ),
        (
            [StartEvent(), TextStartEvent(content_index=0), TextDeltaEvent(content_index=0, delta=5)],
            "could not apply stream event TextDeltaEvent(content_index=0, delta=5, type='text_delta'): TypeError: ",
        ),
    ],
    ids=["str", "dict", "unstarted-text", "wrong-kind", "out-of-order", "delta-after-end", "bad-field"],
)
@pytest.mark.parametrize("driver", ["run", "arun"])
def test_garbage_events_end_the_run_with_a_stream_protocol_error(events, problem, driver):
    p = FunctionProvider(lambda req: list(events))
    r = run(p, "hi", clock=TickClock()) if driver == "run" else asyncio.run(arun(p, "hi", clock=TickClock()))
    assert r.reason == "error" and isinstance(r.error, StreamProtocolError)
    a = r.messages[-1]
    assert a.stop_reason == "error" and a.error_message.startswith(f"StreamProtocolError: {problem}")
    assert a.error_type == "StreamProtocolError"
    assert types(r.events)[-3:] == ["message_end", "turn_end", "agent_end"]


def test_events_after_the_terminal_event_are_never_read():
    read: list[str] = []

    def answer(req):
        for e in [StartEvent(), DoneEvent(), "garbage"]:
            read.append(getattr(e, "type", e))
            yield e

    r = run(FunctionProvider(answer), "hi")
    assert r.reason == "stop" and read == ["start", "done"]


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Tool(name="t", execute=lambda: 1, parameters={"type": "object", "properties": {"a": {"type": "bogus"}}}), r"invalid parameters schema at properties/a/type"),
        (lambda: Tool(name="t", execute=lambda: 1, parameters={"type": "array"}), r'must have "type": "object"'),
        (lambda: Tool(name="t", execute=lambda: 1, parameters=[1]), "must be a JSON Schema object"),
        (lambda: Tool(name="bad name!", execute=lambda: 1), "not accepted by providers"),
        (lambda: adapt_tool({"spec": {"name": "t", "parameters": {"type": "object", "required": "a"}}, "execute": lambda a: a}), "invalid parameters schema"),
        (lambda: adapt_tool({"spec": {"name": "t"}}), "has no executor"),
        (lambda: adapt_tool("t"), "not names"),
    ],
    ids=["bad-type", "not-object", "not-dict", "bad-name", "dict-form", "no-executor", "a-name"],
)
def test_an_invalid_tool_definition_is_a_tool_definition_error(make, match):
    with pytest.raises(ToolDefinitionError, match=match):
        make()


def test_an_invalid_tool_in_run_fails_before_any_event():
    seen: list = []
    bad = {"spec": {"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": 5}}}}, "execute": lambda: 1}
    with pytest.raises(ToolDefinitionError):
        run(ScriptedProvider(["x"]), "hi", tools=[bad], on_event=seen.append)
    assert seen == []


def test_tool_call_end_with_a_whole_call_replaces_the_fragments():
    whole = ToolCall(id="g1", name="ghost", arguments={"q": 1})
    events = [StartEvent(), ToolCallEndEvent(content_index=0, tool_call=whole), DoneEvent(reason="toolUse")]
    answers = iter([events, "ok"])
    r = run(FunctionProvider(lambda req: next(answers)), "hi")
    assert r.messages[1].content == [whole]
    assert r.tool_results[0].text == "Tool ghost not found"


@pytest.mark.parametrize("driver", ["run", "arun"])
def test_function_provider_with_an_async_generator_of_events(driver):
    """Regression: run() called iter() on the async generator and ended with a TypeError."""

    async def answer(req):
        yield StartEvent()
        yield TextStartEvent(content_index=0)
        yield TextDeltaEvent(content_index=0, delta="streamed")
        if req.call_number == 1:
            raise StreamError("cut", provider="fn")

    p = FunctionProvider(answer)
    r = run(p, "hi") if driver == "run" else asyncio.run(arun(p, "hi"))
    assert r.reason == "error" and isinstance(r.error, StreamError)
    assert r.messages[-1].text == "streamed"  # the events before the error arrived first
    assert sum(isinstance(e, MessageUpdate) for e in r.events) == 2
