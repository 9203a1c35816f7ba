"""Adapter conformance: does a Provider map loopkit's requests and every stream of its wire
protocol the way the protocol requires?

Run it from the command line (``loopkit conformance TARGET --protocol P``), from pytest
(``pytest --loopkit-adapter=module:factory --loopkit-protocol=P``), or in code::

    from loopkit.conformance import run_suite
    report = run_suite("mypkg.adapters:make_provider", "anthropic")
    assert report.ok, report.failing()

A target is a factory: a callable taking ``transport=`` (an httpx transport answering in
process) and/or ``base_url=`` (a simulator served on 127.0.0.1), optionally ``retry=``, and
returning a :class:`~loopkit.provider.Provider`; or the name of a built-in adapter.
"""

from __future__ import annotations

from ._case import Case, CaseResult, Context, Mismatch
from ._cases import CASE_IDS, CASES
from ._factory import builtin_factory, resolve_factory
from ._harness import Exchange, Harness
from ._suite import Suite, SuiteReport, run_suite
from ._wire import PROTOCOLS, VARIANTS, WIRES, Wire

__all__ = [
    "CASES",
    "CASE_IDS",
    "PROTOCOLS",
    "WIRES",
    "Case",
    "CaseResult",
    "Context",
    "Exchange",
    "Harness",
    "Mismatch",
    "Suite",
    "SuiteReport",
    "VARIANTS",
    "Wire",
    "builtin_factory",
    "resolve_factory",
    "run_suite",
]
