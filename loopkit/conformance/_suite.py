"""Run the conformance cases for one provider factory and protocol."""

from __future__ import annotations

import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from ._case import NON_STREAMED, Case, CaseResult, Context
from ._cases import CASES
from ._factory import ProviderFactory, did_you_mean, resolve_factory
from ._harness import Harness
from ._wire import VARIANTS, WIRES


@dataclass(slots=True, kw_only=True)
class SuiteReport:
    """The results of one suite run.

    Args:
        target: what was tested (a factory name).
        protocol: the wire protocol.
        results: one per case, in case order.
        streamed: whether the adapter asked for streamed answers (read from its requests; None
            when no case needed to know).
        variant: the model family the simulators answered as (None: the protocol's usual).
    """

    target: str
    protocol: str
    results: list[CaseResult] = field(default_factory=list)
    streamed: bool | None = None
    variant: str | None = None

    def counts(self) -> dict[str, int]:
        out = {"pass": 0, "fail": 0, "not-applicable": 0, "error": 0}
        for r in self.results:
            out[r.status] += 1
        return out

    @property
    def ok(self) -> bool:
        """No case failed or errored."""
        return all(r.status in ("pass", "not-applicable") for r in self.results)

    def failing(self) -> list[str]:
        """Ids of the cases that failed or errored."""
        return [r.case_id for r in self.results if r.status in ("fail", "error")]

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "protocol": self.protocol,
            "variant": self.variant,
            "streamed": self.streamed,
            "counts": self.counts(),
            "results": [r.to_json() for r in self.results],
        }


class Suite:
    """The cases bound to one provider factory and protocol.

    Args:
        target: a factory callable, ``"module:factory"``, or a built-in adapter name.
        protocol: the wire protocol the provider speaks (defaults to ``target`` when that is a
            built-in adapter name).
        served: run simulators on 127.0.0.1 even when the factory takes ``transport=``.
        cases: the cases to run (default: all).
        stream: for a built-in adapter name only: False builds it to ask for non-streamed answers
            (single JSON bodies), True (the default) for streamed ones. A factory decides that
            itself; either way the suite reads it from the requests the adapter sends, and the
            cases that only a stream can show are not applicable to a non-streamed adapter.
        variant: a model family whose answers differ from the protocol's usual ones (see
            :data:`loopkit.conformance.VARIANTS`): the simulators answer as it does and the cases
            read the wire as it takes it. ``"no-tool-result-status"`` (bedrock) is a model that
            refuses ``toolResult.status``, so an error result must say so in its text. A built-in
            adapter is built for it; a factory builds its own adapter for it.
    """

    def __init__(
        self,
        target: str | ProviderFactory,
        protocol: str | None = None,
        *,
        served: bool = False,
        cases: Iterable[Case] = CASES,
        stream: bool | None = None,
        variant: str | None = None,
    ) -> None:
        if protocol is None:
            if isinstance(target, str) and target in WIRES:
                protocol = target
            elif isinstance(target, str) and ":" not in target:
                raise UsageError(f"conformance: unknown adapter {target!r}{did_you_mean(target, WIRES)}; a target is a built-in adapter ({', '.join(WIRES)}) or module:factory")
            else:
                raise UsageError("conformance: name the wire protocol the provider speaks (--protocol)")
        if protocol not in WIRES:
            raise UsageError(f"conformance: unknown protocol {protocol!r}{did_you_mean(protocol, WIRES)}; expected one of {', '.join(WIRES)}")
        self.target = target if isinstance(target, str) else getattr(target, "__qualname__", repr(target))
        self.protocol = protocol
        self.variant = variant
        if variant is None:
            self.wire = WIRES[protocol]
        elif variant in VARIANTS.get(protocol, {}):
            self.wire = VARIANTS[protocol][variant]
        else:
            known = ", ".join(f"{v} ({p})" for p, vs in VARIANTS.items() for v in vs)
            raise UsageError(f"conformance: {protocol} has no variant {variant!r}{did_you_mean(variant, VARIANTS.get(protocol, {}))}; the variants are {known}")
        self.harness = Harness(resolve_factory(target, stream=stream, variant=variant), protocol, served=served, sim_options=self.wire.sim_options)
        self.cases = tuple(cases)
        self._probe: Any = None
        self._shape: str | None = None
        self._shape_checked = False

    def shape_problem(self) -> str | None:
        """Why the factory's provider cannot be a Provider at all (no ``stream``/``astream``), or
        None. Checked once, so a wrong shape is one clear error instead of one failure per case;
        a factory that raises is left to the cases, which report the exception."""
        if not self._shape_checked:
            self._shape_checked = True
            try:
                provider = self.provider()
            except Exception:
                return None
            self._shape = provider_shape_problem(provider)
        return self._shape

    def check_shape(self) -> None:
        """Raise :class:`UsageError` when the provider cannot be a Provider (see :meth:`shape_problem`)."""
        problem = self.shape_problem()
        if problem is not None:
            raise UsageError(f"conformance: {problem}")

    def provider(self) -> Any:
        """One provider from the factory, to read what it declares (``supports_parallel_tool_calls``)."""
        if self._probe is None:
            self._probe = self.harness.probe()
        return self._probe

    def case(self, case_id: str) -> Case:
        for c in self.cases:
            if c.id == case_id:
                return c
        raise UsageError(f"conformance: no case {case_id!r}")

    def run_case(self, case: Case) -> CaseResult:
        """Run one case (never raises for a provider's misbehaviour: that is a result)."""
        base = {"case_id": case.id, "statement": case.statement, "spec": case.spec, "protocol": self.protocol}
        problem = self.shape_problem()
        if problem is not None:
            return CaseResult(status="error", reason=problem, **base)
        try:
            reason = case.not_applicable(self.wire, self.provider())
            if reason is None and case.streamed_only and not self.harness.streams():
                reason = f"{NON_STREAMED} (its request {self.wire.streaming_switch}), so there is no stream for this case to act on"
            if reason is not None:
                return CaseResult(status="not-applicable", reason=reason, **base)
            ctx = Context(self.harness, self.wire)
            case.check(ctx)
        except Exception as exc:
            tb = traceback.extract_tb(exc.__traceback__)[-1]
            return CaseResult(status="error", reason=f"{type(exc).__name__}: {exc} (at {tb.filename}:{tb.lineno})", **base)
        if ctx.mismatches:
            return CaseResult(status="fail", mismatches=ctx.mismatches, reason="; ".join(ctx.notes), **base)
        return CaseResult(status="pass", reason="; ".join(ctx.notes), **base)

    def __iter__(self) -> Iterator[CaseResult]:
        for case in self.cases:
            yield self.run_case(case)

    def run(self) -> SuiteReport:
        """Every case; raises :class:`UsageError` first when the provider has the wrong shape."""
        self.check_shape()
        results = list(self)
        return SuiteReport(target=self.target, protocol=self.protocol, results=results, streamed=self.harness.known_streams, variant=self.variant)


