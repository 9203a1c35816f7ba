"""``turns()``: model answers that script the stop and content kinds of :class:`~loopkit.script.Turn`
(a refusal, a content filter, a paused turn, a stop sequence, redacted thinking, reasoning tokens,
usage split over the stream, the protocol's own stop values), only in forms the chosen protocol can
send.

Which protocol can send which kind is read from the simulators themselves
(``Simulator.unsupported_kinds``, ``wire_stop_values`` and ``cannot_send``, the very data a
simulator refuses a turn with), so a generated turn is one its protocol's simulator builds.
"""

from __future__ import annotations

import base64
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from ..errors import UsageError
from ..messages import Usage
from ..script import KINDS, ScriptedCall, Turn

TURN_KINDS: tuple[str, ...] = (*KINDS, "wire_stop_reason")
"""What :func:`turns` can script: the protocol-neutral :data:`loopkit.script.KINDS` and
``wire_stop_reason`` (a stop value of one protocol, so only with ``protocol=``)."""

ENDINGS: tuple[str, ...] = ("length", "stop_sequence", "refusal", "content_filter", "pause_turn", "wire_stop_reason")
"""The kinds that say how a turn ended (at most one per turn); the others are content kinds,
which may go with any ending."""

ERROR_KINDS: tuple[str, ...] = ("refusal", "content_filter")
"""The kinds that end the run with an ``error`` stop (docs/loop-contract.md §7.3). Without a
``protocol`` they are drawn only when asked for (see :func:`resolve_kinds`)."""

DEFAULT_STOP_SEQUENCES: tuple[str, ...] = ("###", "\nObservation:")
"""The stop sequences a generated ``stop_sequence`` is drawn from unless ``stop_sequences=`` names
the request's own."""

REFUSALS: tuple[str, ...] = (
    "I can't help with that.",
    "I'm sorry, but I cannot assist with that request.",
    "I won't do that: it could cause harm.",
)  # fmt: skip

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
_SOME_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=30)
# a refusal is never empty: an empty refusal field is no refusal on the wire
_REFUSAL_TEXT = st.sampled_from(REFUSALS) | _SOME_TEXT
# opaque encrypted reasoning: base64 text (Bedrock's redactedContent is a blob)
_REDACTED = st.binary(min_size=1, max_size=24).map(lambda b: base64.b64encode(b).decode("ascii"))
# consistent counts: the total is input + output
_USAGES = st.builds(
    lambda i, o: Usage(input=i, output=o, total_tokens=i + o),
    st.integers(min_value=1, max_value=4096),
    st.integers(min_value=1, max_value=4096),
)


def _simulator(protocol: str) -> Any:
    from .. import simulators

    return simulators.simulator_class(protocol)  # raises UsageError naming the protocols


def expressible_kinds(protocol: str | None) -> tuple[str, ...]:
    """The :data:`TURN_KINDS` a protocol's simulator can send, in :data:`TURN_KINDS` order.

    ``None`` is :class:`~loopkit.fakes.ScriptedProvider`, which reads every protocol-neutral kind
    (:data:`loopkit.script.KINDS`) but no protocol's stop values. For a protocol, the answer comes
    from its simulator (``unsupported_kinds``, ``wire_stop_values``): the strategies never keep a
    table of their own.
    """
    if protocol is None:
        return KINDS
    cls = _simulator(protocol)
    return tuple(k for k in TURN_KINDS if k not in cls.unsupported_kinds and (k != "wire_stop_reason" or cls.wire_stop_values))


