"""pytest plugin (entry point ``pytest11``: ``loopkit_scenarios``): scenario files as test items.

Every ``*.yaml``/``*.yml`` file under the configured folders (ini option
``loopkit_scenario_paths``, default ``scenarios``, relative to the rootdir) is collected, one item
per scenario × provider, with ids like ``scenarios/errors/unknown_tool.yaml::unknown_tool[anthropic]``.
A provider that cannot express the scenario is a skip with the reason; a scenario's ``xfail`` entry
is a strict xfail; ``expect.snapshot: true`` compares the provider-neutral transcript with a
syrupy snapshot (``__snapshots__/`` next to the file). ``--loopkit-provider P`` (repeatable) keeps
only those providers. Items hold no shared state, so ``pytest -n auto`` spreads them.

loopkit is imported lazily; the plugin keeps its settings in ``config.stash``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

_ROOTS = pytest.StashKey[list[Path]]()
_PROVIDERS = pytest.StashKey[list[str]]()


class ScenarioFailed(AssertionError):
    """A scenario's run did not meet its expectations; the message is the failure report."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "loopkit_scenario_paths",
        type="linelist",
        default=["scenarios"],
        help="folders (relative to the rootdir) whose YAML files are loopkit scenarios",
    )
    group = parser.getgroup("loopkit")
    group.addoption(
        "--loopkit-provider",
        action="append",
        dest="loopkit_providers",
        default=None,
        metavar="NAME",
        help="run scenario items only on this provider (repeatable): scripted, openai_chat, openai_responses, anthropic, gemini, bedrock",
    )


def pytest_configure(config: pytest.Config) -> None:
    from loopkit.scenario.model import PROVIDER_NAMES, check_provider

    config.stash[_ROOTS] = [(config.rootpath / p).resolve() for p in config.getini("loopkit_scenario_paths")]
    chosen = config.getoption("loopkit_providers") or list(PROVIDER_NAMES)
    for name in chosen:
        try:
            check_provider(name)
        except ValueError as exc:
            raise pytest.UsageError(f"--loopkit-provider: {exc}") from None
    config.stash[_PROVIDERS] = chosen


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    resolved = file_path.resolve()
    if any(resolved.is_relative_to(root) for root in parent.config.stash[_ROOTS]):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    """One scenario file: an item per provider."""

    def collect(self) -> Any:
        from loopkit.scenario import Scenario

        scenario = Scenario.load(self.path)
        for provider in self.config.stash[_PROVIDERS]:
            item = ScenarioItem.from_parent(self, name=f"{scenario.name}[{provider}]", callobj=_run_item)
            item.scenario = scenario
            item.provider = provider
            reason = scenario.skip_reason(provider)
            if reason is not None:
                item.add_marker(pytest.mark.skip(reason=reason))
            xfail = scenario.model.xfail.get(provider)
            if xfail is not None:
                item.add_marker(pytest.mark.xfail(reason=xfail, strict=True))
            yield item

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        from loopkit.errors import ScenarioError

        if isinstance(excinfo.value, ScenarioError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class ScenarioItem(pytest.Function):
    """One scenario on one provider (a Function, so fixtures such as ``snapshot`` work)."""

    scenario: Any
    provider: str

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.name}"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ScenarioFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)


def run_and_check(scenario: Any, provider: str, request: pytest.FixtureRequest | None = None, *, driver: str = "sync") -> Any:
    """Run ``scenario`` on ``provider``; raise :class:`ScenarioFailed` (with the report) when an
    expectation is not met, skip when the provider cannot express it, and compare the snapshot
    when the scenario asks for one (and a ``request`` is given). xfail is left to the caller's
    pytest marker."""
    result = scenario.run(provider, driver=driver)
    if result.status == "skipped":
        pytest.skip(result.skip_reason)
    if result.failures:
        raise ScenarioFailed(result.report())
    if scenario.model.expect.snapshot and request is not None:
        from loopkit.scenario import transcript_data

        snapshot = request.getfixturevalue("snapshot")
        if not snapshot == transcript_data(result):
            diff = "\n".join(snapshot.get_assert_diff())
            raise ScenarioFailed(f"{scenario.label} [{provider}]: the transcript differs from its snapshot (--snapshot-update to accept)\n{diff}")
    return result


def _run_item(request: pytest.FixtureRequest) -> None:
    node = request.node
    run_and_check(node.scenario, node.provider, request)
