"""The built-in scenario library (``scenarios/``) on every provider: one test per scenario × provider,
with the sync driver and again with the asyncio one.

A provider that cannot express a scenario is skipped with the reason; a scenario's ``xfail``
entries are strict xfails (each names an engine, fake or simulator finding).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loopkit.pytest_scenarios import run_and_check
from loopkit.scenario import load_all
from loopkit.scenario.model import PROVIDER_NAMES

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = load_all([ROOT / "scenarios"])


def _params() -> list:
    out = []
    for s in LIBRARY:
        for p in PROVIDER_NAMES:
            marks = []
            if p in s.model.xfail:
                marks.append(pytest.mark.xfail(reason=s.model.xfail[p], strict=True))
            out.append(pytest.param(s, p, id=f"{s.label}-{p}", marks=marks))
    return out


def test_the_library_is_large_and_grouped_by_topic() -> None:
    topics = {s.label.split("/")[0] for s in LIBRARY}
    assert len(LIBRARY) >= 40
    assert len(topics) >= 8
    assert len({s.label for s in LIBRARY}) == len(LIBRARY), "scenario names repeat within a topic"


@pytest.mark.parametrize(("scenario", "provider"), _params())
def test_library_scenario(scenario, provider, request) -> None:
    run_and_check(scenario, provider, request)


@pytest.mark.parametrize(("scenario", "provider"), _params())
def test_library_scenario_async(scenario, provider) -> None:
    """The same library through loopkit.arun: the async driver and every provider's astream."""
    run_and_check(scenario, provider, driver="async")


def test_readme_python_example_runs_and_counts_are_current() -> None:
    import re

    readme = (ROOT / "scenarios" / "README.md").read_text(encoding="utf-8")
    example = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "def test_" in b)
    namespace: dict = {}
    exec(compile(example, "scenarios/README.md", "exec"), namespace)
    namespace["test_retry_then_tool_round"]()
    words = {10: "ten", 11: "eleven", 12: "twelve", 9: "nine"}
    topics = sorted({s.label.split("/")[0] for s in LIBRARY})
    assert f"The library here has {len(LIBRARY)} scenarios in {words.get(len(topics), len(topics))} topic folders:" in readme
    for topic in topics:
        assert f"| `{topic}/` |" in readme, f"scenarios/README.md does not describe {topic}/"
