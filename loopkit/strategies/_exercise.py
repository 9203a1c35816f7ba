"""``ExerciseProvider``: a model that needs no script and calls every tool it is offered.

Like pydantic-ai's ``TestModel``: it reads the tools of the request, calls each one (or the ones
named) with generated schema-valid arguments, then once more with arguments that break the
schema, then answers with a text that summarises what came back. Deterministic under a seed.
It is the one-line smoke test of an agent's whole toolset through the real loop::

    result = loopkit.run(ExerciseProvider(seed=1), "go", tools=my_tools)
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass
from itertools import takewhile
from typing import Any

from ..errors import UsageError
from ..fakes import FunctionProvider
from ..messages import ToolResultMessage
from ..provider import ModelRequest
from ..script import ScriptedCall, Turn
from ._schema import merge


@dataclass(frozen=True, slots=True)
class Exercised:
    """One call the provider made and what came back.

    Args:
        tool: the tool's name.
        arguments: what was sent.
        valid: whether the arguments satisfy the tool's schema.
        rule: for an invalid set, the rule it breaks (``required``, ``type``...).
        is_error / text: the tool result, or None/"" when no result came back.
    """

    tool: str
    arguments: Any
    valid: bool
    rule: str | None = None
    is_error: bool | None = None
    text: str = ""

    @property
    def problem(self) -> str | None:
        """What looks wrong: a valid call that failed, an invalid one that was not rejected."""
        if self.is_error is None:
            return f"{self.tool}: no result came back for the {'valid' if self.valid else 'invalid'} call"
        if self.valid and self.is_error:
            return f"{self.tool}: valid arguments {_short(self.arguments)} got an error: {_short(self.text)}"
        if not self.valid and not self.is_error:
            return f"{self.tool}: arguments breaking '{self.rule}' {_short(self.arguments)} were accepted"
        return None


class ExerciseProvider(FunctionProvider):
    """A fake model that exercises every tool of each run, with no script to write.

    On the first model call of a run it plans, for each tool of the request (or each of
    ``tools``): one call with generated schema-valid arguments, then (``invalid=True``) one call
    with arguments that break the schema in one rule. It sends all the valid calls in one turn,
    then all the invalid ones (one call per turn when the request sets
    ``parallel_tool_calls=False``), then answers with a text that summarises each result. The
    arguments depend only on ``seed`` and the tools' schemas.

    Args:
        seed: makes the arguments reproducible.
        tools: names of the tools to exercise; None for all that the request offers.
        invalid: also send one invalid argument set per tool.

    After a run, :attr:`results` lists each call and its result, :attr:`problems` what looks
    wrong, and :meth:`assert_ok` fails the test when anything does.
    """

    def __init__(self, *, seed: int = 0, tools: Collection[str] | None = None, invalid: bool = True) -> None:
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise UsageError(f"ExerciseProvider(seed={seed!r}): give an integer")
        if isinstance(tools, str):
            raise UsageError(f"ExerciseProvider(tools={tools!r}): give a list of tool names, not one string")
        super().__init__(self._answer)
        self.seed = seed
        self.only = None if tools is None else list(tools)
        self.invalid = invalid
        self.results: list[Exercised] = []
        self._plan: list[tuple[str, ScriptedCall, Exercised]] = []
        self._sent = 0

    # --- planning ------------------------------------------------------------------------------

    def _make_plan(self, request: ModelRequest) -> None:
        offered = {t.name: t for t in request.tools}
        if self.only is not None:
            missing = [n for n in self.only if n not in offered]
            if missing:
                raise UsageError(f"ExerciseProvider(tools=...) names {missing}, which the request does not offer (it offers {sorted(offered)})")
        names = [n for n in offered if self.only is None or n in self.only]
        valid_calls, invalid_calls = [], []
        for i, name in enumerate(names):
            schema = offered[name].parameters or {"type": "object"}
            args = _draw_valid(schema, self.seed * 1000 + i)
            valid_calls.append((name, ScriptedCall(name=name, arguments=args, id=f"call_{name}_valid"), Exercised(name, args, True)))
            if self.invalid:
                broken = _draw_invalid(schema, self.seed * 1000 + i)
                if broken is not None:
                    value, rule = broken
                    invalid_calls.append((name, ScriptedCall(name=name, arguments=value, id=f"call_{name}_invalid"), Exercised(name, value, False, rule)))
        self._plan = valid_calls + invalid_calls
        self._sent = 0
        self.results = []

    # --- answering -----------------------------------------------------------------------------

    def _answer(self, request: ModelRequest) -> Turn:
        if request.call_number == 1 or not self._plan:
            self._make_plan(request)
        self._collect(request)
        remaining = self._plan[self._sent :]
        if remaining:
            # the valid calls together, then the invalid ones; one by one if parallel calls are off
            phase = remaining[0][2].valid
            batch = list(takewhile(lambda p: p[2].valid == phase, remaining))
            if request.parallel_tool_calls is False:
                batch = batch[:1]
            self._sent += len(batch)
            return Turn(tool_calls=tuple(c for _, c, _ in batch))
        return Turn(text=self.summary())

    def _collect(self, request: ModelRequest) -> None:
        by_id = {m.tool_call_id: m for m in request.iter_messages() if isinstance(m, ToolResultMessage)}
        self.results = []
        for _, call, planned in self._plan[: self._sent]:
            got = by_id.get(call.id or "")
            if got is None:
                self.results.append(planned)
            else:
                self.results.append(Exercised(planned.tool, planned.arguments, planned.valid, planned.rule, got.is_error, got.text))

    # --- reporting -----------------------------------------------------------------------------

    @property
    def problems(self) -> list[str]:
        """What looks wrong in the last run's results."""
        return [p for p in (r.problem for r in self.results) if p]

    def summary(self) -> str:
        """The final answer: one line per tool call and its outcome."""
        lines = [f"Exercised {len({r.tool for r in self.results})} tool(s) with {len(self.results)} call(s):"]
        for r in self.results:
            kind = "valid" if r.valid else f"invalid ({r.rule})"
            outcome = "no result" if r.is_error is None else ("error: " if r.is_error else "ok: ") + _short(r.text)
            lines.append(f"- {r.tool} {kind} {_short(r.arguments)} -> {outcome}")
        problems = self.problems
        lines.append(f"{len(problems)} problem(s)" + (":\n" + "\n".join(f"- {p}" for p in problems) if problems else "."))
        return "\n".join(lines)

    def assert_ok(self) -> None:
        """Raise AssertionError when a valid call failed or an invalid one was accepted."""
        problems = self.problems
        if not self.results:
            raise AssertionError("ExerciseProvider made no calls: was it used in a run with tools?")
        if problems:
            raise AssertionError("the toolset mishandled calls:\n" + "\n".join(f"- {p}" for p in problems))


