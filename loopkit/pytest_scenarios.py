"""pytest plugin (entry point ``pytest11``: ``loopkit_scenarios``): scenario files as test items.

Collection is opt-in: nothing is collected until the ini option ``loopkit_scenarios`` names the
folders (or files) that hold scenarios, relative to the ini file's folder::

    [tool.pytest.ini_options]
    loopkit_scenarios = ["scenarios"]

Every ``*.yaml``/``*.yml`` file there is collected, one item per scenario × provider, with ids like
``scenarios/errors/unknown_tool.yaml::unknown_tool[anthropic]``. A provider that cannot express the
scenario is a skip with the reason; a scenario's ``xfail`` entry is a strict xfail;
``expect.snapshot: true`` compares the provider-neutral transcript with a syrupy snapshot
(``__snapshots__/<file>.ambr`` next to the file). ``--loopkit-provider P`` (repeatable)
deselects the other providers' items. Items hold no shared state, so ``pytest -n auto`` spreads
them. The fixtures, options and ini options are documented in docs/pytest.md.

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
        "loopkit_scenarios",
        type="paths",
        default=[],
        help="folders or files of loopkit scenario YAML files, relative to the ini file (none by default: nothing is collected)",
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
    roots = [Path(p).resolve() for p in config.getini("loopkit_scenarios")]
    missing = [str(p) for p in roots if not p.exists()]
    if missing:
        raise pytest.UsageError(f"loopkit_scenarios (ini option, relative to the ini file): no such file or folder: {', '.join(missing)}")
    config.stash[_ROOTS] = roots
    given = config.getoption("loopkit_providers")
    if not roots and not given:
        return  # a session without scenarios does not import the scenario package
    from loopkit.scenario.model import PROVIDER_NAMES, check_provider

    chosen = given or list(PROVIDER_NAMES)
    for name in chosen:
        try:
            check_provider(name)
        except ValueError as exc:
            raise pytest.UsageError(f"--loopkit-provider: {exc}") from None
    config.stash[_PROVIDERS] = chosen


def pytest_report_header(config: pytest.Config) -> str | None:
    roots = config.stash.get(_ROOTS, [])
    if not roots:
        return None
    return "loopkit scenarios: " + ", ".join(_shown(p, config.rootpath) for p in roots)


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    roots = parent.config.stash.get(_ROOTS, [])
    if not roots:
        return None
    resolved = file_path.resolve()
    if any(resolved == root or resolved.is_relative_to(root) for root in roots):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--loopkit-provider`` deselects the other providers' items (after syrupy has seen them
    all, so that their stored snapshots do not count as unused)."""
    chosen = set(config.stash.get(_PROVIDERS, ()))
    dropped = [i for i in items if isinstance(i, ScenarioItem) and i.provider not in chosen]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [i for i in items if not (isinstance(i, ScenarioItem) and i.provider not in chosen)]


class ScenarioFile(pytest.File):
    """One scenario file: an item per provider."""

    def collect(self) -> Any:
        from loopkit.scenario import Scenario
        from loopkit.scenario.model import PROVIDER_NAMES

        scenario = Scenario.load(self.path)
        for provider in PROVIDER_NAMES:
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

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
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

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        from loopkit.errors import ScenarioError

        # a scenario's own failure report, or a setup error such as a tool reference that does
        # not import, reads best as the message alone (no traceback into loopkit)
        if isinstance(excinfo.value, (ScenarioFailed, ScenarioError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


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

        try:
            snapshot = request.getfixturevalue("snapshot")
        except pytest.FixtureLookupError:
            raise ScenarioFailed(f"{scenario.label} [{provider}]: expect.snapshot needs syrupy's 'snapshot' fixture: pip install syrupy") from None
        if not snapshot == transcript_data(result):
            diff = "\n".join(snapshot.get_assert_diff())
            raise ScenarioFailed(f"{scenario.label} [{provider}]: the transcript differs from its snapshot (--snapshot-update to accept)\n{diff}")
    return result


def _run_item(request: pytest.FixtureRequest) -> None:
    node = request.node
    run_and_check(node.scenario, node.provider, request)
