"""One example through the real loop, and what it shows: the four kinds of finding."""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..messages import ToolResultMessage
from ..tools import Tool
from ._report import Example

_CLASS_NAME = re.compile(r"[A-Z][A-Za-z0-9_]*(Error|Exception|Interrupt|Exit)?")


@dataclass(frozen=True, slots=True)
class Expected:
    """An error the tool raises on purpose: an exception type, and optionally a pattern its
    message must match (``re.search``)."""

    type: type[BaseException]
    match: str | None = None

    def covers(self, exc: BaseException) -> bool:
        return isinstance(exc, self.type) and (self.match is None or re.search(self.match, str(exc)) is not None)

    def __str__(self) -> str:
        return self.type.__name__ + (f" matching {self.match!r}" if self.match else "")


def expectations(expect_errors: Any) -> tuple[Expected, ...]:
    """``expect_errors=`` in any accepted form, as :class:`Expected` values.

    Accepted: None; an exception class; ``(class, pattern)``; an :class:`Expected`; a mapping
    ``{class: pattern or None}``; a list of any of these.
    """
    if expect_errors is None:
        return ()
    if isinstance(expect_errors, dict):
        return tuple(_one((k, v), "expect_errors") for k, v in expect_errors.items())
    if isinstance(expect_errors, (type, Expected)) or (isinstance(expect_errors, tuple) and len(expect_errors) == 2 and isinstance(expect_errors[1], (str, type(None))) and isinstance(expect_errors[0], type)):
        return (_one(expect_errors, "expect_errors"),)
    if isinstance(expect_errors, Iterable) and not isinstance(expect_errors, (str, bytes)):
        return tuple(_one(e, "expect_errors") for e in expect_errors)
    return (_one(expect_errors, "expect_errors"),)


def _one(item: Any, where: str) -> Expected:
    if isinstance(item, Expected):
        return item
    match = None
    if isinstance(item, tuple) and len(item) == 2:
        item, match = item
    if not (isinstance(item, type) and issubclass(item, BaseException)):
        raise UsageError(f"{where}: {item!r} is not an exception class; give ValueError, (ValueError, 'pattern') or {{ValueError: 'pattern'}}")
    if match is not None:
        if not isinstance(match, str):
            raise UsageError(f"{where}: the pattern for {item.__name__} must be a string, got {match!r}")
        try:
            re.compile(match)
        except re.error as exc:
            raise UsageError(f"{where}: the pattern {match!r} for {item.__name__} is not a regular expression ({exc})") from None
    return Expected(item, match)


class Observed(Tool):
    """The target tool as the loop sees it, recording whether the function was reached, with
    which arguments, and what it raised. Validation stays the target's own ``prepare``."""

    __slots__ = ("_inner", "calls")

    def __init__(self, inner: Tool) -> None:
        for name in ("name", "description", "parameters", "source", "is_async", "spec"):
            object.__setattr__(self, name, getattr(inner, name))
        object.__setattr__(self, "_unbound", False)
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "calls", [])

    def prepare(self, raw_args: Any) -> tuple[dict[str, Any] | None, str | None]:
        return self._inner.prepare(raw_args)

    def invoke(self, args: dict[str, Any], **kwargs: Any) -> Any:
        record: dict[str, Any] = {"args": args, "raised": None, "returned": None}
        self.calls.append(record)
        try:
            value = self._inner.invoke(args, **kwargs)
        except Exception as exc:
            record["raised"] = exc
            raise
        if inspect.isawaitable(value):
            return _watch(value, record)
        record["returned"] = value
        return value


async def _watch(awaitable: Any, record: dict[str, Any]) -> Any:
    try:
        record["returned"] = value = await awaitable
        return value
    except Exception as exc:
        record["raised"] = exc
        raise


_PLAIN_RETURNS = (int, float, str, bool, list, dict)


def declared_return(tool: Tool) -> type | None:
    """The function's return annotation when it is a plain JSON-like class (``-> int``), else None."""
    fn = getattr(tool, "_fn", None)
    if fn is None:
        return None
    try:
        hint = typing.get_type_hints(fn).get("return")
    except Exception:  # noqa: BLE001 - unresolvable annotations: nothing to check
        return None
    return hint if hint in _PLAIN_RETURNS else None


def _returns_ok(value: Any, declared: type) -> bool:
    if declared is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if declared is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, declared)


@dataclass(slots=True)
class Outcome:
    """What one example showed: ``(kind, bucket) -> (message, result text, exception)``; the
    bucket tells distinct bugs of one kind apart. ``expected`` is set when the tool answered
    with an error it declares."""

    kinds: dict[tuple[str, str], tuple[str, str | None, BaseException | None]]
    expected: bool = False


