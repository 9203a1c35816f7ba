"""Decode one recorded response body into the assistant message it encodes.

:func:`decode` runs the same codec the adapter runs on a live answer (its stream decoder for a
streamed body, its body decoder for a single JSON answer), with no HTTP, no loop and no tools.
"""

from __future__ import annotations

import json
from typing import Any

from ..accumulate import accumulate
from ..errors import UsageError, WireError
from ..events import StreamEvent
from ..messages import AssistantMessage


def decode(protocol: str, body: bytes | str, *, streaming: bool | None = None) -> AssistantMessage:
    """The :class:`~loopkit.messages.AssistantMessage` one response body encodes.

    Args:
        protocol: the wire protocol (``openai_chat``, ``openai_responses``, ``anthropic``,
            ``gemini``, ``bedrock``; see :data:`loopkit.providers.ADAPTERS`).
        body: the whole HTTP response body, as recorded: SSE text for a streamed OpenAI, Anthropic
            or Gemini answer, the binary AWS event-stream for Bedrock's ``converse-stream``, or
            the JSON of a non-streamed answer.
        streaming: whether ``body`` is a streamed answer; None decides from the body (a body
            that is one JSON object is a non-streamed answer, anything else a stream).

    Returns:
        The message, with its stop reason, usage and tool calls (broken argument text kept in
        ``raw_arguments``). An answer the provider ended with an error (a refusal, a content
        filter) gives a message with ``stop_reason="error"`` and its ``error_message``.

    Raises:
        UsageError: an unknown protocol.
        WireError: bytes that are not this protocol's wire format.
        ConnectionClosedError: a stream that ends before its terminal event (a truncated recording).
        StreamError: a stream that carries the provider's error event.
    """
    from . import adapter_class

    try:
        cls = adapter_class(protocol)
    except UsageError as exc:
        raise UsageError(f"decode: {exc}") from None
    data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    if not data.strip():
        raise WireError(f"decode({protocol!r}): the body is empty")
    if streaming is None:
        streaming = not data.lstrip().startswith(b"{")
    adapter: Any = cls(model="", api_key="decode")
    events: list[StreamEvent]
    if streaming:
        decoder = adapter.stream_decoder()
        events = decoder.feed(data) + decoder.close()
    else:
        try:
            parsed = json.loads(data)
        except ValueError as exc:
            raise WireError(f"decode({protocol!r}): the body is not JSON, so not a non-streamed answer: {data[:200]!r}") from exc
        events = adapter.decode_body(parsed)
    return accumulate(events)
