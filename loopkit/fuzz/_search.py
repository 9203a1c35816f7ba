"""The search: replayed findings, then edge cases, then generated examples; each problem shrunk."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import UsageError
from ..tools import Tool
from ._report import KINDS, Example, Finding, FuzzReport, ToolsetReport
from ._run import Expected, declared_return, expectations, run_example
from ._targets import load_target, load_toolset, reference_of

MAX_FINDINGS = 12  # distinct (kind, cause) pairs reported and shrunk, at most
EDGE_SHARE = 0.5  # at most this share of the examples comes from edge cases; the rest is generated
_DEFAULT_DB = object()


class _Stop(Exception):
    """Ends the generated examples once a finding satisfied ``until`` (here and in ``fuzz_server``)."""


def fuzz(
    target: Any,
    *,
    examples: int = 200,
    seed: int | None = None,
    shrink: bool = True,
    expect_errors: Any = None,
    database: Any = _DEFAULT_DB,
    on_progress: Callable[[int, int], None] | None = None,
    until: Callable[[Finding], bool] | None = None,
) -> FuzzReport:
    """Fuzz one tool's argument handling through the loop; returns a :class:`FuzzReport`.

    The examples are, in this order: findings of earlier runs saved in hypothesis's example
    database (they replay first), edge cases (:func:`loopkit.strategies.edge_cases`: bounds,
    integer-valued floats, unicode, ``format`` edges and near-misses, deep nesting; plus the
    same arguments sent as raw text with a duplicate key, with a lone surrogate escape, and with
    numbers as strings), then generated valid and invalid sets until ``examples`` have run.

    Args:
        target: ``"module:function"``, a loopkit tool, a typed function, or a
            ``{"spec", "execute"}`` dict.
        examples: argument sets to run (edge cases included; about half of the generated ones
            valid, half invalid).
        seed: makes the run reproducible; None picks one (reported in the result).
        shrink: search again for each kind found and shrink it to a minimal example.
        expect_errors: exceptions the tool raises on purpose for input it rejects: an exception
            class, ``(class, "message pattern")``, ``{class: pattern}`` or a list of these. A
            valid argument set answered by such an error is not a finding, as long as the error
            text is helpful.
        database: a hypothesis ``ExampleDatabase`` where findings are saved and replayed from;
            by default the one of hypothesis's current settings (``.hypothesis/``); None for none.
        on_progress: called as ``on_progress(done, total)`` after each example.
        until: ends the search at the first finding this accepts (``lambda f: True``: at the
            first finding at all), as pytest's ``-x`` does; the examples before it are the ones a
            whole run would send, and the report counts only those that ran. None: the whole
            budget.

    Example::

        def test_weather_tool_handles_bad_arguments():
            fuzz(get_weather, seed=1).raise_for_findings()
    """
    if not isinstance(examples, int) or isinstance(examples, bool) or examples < 1:
        raise UsageError(f"fuzz(examples={examples!r}): give a positive number of examples")
    expected = expectations(expect_errors)
    tool = load_target(target)
    return _Search(tool, reference_of(tool, target), examples, seed, shrink, expected, database, on_progress, until).run()


def fuzz_tools(
    target: Any,
    *,
    examples: int = 200,
    seed: int | None = None,
    shrink: bool = True,
    expect_errors: Any = None,
    database: Any = _DEFAULT_DB,
    on_progress: Callable[[str, int, int], None] | None = None,
    until: Callable[[Finding], bool] | None = None,
) -> ToolsetReport:
    """Fuzz every tool of a module (or its name), a ``ToolRegistry``, a list, or ``module:attr``
    naming any of these; one :class:`FuzzReport` per tool, all with the same seed.

    ``expect_errors`` applies to every tool, or is a mapping ``{tool name: expect_errors}``.
    ``on_progress(tool_name, done, total)`` reports each tool's progress; ``until`` ends each
    tool's search at the first finding it accepts (see :func:`fuzz`).
    """
    tools = load_toolset(target)
    seed = random.SystemRandom().randrange(2**32) if seed is None else seed
    per_tool = isinstance(expect_errors, dict) and all(isinstance(k, str) for k in expect_errors)
    if per_tool:
        unknown = set(expect_errors) - {t.name for t, _ in tools}
        if unknown:
            raise UsageError(f"expect_errors names tools that are not in the toolset: {sorted(unknown)}")
    report = ToolsetReport()
    for tool, ref in tools:
        expected = expectations(expect_errors.get(tool.name) if per_tool else expect_errors)
        progress = None if on_progress is None else (lambda done, total, name=tool.name: on_progress(name, done, total))
        report.reports.append(_Search(tool, ref, examples, seed, shrink, expected, database, progress, until).run())
    return report


class _Search:
    def __init__(
        self,
        tool: Tool,
        reference: str | None,
        examples: int,
        seed: int | None,
        shrink: bool,
        expected: tuple[Expected, ...],
        database: Any,
        on_progress: Callable[[int, int], None] | None,
        until: Callable[[Finding], bool] | None = None,
    ) -> None:
        from hypothesis import settings

        from ..strategies._schema import validator_for

        self.tool = tool
        self.examples = examples
        self.seed = random.SystemRandom().randrange(2**32) if seed is None else seed
        self.shrink = shrink
        self.expected = expected
        self.db = settings().database if database is _DEFAULT_DB else database
        self.on_progress = on_progress
        self.until = until
        self.stopped = False  # a finding satisfied ``until``
        self.validator = validator_for(tool.parameters)
        self.returns = declared_return(tool)
        self.report = FuzzReport(target=tool.name, seed=self.seed, reference=reference)
        self.first: dict[tuple[str, str], tuple[Example, str, str | None, BaseException | None]] = {}
        schema_text = json.dumps(tool.parameters, sort_keys=True, default=repr)
        self.key = b"loopkit.fuzz:" + hashlib.sha256(f"{tool.name}\n{schema_text}".encode()).digest()[:16]

    # --- the strategies ----------------------------------------------------------------------

    def strategies(self) -> tuple[Any, Any, Callable[[Any], Any]]:
        from hypothesis import strategies as st

        from ..strategies import arguments, violations

        schema = self.tool.parameters
        valid = arguments(schema).map(lambda v: Example(arguments=v, valid=True))

        def invalid(rules: Any = None) -> Any:
            return violations(schema, rules=rules).map(
                lambda v: Example(arguments=v.value, valid=False, rule=v.rule, path=v.path, detail=v.detail)
            )

        try:
            both = st.one_of(valid, invalid())
        except UsageError:
            both = valid  # the schema accepts nearly anything: nothing to break
        return valid, both, invalid

    # --- running ------------------------------------------------------------------------------

    def try_one(self, example: Example) -> dict[tuple[str, str], Any]:
        outcome = run_example(self.tool, example, self.validator, self.expected, self.returns)
        r = self.report
        r.examples += 1
        if example.valid:
            r.valid_examples += 1
        else:
            r.invalid_examples += 1
        if outcome.expected:
            r.expected_errors += 1
        for key, (message, text, exc) in outcome.kinds.items():
            if key not in self.first:
                self.first[key] = (example, message, text, exc)
                if self.until is not None and not self.stopped and self.until(self._finding(key, example, message, text, exc)):
                    self.stopped = True
        if self.on_progress is not None:
            self.on_progress(r.examples, self.examples)
        return outcome.kinds

    def run(self) -> FuzzReport:
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings
        from hypothesis import seed as hypothesis_seed
        from hypothesis.errors import Unsatisfiable

        self.replay()
        budget = max(0, int(self.examples * EDGE_SHARE) - self.report.examples)
        for example in [] if self.stopped else self.edges(budget):
            self.try_one(example)
            self.report.edge_examples += 1
            if self.stopped:
                break
        left = 0 if self.stopped else self.examples - self.report.examples
        valid, both, invalid = self.strategies()
        quiet = settings(database=None, deadline=None, suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
        if left > 0:

            @settings(quiet, max_examples=left, phases=[Phase.generate])
            @hypothesis_seed(self.seed)
            @given(both)
            def explore(example: Example) -> None:
                if self.stopped:  # hypothesis's replay of the example that stopped the search
                    raise _Stop
                self.try_one(example)
                if self.stopped:
                    raise _Stop

            try:
                explore()
            except Unsatisfiable:
                pass  # fewer examples than asked: the report says how many ran
            except _Stop:
                pass
        for key in sorted(self.first, key=lambda k: (KINDS.index(k[0]), k[1]))[:MAX_FINDINGS]:
            example, message, text, exc = self.first[key]
            if self.shrink and not example.note:  # an edge case is minimal already: the plain value, one change
                example, message, text, exc = self.shrunk(key, valid, both, invalid, quiet) or (example, message, text, exc)
            self.report.findings.append(self._finding(key, example, message, text, exc))
        self.save()
        return self.report

    def _finding(self, key: tuple[str, str], example: Example, message: str, text: str | None, exc: BaseException | None) -> Finding:
        return Finding(
            kind=key[0],
            example=example,
            message=message,
            result_text=text,
            exception=exc,
            tool=self.tool.name,
            reference=self.report.reference,
            seed=self.seed,
            bucket=key[1],
        )

    def shrunk(self, key: tuple[str, str], valid: Any, both: Any, invalid: Callable[[Any], Any], quiet: Any) -> tuple[Example, str, str | None, BaseException | None] | None:
        """A minimal generated example with the same problem, or None when none turns up."""
        from hypothesis import Phase, find, settings
        from hypothesis.errors import NoSuchExample, Unsatisfiable

        example = self.first[key][0]
        if key[0] == "valid_rejected":
            where = valid
        elif not example.valid and example.rule is not None and example.rule != "format":
            where = invalid({example.rule})
        else:
            where = both
        try:
            found = find(
                where,
                lambda ex: key in run_example(self.tool, ex, self.validator, self.expected, self.returns).kinds,
                settings=settings(quiet, max_examples=max(self.examples // 2, 50), phases=[Phase.generate, Phase.shrink]),
                random=random.Random(self.seed),
            )
        except (NoSuchExample, Unsatisfiable):
            return None
        again = run_example(self.tool, found, self.validator, self.expected, self.returns).kinds.get(key)
        if again is None:  # pragma: no cover - flaky tool
            return None
        return (found, *again)

    # --- the edge phase -----------------------------------------------------------------------

    def edges(self, budget: int) -> Iterator[Example]:
        """Edge cases of the schema, then raw-text variants of the plain valid value."""
        from ..strategies import edge_cases

        if budget <= 0:
            return
        cases = edge_cases(self.tool.parameters, limit=budget)
        base = cases[0].value if cases else None
        plain_text = {c.path for c in cases if c.what.startswith("text ")}  # strings without format or pattern
        variants = list(_raw_variants(base, self.validator, plain_text)) if isinstance(base, dict) else []
        # the variants are few and telling: keep room for them
        cases = cases[: max(1, budget - len(variants))]
        for i, case in enumerate(cases):
            if case.near_miss:
                yield Example(arguments=case.value, valid=False, rule="format", path=case.path, detail=case.what, note=case.what)
            else:
                yield Example(arguments=case.value, valid=True, path=case.path, note=case.what)
            if i == 0:  # right after the plain value they vary
                yield from variants[: budget - len(cases)]

    # --- hypothesis's example database --------------------------------------------------------

    def replay(self) -> None:
        """Run the findings saved by earlier runs first; forget those that no longer reproduce."""
        if self.db is None:
            return
        for blob in sorted(self.db.fetch(self.key)):
            try:
                example = Example.from_json(json.loads(blob.decode()))
            except (ValueError, KeyError, TypeError):
                self.db.delete(self.key, blob)
                continue
            kinds = self.try_one(example)
            self.report.replayed += 1
            if not kinds:
                self.db.delete(self.key, blob)
            if self.stopped:
                break

    def save(self) -> None:
        if self.db is None:
            return
        for f in self.report.findings:
            try:
                blob = json.dumps(f.example.to_json(), sort_keys=True, ensure_ascii=True).encode()
            except (TypeError, ValueError):
                continue
            self.db.save(self.key, blob)


def _raw_variants(base: dict[str, Any], validator: Any, plain_text: set[tuple[Any, ...]]) -> Iterator[Example]:
    """The plain valid arguments as a model may really send them: a key twice in the raw text
    (JSON parsers keep the last), a lone surrogate escaped in a string, numbers as strings."""
    if base:
        first = next(iter(base))
        text = json.dumps(base, ensure_ascii=False)
        raw = "{" + json.dumps(first) + ": " + json.dumps(_other(base[first])) + ", " + text[1:]
        yield Example(arguments=base, valid=True, raw=raw, note=f"duplicate key {first!r} in the raw text")
    for path, leaf in _leaves(base):
        if isinstance(leaf, str) and path in plain_text:
            for s in ("\ud83d", "x\ud800y"):
                changed = _set(base, path, s)
                if validator.is_valid(changed):
                    yield Example(arguments=changed, valid=True, path=path, raw=json.dumps(changed, ensure_ascii=True), note=f"lone surrogate {s!r} (escaped in JSON) at {'.'.join(map(str, path))}")
                    break
    for path, leaf in _leaves(base):
        if isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
            changed = _set(base, path, str(leaf))
            yield Example(arguments=changed, valid=True, path=path, note=f"number {leaf!r} sent as the string {str(leaf)!r} at {'.'.join(map(str, path))}")


def _other(value: Any) -> Any:
    return "first" if not isinstance(value, str) else None


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    else:
        yield path, value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _set(value[head], rest, new)}
    out = list(value)
    out[head] = _set(out[head], rest, new)
    return out


__all__ = ["EDGE_SHARE", "MAX_FINDINGS", "fuzz", "fuzz_tools"]
