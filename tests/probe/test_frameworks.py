"""The published framework × case table (docs/probe-frameworks.md) is what the probe finds today:
each framework's columns are regenerated here and compared, so the page cannot go stale.

Regenerate the page with ``python benchmarks/probe_frameworks.py --write docs/probe-frameworks.md``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "probe-frameworks.md"


def _generator():
    spec = importlib.util.spec_from_file_location("probe_frameworks", ROOT / "benchmarks" / "probe_frameworks.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("probe_frameworks", module)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


def table(markdown: str) -> dict[str, dict[str, str]]:
    """{column header: {case: mark}} of the page's table."""
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    header = [h.strip() for h in rows[0].strip("|").split("|")][1:]
    out: dict[str, dict[str, str]] = {h: {} for h in header}
    for row in rows[1:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        if not cells[0].startswith("`"):
            continue
        for h, mark in zip(header, cells[1:], strict=True):
            out[h][cells[0].strip("`")] = mark
    return out


IMPORTS = {"pydantic-ai": "pydantic_ai", "openai-agents": "agents", "langgraph": "langgraph", "official SDK loop": "anthropic"}


# The third-party frameworks cost seconds each to import and run every case through their own
# agent loops: they form the ``slow`` set (``python -m pytest -q -m slow``; CI runs it after the
# default command). The official SDK loop is this repository's own code: it stays in the default run.
SLOW = {"pydantic-ai", "openai-agents", "langgraph"}


@pytest.mark.parametrize(
    ("framework", "protocol"),
    [pytest.param(f, p, id=f"{f}-{p}", marks=[pytest.mark.slow] if f in SLOW else []) for f, p in GEN.columns()],
)
def test_published_column_is_current(framework, protocol):
    """One column per item, so pytest-xdist can spread the frameworks over cores."""
    pytest.importorskip(IMPORTS[framework], reason="the frameworks extra is not installed")
    fresh = table(GEN.render(GEN.probe_all([framework], protocol=protocol)))
    published = table(PAGE.read_text(encoding="utf-8"))
    ((column, marks),) = fresh.items()
    assert published.get(column) == marks, f"{column} changed: rerun python benchmarks/probe_frameworks.py --write docs/probe-frameworks.md"
