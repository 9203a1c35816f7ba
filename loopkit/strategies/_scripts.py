"""``scripts()``: whole scripted sessions, mixing text, tool calls (well formed or not),
truncation by the token limit, the stop and content kinds (refusals, content filters, stop
sequences...), and provider faults."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from ..errors import UsageError
from ..script import Script, ScriptedCall, Turn
from ._calls import scripted_calls
from ._faults import faults as fault_strategy
from ._schedules import Schedule, follow_up_schedules, steering_schedules
from ._turns import _MAYBE_TEXT, _TEXT, DEFAULT_STOP_SEQUENCES, check_stop_sequences, kind_turns, resolve_kinds


def scripts(
    tools: Sequence[Any],
    *,
    min_turns: int = 1,
    max_turns: int = 4,
    malformed: bool = True,
    max_calls: int = 3,
    protocol: str | None = None,
    final_text: str | None = "done",
    kinds: Collection[str] | None = None,
    stop_sequences: Sequence[str] = DEFAULT_STOP_SEQUENCES,
) -> st.SearchStrategy[Script]:
    """Scripts of a model using ``tools``: what it says on each call.

    A turn is a text answer, or tool calls (from :func:`scripted_calls`, with text or thinking
    beside them, sometimes stopped by the token limit with the last call's JSON cut off), or an
    answer scripting stop and content kinds (from :func:`turns`: a refusal, a content filter, a
    stop sequence, a paused turn, redacted thinking, reasoning tokens, usage split over the
    stream, the protocol's own stop values), only those ``protocol`` can send. With
    ``protocol``, a turn may also fail with one of that provider's faults (:func:`faults`), and
    a turn may end with a scripted ``error`` stop. The script ends with a text answer
    (``final_text``) so a run can finish. Every script builds on ``protocol``'s simulator.

    By default every kind the protocol can send is drawn; without ``protocol`` (scripts for
    :class:`~loopkit.fakes.ScriptedProvider`) the two kinds that end the run with an ``error``
    stop, ``refusal`` and ``content_filter``, are left out, as faults and scripted errors are:
    a run of such a script always ends with ``stop``. ``kinds=()`` draws none of them (and no
    ``length`` stop either).

    Args:
        tools: the tools the model may call (any form :func:`tool_calls` accepts).
        min_turns: fewest generated turns (``final_text`` adds one).
        max_turns: most generated turns.
        malformed: include malformed calls (see :data:`CALL_KINDS`).
        max_calls: most calls in one turn.
        protocol: mix in this provider's faults and scripted error stops, and draw only the
            kinds its simulator can send; None for none (and kinds for ScriptedProvider).
        final_text: the last turn's text; None adds no final turn.
        kinds: the stop and content kinds to draw (names from :data:`TURN_KINDS`); None for the
            default above. A kind ``protocol`` cannot send raises :class:`~loopkit.errors.UsageError`.
        stop_sequences: the request's stop sequences, which a ``stop_sequence`` turn stops at.

    Example::

        @given(scripts([add], max_turns=3))
        def test_runs_end(script):
            result = loopkit.run(ScriptedProvider(script), "go", tools=[add])
            assert result.reason in ("stop", "error")
    """
    if min_turns < 0 or max_turns < min_turns:
        raise UsageError(f"scripts(min_turns={min_turns}, max_turns={max_turns}): need 0 <= min_turns <= max_turns")
    if max_calls < 1:
        raise UsageError(f"scripts(max_calls={max_calls}): a tool turn makes at least one call")
    chosen = resolve_kinds(protocol, kinds, "scripts")
    sequences = check_stop_sequences(stop_sequences, "scripts")
    calls = scripted_calls(tools, malformed=malformed, min_size=1, max_size=max_calls) if tools or malformed else None
    plain = st.builds(Turn, text=_TEXT)
    tool = _tool_turns(calls, malformed, "length" in chosen) if calls is not None else plain
    kind = kind_turns(protocol, chosen, sequences, calls) if chosen else plain
    failing = (
        st.one_of(
            st.builds(Turn, text=_TEXT, faults=fault_strategy(protocol, max_delay=0.0).map(lambda f: (f,))),
            st.builds(Turn, error=st.sampled_from(["Internal server error", "overloaded"])),
        )
        if protocol is not None
        else plain
    )
    by_kind = {"text": plain, "tool": tool, "fail": failing, "kind": kind}
    # mostly tool turns, a text answer now and then, a stop or content kind now and then, a
    # failure rarely (it ends the run); shrinking goes towards the first, a plain text answer
    shapes = st.sampled_from(["text", "tool", "tool", "tool", "tool", "text", "tool", "tool", "tool", "fail", "kind", "kind"])
    turn = shapes.flatmap(by_kind.__getitem__)
    tail = [Turn(text=final_text)] if final_text is not None else []
    return st.lists(turn, min_size=min_turns, max_size=max_turns).map(lambda turns: Script([*turns, *tail]))


_TOOL_STOPS = st.sampled_from([None, None, "stop"])
_TOOL_STOPS_OR_LENGTH = st.sampled_from([None, None, "stop", "length"])


def _tool_turns(calls: st.SearchStrategy[list[ScriptedCall]], malformed: bool, length: bool) -> st.SearchStrategy[Turn]:
    return _tool_turn(calls, malformed, _TOOL_STOPS_OR_LENGTH if length else _TOOL_STOPS)


@st.composite
def _tool_turn(draw: Any, calls: st.SearchStrategy[list[ScriptedCall]], malformed: bool, stops: st.SearchStrategy[str | None]) -> Turn:
    made = draw(calls)
    text = draw(_MAYBE_TEXT)
    thinking = draw(_MAYBE_TEXT)
    stop = draw(stops)
    if stop == "length" and malformed:
        last = made[-1]
        raw = last.arguments if isinstance(last.arguments, str) else json.dumps(last.arguments)
        cut = raw[: max(1, len(raw) // 2)]
        made = [*made[:-1], ScriptedCall(name=last.name, arguments=cut, id=last.id)]
    return Turn(text=text, thinking=thinking, tool_calls=tuple(made), stop_reason=stop)


@dataclass(slots=True)
class Session:
    """A whole scripted session: what the model says, when the user steers or follows up, and
    the cap. :meth:`run` plays it through the loop with a :class:`~loopkit.fakes.ScriptedProvider`.

    Attributes:
        script: the model's turns (padded with text answers, so that every injected message can
            get its round without the script running out).
        steering / follow_ups: the schedules, or None for no callback.
        max_iterations: the cap, or None.
        provider: the ScriptedProvider of the last :meth:`run` (its ``requests`` are what the
            model saw).
        tools: the tools given to :func:`sessions`, which :meth:`run` uses by default.
    """

    script: Script
    steering: Schedule | None = None
    follow_ups: Schedule | None = None
    max_iterations: int | None = None
    provider: Any = None
    tools: Sequence[Any] = ()

    def run(self, tools: Sequence[Any] | None = None, prompt: str = "go", **kwargs: Any) -> Any:
        """Run the session once (schedules start from poll 1 again); returns the RunResult.
        ``tools`` defaults to the ones the session was generated for."""
        from ..fakes import ScriptedProvider
        from ..runtime import TickClock, run

        if self.steering is not None:
            self.steering = self.steering.fresh()
        if self.follow_ups is not None:
            self.follow_ups = self.follow_ups.fresh()
        self.provider = ScriptedProvider(self.script, sleep=lambda seconds: None)
        kwargs.setdefault("clock", TickClock())
        return run(
            self.provider,
            prompt,
            tools=self.tools if tools is None else tools,
            steering=self.steering,
            follow_ups=self.follow_ups,
            max_iterations=self.max_iterations,
            **kwargs,
        )


def sessions(
    tools: Sequence[Any],
    *,
    max_turns: int = 4,
    malformed: bool = True,
    protocol: str | None = None,
    steering: bool = True,
    follow_ups: bool = True,
    max_iterations: int | None = 6,
    kinds: Collection[str] | None = None,
) -> st.SearchStrategy[Session]:
    """Whole sessions mixing everything: :func:`scripts` (malformed calls, truncation, stop and
    content kinds, faults), :func:`steering_schedules`, :func:`follow_up_schedules` and a cap.

    Args:
        tools: the tools the model may call.
        max_turns: most generated model turns.
        malformed: include malformed calls.
        protocol: mix in this provider's faults, and the stop and content kinds it can send.
        steering / follow_ups: False for sessions without that callback.
        max_iterations: the largest cap to draw (None: never a cap); runs without a cap occur too.
        kinds: as for :func:`scripts`, except ``wire_stop_reason``: a session runs on
            :class:`~loopkit.fakes.ScriptedProvider`, which has no protocol's stop values, so the
            default leaves it out and asking for it raises :class:`~loopkit.errors.UsageError`.

    Example::

        @given(sessions([add]))
        def test_every_call_gets_a_result(session):
            result = session.run()  # with the tools given to sessions()
            assert all(...)
    """
    if max_iterations is not None and max_iterations < 1:
        raise UsageError(f"sessions(max_iterations={max_iterations}): give a cap of at least 1, or None for no cap")
    chosen = resolve_kinds(protocol, kinds, "sessions")
    if kinds is not None and "wire_stop_reason" in chosen:
        raise UsageError("sessions(kinds=...): 'wire_stop_reason' is a protocol's stop value, which the ScriptedProvider a session runs on does not send; use scripts(protocol=...) with a simulator")
    chosen = tuple(k for k in chosen if k != "wire_stop_reason")
    base = scripts(tools, max_turns=max_turns, malformed=malformed, protocol=protocol, kinds=chosen)
    steer = st.none() | steering_schedules() if steering else st.none()
    follow = st.none() | follow_up_schedules() if follow_ups else st.none()
    cap = st.none() | st.integers(min_value=1, max_value=max_iterations) if max_iterations is not None else st.none()

    def build(parts: tuple[Script, Schedule | None, Schedule | None, int | None]) -> Session:
        script, s, f, c = parts
        extra = sum(len(x.messages) for x in (s, f) if x is not None) + 1
        padded = Script([*script, *[Turn(text=f"pad {i}") for i in range(extra)]])
        return Session(script=padded, steering=s, follow_ups=f, max_iterations=c, tools=tuple(tools))

    return st.tuples(base, steer, follow, cap).map(build)
