"""A conformance case, its result, and the context a case's check runs in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ._harness import Harness
from ._wire import MISSING, Wire

Status: TypeAlias = Literal["pass", "fail", "not-applicable", "error"]


@dataclass(slots=True, frozen=True)
class Mismatch:
    """One failed expectation: what was checked, what was expected, what was sent or parsed."""

    what: str
    expected: Any
    actual: Any

    def __str__(self) -> str:
        return f"{self.what}: expected {_show(self.expected)}, got {_show(self.actual)}"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 400 else text[:397] + "..."


class Context:
    """What a case's check gets: the harness, the protocol's wire reading, and expectations.

    Args:
        harness: runs exchanges against the protocol's simulator.
        wire: the suite's reading of the protocol.
    """

    def __init__(self, harness: Harness, wire: Wire) -> None:
        self.harness = harness
        self.wire = wire
        self.mismatches: list[Mismatch] = []
        self.notes: list[str] = []

    @property
    def streamed(self) -> bool:
        """Whether the adapter asks for streamed answers (read from the requests it sends)."""
        return self.harness.streams()

    def expect(self, what: str, actual: Any, expected: Any) -> bool:
        """Record a mismatch unless ``actual`` equals ``expected`` (booleans are not numbers)."""
        if same(actual, expected):
            return True
        self.mismatches.append(Mismatch(what, expected, actual))
        return False

    def expect_in(self, what: str, actual: Any, allowed: list[Any]) -> bool:
        """Record a mismatch unless ``actual`` equals one of ``allowed``."""
        if any(same(actual, a) for a in allowed):
            return True
        self.mismatches.append(Mismatch(what, allowed[0] if len(allowed) == 1 else OneOf(allowed), actual))
        return False

    def fail(self, what: str, expected: Any, actual: Any) -> None:
        self.mismatches.append(Mismatch(what, expected, actual))

    def note(self, text: str) -> None:
        """Say what a passing case could not observe (shown with the result)."""
        self.notes.append(text)


@dataclass(slots=True, frozen=True)
class OneOf:
    options: list[Any]

    def __repr__(self) -> str:
        return "one of " + ", ".join(repr(o) for o in self.options)


def same(a: Any, b: Any) -> bool:
    """Deep equality where ``True`` is not ``1`` and an absent key is only equal to absent."""
    if a is MISSING or b is MISSING:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


Applicability = Callable[[Wire, Any], "str | None"]

NON_STREAMED = "the adapter asked for a non-streamed answer"
"""The start of the reason a streamed-only case gives for an adapter that asks for JSON bodies."""


@dataclass(slots=True, frozen=True)
class Case:
    """One conformance case.

    Args:
        id: a stable dotted id (``request.tool_choice.required``).
        statement: the behaviour, in one line.
        spec: where it comes from (``docs/wire.md §3.2``, ``docs/loop-contract.md §7.1``).
        check: runs the case in a :class:`Context`, recording mismatches.
        applies: returns why the case does not apply to a protocol/provider, or None when it does.
        streamed_only: the behaviour exists only in a streamed answer (an error event mid-stream,
            an abort between events): the case is not applicable to an adapter whose requests
            ask for a non-streamed answer (:data:`NON_STREAMED`).
    """

    id: str
    statement: str
    spec: str
    check: Callable[[Context], None]
    applies: Applicability | None = None
    streamed_only: bool = False

    def not_applicable(self, wire: Wire, provider: Any) -> str | None:
        return None if self.applies is None else self.applies(wire, provider)


@dataclass(slots=True, kw_only=True)
class CaseResult:
    """The outcome of one case for one provider.

    Args:
        case_id / statement / spec: from the case.
        status: ``pass`` (``reason`` notes what it could not observe, if anything), ``fail``,
            ``not-applicable`` (``reason`` says why) or ``error`` (the case itself could not run;
            ``reason`` says why).
        mismatches: for a failure, what was sent or parsed against what was expected.
    """

    case_id: str
    statement: str
    spec: str
    protocol: str
    status: Status
    reason: str = ""
    mismatches: list[Mismatch] = field(default_factory=list)

    @property
    def detail(self) -> str:
        if self.mismatches:
            return "\n".join(str(m) for m in self.mismatches)
        return self.reason

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.case_id,
            "statement": self.statement,
            "spec": self.spec,
            "protocol": self.protocol,
            "status": self.status,
            "reason": self.reason,
            "mismatches": [{"what": m.what, "expected": _jsonable(m.expected), "actual": _jsonable(m.actual)} for m in self.mismatches],
        }


def _jsonable(value: Any) -> Any:
    if value is MISSING:
        return "<absent>"
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return repr(value)
