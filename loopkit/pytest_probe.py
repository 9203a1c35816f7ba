"""pytest plugin: each probe case of an agent becomes a test item.

Mark a test with the agent and protocol, and take the ``loopkit_probe_case`` fixture; the test
is collected once per case (``test_agent[anthropic-valid_call]``), a not-applicable case is
skipped with its reason, and the fixture gives the :class:`~loopkit.probe.CaseResult`::

    @pytest.mark.loopkit_probe(agent=my_agent, protocol="anthropic", tools=["get_weather"])
    def test_my_agent(loopkit_probe_case):
        loopkit_probe_case.raise_for_failure()

``agent`` is a keyword (a function as a marker's only positional argument would be taken for the
test itself); ``protocol`` may be a list (one item per protocol and case). Other keyword arguments go to
:class:`~loopkit.probe.Probe`. The agent runs once per case in the session, sharing one simulator
per agent and protocol. loopkit is imported lazily.
"""

from __future__ import annotations

from typing import Any

import pytest

_PROBES = pytest.StashKey[dict]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "loopkit_probe(agent=..., protocol=..., **options): run the test once per probe case of the agent (fixture loopkit_probe_case)"
    )
    config.stash[_PROBES] = {}

    def close_all() -> None:
        for p in config.stash[_PROBES].values():
            p.close()

    config.add_cleanup(close_all)


def _marker_args(marker: pytest.Mark) -> tuple[Any, list[str], dict[str, Any]]:
    from loopkit.errors import UsageError

    options = dict(marker.kwargs)
    if marker.args or "agent" not in options:
        raise UsageError("@pytest.mark.loopkit_probe needs agent=... (a keyword) and protocol='...'")
    agent = options.pop("agent")
    protocol = options.pop("protocol", None)
    if protocol is None:
        raise UsageError("@pytest.mark.loopkit_probe needs protocol='...' (or a list of protocols)")
    protocols = [protocol] if isinstance(protocol, str) else list(protocol)
    return agent, protocols, options


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "loopkit_probe_case" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("loopkit_probe")
    if marker is None:
        return
    from loopkit.probe import CASES

    agent, protocols, options = _marker_args(marker)
    chosen = options.get("cases")
    names = ["text_answer"] + [n for n in chosen if n != "text_answer"] if chosen else [c.name for c in CASES]
    names += [c.name for c in options.get("extra_cases", ()) if c.name not in names]
    params = [(p, n) for p in protocols for n in names]
    metafunc.parametrize("loopkit_probe_case", params, indirect=True, ids=[f"{p}-{n}" for p, n in params])


@pytest.fixture
def loopkit_probe_case(request: pytest.FixtureRequest) -> Any:
    """The :class:`~loopkit.probe.CaseResult` of this item's probe case (skips when not applicable)."""
    from loopkit.errors import UsageError
    from loopkit.probe import Probe

    marker = request.node.get_closest_marker("loopkit_probe")
    if marker is None or not hasattr(request, "param"):
        raise UsageError("the loopkit_probe_case fixture needs @pytest.mark.loopkit_probe(agent=..., protocol=...) on the test")
    agent, _, options = _marker_args(marker)
    protocol, case = request.param
    probes = request.config.stash[_PROBES]
    key = (request.node.nodeid.split("[")[0], protocol)
    probe = probes.get(key)
    if probe is None:
        probe = probes[key] = Probe(agent, protocol, **options)
    result = probe.run_case(case)
    if result.status == "not-applicable":
        pytest.skip(f"{case}: {result.reason}")
    return result
