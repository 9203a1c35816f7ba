"""``loopkit fuzz``: generated valid and invalid arguments through the real loop, findings shrunk.

Each example is one model tool call with generated arguments (from :func:`loopkit.strategies.
arguments` and :func:`~loopkit.strategies.violations`), answered by a
:class:`~loopkit.fakes.ScriptedProvider` and run by :func:`loopkit.run`, so the tool's real
validation, coercion, execution and error-result path all run. Four kinds of finding:

``escaped_exception``
    an exception came out of the loop (a tool's own ``prepare`` crashed, a tool raised a
    ``BaseException``...) instead of becoming an error result.
``invalid_accepted``
    arguments that break the schema reached the function (after coercion, still invalid).
``valid_rejected``
    arguments the schema allows got an error result (rejected, or the function raised).
``unhelpful_error``
    an error result whose text is empty, only an exception's class name, or (for a broken
    rule) does not name the property at fault.

The first pass explores; each kind found is then searched again and shrunk by hypothesis to a
minimal example. Use :func:`fuzz` from pytest (``fuzz(my_tool).raise_for_findings()``) or the
``loopkit fuzz module:function`` command.
"""

from __future__ import annotations

import inspect
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._targets import import_target
from .errors import UsageError
from .messages import ToolResultMessage
from .tools import Tool, adapt_tool

KINDS: tuple[str, ...] = ("escaped_exception", "invalid_accepted", "valid_rejected", "unhelpful_error")
MAX_FINDINGS = 12  # distinct (kind, cause) pairs reported and shrunk, at most
_CLASS_NAME = re.compile(r"[A-Z][A-Za-z0-9_]*(Error|Exception|Interrupt|Exit)?")


@dataclass(frozen=True, slots=True)
class Example:
    """One generated argument set: valid, or breaking ``rule`` at ``path``."""

    arguments: Any
    valid: bool
    rule: str | None = None
    path: tuple[Any, ...] = ()
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem, with the minimal example that shows it.

    Args:
        kind: one of :data:`KINDS`.
        example: the (shrunk) argument set.
        message: what went wrong, in words.
        result_text: the tool result's text, when there was a result.
    """

    kind: str
    example: Example
    message: str
    result_text: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The finding as JSON data."""
        return {
            "kind": self.kind,
            "message": self.message,
            "arguments": self.example.arguments,
            "valid": self.example.valid,
            "rule": self.example.rule,
            "path": list(self.example.path),
            "result_text": self.result_text,
        }


@dataclass(slots=True)
class FuzzReport:
    """What a fuzz run found.

    Attributes:
        target: the tool's name.
        examples: how many examples ran in the exploring pass.
        valid_examples / invalid_examples: how they split.
        seed: the seed that reproduces the run.
        findings: one per distinct problem (kind and cause), each with a shrunk example.
    """

    target: str
    seed: int
    examples: int = 0
    valid_examples: int = 0
    invalid_examples: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "seed": self.seed,
            "examples": self.examples,
            "valid_examples": self.valid_examples,
            "invalid_examples": self.invalid_examples,
            "ok": self.ok,
            "findings": [f.to_json() for f in self.findings],
        }

    def raise_for_findings(self) -> None:
        """Raise AssertionError listing every finding (for use in a test)."""
        if self.findings:
            lines = [f"loopkit fuzz found {len(self.findings)} problem(s) in tool {self.target!r} (seed {self.seed}):"]
            for f in self.findings:
                lines.append(f"- {f.kind}: {f.message}\n    arguments: {json.dumps(f.example.arguments, ensure_ascii=False, default=str)}")
            raise AssertionError("\n".join(lines))


# --- the target -------------------------------------------------------------------------------


def load_target(target: Any) -> Tool:
    """A :class:`Tool` from ``module:attribute`` text, or from anything :func:`adapt_tool` takes."""
    if isinstance(target, str):
        target = import_target(target, what="fuzz target", form="module:function (a tool, a typed function, or a spec/execute dict)")
    return adapt_tool(target)


class _Observed(Tool):
    """The target tool as the loop sees it, recording whether the function was reached, with
    which arguments, and what it raised. Validation stays the target's own ``prepare``."""

    __slots__ = ("_inner", "_calls")

    def __init__(self, inner: Tool) -> None:  # noqa: D107 - built field by field: Tool is immutable
        for name in ("name", "description", "parameters", "source", "is_async", "spec"):
            object.__setattr__(self, name, getattr(inner, name))
        object.__setattr__(self, "_unbound", False)
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_calls", [])

    def prepare(self, raw_args: Any) -> tuple[dict[str, Any] | None, str | None]:
        return self._inner.prepare(raw_args)

    def invoke(self, args: dict[str, Any], **kwargs: Any) -> Any:
        record: dict[str, Any] = {"args": args, "raised": None}
        self._calls.append(record)
        try:
            value = self._inner.invoke(args, **kwargs)
        except Exception as exc:
            record["raised"] = exc
            raise
        if inspect.isawaitable(value):
            return _watch(value, record)
        return value


async def _watch(awaitable: Any, record: dict[str, Any]) -> Any:
    try:
        return await awaitable
    except Exception as exc:
        record["raised"] = exc
        raise


# --- one example --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Outcome:
    # (kind, bucket) -> (message, result text); the bucket tells distinct bugs of one kind apart
    # (the exception's class, the rule broken, the way a text is unhelpful)
    kinds: dict[tuple[str, str], tuple[str, str | None]]


