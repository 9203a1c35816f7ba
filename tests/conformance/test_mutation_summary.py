"""The mutation run's summary (``python tools/mutation.py``, not run here) adds up.

Counts per module add up to its total, the totals and the score follow from the modules, every
survivor is listed once with a verdict and a reason, every mutant killed by a later case names a
case that exists, and the README shows the numbers of this summary.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopkit.conformance import CASE_IDS

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = json.loads((ROOT / "loopkit" / "conformance" / "mutation-summary.json").read_text(encoding="utf-8"))
COUNTED = ("killed", "timeout", "survived", "no_tests", "not_checked", "skipped", "suspicious")
MODULES = SUMMARY["modules"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_counts_add_up(module: str) -> None:
    m = MODULES[module]
    assert m["total"] == sum(m[c] for c in COUNTED)
    survivors = [s for s in SUMMARY["survivors"] if s["module"] == module]
    assert len(survivors) == m["survived"]
    unreached = SUMMARY["not_reached"].get(module, {})
    assert sum(unreached.get("no_tests", {}).values()) == m["no_tests"]
    assert sum(unreached.get("not_checked", {}).values()) == m["not_checked"]
    assert (ROOT / module).is_file()


def test_totals_and_score_follow_from_the_modules() -> None:
    totals = SUMMARY["totals"]
    for key in ("total", *COUNTED):
        assert totals[key] == sum(m[key] for m in MODULES.values()), key
    score = SUMMARY["score"]
    assert score["killed_or_timeout"] == totals["killed"] + totals["timeout"]
    assert score["checked"] == totals["total"] - totals["not_checked"] - totals["skipped"]
    assert score["percent"] == round(100 * score["killed_or_timeout"] / score["checked"], 1)
    assert {m["group"] for m in MODULES.values()} <= {"openai", "anthropic", "gemini", "bedrock"}


def test_every_survivor_has_a_verdict_and_a_reason() -> None:
    names = [s["mutant"] for s in SUMMARY["survivors"]]
    assert len(names) == len(set(names))
    unjudged = [s["mutant"] for s in SUMMARY["survivors"] if s["verdict"] not in ("equivalent", "unobservable", "open") or not s["reason"].strip()]
    assert unjudged == []
    assert all(s["diff"].strip() for s in SUMMARY["survivors"])


def test_mutants_killed_by_later_cases_name_real_cases() -> None:
    for kill in SUMMARY["killed_by_new_cases"]:
        protocol, _, case = kill["case"].partition(":")
        assert case in CASE_IDS or kill["case"] == "(timeout)", kill
        assert kill["module"] in MODULES


def test_the_readme_shows_this_summary() -> None:
    readme = (ROOT / "loopkit" / "conformance" / "README.md").read_text(encoding="utf-8")
    score = SUMMARY["score"]
    assert f"**{score['killed_or_timeout']} of {score['checked']} mutants checked were killed: {score['percent']}%**" in readme
    for module, m in MODULES.items():
        assert f"| `{module}` | {m['total']} |" in readme
