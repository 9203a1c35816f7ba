"""Scripts: what a scripted model answers on each call, and what goes wrong.

A :class:`Script` is a list of :class:`Turn`; each model call (each HTTP request, for a
simulator) consumes the next turn. The same Script drives :class:`~loopkit.fakes.ScriptedProvider`
in process and every simulator over HTTP, so one description of a conversation runs against five
wire protocols.

Faults are data too. A turn with an :class:`HttpFault` answers that request with an HTTP error in
the provider's real shape; a retrying client consumes the next turn on its retry.
:class:`MidStreamError`, :class:`Truncate` and :class:`Delay` act after a number of stream events
(wire events for a simulator, stream events for the ScriptedProvider).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from .errors import IncompleteScript, ScriptError, ScriptExhausted
from .messages import STOP_REASONS, StopReason, Usage


@dataclass(slots=True, kw_only=True)
class ScriptedCall:
    """A tool call the scripted model makes.

    ``arguments`` is a dict (sent as JSON) or a string sent exactly as written, which may be broken
    JSON (``'{"a": 1'``) or JSON that is not an object (``'[1, 2]'``). ``id`` None lets the fake or
    simulator make one up in its provider's style.
    """

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    thought_signature: str | None = None


def call(name: str, arguments: Mapping[str, Any] | str | None = None, *, id: str | None = None) -> ScriptedCall:
    """Shorthand for :class:`ScriptedCall`: ``call("add", {"a": 1, "b": 2})``."""
    return ScriptedCall(name=name, arguments={} if arguments is None else arguments, id=id)


@dataclass(slots=True, kw_only=True, frozen=True)
class HttpFault:
    """Answer the request with an HTTP error in the provider's own body shape.

    ``error_type``/``message`` default to what the provider sends for that status; ``headers`` are
    added as given (``retry-after``, ``x-should-retry`` ...); ``retry_after`` is a shorthand that
    each protocol renders its own way; ``body`` replaces the whole body when given.
    """

    status: int
    message: str | None = None
    error_type: str | None = None
    retry_after: float | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None


@dataclass(slots=True, kw_only=True, frozen=True)
class MidStreamError:
    """After ``after`` stream events, send the provider's in-stream error event and stop."""

    after: int = 1
    message: str = "Internal server error"
    error_type: str | None = None


@dataclass(slots=True, kw_only=True, frozen=True)
class Truncate:
    """After ``after`` stream events, close the connection part-way through the next one."""

    after: int = 1


@dataclass(slots=True, kw_only=True, frozen=True)
class Delay:
    """Wait ``seconds`` before stream event number ``after`` (0: before the response starts)."""

    seconds: float
    after: int = 0


Fault: TypeAlias = HttpFault | MidStreamError | Truncate | Delay
FAULT_TYPES: tuple[type, ...] = (HttpFault, MidStreamError, Truncate, Delay)


