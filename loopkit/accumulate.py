"""Fold provider stream events into an :class:`AssistantMessage` (pure; no I/O).

:class:`Accumulator` keeps one partial message and updates it in place as events arrive, so the
loop can show the partial on every ``message_update`` without copying. :func:`accumulate` folds a
whole event sequence. Content blocks are addressed by ``content_index``: a block starts at the end
of the content list, and deltas go to a started block of the same kind.
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import StreamProtocolError
from .events import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    StreamEvent,
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
from .messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, parse_arguments


class Accumulator:
    """Builds one assistant message from its stream events.

    Args:
        timestamp: the timestamp to stamp on the message (injected by the loop's clock).
    """

    __slots__ = ("message", "started", "finished", "_fragments")

    def __init__(self, *, timestamp: int = 0) -> None:
        self.message = AssistantMessage(timestamp=timestamp)
        self.started = False
        self.finished = False
        self._fragments: dict[int, list[str]] = {}

    def feed(self, event: StreamEvent) -> None:
        """Apply one event. Raises :class:`StreamProtocolError` on an event that breaks the
        contract (a delta for a block that was never started, anything after the end)."""
        if self.finished:
            raise StreamProtocolError(f"stream event {getattr(event, 'type', event)!r} arrived after the terminal event")
        handler = _HANDLERS.get(type(event))
        if handler is None:
            raise StreamProtocolError(f"not a stream event: {event!r}")
        handler(self, event)

    def _text_delta(self, event: TextDeltaEvent) -> None:
        content = self.message.content
        index = event.content_index
        if type(index) is int and 0 <= index < len(content) and type(content[index]) is TextContent:
            content[index].text += event.delta
        else:
            self._block(index, TextContent).text += event.delta

    def _toolcall_delta(self, event: ToolCallDeltaEvent) -> None:
        # only started, unfinished calls have fragments, so finding them is the whole check
        fragments = self._fragments.get(event.content_index)
        if fragments is None:
            self._block(event.content_index, ToolCall)
            raise StreamProtocolError(f"toolcall_delta for the ToolCall at content_index {event.content_index} after its toolcall_end")
        fragments.append(event.delta)

    def _thinking_delta(self, event: ThinkingDeltaEvent) -> None:
        self._block(event.content_index, ThinkingContent).thinking += event.delta

    def _start(self, event: StartEvent) -> None:
        self.started = True
        msg = self.message
        msg.api, msg.provider, msg.model = event.api, event.provider, event.model
        msg.response_id = event.response_id

    def _text_start(self, event: TextStartEvent) -> None:
        self._check_new(event.content_index)
        self.message.content.append(TextContent(text=""))

    def _thinking_start(self, event: ThinkingStartEvent) -> None:
        self._check_new(event.content_index)
        self.message.content.append(ThinkingContent(thinking="", redacted=event.redacted))

    def _toolcall_start(self, event: ToolCallStartEvent) -> None:
        self._check_new(event.content_index)
        self.message.content.append(ToolCall(id=event.id, name=event.name, arguments={}))
        self._fragments[event.content_index] = []

    def _text_end(self, event: TextEndEvent) -> None:
        block = self._block(event.content_index, TextContent)
        if event.text_signature is not None:
            block.text_signature = event.text_signature

    def _thinking_end(self, event: ThinkingEndEvent) -> None:
        block = self._block(event.content_index, ThinkingContent)
        if event.thinking_signature is not None:
            block.thinking_signature = event.thinking_signature

    def _done(self, event: DoneEvent) -> None:
        self._close_open_calls()
        self.finished = True
        if event.message is not None:
            self._replace(event.message)
            return
        self.message.stop_reason = event.reason
        if event.usage is not None:
            self.message.usage = event.usage

    def _error(self, event: ErrorEvent) -> None:
        self._close_open_calls()
        self.finished = True
        if event.message is not None:
            self._replace(event.message)
        msg = self.message
        msg.stop_reason = event.reason
        msg.error_message = event.error_message or msg.error_message or event.reason
        msg.error_type = event.error_type or msg.error_type
        if event.usage is not None:
            msg.usage = event.usage

    def _replace(self, final: AssistantMessage) -> None:
        if not final.timestamp:
            final.timestamp = self.message.timestamp
        self.message = final

    def _check_new(self, index: int) -> None:
        if index != len(self.message.content):
            raise StreamProtocolError(
                f"block started at content_index {index}, but the message has {len(self.message.content)} blocks "
                "(blocks start in order at the end of the content)"
            )

    def _block(self, index: int, kind: type):
        content = self.message.content
        if not 0 <= index < len(content) or type(content[index]) is not kind:
            raise StreamProtocolError(f"event for a {kind.__name__} at content_index {index}, which was never started")
        return content[index]

    def _toolcall_end(self, event: ToolCallEndEvent) -> None:
        index = event.content_index
        if event.tool_call is not None:
            if index == len(self.message.content):
                self.message.content.append(event.tool_call)
            else:
                self._block(index, ToolCall)
                self.message.content[index] = event.tool_call
            self._fragments.pop(index, None)
            return
        block = self._block(index, ToolCall)
        fragments = self._fragments.pop(index, None)
        if fragments is not None:
            block.arguments, block.raw_arguments = parse_arguments("".join(fragments))
        if event.thought_signature is not None:
            block.thought_signature = event.thought_signature

    def _close_open_calls(self) -> None:
        if not self._fragments:
            return
        for index, fragments in list(self._fragments.items()):
            block = self.message.content[index]
            block.arguments, block.raw_arguments = parse_arguments("".join(fragments))
        self._fragments.clear()


_HANDLERS = {
    TextDeltaEvent: Accumulator._text_delta,
    ToolCallDeltaEvent: Accumulator._toolcall_delta,
    ThinkingDeltaEvent: Accumulator._thinking_delta,
    StartEvent: Accumulator._start,
    TextStartEvent: Accumulator._text_start,
    ThinkingStartEvent: Accumulator._thinking_start,
    ToolCallStartEvent: Accumulator._toolcall_start,
    TextEndEvent: Accumulator._text_end,
    ThinkingEndEvent: Accumulator._thinking_end,
    ToolCallEndEvent: Accumulator._toolcall_end,
    DoneEvent: Accumulator._done,
    ErrorEvent: Accumulator._error,
}


def accumulate(events: Iterable[StreamEvent], *, timestamp: int = 0) -> AssistantMessage:
    """Fold a complete event sequence into the final message."""
    acc = Accumulator(timestamp=timestamp)
    for event in events:
        acc.feed(event)
    return acc.message
