"""Scenarios: small YAML files (or objects built in code) that say what the model does, what the
user queues, and what must follow; run through the ScriptedProvider and every wire protocol's
adapter and simulator. The format is documented with examples in ``scenarios/README.md``.

::

    from loopkit.scenario import Scenario

    s = Scenario.load("scenarios/errors/unknown_tool.yaml")
    result = s.run(provider="anthropic")
    assert result.passed, result.report()
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HarnessError, ScenarioError, UsageError
from ..messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, ToolResultMessage, UserMessage
from ..script import Delay, HttpFault, MidStreamError, Truncate, Turn
from .checks import Failure, check_all
from .loader import Problem, ScenarioFileError, discover, load_path, load_text, validate
from .model import PROVIDER_NAMES, ScenarioModel, check_provider
from .providers import available, skip_reason
from .runner import RunRecord, Toolbox, execute


@dataclass(slots=True)
class ScenarioResult:
    """One scenario on one provider.

    Attributes:
        status: ``passed``, ``failed``, ``skipped``, ``xfailed`` (failed as the scenario's
            ``xfail`` predicts) or ``xpassed`` (an xfail that passed: strict, so a failure).
        failures: every expectation the run did not meet (empty when it met them all, which for
            an ``xpassed`` result is the problem).
        skip_reason / xfail_reason: why the provider was skipped / is expected to fail.
        record: the run itself (None when skipped).
    """

    name: str
    label: str
    provider: str
    status: str
    failures: list[Failure] = field(default_factory=list)
    skip_reason: str | None = None
    xfail_reason: str | None = None
    record: RunRecord | None = None

    @property
    def passed(self) -> bool:
        """True when the outcome is what the scenario says (passed, or failed as xfail predicts)."""
        return self.status in ("passed", "xfailed")

    def __rich__(self) -> Any:
        from .render import failure_report

        return failure_report(self)

    def report(self, width: int = 120) -> str:
        """The failure report as plain text."""
        from .render import failure_report, to_text

        return to_text(failure_report(self), width)


class Scenario:
    """A validated scenario. Build one from a file (:meth:`load`), YAML text (:meth:`parse`) or
    keyword arguments with the file's keys (``script`` may hold :class:`Turn` objects)."""

    __slots__ = ("model", "source", "_toolbox")

    def __init__(self, model: ScenarioModel | None = None, /, *, source: str | Path | None = None, **fields: Any) -> None:
        if model is None:
            if "script" in fields:
                fields["script"] = [_turn_data(t) for t in fields["script"]]
            model = validate(fields, source=str(source or "<code>"))
        self.model = model
        self.source = Path(source) if source is not None else None
        self._toolbox: Toolbox | None = None

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        return cls(load_path(path), source=path)

    @classmethod
    def parse(cls, text: str, *, source: str = "<string>") -> Scenario:
        return cls(load_text(text, source=source), source=None)

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def label(self) -> str:
        """The name, prefixed by the topic folder when loaded from a file (``errors/unknown_tool``)."""
        if self.source is not None and self.source.parent.name not in ("", ".", "scenarios"):
            return f"{self.source.parent.name}/{self.name}"
        return self.name

    def providers(self) -> list[str]:
        """Every provider name (available or not); :meth:`run` skips the ones that cannot run it."""
        return list(PROVIDER_NAMES)

    def skip_reason(self, provider: str) -> str | None:
        return skip_reason(provider, self.model)

    def prepare(self) -> Toolbox:
        """Build the scenario's tools (once), importing its ``module:function`` references.

        Raises:
            ScenarioError: a reference does not import; the message names the file.
        """
        if self._toolbox is None:
            try:
                self._toolbox = Toolbox(self.model)
            except ScenarioError as exc:
                if self.source is None:
                    raise
                raise ScenarioError(f"{self.source}: {exc}") from None
        return self._toolbox

    def run(self, provider: str = "scripted", *, driver: str = "sync", snapshot: bool = False) -> ScenarioResult:
        """Run on one provider and check every expectation.

        Args:
            provider: ``scripted`` or a protocol name (see :data:`PROVIDER_NAMES`).
            driver: ``sync`` (:func:`loopkit.run`) or ``async`` (:func:`loopkit.arun`).
            snapshot: also compare the transcript with the stored syrupy snapshot when the
                scenario says ``expect.snapshot: true`` (what ``loopkit run`` does; under pytest
                the plugin compares through syrupy's ``snapshot`` fixture instead, so that
                ``--snapshot-update`` works). Needs syrupy and a scenario loaded from a file.

        A harness error (the scenario's script runs out ...) is raised, prefixed with the
        scenario and provider, never reported as a failed expectation.
        """
        if driver not in ("sync", "async"):
            raise UsageError(f"driver must be 'sync' or 'async', not {driver!r}")
        try:
            check_provider(provider)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        xfail = self.model.xfail.get(provider)
        reason = self.skip_reason(provider)
        if reason is not None:
            return ScenarioResult(self.name, self.label, provider, "skipped", skip_reason=reason, xfail_reason=xfail)
        try:
            record = execute(self.model, provider, self.prepare(), driver=driver)
        except HarnessError as exc:  # the scenario's setup is wrong: say which scenario
            if exc.args and isinstance(exc.args[0], str):
                exc.args = (f"scenario {self.label} [{provider}]: {exc.args[0]}", *exc.args[1:])
            raise
        failures = check_all(self.model.expect, record)
        if snapshot and self.model.expect.snapshot and not failures:
            from .snapshots import compare

            problem = compare(self.source, self.name, provider, transcript_data(ScenarioResult(self.name, self.label, provider, "passed", record=record)))
            if problem is not None:
                failures.append(problem)
        if xfail is not None:
            status = "xfailed" if failures else "xpassed"
        else:
            status = "failed" if failures else "passed"
        return ScenarioResult(self.name, self.label, provider, status, failures, None, xfail, record)

    def run_all(self, providers: Sequence[str] | None = None, *, driver: str = "sync", snapshot: bool = False) -> list[ScenarioResult]:
        """Run on each of ``providers`` (default: all); see :meth:`run`."""
        return [self.run(p, driver=driver, snapshot=snapshot) for p in (providers or PROVIDER_NAMES)]

    def __repr__(self) -> str:
        return f"Scenario({self.label!r})"