@dataclass(slots=True, kw_only=True)
class Turn:
    """One model answer.

    Args:
        text: the answer text (streamed in pieces of ``chunk_size``).
        thinking: reasoning text, with its opaque ``thinking_signature``.
        tool_calls: the calls the model makes, in order.
        stop_reason: the reported stop reason; None derives it (``toolUse`` when there are calls).
        usage: token counts to report.
        error: end the call with an ``error`` stop carrying this message.
        aborted: end the call with an ``aborted`` stop.
        faults: what goes wrong on the way (see the module docstring).
        chunk_size: characters per text or argument delta (None: the consumer's default).

    The stop and content kinds below say *what* the model did; each simulator writes it the way
    its API does (see :data:`KINDS` and each simulator's docstring), and refuses, when it is
    built, a turn its API has no form for (:class:`UnsupportedTurn`):

        stop_sequence: the model stopped at this stop sequence (a ``stop``).
        refusal: the model refused, with this text (an ``error`` stop, ``error_type`` ``refusal``).
        content_filter: a content filter / safety system blocked the answer (an ``error`` stop).
        pause_turn: Anthropic paused a long-running turn (``stop_reason: pause_turn``).
        redacted_thinking: an encrypted reasoning block with this opaque data, which the client
            must send back unchanged.
        reasoning_tokens: how many of the output tokens were reasoning (reported apart where the
            API has a field for it; the output count always includes them).
        split_usage: report the usage piece by piece over several stream events, as the API can
            (Anthropic: input in ``message_start``, output in ``message_delta``; Gemini: a growing
            ``usageMetadata`` on every chunk).
        wire_stop_reason: the protocol's own stop value, sent exactly as written in its stop
            field (``finish_reason``, ``incomplete_details.reason``, ``stop_reason``,
            ``finishReason``, ``stopReason``): for values the kinds above do not name. It is not
            protocol-neutral: a script using it belongs to one protocol.
    """

    text: str | None = None
    thinking: str | None = None
    thinking_signature: str | None = None
    tool_calls: tuple[ScriptedCall, ...] = ()
    stop_reason: StopReason | None = None
    usage: Usage | None = None
    error: str | None = None
    aborted: bool = False
    faults: tuple[Fault, ...] = ()
    chunk_size: int | None = None
    stop_sequence: str | None = None
    refusal: str | None = None
    content_filter: bool = False
    pause_turn: bool = False
    redacted_thinking: str | None = None
    reasoning_tokens: int | None = None
    split_usage: bool = False
    wire_stop_reason: str | None = None

    def __post_init__(self) -> None:
        if type(self.tool_calls) is not tuple:
            self.tool_calls = tuple(self.tool_calls)
        if self.faults:
            if type(self.faults) is not tuple:
                self.faults = tuple(self.faults)
            for f in self.faults:
                if not isinstance(f, FAULT_TYPES):
                    raise ScriptError(f"Turn.faults holds {f!r}, which is not a fault (HttpFault, MidStreamError, Truncate, Delay)")
        if self.stop_reason is not None and self.stop_reason not in STOP_REASONS:
            raise ScriptError(f"Turn.stop_reason must be one of {', '.join(STOP_REASONS)}; got {self.stop_reason!r}")
        if self.chunk_size is not None and self.chunk_size < 1:
            raise ScriptError(f"Turn.chunk_size must be at least 1; got {self.chunk_size}")
        ends = [name for name in _ENDINGS if getattr(self, name) not in (None, False)]
        if self.error is not None and ends:
            ends.insert(0, "error")
        if len(ends) > 1:
            raise ScriptError(f"Turn sets {' and '.join(ends)}; a turn ends one way only")
        if ends and self.stop_reason is not None and self.stop_reason != _KIND_STOP[ends[0]]:
            raise ScriptError(f"Turn.{ends[0]} is a {_KIND_STOP[ends[0]]!r} stop, but stop_reason is {self.stop_reason!r}")
        if self.stop_sequence == "":
            raise ScriptError("Turn.stop_sequence must be a non-empty string (the sequence the model stopped at)")
        if self.reasoning_tokens is not None and self.reasoning_tokens < 0:
            raise ScriptError(f"Turn.reasoning_tokens must be at least 0; got {self.reasoning_tokens}")
        if self.reasoning_tokens and self.usage is not None and self.reasoning_tokens > self.usage.output:
            raise ScriptError(f"Turn.reasoning_tokens ({self.reasoning_tokens}) is more than usage.output ({self.usage.output}), which includes them")
        if self.wire_stop_reason == "":
            raise ScriptError("Turn.wire_stop_reason must be a non-empty string")

    @property
    def kinds(self) -> tuple[str, ...]:
        """The names of the :data:`KINDS` this turn uses (``length`` for a length stop)."""
        out = [name for name in KINDS if name != "length" and getattr(self, name) not in (None, False, 0)]
        if self.stop_reason == "length":
            out.insert(0, "length")
        return tuple(out)

    @property
    def resolved_stop_reason(self) -> StopReason:
        """The stop reason to report: explicit, else error/aborted, else toolUse/stop."""
        if self.error is not None:
            return "error"
        if self.aborted:
            return "aborted"
        if self.refusal is not None or self.content_filter:
            return "error"
        if self.stop_reason is not None:
            return self.stop_reason
        return "toolUse" if self.tool_calls else "stop"

    def fault(self, kind: type) -> Any:
        """The first fault of ``kind`` on this turn, or None."""
        for f in self.faults:
            if isinstance(f, kind):
                return f
        return None


