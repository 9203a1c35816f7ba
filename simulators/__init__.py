"""Wire-faithful fake servers (``loopkit.simulators``) for OpenAI (Chat and Responses), Anthropic, Gemini and Bedrock.

Each simulator answers from a :class:`loopkit.script.Script` in its provider's exact wire format.
Run one in process as an httpx transport (:func:`transport`) or as a real HTTP server on
127.0.0.1 (:func:`serve`) for official SDKs and clients in any language::

    with simulators.serve("anthropic", script) as sim:
        client = anthropic.Anthropic(base_url=sim.base_url, api_key="test")
        ...
        sim.assert_complete()

Every stop and content kind a :class:`~loopkit.script.Turn` can script is written the way each
API writes it; where an API has no form for a kind, building the simulator raises
:class:`~loopkit.script.UnsupportedTurn` naming the protocol and the kind (``-`` below):

=================  ================  =============================  ========================  ==================  ================
kind               openai_chat       openai_responses               anthropic                 gemini              bedrock
=================  ================  =============================  ========================  ==================  ================
length             length            incomplete: max_output_tokens  max_tokens                MAX_TOKENS          max_tokens
stop_sequence      stop              -                              stop_sequence (+ which)   STOP                stop_sequence
refusal            message.refusal   refusal content part           refusal (+ stop_details)  -                   -
content_filter     content_filter    incomplete: content_filter     refusal                   SAFETY              content_filtered
pause_turn         -                 -                              pause_turn                -                   -
redacted_thinking  -                 reasoning item, no summary     redacted_thinking         -                   redactedContent
reasoning_tokens   reasoning_tokens  reasoning_tokens               thinking_tokens           thoughtsTokenCount  in outputTokens
split_usage        -                 -                              message_start/_delta      growing per chunk   -
wire_stop_reason   finish_reason     incomplete_details.reason      stop_reason               finishReason        stopReason
=================  ================  =============================  ========================  ==================  ================

The adapters read a refusal as an ``error`` stop with ``error_type="refusal"`` (its text kept in
the message text or the error message) and a content filter as an ``error`` stop whose
``error_type`` names the filter: neither ever looks like a clean ``stop``. A stop sequence and a
paused turn are a ``stop``.
"""

from __future__ import annotations

if __name__ != "loopkit.simulators":  # pragma: no cover - a wrong import path, caught at once
    raise ImportError(
        f"the simulators are installed as loopkit.simulators (imported here as {__name__!r}): "
        "write `from loopkit import simulators`, so that one copy of their classes is loaded"
    )

import importlib
import time
from collections.abc import Callable
from typing import Any

from loopkit.errors import UsageError
from loopkit.script import Script, Turn

from ._core import SimRequest, SimResponse, Simulator
from ._serve import ServedSimulator, SimulatorTransport

PROTOCOLS: dict[str, str] = {
    "openai_chat": "loopkit.simulators.openai_chat:OpenAIChatSimulator",
    "openai_responses": "loopkit.simulators.openai_responses:OpenAIResponsesSimulator",
    "anthropic": "loopkit.simulators.anthropic:AnthropicSimulator",
    "gemini": "loopkit.simulators.gemini:GeminiSimulator",
    "bedrock": "loopkit.simulators.bedrock:BedrockSimulator",
}


def simulator_class(protocol: str) -> type[Simulator]:
    """The simulator class for a protocol name (see :data:`PROTOCOLS`)."""
    try:
        target = PROTOCOLS[protocol]
    except KeyError:
        raise UsageError(f"unknown protocol {protocol!r}; expected one of {', '.join(PROTOCOLS)}") from None
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def create(protocol: str, script: Script | list[Turn | str], **options: Any) -> Simulator:
    """A sans-IO simulator for ``protocol`` answering from ``script``."""
    return simulator_class(protocol)(script, **options)


def transport(protocol: str | Simulator, script: Script | list[Turn | str] | None = None, *, sleep: Callable[[float], None] = time.sleep, **options: Any) -> SimulatorTransport:
    """An in-process httpx transport (the fast path for tests)."""
    sim = protocol if isinstance(protocol, Simulator) else create(protocol, script or [], **options)
    return SimulatorTransport(sim, sleep=sleep)


def serve(protocol: str | Simulator, script: Script | list[Turn | str] | None = None, *, port: int = 0, sleep: Callable[[float], None] = time.sleep, **options: Any) -> ServedSimulator:
    """A simulator on 127.0.0.1 (a free port unless ``port`` is given); use ``with``."""
    sim = protocol if isinstance(protocol, Simulator) else create(protocol, script or [], **options)
    return ServedSimulator(sim, port=port, sleep=sleep)


__all__ = [
    "PROTOCOLS",
    "ServedSimulator",
    "SimRequest",
    "SimResponse",
    "Simulator",
    "SimulatorTransport",
    "create",
    "serve",
    "simulator_class",
    "transport",
]