def run_example(tool: Tool, example: Example, validator: Any, expected: tuple[Expected, ...] = (), returns: type | None = None) -> Outcome:
    """Send ``example`` as one tool call through :func:`loopkit.run` and judge the result;
    ``returns`` is the function's declared return class, checked when given."""
    from ..fakes import ScriptedProvider
    from ..runtime import TickClock, run
    from ..script import ScriptedCall, Turn

    observed = Observed(tool)
    args = example.arguments
    sent = example.raw if example.raw is not None else args if isinstance(args, dict) else json.dumps(args)
    provider = ScriptedProvider([Turn(tool_calls=(ScriptedCall(name=tool.name, arguments=sent, id="call_fuzz"),)), Turn(text="done")], sleep=lambda s: None)
    kinds: dict[tuple[str, str], tuple[str, str | None, BaseException | None]] = {}
    try:
        result = run(provider, "fuzz", tools=[observed], max_iterations=2, clock=TickClock())
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - this is exactly what we are looking for
        kinds[("escaped_exception", type(exc).__name__)] = (f"{type(exc).__name__} escaped the loop: {exc}", None, exc)
        return Outcome(kinds)
    results = [m for m in result.messages if isinstance(m, ToolResultMessage)]
    if not results:
        kinds[("escaped_exception", "no result")] = (f"the run ended ({result.reason}) without a tool result: {result.error!r}", None, None)
        return Outcome(kinds)
    res = results[0]
    text = res.text
    calls = observed.calls
    raised = calls[0]["raised"] if calls else None
    reached_invalid = bool(calls) and not validator.is_valid(calls[0]["args"])
    if not example.valid and reached_invalid:
        kinds[("invalid_accepted", str(example.rule))] = (
            f"arguments breaking '{example.rule}' at {where(example.path)} reached the function ({example.detail})",
            text,
            None,
        )
    if example.valid and reached_invalid:
        kinds[("invalid_accepted", "coercion")] = (
            f"{example.note or 'valid arguments'} reached the function as {_clip(json.dumps(calls[0]['args'], default=repr))}, which the schema does not allow",
            text,
            None,
        )
    if returns is not None and calls and raised is None and not res.is_error and not _returns_ok(calls[0]["returned"], returns):
        got = calls[0]["returned"]
        kinds[("bad_return", type(got).__name__)] = (
            f"declared to return {returns.__name__} but returned {_clip(repr(got), 60)} ({type(got).__name__})"
            + (f" for {example.note}" if example.note else ""),
            text,
            None,
        )
    declared = raised is not None and any(e.covers(raised) for e in expected)
    if example.valid and res.is_error and not declared:
        why = f"the function raised {type(raised).__name__}" if raised is not None else "the tool rejected them"
        note = f" ({example.note})" if example.note else ""
        kinds[("valid_rejected", type(raised).__name__ if raised is not None else "rejected")] = (
            f"valid arguments{note} got an error result: {why}: {_clip(text)}",
            text,
            raised,
        )
    if res.is_error:
        problem = _unhelpful(text, example)
        if problem:
            kinds[("unhelpful_error", problem[0])] = (f"error result {problem[1]}", text, raised)
    return Outcome(kinds, expected=declared and not kinds)


def _unhelpful(text: str, example: Example) -> tuple[str, str] | None:
    """``(bucket, description)`` when an error text would not help a model fix its call."""
    stripped = text.strip()
    if not stripped:
        return "empty", "has empty text"
    if _CLASS_NAME.fullmatch(stripped) and (stripped.endswith(("Error", "Exception")) or len(stripped) < 12):
        return "class name only", f"says only {stripped!r}"
    if len(re.findall(r"\w", stripped)) < 3:  # KeyError('a') gives "'a'"
        return "too short", f"is too short to explain anything: {stripped!r}"
    if not example.valid:
        name = _culprit(example)
        if name and name not in text and not (example.rule == "format" and _leaf(example) in text):
            return "no culprit", f"does not name {name!r}, the property at fault ({example.rule})"
    return None


def _leaf(example: Example) -> str:
    value = example.arguments
    for p in example.path:
        value = value[p]
    return str(value)


def _culprit(example: Example) -> str | None:
    """The property name an error message about this violation should mention."""
    m = re.search(r"(?:dropped|added) '([^']+)'", example.detail)
    if m:
        return m.group(1)
    keys = [p for p in example.path if isinstance(p, str)]
    return keys[-1] if keys else None


def where(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path) or "the root"


def _clip(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


__all__ = ["Expected", "Observed", "Outcome", "declared_return", "expectations", "run_example", "where"]