def _first_generated(strategy: Any, seed: int, skip: int = 2) -> Any:
    """A deterministic, not-too-trivial value of ``strategy``: the ``skip + 1``-th hypothesis
    generates from a seeded random (the very first is always the simplest)."""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    seen = [0]

    def nth(_: Any) -> bool:
        seen[0] += 1
        return seen[0] > skip

    quiet = settings(database=None, deadline=None, phases=[Phase.generate], max_examples=skip + 20, suppress_health_check=list(HealthCheck))
    try:
        return find(strategy, nth, settings=quiet, random=random.Random(seed))
    except (NoSuchExample, Unsatisfiable):
        if skip:  # fewer distinct values than that (``{}`` for a tool without arguments): the simplest one
            return _first_generated(strategy, seed, skip=0)
        return None


def _draw_valid(schema: Any, seed: int) -> Any:
    from ._arguments import arguments

    object_schema, _ = merge(schema, {"type": "object"})
    value = _first_generated(arguments(object_schema), seed)
    if value is None:
        raise UsageError(f"ExerciseProvider: no valid arguments found for schema {schema!r}")
    return value


def _draw_invalid(schema: Any, seed: int) -> tuple[Any, str] | None:
    from ._arguments import RULES, _violations, object_violations

    object_schema, _ = merge(schema, {"type": "object"})
    try:
        # a wrong value, a missing key, a bound crossed: what models get wrong, before an extra key
        strategy = _violations(object_schema, frozenset(RULES) - {"additionalProperties"}, root_type=False, where="")
    except UsageError:
        try:
            strategy = object_violations(object_schema)
        except UsageError:
            return None  # nothing to break while keeping an object
    found = _first_generated(strategy, seed)
    return None if found is None else (found.value, found.rule)


def _short(value: Any, n: int = 80) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


__all__ = ["ExerciseProvider", "Exercised"]
