"""The accumulator: every stream event kind folded into an AssistantMessage, its protocol
errors, and a terminal event's ``message=`` replacing what was accumulated."""

from __future__ import annotations

import pytest

from loopkit.accumulate import Accumulator, accumulate
from loopkit.errors import StreamProtocolError
from loopkit.events import (
    DoneEvent,
    ErrorEvent,
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
)
from loopkit.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, Usage


def full_stream():
    return [
        StartEvent(api="anthropic-messages", provider="anthropic", model="claude-x", response_id="msg_1"),
        ThinkingStartEvent(content_index=0),
        ThinkingDeltaEvent(content_index=0, delta="Let me "),
        ThinkingDeltaEvent(content_index=0, delta="think."),
        ThinkingEndEvent(content_index=0, thinking_signature="sig-1"),
        ThinkingStartEvent(content_index=1, redacted=True),
        ThinkingEndEvent(content_index=1),
        TextStartEvent(content_index=2),
        TextDeltaEvent(content_index=2, delta="Hel"),
        TextDeltaEvent(content_index=2, delta="lo ü"),
        TextEndEvent(content_index=2, text_signature="tsig"),
        ToolCallStartEvent(content_index=3, id="toolu_1", name="add"),
        ToolCallDeltaEvent(content_index=3, delta='{"a": 1, "b'),
        ToolCallDeltaEvent(content_index=3, delta='": "\\u00fc"}'),
        ToolCallEndEvent(content_index=3, thought_signature="ts"),
        ToolCallStartEvent(content_index=4, id="toolu_2", name="noargs"),
        ToolCallEndEvent(content_index=4),
        DoneEvent(reason="toolUse", usage=Usage(input=3, output=4, total_tokens=7)),
    ]


def test_every_event_kind_folds_into_the_message():
    m = accumulate(full_stream(), timestamp=42)
    assert (m.api, m.provider, m.model, m.response_id, m.timestamp) == ("anthropic-messages", "anthropic", "claude-x", "msg_1", 42)
    assert m.content == [
        ThinkingContent(thinking="Let me think.", thinking_signature="sig-1"),
        ThinkingContent(thinking="", redacted=True),
        TextContent(text="Hello ü", text_signature="tsig"),
        ToolCall(id="toolu_1", name="add", arguments={"a": 1, "b": "ü"}, thought_signature="ts"),
        ToolCall(id="toolu_2", name="noargs", arguments={}),
    ]
    assert m.stop_reason == "toolUse" and m.usage.total_tokens == 7
    assert m.error_message is None


def test_the_partial_is_updated_in_place():
    acc = Accumulator()
    partial = acc.message
    for e in full_stream()[:9]:
        acc.feed(e)
    assert acc.message is partial and acc.started and not acc.finished
    assert partial.content[-1].text == "Hel"


@pytest.mark.parametrize(
    ("raw", "arguments", "raw_arguments"),
    [
        ('{"a": 1', None, '{"a": 1'),
        ('{"a":1}{"b":2}', None, '{"a":1}{"b":2}'),
        ("[1, 2]", [1, 2], None),
        ('"s"', "s", None),
        ("null", None, None),
        ("   ", {}, None),
    ],
)
def test_tool_call_arguments_keep_what_the_wire_sent(raw, arguments, raw_arguments):
    m = accumulate(
        [
            StartEvent(),
            ToolCallStartEvent(content_index=0, id="c", name="f"),
            ToolCallDeltaEvent(content_index=0, delta=raw),
            ToolCallEndEvent(content_index=0),
            DoneEvent(reason="toolUse"),
        ]
    )
    call = m.content[0]
    assert (call.arguments, call.raw_arguments) == (arguments, raw_arguments)
    assert call.arguments_ok is (isinstance(arguments, dict) and raw_arguments is None)


def test_a_call_left_open_at_done_is_parsed_anyway():
    m = accumulate([StartEvent(), ToolCallStartEvent(content_index=0, id="c", name="f"), ToolCallDeltaEvent(content_index=0, delta='{"x": 2}'), DoneEvent(reason="toolUse")])
    assert m.content[0].arguments == {"x": 2}


def test_tool_call_end_with_a_whole_call():
    whole = ToolCall(id="g", name="search", arguments={"q": "x"}, thought_signature="gem")
    m = accumulate([StartEvent(), ToolCallEndEvent(content_index=0, tool_call=whole), DoneEvent(reason="toolUse")])
    assert m.content == [whole]
    # it may also replace a streamed call at its index
    m = accumulate(
        [
            StartEvent(),
            ToolCallStartEvent(content_index=0, id="g", name="search"),
            ToolCallDeltaEvent(content_index=0, delta='{"q": "partial'),
            ToolCallEndEvent(content_index=0, tool_call=whole),
            DoneEvent(reason="toolUse"),
        ]
    )
    assert m.content == [whole]


