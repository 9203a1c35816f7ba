"""loopkit's pytest plugin (entry point ``pytest11``): fixtures for scripted providers, loopback
simulators, a deterministic clock and deterministic snapshots.

- ``scripted_provider(turns, **options)``: a ScriptedProvider whose unused turns fail the test
  at teardown; scripted ``Delay`` waits are recorded in ``.sleeps``, never slept.
- ``loopkit_simulator(protocol, turns, **options)``: a simulator on 127.0.0.1, stopped at
  teardown, failing the test on unused turns; scripted delays are not slept either.
- ``loopkit_clock``: a TickClock for ``run(..., clock=...)`` (timestamps 1, 2, 3, ...).
- ``loopkit_snapshot``: syrupy's ``snapshot`` with :class:`loopkit.snapshot.LoopkitExtension`
  (timestamps left out, ids renumbered), for runs, messages and events.
- marker ``loopkit_incomplete_ok``: unused turns do not fail the test.

At teardown a fake that was asked for more turns than its script holds raises the first
:class:`~loopkit.errors.ScriptExhausted`, unless that very error already failed the test: a
client that swallowed it (an official SDK that retries) cannot hide it.

Everything is described with examples in docs/pytest.md. loopkit is imported lazily inside the
fixtures; the plugin keeps no global state.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


_CALL_ERROR = pytest.StashKey["BaseException | None"]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call":
        item.stash[_CALL_ERROR] = call.excinfo.value if call.excinfo is not None else None
    return report


def _raise_harness_errors(request: pytest.FixtureRequest, fakes: list[Any]) -> bool:
    """Raise the first overrun of ``fakes`` unless it already failed the test; True when one
    happened (it is reported then, so ``assert_complete`` need not report it again)."""
    from loopkit.errors import raise_first

    failed_with = request.node.stash.get(_CALL_ERROR, None)
    happened = False
    for fake in fakes:
        errors = fake.harness_errors if hasattr(fake, "harness_errors") else fake.simulator.harness_errors
        raise_first(errors, failed_with)
        happened = happened or bool(errors)
    return happened


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "loopkit_incomplete_ok: do not fail the test when scripted turns are left unused")


@pytest.fixture
def loopkit_clock() -> Any:
    """A deterministic millisecond clock (1, 2, 3, ...) for ``run(..., clock=...)``."""
    from loopkit.runtime import TickClock

    return TickClock(start=1)


class ScriptedProviders:
    """The ``scripted_provider`` fixture: call it with turns (and ScriptedProvider's options)
    for a provider. ``made`` lists the providers; ``sleeps`` every wait they were scripted to
    make (``Delay`` faults), which are recorded instead of slept."""

    def __init__(self) -> None:
        self.made: list[Any] = []
        self.sleeps: list[float] = []

    def __call__(self, turns: Any, **options: Any) -> Any:
        from loopkit.fakes import ScriptedProvider

        options.setdefault("sleep", self.sleeps.append)
        provider = ScriptedProvider(turns, **options)
        self.made.append(provider)
        return provider


@pytest.fixture
def scripted_provider(request: pytest.FixtureRequest) -> Iterator[ScriptedProviders]:
    """Factory: ``scripted_provider(turns, **options)`` gives a ScriptedProvider whose unused
    turns fail the test at teardown (mark the test ``loopkit_incomplete_ok`` to allow them), as
    does a request after its script ran out (always). Scripted ``Delay`` waits are recorded in ``scripted_provider.sleeps``, never slept."""
    factory = ScriptedProviders()
    yield factory
    if not _raise_harness_errors(request, factory.made) and request.node.get_closest_marker("loopkit_incomplete_ok") is None:
        for provider in factory.made:
            provider.assert_complete()


class Simulators:
    """The ``loopkit_simulator`` fixture: call it with a protocol and turns for a started
    ``ServedSimulator`` (``.base_url``, ``.requests``). ``sleeps`` records scripted delays."""

    def __init__(self) -> None:
        self.served: list[Any] = []
        self.sleeps: list[float] = []

    def __call__(self, protocol: str, turns: Any, **options: Any) -> Any:
        import loopkit.simulators as simulators

        options.setdefault("sleep", self.sleeps.append)
        sim = simulators.serve(protocol, turns, **options).start()
        self.served.append(sim)
        return sim


@pytest.fixture
def loopkit_simulator(request: pytest.FixtureRequest) -> Iterator[Simulators]:
    """Factory: ``loopkit_simulator(protocol, turns, **options)`` starts a simulator on
    127.0.0.1 (``.base_url``, ``.requests``); it stops at teardown and fails the test on unused
    turns (unless marked ``loopkit_incomplete_ok``). Scripted delays are recorded, not slept."""
    factory = Simulators()
    yield factory
    for sim in factory.served:
        sim.stop()
    if not _raise_harness_errors(request, factory.served) and request.node.get_closest_marker("loopkit_incomplete_ok") is None:
        for sim in factory.served:
            sim.assert_complete()


@pytest.fixture
def loopkit_snapshot(request: pytest.FixtureRequest) -> Any:
    """syrupy's ``snapshot`` fixture with :class:`loopkit.snapshot.LoopkitExtension`: runs,
    messages and events are stored without timestamps and with ids renumbered, so the snapshot
    holds from one run to the next (``assert result == loopkit_snapshot``)."""
    try:
        snapshot = request.getfixturevalue("snapshot")
    except pytest.FixtureLookupError:
        pytest.fail("the loopkit_snapshot fixture needs syrupy: pip install syrupy", pytrace=False)
    from loopkit.snapshot import LoopkitExtension

    return snapshot.use_extension(LoopkitExtension)
