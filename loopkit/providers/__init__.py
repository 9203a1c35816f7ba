"""Provider adapters, one module per wire protocol: a pure codec plus a thin httpx Provider.

:data:`ADAPTERS` names each protocol's adapter class; :func:`adapter_class` imports one.
"""

from __future__ import annotations

import importlib

from ..errors import UsageError

ADAPTERS: dict[str, str] = {
    "openai_chat": "loopkit.providers.openai_chat:OpenAIChatProvider",
    "openai_responses": "loopkit.providers.openai_responses:OpenAIResponsesProvider",
    "anthropic": "loopkit.providers.anthropic:AnthropicProvider",
    "gemini": "loopkit.providers.gemini:GeminiProvider",
    "bedrock": "loopkit.providers.bedrock:BedrockProvider",
}


def adapter_class(protocol: str) -> type:
    """The adapter class for a protocol name (see :data:`ADAPTERS`)."""
    try:
        target = ADAPTERS[protocol]
    except KeyError:
        raise UsageError(f"unknown protocol {protocol!r}; expected one of {', '.join(ADAPTERS)}") from None
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
