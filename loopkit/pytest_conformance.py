"""pytest plugin (entry point ``pytest11``): the adapter conformance suite as test items.

``pytest --loopkit-adapter=module:factory --loopkit-protocol=P`` adds one item per conformance
case (``loopkit-conformance[P]::request.tool_choice.required`` ...). A failing case fails its item
with what was sent or parsed against what was expected; a case the protocol cannot express is
skipped with the reason. Without ``--loopkit-adapter`` the plugin adds nothing.

A ``module:factory`` target is imported with the directory pytest was started from on the path,
as the ``loopkit conformance`` command does. A factory whose provider has no ``stream``/``astream``
stops the session with one usage error instead of failing every case.

loopkit is imported lazily; the suite lives in ``config.stash``, so nothing is global and
``pytest -n auto`` spreads the cases over workers.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

_SUITE = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("loopkit-conformance", "loopkit adapter conformance suite")
    group.addoption(
        "--loopkit-adapter",
        metavar="TARGET",
        default=None,
        help="run the conformance suite against TARGET: a built-in adapter name or module:factory",
    )
    group.addoption(
        "--loopkit-protocol",
        metavar="P",
        default=None,
        help="the wire protocol the adapter speaks (openai_chat, openai_responses, anthropic, gemini, bedrock)",
    )
    group.addoption(
        "--loopkit-served",
        action="store_true",
        default=False,
        help="serve the simulators on 127.0.0.1 even when the factory takes transport=",
    )
    group.addoption(
        "--loopkit-no-stream",
        action="store_const",
        const=False,
        default=None,
        dest="loopkit_stream",
        help="build the built-in adapter to ask for non-streamed answers (single JSON bodies)",
    )
    group.addoption(
        "--loopkit-variant",
        metavar="NAME",
        default=None,
        help="answer as this model family of the protocol (no-tool-result-status: a bedrock model that refuses toolResult.status)",
    )


def _suite(config: pytest.Config) -> Any:
    suite = config.stash.get(_SUITE, None)
    if suite is None:
        from loopkit.conformance import Suite

        here = str(config.invocation_params.dir)
        if here not in sys.path:
            sys.path.insert(0, here)  # let module:factory name a module in the working directory, as the CLI does
        suite = Suite(
            config.getoption("loopkit_adapter"),
            config.getoption("loopkit_protocol"),
            served=config.getoption("loopkit_served"),
            stream=config.getoption("loopkit_stream"),
            variant=config.getoption("loopkit_variant"),
        )
        config.stash[_SUITE] = suite
    return suite


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("loopkit_adapter") is None:
        return
    from loopkit.errors import LoopkitError

    try:
        suite = _suite(config)
        suite.check_shape()
    except LoopkitError as exc:
        raise pytest.UsageError(f"--loopkit-adapter: {exc}") from None
    name = f"loopkit-conformance[{suite.protocol}]"
    collector = ConformanceSuite.from_parent(session, name=name, nodeid=name)
    # through the collect-report hooks, so the terminal counts the items like collected tests
    report = collector.ihook.pytest_make_collect_report(collector=collector)
    config.hook.pytest_collectreport(report=report)
    items.extend(i for i in report.result if isinstance(i, pytest.Item))


class ConformanceSuite(pytest.Collector):
    """The conformance cases for the adapter named on the command line."""

    def collect(self) -> list[pytest.Item]:
        suite = _suite(self.config)
        return [ConformanceCase.from_parent(self, name=case.id, case=case) for case in suite.cases]


class ConformanceCase(pytest.Item):
    """One conformance case."""

    def __init__(self, *, case: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        result = _suite(self.config).run_case(self.case)
        if result.status == "not-applicable":
            raise pytest.skip.Exception(f"not applicable: {result.reason}", _use_item_location=True)
        if result.status in ("fail", "error"):
            raise CaseFailed(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            r = excinfo.value.result
            head = f"{r.case_id} ({r.spec}): {r.statement}"
            kind = "the case could not run" if r.status == "error" else "failed"
            return f"{head}\n{kind}:\n  " + r.detail.replace("\n", "\n  ")
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[str, int, str]:
        return self.parent.name if self.parent else "loopkit-conformance", 0, f"{self.name}: {self.case.statement}"


class CaseFailed(Exception):
    """A conformance case failed; carries its result."""

    def __init__(self, result: Any) -> None:
        super().__init__(result.detail)
        self.result = result
