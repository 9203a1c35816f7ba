"""The built-in scenario library (``scenarios/``) with the asyncio driver on every provider.

The sync driver runs the library as pytest items of loopkit's own scenario plugin (``testpaths``
and ``loopkit_scenarios`` in pyproject.toml), with the snapshots stored next to the files
(``scenarios/<topic>/__snapshots__/``), exactly as ``pytest scenarios/`` runs it.

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


def test_snapshots_live_next_to_the_scenarios_that_ask_for_them() -> None:
    """``pytest scenarios/`` on a fresh clone finds every snapshot (none hides under tests/)."""
    from syrupy.extensions.amber import AmberDataSerializer

    wanted = [s for s in LIBRARY if s.model.expect.snapshot]
    assert wanted
    for s in wanted:
        stored = AmberDataSerializer.read_file(str(s.source.parent / "__snapshots__" / f"{s.source.stem}.ambr"))
        for p in PROVIDER_NAMES:
            if s.skip_reason(p) is None:
                assert stored.get(f"{s.name}[{p}]") is not None, f"{s.source}: no stored snapshot for {p}"


def test_pytest_runs_a_library_file_from_the_repository_root() -> None:
    import subprocess
    import sys

    target = "scenarios/errors/tool_raises.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "--loopkit-provider", "scripted", "--loopkit-provider", "anthropic", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
