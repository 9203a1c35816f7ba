"""The providers a scenario runs on, built fresh for each run, and what each one cannot express.

``scripted`` is :class:`loopkit.fakes.ScriptedProvider`; every other name is a wire protocol: its
adapter (``loopkit.providers.adapter_class``) over its simulator's in-process httpx transport.
A protocol whose adapter or simulator does not import is simply not available. Every provider of
a run gets the same :class:`RetryPolicy` and the same sleep recorder, so retries and delays behave
alike everywhere and nothing really waits.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..fakes import CallIds, ScriptedProvider
from ..provider import BaseProvider, ModelRequest
from ..retry import RetryPolicy
from ..script import Turn
from .model import PROVIDER_NAMES, ScenarioModel

MODELS: dict[str, str] = {
    "openai_chat": "gpt-4o-mini",
    "openai_responses": "gpt-4o-mini",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
    "bedrock": "anthropic.claude-sonnet-4-v1:0",
}


@functools.cache
def available() -> tuple[str, ...]:
    """``scripted`` plus every protocol whose adapter and simulator import."""
    import importlib

    names = ["scripted"]
    try:
        import loopkit.simulators as simulators
        from ..providers import ADAPTERS
    except ImportError:  # pragma: no cover - simulators ship with loopkit
        return tuple(names)
    for protocol in ADAPTERS:
        if protocol not in simulators.PROTOCOLS:
            continue
        try:
            from ..providers import adapter_class

            adapter_class(protocol)
            module = simulators.PROTOCOLS[protocol].partition(":")[0]
            importlib.import_module(module)
        except ImportError:
            continue
        names.append(protocol)
    return tuple(n for n in PROVIDER_NAMES if n in names)


class Recording(BaseProvider):
    """Passes requests to ``inner`` and keeps every :class:`ModelRequest` it forwarded."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> Iterator[Any]:
        self.requests.append(request)
        return self.inner.stream(request)

    async def astream(self, request: ModelRequest) -> AsyncIterator[Any]:
        self.requests.append(request)
        events = self.inner.astream(request)
        try:
            async for event in events:
                yield event
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()


@dataclass(slots=True)
class Built:
    """A provider for one run: what the loop calls, and the simulator behind it (None for scripted)."""

    provider: Recording
    simulator: Any
    used: Callable[[], int]
    total: int


def build(name: str, turns: list[Turn], scenario: ScenarioModel, sleep: Callable[[float], None]) -> Built:
    """A fresh provider named ``name`` answering from ``turns``."""
    cfg = scenario.config
    retry = RetryPolicy(max_retries=cfg.retries, sleep=sleep, asleep=_async_sleeper(sleep))
    if name == "scripted":
        fake = ScriptedProvider(turns, retry=retry, sleep=sleep, ids=CallIds())
        return Built(Recording(fake), None, lambda: fake.used, len(turns))
    import loopkit.simulators as simulators

    from ..providers import adapter_class

    sim = simulators.create(name, turns)
    adapter = adapter_class(name)(
        model=MODELS.get(name, "sim-model"),
        api_key="test-key",
        transport=simulators.SimulatorTransport(sim, sleep=sleep, asleep=_async_sleeper(sleep)),
        retry=retry,
        stream=cfg.stream,
    )
    return Built(Recording(adapter), sim, lambda: sim.used, len(turns))


def _async_sleeper(sleep: Callable[[float], None]) -> Callable[[float], Any]:
    async def asleep(seconds: float) -> None:
        sleep(seconds)

    return asleep


# --- what a protocol cannot express -------------------------------------------------------------


def skip_reason(name: str, scenario: ScenarioModel) -> str | None:
    """Why ``scenario`` cannot run on provider ``name`` (None: it can)."""
    if scenario.providers is not None and name not in scenario.providers:
        return f"the scenario runs only on {', '.join(scenario.providers)}"
    if name not in available():
        return f"provider {name!r} is not available (its adapter or simulator does not import)"
    if name == "scripted":
        return None
    cfg = scenario.config
    if cfg.parallel_tool_calls is False and not _supports_parallel_knob(name):
        return f"{name} has no parallel_tool_calls knob: the scenario's parallel_tool_calls: false cannot be sent"
    if any(t.aborted for t in scenario.script):
        return "an aborted stop comes from the caller's abort signal; no wire protocol can send one (use the abort tool kind)"
    import loopkit.simulators as simulators

    for turn in scenario.turns():
        problem = simulators.simulator_class(name).cannot_send(turn)
        if problem is not None:
            return f"{name} cannot send a turn's {problem[0]!r}: {problem[1]}"
    if name == "gemini" and scenario.raw_argument_calls():
        return "Gemini sends function-call arguments as a JSON object (a malformed call is finishReason MALFORMED_FUNCTION_CALL), so raw or non-object argument text cannot be expressed"
    if name == "bedrock" and cfg.tool_choice == "none" and any(t.tool_calls for t in scenario.script):
        return 'Bedrock Converse has no tool_choice "none" once the history holds tool calls (it can only leave toolConfig out before the first tool round)'
    if not cfg.stream and any(f.mid_stream_error or f.truncate for t in scenario.script for f in t.faults):
        return "stream: false sends one JSON body, so a mid-stream error or a truncated stream cannot happen"
    return None


def _supports_parallel_knob(name: str) -> bool:
    if name == "bedrock":
        return False  # Converse has no knob (see loopkit.providers.bedrock)
    from ..providers import adapter_class

    return bool(getattr(adapter_class(name), "supports_parallel_tool_calls", True))