# the kinds that end a turn (at most one per turn) and the loopkit stop each one is
_KIND_STOP: dict[str, str] = {"stop_sequence": "stop", "refusal": "error", "content_filter": "error", "pause_turn": "stop"}
_ENDINGS = ("stop_sequence", "refusal", "content_filter", "pause_turn")

KINDS: tuple[str, ...] = (
    "length", "stop_sequence", "refusal", "content_filter", "pause_turn", "redacted_thinking", "reasoning_tokens", "split_usage",
)  # fmt: skip
"""The protocol-neutral stop and content kinds a :class:`Turn` can script (``length`` is
``stop_reason="length"``; the others are Turn fields of the same name)."""


class UnsupportedTurn(ScriptError):
    """A simulator was given a turn its API has no form for.

    Attributes:
        protocol: the simulator's protocol name.
        kind: the :data:`KINDS` name (or other feature) that protocol cannot send.
        turn: the 1-based turn number in the script (None when unknown).
    """

    def __init__(self, protocol: str, kind: str, reason: str, *, turn: int | None = None) -> None:
        where = f"turn {turn} " if turn is not None else ""
        super().__init__(f"{protocol} simulator: {where}scripts {kind!r}, which the {protocol} API cannot send: {reason}")
        self.protocol = protocol
        self.kind = kind
        self.turn = turn


class Script(Sequence[Turn]):
    """An ordered list of turns. Build it from Turns, strings (text answers) or data."""

    __slots__ = ("turns", "name")

    def __init__(self, turns: Iterable[Turn | str] = (), *, name: str | None = None) -> None:
        self.turns: tuple[Turn, ...] = tuple(Turn(text=t) if isinstance(t, str) else t for t in turns)
        self.name = name
        for i, t in enumerate(self.turns):
            if not isinstance(t, Turn):
                raise ScriptError(f"Script turn {i} is {type(t).__name__}, expected a Turn or a string")

    def __getitem__(self, i):  # type: ignore[override]
        return self.turns[i]

    def __len__(self) -> int:
        return len(self.turns)

    def __iter__(self) -> Iterator[Turn]:
        return iter(self.turns)

    def __repr__(self) -> str:
        return f"Script({list(self.turns)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Script) and self.turns == other.turns

    @classmethod
    def coerce(cls, value: Script | Iterable[Turn | str]) -> Script:
        return value if isinstance(value, Script) else cls(value)

    @classmethod
    def from_data(cls, data: Any, *, source: str = "script") -> Script:
        """Build a Script from JSON/YAML data: a list of turns, or ``{"turns": [...]}``.

        Each turn is a string (a text answer) or a mapping with the :class:`Turn` field names;
        ``tool_calls`` entries are ``{"name", "arguments", "id"}``; ``faults`` entries are
        ``{"http": {...}}``, ``{"mid_stream_error": {...}}``, ``{"truncate": {...}}`` or
        ``{"delay": {...}}`` with the fault's field names. Errors name the path.
        """
        if isinstance(data, Mapping):
            name = data.get("name")
            data = data.get("turns")
        else:
            name = None
        if not isinstance(data, list):
            raise ScriptError(f"{source}: expected a list of turns, got {type(data).__name__}")
        return cls([_turn_from_data(t, f"{source}[{i}]") for i, t in enumerate(data)], name=name)


_FAULT_KEYS: dict[str, type] = {
    "http": HttpFault,
    "mid_stream_error": MidStreamError,
    "truncate": Truncate,
    "delay": Delay,
}
_TURN_FIELDS = {
    "text", "thinking", "thinking_signature", "tool_calls", "stop_reason", "usage",
    "error", "aborted", "faults", "chunk_size", "stop_sequence", "refusal", "content_filter",
    "pause_turn", "redacted_thinking", "reasoning_tokens", "split_usage", "wire_stop_reason",
}  # fmt: skip


_KIND_TYPES = (
    ("stop_sequence", str, "a string"), ("refusal", str, "a string"), ("content_filter", bool, "true or false"),
    ("pause_turn", bool, "true or false"), ("redacted_thinking", str, "a string"), ("reasoning_tokens", int, "an integer"),
    ("split_usage", bool, "true or false"), ("wire_stop_reason", str, "a string"),
)  # fmt: skip


