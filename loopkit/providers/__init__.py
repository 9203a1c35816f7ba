"""Provider adapters, one module per wire protocol: a pure codec plus a thin httpx Provider.

:data:`ADAPTERS` names each protocol's adapter class; :func:`adapter_class` imports one;
:func:`decode` turns one recorded response body into the assistant message it encodes.
"""

from __future__ import annotations

import importlib

from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:
    from ..messages import AssistantMessage

ADAPTERS: dict[str, str] = {
    "openai_chat": "loopkit.providers.openai_chat:OpenAIChatProvider",
    "openai_responses": "loopkit.providers.openai_responses:OpenAIResponsesProvider",
    "anthropic": "loopkit.providers.anthropic:AnthropicProvider",
    "gemini": "loopkit.providers.gemini:GeminiProvider",
    "bedrock": "loopkit.providers.bedrock:BedrockProvider",
}


def decode(protocol: str, body: bytes | str, *, streaming: bool | None = None) -> AssistantMessage:
    """The assistant message one recorded response body encodes (see :mod:`loopkit.providers._decode`)."""
    from ._decode import decode as _decode

    return _decode(protocol, body, streaming=streaming)


def adapter_class(protocol: str) -> type:
    """The adapter class for a protocol name (see :data:`ADAPTERS`)."""
    try:
        target = ADAPTERS[protocol]
    except KeyError:
        raise UsageError(f"unknown protocol {protocol!r}; expected one of {', '.join(ADAPTERS)}") from None
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