def resolve_kinds(protocol: str | None, kinds: Collection[str] | None, fn: str) -> tuple[str, ...]:
    """The kinds a strategy draws: ``kinds`` checked against what ``protocol`` can send, or the
    default (every kind the protocol can send; without a protocol, all but :data:`ERROR_KINDS`)."""
    able = expressible_kinds(protocol)
    if kinds is None:
        return able if protocol is not None else tuple(k for k in able if k not in ERROR_KINDS)
    if isinstance(kinds, str):
        raise UsageError(f"{fn}(kinds={kinds!r}): give a collection of kind names, e.g. kinds={{{kinds!r}}}")
    chosen = tuple(k for k in TURN_KINDS if k in set(kinds))
    unknown = sorted(set(kinds) - set(TURN_KINDS))
    if unknown:
        raise UsageError(f"{fn}(kinds=...) got unknown kind(s) {unknown}; choose from {', '.join(TURN_KINDS)}")
    refused = [k for k in chosen if k not in able]
    if refused:
        if protocol is None:
            raise UsageError(f"{fn}(kinds=...): {refused[0]!r} is one protocol's stop value; give protocol= to draw it")
        reason = _simulator(protocol).unsupported_kinds.get(refused[0], "it has no stop values")
        raise UsageError(
            f"{fn}(protocol={protocol!r}, kinds=...): the {protocol} API cannot send {refused[0]!r} ({reason}); "
            f"it can send {', '.join(able)}"
        )
    return chosen


def check_stop_sequences(stop_sequences: Sequence[str], fn: str) -> tuple[str, ...]:
    if isinstance(stop_sequences, str) or not stop_sequences or not all(isinstance(s, str) and s for s in stop_sequences):
        raise UsageError(f"{fn}(stop_sequences={stop_sequences!r}): give a list of non-empty strings (the request's stop sequences)")
    return tuple(stop_sequences)


def turns(
    protocol: str | None = None,
    *,
    kinds: Collection[str] | None = None,
    stop_sequences: Sequence[str] = DEFAULT_STOP_SEQUENCES,
    tools: Sequence[Any] = (),
    max_calls: int = 2,
) -> st.SearchStrategy[Turn]:
    """Model answers that each script at least one stop or content kind (:data:`TURN_KINDS`),
    only as ``protocol`` can send it: its simulator builds every one.

    What is drawn, per kind:

    - ``length``: a text answer cut short (``stop_reason="length"``).
    - ``stop_sequence``: one of ``stop_sequences`` (the request's), text before it that does not
      contain it.
    - ``refusal``: a refusal text (a realistic one, or any non-empty text), alone, or after some
      text where the API sends both (Anthropic).
    - ``content_filter``: the answer blocked, after some text or none.
    - ``pause_turn``: a paused turn, after some text or none.
    - ``wire_stop_reason``: one of the protocol's own stop values.
    - ``redacted_thinking``: base64 data of an encrypted reasoning block.
    - ``reasoning_tokens``: a count between 1 and the usage's output tokens, which include them.
    - ``split_usage``: usage reported piece by piece over the stream.

    An ending kind (the first six) ends a text answer; the content kinds go with any ending, or
    with tool calls when ``tools`` are given. Usage, when drawn, is consistent
    (``total_tokens = input + output``).

    Args:
        protocol: one of the simulator protocols; None for :class:`~loopkit.fakes.ScriptedProvider`.
        kinds: the kinds to draw from; None: every kind ``protocol`` can send (without a protocol,
            all but the ``error`` kinds ``refusal`` and ``content_filter``). Asking for a kind the
            protocol cannot send raises :class:`~loopkit.errors.UsageError` with the reason.
        stop_sequences: the request's stop sequences.
        tools: tools a turn without an ending kind may call (well-formed calls).
        max_calls: most calls in one turn.

    Example::

        @given(turns("anthropic", kinds={"refusal", "pause_turn"}))
        def test_kinds(turn):
            sim = simulators.create("anthropic", [turn, "done"])
    """
    chosen = resolve_kinds(protocol, kinds, "turns")
    if not chosen:
        raise UsageError("turns(kinds=...): choose at least one kind; for plain answers use scripts(kinds=())")
    if max_calls < 1:
        raise UsageError(f"turns(max_calls={max_calls}): a tool turn makes at least one call")
    calls = None
    if tools:
        from ._calls import scripted_calls

        calls = scripted_calls(tools, malformed=False, min_size=1, max_size=max_calls)
    return kind_turns(protocol, chosen, check_stop_sequences(stop_sequences, "turns"), calls)


