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


@pytest.mark.parametrize("framework", list(GEN.SUBJECTS))
def test_published_columns_are_current(framework):
    pytest.importorskip(GEN.SUBJECTS[framework][0].replace("-slim", "_ai").replace("-", "_").replace("openai_agents", "agents"))
    fresh = table(GEN.render(GEN.probe_all([framework])))
    published = table(PAGE.read_text(encoding="utf-8"))
    for column, marks in fresh.items():
        assert published.get(column) == marks, f"{column} changed: rerun python benchmarks/probe_frameworks.py --write docs/probe-frameworks.md"
