"""What OpenAI's two HTTP APIs (Chat Completions and Responses) share: auth, usage counts, the
in-stream error shape and how loopkit's content blocks become request parts.

Both adapters subclass :class:`OpenAIHttpProvider`; the codecs themselves live in
``openai_chat.py`` and ``openai_responses.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import StreamError
from ..messages import ImageContent, Message, TextContent, Usage
from ._http import HttpProvider


class OpenAIHttpProvider(HttpProvider):
    """The auth and defaults of api.openai.com (``Authorization: Bearer``, ``OPENAI_API_KEY``)."""

    provider_name = "openai"
    default_base_url = "https://api.openai.com/v1"
    api_key_env = ("OPENAI_API_KEY",)

    def auth_headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def wire_history(self) -> WireHistory:
        """This provider's :class:`WireHistory` (made on first use; the base owns ``__init__``)."""
        history = self.__dict__.get("_wire_history")
        if history is None:
            history = self.__dict__["_wire_history"] = WireHistory()
        return history


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


def stream_error(error: Any, *, api: str, fallback: str = "error during the stream") -> StreamError:
    """A :class:`StreamError` from an OpenAI error object (``{"message","type","code","param"}``)."""
    if not isinstance(error, dict):
        return StreamError(str(error) if error else fallback, provider=api, body=error)
    message = error.get("message")
    error_type = error.get("type") or error.get("code")
    return StreamError(
        message if isinstance(message, str) and message else fallback,
        error_type=None if error_type is None else str(error_type),
        provider=api,
        body=dict(error),
    )


def image_url(block: ImageContent) -> str:
    """An image block as the data URL both OpenAI APIs accept."""
    return f"data:{block.mime_type};base64,{block.data}"


def result_text(blocks: list[Any]) -> str:
    """The text of a tool result's blocks, joined with newlines (OpenAI has no error flag, so an
    ``is_error`` result reaches the model as its text alone; spec/loop.md §8.2)."""
    return "\n".join(b.text for b in blocks if isinstance(b, TextContent))


class WireHistory:
    """The wire form of the previous request's messages, reused by identity.

    The loop resends its whole append-only history on every call; converting only the messages
    that were not in the previous request keeps a round's cost to the unavoidable JSON encoding.
    Messages are treated as immutable once sent (the loop never edits them).
    """

    __slots__ = ("_messages", "_wire")

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._wire: list[list[dict[str, Any]]] = []

    def convert(self, messages: Iterable[Message], one: Callable[[Message], list[dict[str, Any]]]) -> list[tuple[Message, list[dict[str, Any]]]]:
        """``(message, wire entries)`` for each message; ``one`` converts a message not seen last time."""
        old_m, old_w = self._messages, self._wire
        new_m: list[Message] = []
        new_w: list[list[dict[str, Any]]] = []
        n = len(old_m)
        for i, m in enumerate(messages):
            new_m.append(m)
            new_w.append(old_w[i] if i < n and old_m[i] is m else one(m))
        self._messages, self._wire = new_m, new_w
        return list(zip(new_m, new_w))