def _turn_from_data(data: Any, where: str) -> Turn:
    if isinstance(data, str):
        return Turn(text=data)
    if not isinstance(data, Mapping):
        raise ScriptError(f"{where}: a turn is a string or a mapping, got {type(data).__name__}")
    unknown = set(data) - _TURN_FIELDS
    if unknown:
        raise ScriptError(f"{where}: unknown turn field(s) {sorted(unknown)}; expected some of {sorted(_TURN_FIELDS)}")
    kw = dict(data)
    calls = []
    for j, c in enumerate(kw.pop("tool_calls", None) or []):
        cw = f"{where}.tool_calls[{j}]"
        if not isinstance(c, Mapping) or not isinstance(c.get("name"), str):
            raise ScriptError(f"{cw}: a tool call is a mapping with a string 'name'")
        args = c.get("arguments", {})
        if not isinstance(args, (Mapping, str)):
            raise ScriptError(f"{cw}.arguments: expected a mapping or a raw string, got {type(args).__name__}")
        calls.append(ScriptedCall(name=c["name"], arguments=args, id=c.get("id"), thought_signature=c.get("thought_signature")))
    faults = []
    for j, f in enumerate(kw.pop("faults", None) or []):
        fw = f"{where}.faults[{j}]"
        if not isinstance(f, Mapping) or len(f) != 1 or next(iter(f)) not in _FAULT_KEYS:
            raise ScriptError(f"{fw}: a fault is one of {sorted(_FAULT_KEYS)} mapped to its fields")
        key, fields = next(iter(f.items()))
        try:
            faults.append(_FAULT_KEYS[key](**(fields or {})))
        except TypeError as exc:
            raise ScriptError(f"{fw}.{key}: {exc}") from None
    for key, types, what in _KIND_TYPES:
        if key in kw and kw[key] is not None and not isinstance(kw[key], types) or (key in kw and types is int and isinstance(kw[key], bool)):
            raise ScriptError(f"{where}.{key}: expected {what}, got {type(kw[key]).__name__}")
    usage = kw.pop("usage", None)
    if usage is not None:
        if not isinstance(usage, Mapping):
            raise ScriptError(f"{where}.usage: expected a mapping")
        try:
            usage = Usage(**usage)
        except TypeError as exc:
            raise ScriptError(f"{where}.usage: {exc}") from None
    try:
        return Turn(tool_calls=tuple(calls), faults=tuple(faults), usage=usage, **kw)
    except ScriptError as exc:
        raise ScriptError(f"{where}: {exc}") from None


# --- one wording for both fakes (ScriptedProvider and the simulators) ---------------------------


def script_exhausted(who: str, number: int, turns: int) -> ScriptExhausted:
    """The error for request ``number`` (1-based) that found a ``turns``-turn script exhausted."""
    return ScriptExhausted(
        f"{who}: script exhausted: request #{number} needs turn {turns + 1}, but the script has {turns} turn(s); "
        "add a turn, or check why the code under test made another request",
        call_number=number,
        turns=turns,
    )


HARNESS_HEADER = "x-loopkit-harness-error"
"""The response header in which a served simulator sends the text of a harness error (an
overrun) with its 500, so that loopkit's HTTP adapters raise it as itself."""


def harness_error_from_header(text: str) -> ScriptExhausted:
    """The :class:`ScriptExhausted` a served simulator described in :data:`HARNESS_HEADER`."""
    found = re.search(r"request #(\d+) needs turn \d+, but the script has (\d+) turn", text)
    number, turns = (int(found.group(1)), int(found.group(2))) if found else (0, 0)
    return ScriptExhausted(text, call_number=number, turns=turns)


def incomplete_script(who: str, turns: int, used: int, overruns: Sequence[int]) -> IncompleteScript | None:
    """What ``assert_complete()`` raises: turns never used and requests that arrived after the
    script was exhausted (None when neither happened)."""
    problems = []
    if used < turns:
        problems.append(f"{turns - used} of {turns} turn(s) never used (turns {used + 1}..{turns})")
    if overruns:
        problems.append(f"request(s) #{', #'.join(map(str, overruns))} arrived after the script was exhausted")
    return IncompleteScript(f"{who}: " + "; ".join(problems)) if problems else None