def test_error_event_sets_reason_message_type_and_usage():
    events = [StartEvent(), TextStartEvent(content_index=0), TextDeltaEvent(content_index=0, delta="par"), ErrorEvent(reason="error", error_message="overloaded", error_type="overloaded_error", usage=Usage(input=1))]
    m = accumulate(events)
    assert (m.stop_reason, m.error_message, m.error_type, m.usage.input, m.text) == ("error", "overloaded", "overloaded_error", 1, "par")
    aborted = accumulate([StartEvent(), ErrorEvent(reason="aborted")])
    assert (aborted.stop_reason, aborted.error_message) == ("aborted", "aborted")


def test_done_with_a_message_replaces_what_was_accumulated():
    final = AssistantMessage(content=[TextContent(text="final")], stop_reason="length", model="m2")
    acc = Accumulator(timestamp=9)
    for e in [StartEvent(model="m1"), TextStartEvent(content_index=0), TextDeltaEvent(content_index=0, delta="partial"), DoneEvent(reason="stop", message=final)]:
        acc.feed(e)
    assert acc.message is final
    assert (final.text, final.stop_reason, final.model, final.timestamp) == ("final", "length", "m2", 9)
    # a final message with its own timestamp keeps it
    own = AssistantMessage(content=[], timestamp=5)
    assert accumulate([DoneEvent(message=own)], timestamp=9).timestamp == 5


def test_error_with_a_message_replaces_it_and_still_marks_the_error():
    final = AssistantMessage(content=[TextContent(text="kept")], error_message="from message")
    m = accumulate([StartEvent(), ErrorEvent(reason="error", message=final)])
    assert m is final and m.stop_reason == "error" and m.error_message == "from message"


@pytest.mark.parametrize(
    ("events", "match"),
    [
        ([StartEvent(), TextDeltaEvent(content_index=0, delta="x")], "TextContent at content_index 0, which was never started"),
        ([StartEvent(), TextEndEvent(content_index=0)], "TextContent at content_index 0, which was never started"),
        ([StartEvent(), ThinkingDeltaEvent(content_index=0, delta="x")], "ThinkingContent at content_index 0"),
        ([StartEvent(), ThinkingEndEvent(content_index=2)], "ThinkingContent at content_index 2"),
        ([StartEvent(), ToolCallDeltaEvent(content_index=0, delta="{")], "ToolCall at content_index 0"),
        ([StartEvent(), ToolCallEndEvent(content_index=0)], "ToolCall at content_index 0"),
        ([StartEvent(), TextStartEvent(content_index=0), ThinkingDeltaEvent(content_index=0, delta="x")], "ThinkingContent at content_index 0"),
        ([StartEvent(), TextStartEvent(content_index=0), ToolCallEndEvent(content_index=0, tool_call=ToolCall(id="x", name="y"))], "ToolCall at content_index 0"),
        ([StartEvent(), TextStartEvent(content_index=1)], "block started at content_index 1, but the message has 0 blocks"),
        ([StartEvent(), TextStartEvent(content_index=0), TextStartEvent(content_index=0)], "block started at content_index 0, but the message has 1 blocks"),
        ([StartEvent(), TextDeltaEvent(content_index=-1, delta="x")], "content_index -1"),
        ([DoneEvent(), TextStartEvent(content_index=0)], "'text_start' arrived after the terminal event"),
        ([ErrorEvent(), DoneEvent()], "'done' arrived after the terminal event"),
        ([StartEvent(), object()], "not a stream event"),
        (
            [StartEvent(), ToolCallStartEvent(content_index=0, id="c", name="f"), ToolCallEndEvent(content_index=0), ToolCallDeltaEvent(content_index=0, delta="{")],
            "toolcall_delta for the ToolCall at content_index 0 after its toolcall_end",
        ),
        (
            [StartEvent(), ToolCallEndEvent(content_index=0, tool_call=ToolCall(id="c", name="f")), ToolCallDeltaEvent(content_index=0, delta="{")],
            "after its toolcall_end",
        ),
    ],
    ids=[
        "text-delta-unstarted", "text-end-unstarted", "thinking-delta-unstarted", "thinking-end-unstarted",
        "toolcall-delta-unstarted", "toolcall-end-unstarted", "delta-wrong-kind", "whole-call-over-text",
        "start-gap", "start-twice", "negative-index", "after-done", "after-error", "not-an-event",
        "toolcall-delta-after-end", "delta-after-whole-call",
    ],
)  # fmt: skip
def test_protocol_errors(events, match):
    with pytest.raises(StreamProtocolError, match=match):
        accumulate(events)
