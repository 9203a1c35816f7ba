"""The mutation run's summary (``python tools/mutation.py``, not run here) is current and adds up.

Current: each module's entry was made from the module's present source and the present
conformance suite and simulators (a change to either needs a new run, which takes minutes). Adds
up: counts per module make its total, the totals and the score follow from the modules, every
survivor is listed once with a verdict and a reason, every killing case exists, and the README
shows the numbers of this summary.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

from loopkit.conformance import CASE_IDS

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = json.loads((ROOT / "loopkit" / "conformance" / "mutation-summary.json").read_text(encoding="utf-8"))
COUNTED = ("killed", "timeout", "survived", "no_tests")
MODULES = SUMMARY["modules"]


def _tool():
    spec = importlib.util.spec_from_file_location("mutation_tool", ROOT / "tools" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOL = _tool()


def test_every_adapter_module_is_in_the_summary() -> None:
    assert set(MODULES) == {m for modules, _ in TOOL.GROUPS.values() for m in modules}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_is_current(module: str) -> None:
    m = MODULES[module]
    assert m["source_sha256"] == hashlib.sha256((ROOT / module).read_bytes()).hexdigest(), f"{module} changed since the mutation run: python tools/mutation.py --adapter {m['group']}"
    assert m["suite_sha256"] == TOOL.suite_hash(), f"the conformance suite or the simulators changed since {module}'s mutation run: python tools/mutation.py --adapter {m['group']}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_counts_add_up(module: str) -> None:
    m = MODULES[module]
    assert m["total"] == sum(m[c] for c in COUNTED)
    assert len([s for s in SUMMARY["survivors"] if s["module"] == module]) == m["survived"]
    assert sum(SUMMARY["not_reached"].get(module, {}).values()) == m["no_tests"]
    assert sum(SUMMARY["kills_by_case"][module].values()) == m["killed"]
    assert set(m["run"]["modes"]) == set(TOOL.MODES)


def test_totals_and_score_follow_from_the_modules() -> None:
    totals = SUMMARY["totals"]
    for key in ("total", *COUNTED):
        assert totals[key] == sum(m[key] for m in MODULES.values()), key
    score = SUMMARY["score"]
    assert score["killed_or_timeout"] == totals["killed"] + totals["timeout"]
    assert score["total"] == totals["total"]
    assert score["percent"] == round(100 * score["killed_or_timeout"] / score["total"], 1)
    equivalent = [sv for sv in SUMMARY["survivors"] if sv["verdict"] == "equivalent"]
    assert score["equivalent"] == len(equivalent) == sum(m["equivalent"] for m in MODULES.values())
    assert score["percent_of_non_equivalent"] == round(100 * score["killed_or_timeout"] / (score["total"] - score["equivalent"]), 1)


def test_every_survivor_has_a_verdict_and_a_reason() -> None:
    names = [s["mutant"] for s in SUMMARY["survivors"]]
    assert len(names) == len(set(names))
    unjudged = [s["mutant"] for s in SUMMARY["survivors"] if s["verdict"] not in TOOL.VERDICT_KINDS or not s["reason"].strip()]
    assert unjudged == []
    assert all(s["diff"].strip() for s in SUMMARY["survivors"])


def test_killing_cases_are_real_cases() -> None:
    for module, kills in SUMMARY["kills_by_case"].items():
        for case in kills:
            assert case.partition(":")[2] in CASE_IDS, (module, case)


def test_the_readme_shows_this_summary() -> None:
    readme = (ROOT / "loopkit" / "conformance" / "README.md").read_text(encoding="utf-8")
    score = SUMMARY["score"]
    assert f"**{score['killed_or_timeout']} of {score['total']} mutants killed: {score['percent']}%**" in readme
    assert f"**{score['killed_or_timeout']} of {score['total'] - score['equivalent']}: {score['percent_of_non_equivalent']}%**" in readme
    for module, m in MODULES.items():
        assert f"| `{module}` | {m['total']} | {m['killed'] + m['timeout']} | {m['survived']} | {m['equivalent']} | {m['no_tests']} |" in readme
    for s in SUMMARY["survivors"]:
        assert f"`{s['function']}`" in readme