def load_all(paths: Iterable[str | Path]) -> list[Scenario]:
    """Every scenario under ``paths``; all files are read, and every problem of every file is
    reported together in one :class:`ScenarioFileError`."""
    out: list[Scenario] = []
    problems: list[Problem] = []
    for p in discover(paths):
        try:
            out.append(Scenario.load(p))
        except ScenarioFileError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ScenarioFileError(problems)
    return out


def transcript_data(result: ScenarioResult) -> dict[str, Any]:
    """The whole run as provider-neutral data (for snapshots): the end reason, the number of
    model calls, and every message with its role and content. Tool-call ids become positions
    (``r1c2``) and what only one wire says (api, model, usage, response ids, error wording) is
    left out, so every provider of a scenario must produce the very same transcript."""
    rec = result.record
    if rec is None or rec.result is None:
        return {"status": result.status}
    ref = {c.id: f"r{c.round}c{c.call}" for c in rec.calls}
    messages: list[dict[str, Any]] = []
    for m in rec.result.messages:
        if isinstance(m, UserMessage):
            messages.append({"role": "user", "text": m.text})
        elif isinstance(m, AssistantMessage):
            content: list[Any] = []
            for b in m.content:
                if isinstance(b, TextContent):
                    content.append({"text": b.text})
                elif isinstance(b, ThinkingContent):
                    content.append({"thinking": b.thinking})
                elif isinstance(b, ToolCall):
                    content.append({"call": ref.get(b.id, "?"), "name": b.name, "arguments": b.arguments if b.raw_arguments is None else b.raw_arguments})
            messages.append({"role": "assistant", "stop_reason": m.stop_reason, "content": content})
        elif isinstance(m, ToolResultMessage):
            messages.append({"role": "toolResult", "call": ref.get(m.tool_call_id, "?"), "name": m.tool_name, "is_error": m.is_error, "text": m.text})
    return {"reason": rec.result.reason, "model_calls": rec.result.model_calls, "messages": messages}


def _turn_data(turn: Any) -> Any:
    """A :class:`Turn` built in code, as the data form of the file format."""
    if not isinstance(turn, Turn):
        return turn
    data: dict[str, Any] = {}
    for f in ("text", "thinking", "thinking_signature", "stop_reason", "error", "chunk_size"):
        if getattr(turn, f) is not None:
            data[f] = getattr(turn, f)
    if turn.aborted:
        data["aborted"] = True
    if turn.tool_calls:
        data["tool_calls"] = [
            {k: v for k, v in (("name", c.name), ("arguments", c.arguments if isinstance(c.arguments, str) else dict(c.arguments)), ("id", c.id), ("thought_signature", c.thought_signature)) if v is not None}
            for c in turn.tool_calls
        ]
    if turn.usage is not None:
        u = turn.usage
        data["usage"] = {"input": u.input, "output": u.output, "cache_read": u.cache_read, "cache_write": u.cache_write}
    faults = []
    for fault in turn.faults:
        key = {HttpFault: "http", MidStreamError: "mid_stream_error", Truncate: "truncate", Delay: "delay"}[type(fault)]
        if getattr(fault, "body", None) is not None:
            raise UsageError("a scenario cannot carry HttpFault(body=...): the file format has no raw error bodies")
        values = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in dataclasses.asdict(fault).items() if v is not None and v != {} and k != "body"}
        faults.append({key: values})
    if faults:
        data["faults"] = faults
    return data


__all__ = [
    "Failure",
    "Problem",
    "Scenario",
    "ScenarioFileError",
    "ScenarioModel",
    "ScenarioResult",
    "available",
    "discover",
    "load_all",
    "transcript_data",
]
