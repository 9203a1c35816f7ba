"""Run one scenario on one provider and record everything the checks need.

A run gets fresh tools, a fresh provider (and simulator), a deterministic clock, and steering /
follow-up callbacks that answer from the scenario's schedule. Loop events are followed as they
happen, so a poll knows where it is (before the first model call, right after call k of round n,
after round n) and a tool body knows which call it executes.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import HarnessError
from ..events import AgentEvent, MessageEnd, MessageStart, ToolExecutionEnd, ToolExecutionStart, TurnEnd
from ..messages import AssistantMessage, ToolResultMessage
from ..provider import AbortSignal, ModelRequest
from ..runtime import RunResult, TickClock, arun, run
from .model import FollowDef, ScenarioModel, SteerDef
from .providers import build
from .toolkit import ToolState, build_tools

Point = tuple  # ("start",) | ("call", round, call) | ("round", round) | ("model",): where a poll happens


class Tracker:
    """Follows the loop's events: the current round, call, and the last point a poll can see."""

    __slots__ = ("round", "call", "last", "in_tool")

    def __init__(self) -> None:
        self.round = 0
        self.call = 0
        self.last: Point = ("start",)
        self.in_tool = False

    def __call__(self, event: AgentEvent) -> None:
        t = type(event)
        if t is MessageStart and isinstance(event.message, AssistantMessage):
            self.round += 1
            self.call = 0
            self.last = ("model",)
        elif t is ToolExecutionStart:
            self.call += 1
            self.in_tool = True
        elif t is ToolExecutionEnd:
            self.in_tool = False
        elif t is MessageEnd and isinstance(event.message, ToolResultMessage):
            self.last = ("call", self.round, self.call)
        elif t is TurnEnd:
            self.last = ("round", self.round)

    def where(self) -> tuple[int, int] | None:
        return (self.round, self.call) if self.in_tool else None


class Schedule:
    """A steering or follow-up callback answering from the scenario's entries; each entry fires once."""

    def __init__(self, entries: list[SteerDef] | list[FollowDef], tracker: Tracker) -> None:
        self.entries = list(entries)
        self.fired = [False] * len(entries)
        self.tracker = tracker
        self.polls = 0

    def _due(self, e: Any, point: Point) -> bool:
        if e.poll is not None:
            return e.poll == self.polls
        if getattr(e, "at_start", None):
            return point == ("start",)
        after_call = getattr(e, "after_call", None)
        if after_call is not None:
            return point == ("call", after_call.round, after_call.call)
        return point == ("round", e.after_round)

    def __call__(self) -> list[str]:
        self.polls += 1
        point = self.tracker.last if self.tracker.round else ("start",)
        out: list[str] = []
        for i, e in enumerate(self.entries):
            if not self.fired[i] and self._due(e, point):
                self.fired[i] = True
                out.extend(e.messages)
        return out


@dataclass(slots=True)
class CallInfo:
    """One tool call of the run: its position, id, name, result message and whether a body ran."""

    round: int
    call: int
    id: str
    name: str
    result: ToolResultMessage | None
    executed: bool


@dataclass(slots=True)
class RunRecord:
    """Everything one scenario run produced."""

    provider: str
    result: RunResult | None
    raised: BaseException | None
    calls: list[CallInfo]
    requests: list[ModelRequest]
    wire: list[Any] | None  # one body per model call (retries folded), None for scripted
    wire_misaligned: str | None
    sleeps: list[float]
    executions: list[tuple[tuple[int, int] | None, str]]
    unused_turns: int
    total_turns: int
    overruns: list[int] = field(default_factory=list)
    seconds: float = 0.0


class Toolbox:
    """A scenario's tools, built once, and the state they read (renewed for each run)."""

    def __init__(self, scenario: ScenarioModel) -> None:
        self.state = ToolState()
        self.tools = build_tools(dict(scenario.tools), self.state)


def execute(scenario: ScenarioModel, provider: str, toolbox: Toolbox | None = None, *, driver: str = "sync") -> RunRecord:
    """Run ``scenario`` once on ``provider`` (which must be able to express it), with the sync
    driver (:func:`loopkit.run`) or the asyncio one (:func:`loopkit.arun`, which streams through
    the providers' ``astream``). Runs that share a ``toolbox`` must not overlap."""
    started = time.perf_counter()
    sleeps: list[float] = []
    tracker = Tracker()
    signal = AbortSignal()
    clock = TickClock(start=1)
    toolbox = toolbox or Toolbox(scenario)
    state = toolbox.state
    state.reset(sleep=sleeps.append, abort_signal=signal, where=tracker.where, clock=clock)
    tools = toolbox.tools
    built = build(provider, scenario.turns(), scenario, sleeps.append)
    cfg = scenario.config
    steering = Schedule(scenario.steering, tracker) if scenario.steering else None
    follow_ups = Schedule(scenario.follow_ups, tracker) if scenario.follow_ups else None
    result: RunResult | None = None
    raised: BaseException | None = None
    options: dict[str, Any] = dict(
        tools=tools,
        tool_choice=cfg.tool_choice,
        parallel_tool_calls=cfg.parallel_tool_calls,
        max_iterations=cfg.max_iterations,
        steering=steering,
        follow_ups=follow_ups,
        on_event=tracker,
        system=cfg.system,
        abort_signal=signal,
        clock=clock,
    )
    try:
        if driver == "async":
            result = asyncio.run(arun(built.provider, list(scenario.prompt), **options))
        else:
            result = run(built.provider, list(scenario.prompt), **options)
    except HarnessError:
        raise  # the scenario's own setup is wrong (its script ran out ...): never a finding
    except Exception as exc:  # noqa: BLE001 - reported as a failure of the scenario
        raised = exc
    wire, misaligned = _wire_bodies(built.simulator, len(built.provider.requests))
    return RunRecord(
        provider=provider,
        result=result,
        raised=raised,
        calls=_calls(result, state.executions) if result is not None else [],
        requests=list(built.provider.requests),
        wire=wire,
        wire_misaligned=misaligned,
        sleeps=sleeps,
        executions=list(state.executions),
        unused_turns=built.total - built.used(),
        total_turns=built.total,
        overruns=list(getattr(built.simulator, "overruns", []) or []),
        seconds=time.perf_counter() - started,
    )


def _calls(result: RunResult, executions: list[tuple[tuple[int, int] | None, str]]) -> list[CallInfo]:
    ran = {pos for pos, _ in executions if pos is not None}
    out: list[CallInfo] = []
    rnd = 0
    pending: list[CallInfo] = []
    for m in result.messages:
        if isinstance(m, AssistantMessage):
            rnd += 1
            pending = []
            for k, c in enumerate(m.tool_calls, start=1):
                info = CallInfo(rnd, k, c.id, c.name, None, (rnd, k) in ran)
                out.append(info)
                pending.append(info)
        elif isinstance(m, ToolResultMessage) and pending:
            pending.pop(0).result = m
        else:
            pending = []
    return out


def _wire_bodies(sim: Any, model_calls: int) -> tuple[list[Any] | None, str | None]:
    """One body per model call: a retry resends the very same body, so runs of identical
    consecutive bodies are one call (two calls of a run never share a body: history grows)."""
    if sim is None:
        return None, None
    bodies: list[Any] = []
    last: bytes | None = None
    for r in sim.requests:
        if r.body != last:
            bodies.append(r.json)
            last = r.body
    problem = None
    if len(bodies) != model_calls:
        problem = f"the simulator received {len(bodies)} distinct request bodies for {model_calls} model call(s)"
    return bodies, problem