def provider_shape_problem(provider: Any) -> str | None:
    """What keeps ``provider`` from being a :class:`~loopkit.provider.Provider`, or None."""
    from ..provider import BaseProvider

    name = type(provider).__qualname__
    has = {m: callable(getattr(provider, m, None)) for m in ("stream", "astream")}
    if isinstance(provider, BaseProvider) and type(provider).stream is BaseProvider.stream and type(provider).astream is BaseProvider.astream:
        has = {"stream": False, "astream": False}
    if has["stream"] and has["astream"]:
        return None
    missing = " and ".join(f"{m}()" for m, ok in has.items() if not ok)
    return (
        f"the factory's provider {name} has no {missing}: a Provider needs stream(request) (an iterator of "
        "stream events) and astream(request) (an async iterator); subclass loopkit.provider.BaseProvider "
        "and write either one to get the other"
    )


def select_cases(patterns: Iterable[str], cases: Iterable[Case] = CASES) -> tuple[Case, ...]:
    """The cases whose id is one of ``patterns`` or starts with one and a dot (``failure``, ``request.tool_choice``)."""
    cases = tuple(cases)
    chosen = []
    for pattern in patterns:
        found = [c for c in cases if c.id == pattern or c.id.startswith(pattern.rstrip(".") + ".")]
        if not found:
            raise UsageError(f"conformance: no case matches {pattern!r}; cases are {', '.join(c.id for c in cases)}")
        chosen.extend(c for c in found if c not in chosen)
    return tuple(c for c in cases if c in chosen)


def run_suite(target: str | ProviderFactory, protocol: str | None = None, *, served: bool = False, stream: bool | None = None, variant: str | None = None) -> SuiteReport:
    """Run every case against ``target`` speaking ``protocol``; see :class:`Suite`."""
    return Suite(target, protocol, served=served, stream=stream, variant=variant).run()
