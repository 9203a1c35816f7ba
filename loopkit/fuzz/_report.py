"""What a fuzz run found: examples, findings, reports, and a ready-to-paste test per finding."""

from __future__ import annotations

import json
import os
import re
import types
from dataclasses import dataclass, field
from typing import Any

KINDS: tuple[str, ...] = ("escaped_exception", "invalid_accepted", "valid_rejected", "unhelpful_error", "bad_return")


@dataclass(frozen=True, slots=True)
class Example:
    """One argument set the fuzzer sent.

    Args:
        arguments: the arguments (what the tool call carried, parsed).
        valid: whether they satisfy the schema (a ``format`` near-miss counts as not valid).
        rule / path / detail: for an invalid set, the rule it breaks, where, and how.
        raw: the exact argument text sent, when it differs from ``arguments`` as JSON (a
            duplicate key, a lone surrogate escape).
        note: what makes this example special (the edge it sits on), or empty.
    """

    arguments: Any
    valid: bool
    rule: str | None = None
    path: tuple[Any, ...] = ()
    detail: str = ""
    raw: str | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "arguments": self.arguments,
            "valid": self.valid,
            "rule": self.rule,
            "path": list(self.path),
            "detail": self.detail,
            "raw": self.raw,
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Example:
        return cls(
            arguments=data["arguments"],
            valid=bool(data["valid"]),
            rule=data.get("rule"),
            path=tuple(data.get("path") or ()),
            detail=data.get("detail") or "",
            raw=data.get("raw"),
            note=data.get("note") or "",
        )


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem, with the minimal example that shows it.

    Args:
        kind: one of :data:`KINDS`.
        example: the (shrunk) argument set.
        message: what went wrong, in words.
        result_text: the tool result's text, when there was a result.
        exception: what the tool raised (or what escaped the loop), with its traceback.
        tool: the tool's name.
        reference: ``module:attribute`` of the tool when it can be imported, else None.
        seed: the seed of the run that found it.
        bucket: what tells this problem apart from others of its kind (the exception's class,
            the rule broken, the way a text is unhelpful).
    """

    kind: str
    example: Example
    message: str
    result_text: str | None = None
    exception: BaseException | None = field(default=None, compare=False, repr=False)
    tool: str = ""
    reference: str | None = None
    seed: int | None = None
    bucket: str = ""

    def to_json(self) -> dict[str, Any]:
        """The finding as JSON data (with its reproduction test as text)."""
        return {
            "kind": self.kind,
            "tool": self.tool,
            "message": self.message,
            "arguments": self.example.arguments,
            "raw_arguments": self.example.raw,
            "valid": self.example.valid,
            "rule": self.example.rule,
            "path": list(self.example.path),
            "note": self.example.note,
            "result_text": self.result_text,
            "exception": None if self.exception is None else f"{type(self.exception).__name__}: {self.exception}",
            "seed": self.seed,
            "reproduction": self.reproduction(),
        }

    def reproduction(self) -> str:
        """A pytest test that fails while the problem is there, ready to paste into a test file.

        It sends the finding's arguments (as a literal) through :func:`loopkit.run` with a
        scripted model and asserts what the finding says should hold.
        """
        module, _, attr = (self.reference or "").partition(":")
        name = attr.split(".")[-1] if attr else self.tool
        imports = ["import loopkit", "from loopkit.fakes import ScriptedProvider"]
        if module:
            imports.append(f"from {module} import {attr.split('.')[0]}")
        else:
            imports.append(f"from your_tools import {name}  # where the tool {self.tool!r} lives")
        target = attr if attr else name
        sent = self.example.raw if self.example.raw is not None else self.example.arguments
        literal = _literal(sent)
        test = re.sub(r"\W+", "_", f"test_{self.tool}_{self.kind}_{self.bucket}".lower()).strip("_")
        lines = [
            *imports,
            "",
            "",
            f"def {test}():",
            f'    """Found by loopkit fuzz (seed {self.seed}): {_docline(self.message)}"""',
            f"    arguments = {literal}",
            f"    model = ScriptedProvider([loopkit.Turn(tool_calls=[loopkit.call({self.tool!r}, arguments)]), loopkit.Turn(text=\"done\")])",
        ]
        if self.kind == "bad_return":
            declared = re.search(r"declared to return (\w+)", self.message)
            lines[-1] = f"    value = {target}(**arguments)  # the function itself, as the loop calls it"
            lines.append(f"    assert isinstance(value, {declared.group(1) if declared else 'object'}), value")
            return "\n".join(lines) + "\n"
        if self.kind == "escaped_exception":
            lines.append(f"    loopkit.run(model, \"go\", tools=[{target}], max_iterations=2)  # raised {_exc_name(self.exception)} here")
            return "\n".join(lines) + "\n"
        lines += [
            f"    result = loopkit.run(model, \"go\", tools=[{target}], max_iterations=2)",
            "    (answer,) = [m for m in result.messages if isinstance(m, loopkit.ToolResultMessage)]",
        ]
        if self.kind == "valid_rejected":
            lines.append("    assert not answer.is_error, answer.text")
        elif self.kind == "invalid_accepted":
            lines.append(f"    assert answer.is_error, {'arguments breaking ' + str(self.example.rule) + ' were accepted'!r}")
        else:
            culprit = re.search(r"does not name '([^']+)'", self.message)
            if culprit:
                lines.append(f"    assert answer.is_error and {culprit.group(1)!r} in answer.text, answer.text")
            else:
                lines.append("    assert answer.is_error and len(answer.text.split()) > 1, answer.text  # says what was wrong")
        return "\n".join(lines) + "\n"


def _literal(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 2000 else f"json.loads({json.dumps(value, ensure_ascii=True)!r})  # import json"


def _docline(text: str) -> str:
    text = " ".join(text.split()).replace('"""', "'''").replace("\\", "\\\\")
    return text if len(text) <= 120 else text[:119] + "…"


