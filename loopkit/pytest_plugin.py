"""loopkit's pytest plugin (entry point ``pytest11``): fixtures for scripted providers and
loopback simulators that check, at teardown, that every scripted turn was used.

At teardown a fake that was asked for more turns than its script holds raises the first
:class:`~loopkit.errors.ScriptExhausted`, unless that very error already failed the test: a
client that swallowed it (an official SDK that retries) cannot hide it.

loopkit is imported lazily inside the fixtures; the plugin keeps no global state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
    config.addinivalue_line("markers", "loopkit_incomplete_ok: do not fail when scripted turns are left unused")


@pytest.fixture
def loopkit_clock() -> Any:
    """A deterministic millisecond clock (1, 2, 3, ...) for ``run(..., clock=...)``."""
    from loopkit.runtime import TickClock

    return TickClock(start=1)


@pytest.fixture
def scripted_provider(request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """Factory: ``scripted_provider(turns, **options)`` gives a ScriptedProvider whose unused turns
    fail the test at teardown (mark the test ``loopkit_incomplete_ok`` to allow them), as does a
    request after its script ran out (always)."""
    from loopkit.fakes import ScriptedProvider

    made: list[Any] = []

    def factory(turns: Any, **options: Any) -> Any:
        provider = ScriptedProvider(turns, **options)
        made.append(provider)
        return provider

    yield factory
    if not _raise_harness_errors(request, made) and request.node.get_closest_marker("loopkit_incomplete_ok") is None:
        for provider in made:
            provider.assert_complete()


@pytest.fixture
def loopkit_simulator(request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """Factory: ``loopkit_simulator(protocol, turns, **options)`` starts a simulator on 127.0.0.1
    (``.base_url``, ``.requests``); it stops at teardown and fails the test on unused turns, and
    on a request that found the script exhausted (with that ScriptExhausted, even when a client
    swallowed its 500)."""
    import simulators

    served: list[Any] = []

    def factory(protocol: str, turns: Any, **options: Any) -> Any:
        sim = simulators.serve(protocol, turns, **options).start()
        served.append(sim)
        return sim

    yield factory
    for sim in served:
        sim.stop()
    if not _raise_harness_errors(request, served) and request.node.get_closest_marker("loopkit_incomplete_ok") is None:
        for sim in served:
            sim.assert_complete()
