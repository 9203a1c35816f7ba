"""CI's slow set runs every property test again at hypothesis's own default budget.

The everyday run (``python -m pytest -q``) gives each property 50 examples, to keep the whole
command within its time budget. This test, in the ``slow`` set that CI runs after it, runs every
hypothesis test of the suite (hypothesis marks them ``hypothesis``) with the ``full`` profile: 100
examples each, derandomized like the default, so CI searches as far on every run as it did when
100 was the default.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_every_property_holds_at_the_full_budget() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", "hypothesis and not slow", "--hypothesis-profile=full", "tests"],
        cwd=ROOT, capture_output=True, text=True, timeout=3600, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, f"the property tests fail at the full budget:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
    assert " passed" in done.stdout.splitlines()[-1]