def _exc_name(exc: BaseException | None) -> str:
    return "an exception" if exc is None else type(exc).__name__


@dataclass(slots=True)
class FuzzReport:
    """What a fuzz run of one tool found.

    Attributes:
        target: the tool's name.
        seed: the seed that reproduces the run.
        examples: how many argument sets ran (edge cases, replayed findings and generated sets).
        valid_examples / invalid_examples: how they split.
        edge_examples: how many of them came from :func:`~loopkit.strategies.edge_cases` and the
            raw-text variants (duplicate keys, lone surrogates, numbers as strings).
        replayed: findings of earlier runs replayed first from hypothesis's example database.
        expected_errors: error results the tool gave on purpose (``expect_errors=``), not findings.
        findings: one per distinct problem (kind and cause), each with a shrunk example.
        reference: ``module:attribute`` of the tool when known.
    """

    target: str
    seed: int
    examples: int = 0
    valid_examples: int = 0
    invalid_examples: int = 0
    edge_examples: int = 0
    replayed: int = 0
    expected_errors: int = 0
    findings: list[Finding] = field(default_factory=list)
    reference: str | None = None

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "reference": self.reference,
            "seed": self.seed,
            "examples": self.examples,
            "valid_examples": self.valid_examples,
            "invalid_examples": self.invalid_examples,
            "edge_examples": self.edge_examples,
            "replayed": self.replayed,
            "expected_errors": self.expected_errors,
            "ok": self.ok,
            "findings": [f.to_json() for f in self.findings],
        }

    def summary(self) -> str:
        """Every finding in words, with its arguments and the seed."""
        lines = [f"loopkit fuzz found {len(self.findings)} problem(s) in tool {self.target!r} (seed {self.seed}):"]
        for f in self.findings:
            sent = f.example.raw if f.example.raw is not None else json.dumps(f.example.arguments, ensure_ascii=False, default=str)
            lines.append(f"- {f.kind}: {f.message}\n    arguments: {sent}")
        lines.append(f"rerun with fuzz(..., seed={self.seed}); each finding's .reproduction() is a test to paste")
        return "\n".join(lines)

    def raise_for_findings(self) -> None:
        """Raise :class:`FuzzFailure` (an AssertionError) listing every finding, for use in a test.

        When the tool raised, the error carries that exception's traceback with loopkit's own
        frames removed, so the traceback pytest shows ends at the line of the tool that failed.
        """
        raise_for_findings(self)


class FuzzFailure(AssertionError):
    """What :meth:`FuzzReport.raise_for_findings` raises; ``findings`` lists the problems."""

    def __init__(self, message: str, findings: list[Finding]) -> None:
        super().__init__(message)
        self.findings = findings


def raise_for_findings(*reports: Any) -> None:
    """Raise :class:`FuzzFailure` for the findings of these reports (:class:`FuzzReport` or
    :class:`ToolsetReport`); do nothing when there are none."""
    flat: list[FuzzReport] = []
    for r in reports:
        flat.extend(r.reports if isinstance(r, ToolsetReport) else [r])
    bad = [r for r in flat if r.findings]
    if not bad:
        return
    message = "\n\n".join(r.summary() for r in bad)
    findings = [f for r in bad for f in r.findings]
    error = FuzzFailure(message, findings)
    # the first exception raised inside the user's code (not, say, a TypeError from the call itself)
    for f in findings:
        tb = _user_frames(f.exception.__traceback__) if f.exception is not None else None
        if tb is not None:
            error.add_note(f"the traceback below is that of {type(f.exception).__name__}: {f.exception} (finding: {f.kind})")
            raise error.with_traceback(tb) from None
    raise error


_LOOPKIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback without loopkit's own frames (the loop, the tool wrapper)."""
    frames = []
    while tb is not None:
        if not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_LOOPKIT + os.sep):
            frames.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(frames):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


@dataclass(slots=True)
class ToolsetReport:
    """What fuzzing several tools found: one :class:`FuzzReport` per tool."""

    reports: list[FuzzReport] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.reports)

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.reports for f in r.findings]

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "tools": [r.to_json() for r in self.reports]}

    def raise_for_findings(self) -> None:
        """Like :meth:`FuzzReport.raise_for_findings`, over every tool."""
        raise_for_findings(self)


__all__ = ["KINDS", "Example", "Finding", "FuzzFailure", "FuzzReport", "ToolsetReport", "raise_for_findings"]
