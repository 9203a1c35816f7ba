"""The loop's contract as a hypothesis RuleBasedStateMachine over the sans-IO engine.

The machine plays the world around :func:`loopkit.loop.agent_loop`: whatever action the engine
yields (call the model, run a tool, poll steering, poll follow-ups), a rule answers it with a
generated value: a scripted turn (possibly cut short or failing mid-stream), a tool outcome
(a value, a ToolResult, an exception with or without a message), or queued user messages.
Invariants hold after every step; a finished run is checked whole, and the machine starts
another.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from loop_contract import Probe, check_run

from loopkit.errors import StreamError
from loopkit.events import AgentEnd, AgentStart, ToolResult
from loopkit.fakes import CallIds, turn_events
from loopkit.loop import END, FOLLOW_KIND, MODEL, NEXT_KIND, STEER_KIND, TOOL, LoopConfig, Raised, agent_loop
from loopkit.messages import TextContent, UserMessage
from loopkit.script import Turn
from loopkit.strategies import scripted_calls

SPECS = Probe().tools()
_CALLING = st.builds(Turn, text=st.none() | st.text(max_size=5), tool_calls=scripted_calls(SPECS, max_size=3).map(tuple))
TURNS = st.one_of(  # tool turns weighted up: an error turn ends the run
    st.builds(Turn, text=st.text(max_size=10)),
    _CALLING,
    _CALLING,
    _CALLING,
    st.builds(Turn, tool_calls=scripted_calls(SPECS, max_size=2).map(tuple), stop_reason=st.just("length")),
    st.builds(Turn, error=st.just("overloaded")),
)
OUTCOMES = st.sampled_from(["value", "dict", "tool_result", "error_result", "raise", "raise_empty"])


class LoopMachine(RuleBasedStateMachine):
    """One run at a time of the real engine, every action answered by a rule."""

    @initialize(cap=st.none() | st.integers(min_value=0, max_value=4), steering=st.booleans(), follow_ups=st.booleans())
    def start(self, cap: int | None, steering: bool, follow_ups: bool) -> None:
        self.runs = 0
        self._begin(cap, steering, follow_ups)

    def _begin(self, cap: int | None, steering: bool, follow_ups: bool) -> None:
        self.probe = Probe()
        self.cap = cap
        self.requests: list[Any] = []
        self.queued = {"steer": SimpleNamespace(label="steer", returned=[], messages=[]), "follow": SimpleNamespace(label="follow-up", returned=[], messages=[])}
        self.counter = 0
        self.outcome = None
        cfg = LoopConfig(
            prompts=[UserMessage(content="go")],
            tools=self.probe.tools(),
            max_iterations=cap,
            emit=self.probe.on_event,
            has_steering=steering,
            has_follow_ups=follow_ups,
        )
        self.gen = agent_loop(cfg)
        self.action: Any = next(self.gen)

    def _send(self, value: Any) -> None:
        try:
            self.action = self.gen.send(value)
        except StopIteration as stop:
            self.outcome = stop.value
            self.action = None

    def _kind(self) -> int | None:
        return None if self.action is None else self.action[0]

    # --- the world's answers ---------------------------------------------------------------

    @precondition(lambda self: self._kind() == MODEL)
    @rule(turn=TURNS, cut=st.one_of(st.none(), st.none(), st.none(), st.integers(min_value=0, max_value=6)), fail=st.booleans())
    def answer_model_call(self, turn: Turn, cut: int | None, fail: bool) -> None:
        self.requests.append(self.action[1])
        events = turn_events(turn, ids=CallIds())
        if cut is not None and cut < len(events):
            events = events[:cut]
            tail: Any = Raised(StreamError("cut", provider="machine")) if fail else END
        else:
            tail = END
        feed = [*events, tail]
        self._send(feed.pop(0))
        while self._kind() == NEXT_KIND:
            self._send(feed.pop(0) if feed else END)

    @precondition(lambda self: self._kind() == TOOL)
    @rule(outcome=OUTCOMES, update=st.booleans())
    def finish_tool(self, outcome: str, update: bool) -> None:
        self.probe.executed.append(len(self.probe.events))
        _, tool, args, call, on_update = self.action
        if update:
            on_update({"progress": 0.5})
        value: Any = {
            "value": "ok",
            "dict": {"n": 1},
            "tool_result": ToolResult(content=[TextContent(text="fine")]),
            "error_result": ToolResult(content=[TextContent(text="refused")], is_error=True),
            "raise": Raised(ValueError("boom")),
            "raise_empty": Raised(TimeoutError()),
        }[outcome]
        self._send(value)

    def _messages(self, key: str, n: int) -> list[UserMessage]:
        out = []
        for _ in range(n):
            self.counter += 1
            out.append(UserMessage(content=f"{key} {self.counter}"))
        self.queued[key].returned.extend(out)
        self.queued[key].messages.extend(out)
        return out

    @precondition(lambda self: self._kind() == STEER_KIND)
    @rule(n=st.integers(min_value=0, max_value=2))
    def poll_steering(self, n: int) -> None:
        self._send(self._messages("steer", n))

    @precondition(lambda self: self._kind() == FOLLOW_KIND)
    @rule(n=st.integers(min_value=0, max_value=2))
    def poll_follow_ups(self, n: int) -> None:
        self._send(self._messages("follow", n))

    @precondition(lambda self: self.outcome is not None)
    @rule(cap=st.none() | st.integers(min_value=0, max_value=4), steering=st.booleans(), follow_ups=st.booleans())
    def next_run(self, cap: int | None, steering: bool, follow_ups: bool) -> None:
        self._check_finished()
        self.runs += 1
        self._begin(cap, steering, follow_ups)

    # --- the contract --------------------------------------------------------------------------

    def _check_finished(self) -> None:
        o = self.outcome
        result = SimpleNamespace(reason=o.reason, messages=o.messages, pending=o.pending, model_calls=o.model_calls, events=self.probe.events)
        check_run(result, self.requests, self.probe, cap=self.cap, schedules=list(self.queued.values()))

    @invariant()
    def started_once_and_never_past_the_end(self) -> None:
        events = self.probe.events
        assert events and isinstance(events[0], AgentStart)
        assert not any(isinstance(e, AgentEnd) for e in events[:-1]), "events after agent_end"
        assert (self.outcome is not None) == isinstance(events[-1], AgentEnd)

    @invariant()
    def within_the_cap(self) -> None:
        if self.cap is not None:
            assert len(self.requests) <= max(1, self.cap)

    def teardown(self) -> None:
        if getattr(self, "outcome", None) is not None:
            self._check_finished()


TestLoopMachine = LoopMachine.TestCase
# a third of the profile's examples (each is up to 30 steps): a few seconds on CI, long under deep
TestLoopMachine.settings = settings(max_examples=max(20, settings.default.max_examples // 3), stateful_step_count=30)