def kind_turns(
    protocol: str | None, chosen: Sequence[str], stop_sequences: Sequence[str], calls: st.SearchStrategy[list[ScriptedCall]] | None
) -> st.SearchStrategy[Turn]:
    """The turns of :func:`turns` for already checked arguments (``scripts()`` shares it)."""
    endings = [k for k in chosen if k in ENDINGS]
    content = [k for k in chosen if k not in ENDINGS]
    cls = _simulator(protocol) if protocol is not None else None
    wire_values = sorted(cls.wire_stop_values) if cls is not None else []
    # whether text may come before a refusal: asked of the simulator, which refuses the turn otherwise
    text_before_refusal = cls is None or cls.cannot_send(Turn(refusal="no", text="well")) is None

    # every strategy is made once, here: making strategies inside a draw is slow
    return _kind_turn(
        _TurnPlan(
            content=tuple(content),
            calls=calls,
            pick_ending=st.sampled_from([None, *endings]) if content else st.sampled_from(endings),
            pick_content=st.sampled_from(content) if content else st.nothing(),
            refusal_text=st.none() | _SOME_TEXT if text_before_refusal else st.none(),
            pick_sequence=st.sampled_from(stop_sequences),
            pick_wire=st.sampled_from(wire_values) if wire_values else st.nothing(),
        )
    )


@dataclass(frozen=True, slots=True)
class _TurnPlan:
    """What :func:`kind_turns` draws from, made once per call."""

    content: tuple[str, ...]
    calls: st.SearchStrategy[list[ScriptedCall]] | None
    pick_ending: st.SearchStrategy[str | None]
    pick_content: st.SearchStrategy[str]
    refusal_text: st.SearchStrategy[str | None]
    pick_sequence: st.SearchStrategy[str]
    pick_wire: st.SearchStrategy[str]


_MAYBE_TEXT = st.none() | _TEXT
_MAYBE_USAGE = st.none() | _USAGES


@st.composite
def _kind_turn(draw: Any, plan: _TurnPlan) -> Turn:
    # an ending or none, then each content kind or not, at least one kind in all: a failing
    # example shrinks to a turn with the one kind it needs
    ending = draw(plan.pick_ending)
    used = {k for k in plan.content if draw(st.booleans())}
    if ending is None and not used:
        used.add(draw(plan.pick_content))
    kw: dict[str, Any] = {}
    if ending is None:
        kw["text"] = draw(_TEXT)
        if plan.calls is not None and draw(st.booleans()):
            kw["tool_calls"] = tuple(draw(plan.calls))
            kw["text"] = draw(_MAYBE_TEXT)
    elif ending == "length":
        kw.update(text=draw(_SOME_TEXT), stop_reason="length")
    elif ending == "stop_sequence":
        seq = draw(plan.pick_sequence)
        text = draw(_TEXT)
        while seq in text:  # the model stops at the sequence: what came before it never holds it
            text = text.replace(seq, "")
        kw.update(stop_sequence=seq, text=text)
    elif ending == "refusal":
        kw.update(refusal=draw(_REFUSAL_TEXT), text=draw(plan.refusal_text))
    elif ending == "content_filter":
        kw.update(content_filter=True, text=draw(_MAYBE_TEXT))
    elif ending == "pause_turn":
        kw.update(pause_turn=True, text=draw(_MAYBE_TEXT))
    else:
        kw.update(wire_stop_reason=draw(plan.pick_wire), text=draw(_MAYBE_TEXT))
    if "redacted_thinking" in used:
        kw["redacted_thinking"] = draw(_REDACTED)
    usage = draw(_USAGES) if used & {"reasoning_tokens", "split_usage"} else draw(_MAYBE_USAGE)
    if usage is not None:
        kw["usage"] = usage
    if "reasoning_tokens" in used:
        kw["reasoning_tokens"] = draw(st.integers(min_value=1, max_value=usage.output))
    if "split_usage" in used:
        kw["split_usage"] = True
    return Turn(**kw)
