"""What a probe reports: rules cited, failures with the request that shows them, case results."""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import LoopkitError

Status = Literal["pass", "fail", "not-applicable"]


def heading_anchor(heading: str) -> str:
    """The anchor mkdocs (Python-Markdown's toc) gives a heading."""
    text = unicodedata.normalize("NFKD", heading.replace("`", "")).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


@dataclass(slots=True, frozen=True)
class Rule:
    """A rule of the loop contract, cited by its docs page and heading."""

    page: str
    heading: str

    @property
    def link(self) -> str:
        """A relative link to the rule (``loop-contract.md#22-calls-run-...``)."""
        return f"{self.page}#{heading_anchor(self.heading)}"

    def __str__(self) -> str:
        return f"{self.page} § {self.heading.replace('`', '')}"


@dataclass(slots=True, kw_only=True)
class Failure:
    """One broken rule: what was wrong, the request that shows it, and expected against actual."""

    check: str
    rule: Rule
    message: str
    request: int | None = None
    """The number of the request that shows it (1-based, in the case's request log)."""
    body: Any = None
    """That request's JSON body."""
    expected: Any = None
    actual: Any = None

    @property
    def diff(self) -> str:
        """``expected`` against ``actual`` as a unified diff of their JSON ("" when neither is set)."""
        if self.expected is None and self.actual is None:
            return ""
        a = _pretty(self.expected).splitlines()
        b = _pretty(self.actual).splitlines()
        return "\n".join(difflib.unified_diff(a, b, "expected", "sent" if self.request else "actual", lineterm="", n=2))

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "rule": str(self.rule),
            "link": self.rule.link,
            "message": self.message,
            "request": self.request,
            "body": self.body,
            "expected": self.expected,
            "actual": self.actual,
        }


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True, default=str)


@dataclass(slots=True, kw_only=True)
class CaseResult:
    """How one case ended: pass, fail (with its failures) or not-applicable (with the reason)."""

    case: str
    description: str
    status: Status
    reason: str = ""
    """Why the case does not apply, or a one-line summary of a failure or a pass (calls taken)."""
    failures: list[Failure] = field(default_factory=list)
    checks: tuple[str, ...] = ()
    rules: tuple[Rule, ...] = ()
    model_calls: int = 0
    output: str | None = None
    agent_error: str | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def explain(self) -> str:
        """A plain-text account of a failure (what, where, the diff)."""
        lines = [f"probe case {self.case!r} failed ({self.description}):"]
        shown: set[int] = set()
        for f in self.failures:
            lines.append(f"- {f.message}")
            lines.append(f"  rule: {f.rule} ({f.rule.link})")
            if f.request is not None and f.request not in shown:
                shown.add(f.request)
                lines.append(f"  request #{f.request}: {json.dumps(f.body, ensure_ascii=False)[:2000]}")
            if f.diff:
                lines.extend("  " + line for line in f.diff.splitlines())
        if self.agent_error:
            lines.append(f"agent: {self.agent_error}")
        return "\n".join(lines)

    def raise_for_failure(self) -> None:
        """Raise :class:`ProbeFailed` when the case failed."""
        if self.failed:
            raise ProbeFailed(self.explain(), result=self)

    def to_json(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "description": self.description,
            "status": self.status,
            "reason": self.reason,
            "rules": [{"rule": str(r), "link": r.link} for r in self.rules],
            "failures": [f.to_json() for f in self.failures],
            "model_calls": self.model_calls,
            "output": self.output,
            "agent_error": self.agent_error,
            "seconds": round(self.seconds, 4),
        }


class ProbeFailed(LoopkitError, AssertionError):
    """A probe case failed; ``result`` holds the whole case."""

    def __init__(self, message: str, *, result: CaseResult) -> None:
        super().__init__(message)
        self.result = result


@dataclass(slots=True, kw_only=True)
class ProbeReport:
    """Every case of one probe of one agent on one protocol."""

    agent: str
    protocol: str
    tools: list[str] = field(default_factory=list)
    """The tools the agent declared in its first request."""
    allowed: list[str] = field(default_factory=list)
    """The tools the probe's model was allowed to call."""
    results: list[CaseResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(r.failed for r in self.results)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def counts(self) -> dict[str, int]:
        out = {"pass": 0, "fail": 0, "not-applicable": 0}
        for r in self.results:
            out[r.status] += 1
        return out

    def result(self, case: str) -> CaseResult:
        for r in self.results:
            if r.case == case:
                return r
        raise KeyError(f"no case {case!r} in this report; it has {', '.join(r.case for r in self.results)}")

    def raise_for_failures(self) -> None:
        """Raise :class:`ProbeFailed` for the first failed case (all of them in the message)."""
        failed = [r for r in self.results if r.failed]
        if failed:
            raise ProbeFailed("\n\n".join(r.explain() for r in failed), result=failed[0])

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "protocol": self.protocol,
            "tools": self.tools,
            "allowed": self.allowed,
            "counts": self.counts(),
            "results": [r.to_json() for r in self.results],
        }