def _run_example(tool: Tool, example: Example, validator: Any) -> _Outcome:
    from .fakes import ScriptedProvider
    from .runtime import TickClock, run
    from .script import ScriptedCall, Turn

    observed = _Observed(tool)
    args = example.arguments
    sent = args if isinstance(args, dict) else json.dumps(args)
    provider = ScriptedProvider([Turn(tool_calls=(ScriptedCall(name=tool.name, arguments=sent, id="call_fuzz"),)), Turn(text="done")], sleep=lambda s: None)
    kinds: dict[tuple[str, str], tuple[str, str | None]] = {}
    try:
        result = run(provider, "fuzz", tools=[observed], max_iterations=2, clock=TickClock())
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - this is exactly what we are looking for
        kinds[("escaped_exception", type(exc).__name__)] = (f"{type(exc).__name__} escaped the loop: {exc}", None)
        return _Outcome(kinds)
    results = [m for m in result.messages if isinstance(m, ToolResultMessage)]
    if not results:
        kinds[("escaped_exception", "no result")] = (f"the run ended ({result.reason}) without a tool result: {result.error!r}", None)
        return _Outcome(kinds)
    res = results[0]
    text = res.text
    calls = observed._calls
    raised = calls[0]["raised"] if calls else None
    if not example.valid and calls and not validator.is_valid(calls[0]["args"]):
        kinds[("invalid_accepted", str(example.rule))] = (
            f"arguments breaking '{example.rule}' at {_where(example.path)} reached the function ({example.detail})",
            text,
        )
    if example.valid and res.is_error:
        why = f"the function raised {type(raised).__name__}" if raised is not None else "the tool rejected them"
        kinds[("valid_rejected", type(raised).__name__ if raised is not None else "rejected")] = (
            f"valid arguments got an error result: {why}: {_clip(text)}",
            text,
        )
    if res.is_error:
        problem = _unhelpful(text, example)
        if problem:
            kinds[("unhelpful_error", problem[0])] = (f"error result {problem[1]}", text)
    return _Outcome(kinds)


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
        if name and name not in text:
            return "no culprit", f"does not name {name!r}, the property at fault ({example.rule})"
    return None


def _culprit(example: Example) -> str | None:
    """The property name an error message about this violation should mention."""
    m = re.search(r"(?:dropped|added) '([^']+)'", example.detail)
    if m:
        return m.group(1)
    keys = [p for p in example.path if isinstance(p, str)]
    return keys[-1] if keys else None


def _where(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path) or "the root"


def _clip(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# --- the search -------------------------------------------------------------------------------


def fuzz(
    target: Any,
    *,
    examples: int = 200,
    seed: int | None = None,
    shrink: bool = True,
    on_progress: Callable[[int, int], None] | None = None,
) -> FuzzReport:
    """Fuzz one tool's argument handling through the loop; returns a :class:`FuzzReport`.

    Args:
        target: ``"module:function"``, a loopkit tool, a typed function, or a
            ``{"spec", "execute"}`` dict.
        examples: argument sets in the exploring pass (about half valid, half invalid).
        seed: makes the run reproducible; None picks one (reported in the result).
        shrink: search again for each kind found and shrink it to a minimal example.
        on_progress: called as ``on_progress(done, total)`` after each exploring example.

    Example::

        def test_weather_tool_handles_bad_arguments():
            fuzz(get_weather, examples=100, seed=1).raise_for_findings()
    """
    if not isinstance(examples, int) or examples < 1:
        raise UsageError(f"fuzz(examples={examples!r}): give a positive number of examples")
    tool = load_target(target)
    from hypothesis import HealthCheck, Phase, find, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    from .strategies import arguments, violations
    from .strategies._schema import validator_for

    seed = random.SystemRandom().randrange(2**32) if seed is None else seed
    schema = tool.parameters
    validator = validator_for(schema)
    valid = arguments(schema).map(lambda v: Example(arguments=v, valid=True))

    def invalid(rules: Any = None) -> Any:
        return violations(schema, rules=rules).map(
            lambda v: Example(arguments=v.value, valid=False, rule=v.rule, path=v.path, detail=v.detail)
        )

    try:
        strategy = st.one_of(valid, invalid())
    except UsageError:
        strategy = valid  # the schema accepts nearly anything: nothing to break
    report = FuzzReport(target=tool.name, seed=seed)
    first: dict[tuple[str, str], tuple[Example, str, str | None]] = {}
    quiet = settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))

    @settings(quiet, max_examples=examples, phases=[Phase.generate])
    @hypothesis_seed(seed)
    @given(strategy)
    def explore(example: Example) -> None:
        outcome = _run_example(tool, example, validator)
        report.examples += 1
        if example.valid:
            report.valid_examples += 1
        else:
            report.invalid_examples += 1
        for kind, (message, text) in outcome.kinds.items():
            first.setdefault(kind, (example, message, text))
        if on_progress is not None:
            on_progress(report.examples, examples)

    try:
        explore()
    except Unsatisfiable:
        pass  # fewer examples than asked: the report says how many ran
    for key in sorted(first, key=lambda k: (KINDS.index(k[0]), k[1]))[:MAX_FINDINGS]:
        example, message, text = first[key]
        if shrink:
            # search again where this problem lives: valid sets, or sets breaking the same rule
            if key[0] == "valid_rejected":
                where = valid
            elif not example.valid and example.rule is not None:
                where = invalid({example.rule})
            else:
                where = strategy
            try:
                example = find(
                    where,
                    lambda ex, key=key: key in _run_example(tool, ex, validator).kinds,
                    settings=settings(quiet, max_examples=max(examples, 50), phases=[Phase.generate, Phase.shrink]),
                    random=random.Random(seed),
                )
                message, text = _run_example(tool, example, validator).kinds[key]
            except (NoSuchExample, Unsatisfiable):
                pass  # keep the unshrunk example from the exploring pass
        report.findings.append(Finding(kind=key[0], example=example, message=message, result_text=text))
    return report


__all__ = ["KINDS", "Example", "Finding", "FuzzReport", "fuzz", "load_target"]
