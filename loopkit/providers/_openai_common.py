"""What OpenAI's two HTTP APIs (Chat Completions and Responses) share: auth, usage counts, the
in-stream error shape and how loopkit's content blocks become request parts.

Both adapters subclass :class:`OpenAIHttpProvider`; the codecs themselves live in
``openai_chat.py`` and ``openai_responses.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..errors import StreamError
from ..messages import AssistantMessage, ImageContent, Message, TextContent, ToolResultMessage, Usage
from ._http import HttpProvider, WireHistory

PROVIDER = "openai"
"""The provider both APIs' messages and errors name."""


class OpenAIHttpProvider(HttpProvider):
    """The auth and defaults of api.openai.com (``Authorization: Bearer``, ``OPENAI_API_KEY``)."""

    provider_name = PROVIDER
    default_base_url = "https://api.openai.com/v1"
    api_key_env = ("OPENAI_API_KEY",)

    def auth_headers(self) -> dict[str, str]:
        # credentials, not codec: out of the mutation score (the simulators accept any key; the
        # header is checked in tests/providers/test_openai_chat.py)
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}  # pragma: no mutate


def usage_from(
    input_tokens: Any, output_tokens: Any, total_tokens: Any, details: Any, *, cache_write_key: str = "cache_write_tokens"
) -> Usage:
    """A :class:`Usage` from OpenAI's counts. ``input`` excludes the cached prompt tokens, which
    are counted in ``cache_read`` (OpenAI reports them inside ``prompt_tokens``/``input_tokens``).

    Args:
        input_tokens / output_tokens / total_tokens: the wire counts (None or missing count as 0).
        details: ``prompt_tokens_details`` / ``input_tokens_details`` (may be None).
    """
    prompt = _int(input_tokens)
    cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
    written = _int(details.get(cache_write_key)) if isinstance(details, dict) else 0
    output = _int(output_tokens)
    total = _int(total_tokens) or prompt + output
    return Usage(input=max(prompt - cached - written, 0), output=output, cache_read=cached, cache_write=written, total_tokens=total)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def stream_error(error: Any, *, fallback: str = "error during the stream", error_type: Any = None) -> StreamError:
    """A :class:`StreamError` from an OpenAI error object (``{"message","type","code","param"}``;
    compatible servers may send ``type: null`` and only a ``code``, a number on OpenRouter),
    naming the provider as the messages do (``openai``, whichever of the two APIs).

    Args:
        error: the error object, or the bare message Hugging Face TGI sends as ``error``.
        error_type: the type sent next to a bare message (TGI's ``error_type``).
    """
    if not isinstance(error, dict):
        return StreamError(str(error) if error else fallback, error_type=None if error_type is None else str(error_type), provider=PROVIDER, body=error)
    message = error.get("message")
    error_type = error.get("type") or error.get("code")
    return StreamError(
        message if isinstance(message, str) and message else fallback,
        error_type=None if error_type is None else str(error_type),
        provider=PROVIDER,
        body=dict(error),
    )


def image_url(block: ImageContent) -> str:
    """An image block as the data URL both OpenAI APIs accept."""
    return f"data:{block.mime_type};base64,{block.data}"


def result_text(blocks: list[Any]) -> str:
    """The text of a tool result's blocks, joined with newlines (OpenAI has no error flag, so an
    ``is_error`` result reaches the model as its text alone; docs/loop-contract.md §7.2)."""
    return "\n".join(b.text for b in blocks if isinstance(b, TextContent))


class _Entries:
    __slots__ = ("out", "dropped")

    def __init__(self) -> None:
        self.out: list[dict[str, Any]] = []
        self.dropped: set[str] = set()  # ids of calls whose assistant message was left out


def wire_entries(
    messages: Sequence[Message], convert: Callable[[Message], list[dict[str, Any]]], history: WireHistory | None = None
) -> list[dict[str, Any]]:
    """The wire entries of the history, ``convert`` giving each message's entries.

    An assistant message that ended in ``error``/``aborted`` is left out, with the results of its
    calls: it may be empty or half-written, and the API rejects such an entry.

    Args:
        history: goes on from the previous request's conversion (see :class:`WireHistory`).
    """

    def step(state: _Entries, m: Message) -> None:
        entries = convert(m)
        if isinstance(m, AssistantMessage) and m.stop_reason in ("error", "aborted"):
            state.dropped.update(c.id for c in m.tool_calls)
        elif not (isinstance(m, ToolResultMessage) and m.tool_call_id in state.dropped):
            state.out.extend(entries)

    return (WireHistory() if history is None else history).fold(messages, _Entries, step, lambda state: list(state.out), key=convert)
