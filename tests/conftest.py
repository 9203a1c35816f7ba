"""Shared test configuration: what keeps the suite's own processes cheap, and hypothesis profiles
(``--hypothesis-profile=full`` or ``deep`` for longer searches).

``default`` is derandomized with no example database, so CI runs are deterministic.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# The pytest runs the suite starts itself (pytester's, the docs' console blocks, subprocesses) load
# every installed pytest plugin. These two come with test dependencies, no nested run uses them, and
# langsmith's imports all of langsmith: seconds of CPU per nested run. pyproject's addopts switches
# them off for the outer run only.
pytest_plugins = ["pytester"]

NESTED_ADDOPTS = "-p no:langsmith_plugin -p no:examples"
os.environ["PYTEST_ADDOPTS"] = f"{os.environ.get('PYTEST_ADDOPTS', '')} {NESTED_ADDOPTS}".strip()

# Hypothesis keeps what it computes once (the characters a codec can encode, the constants of the
# local modules) under .hypothesis/ of the working directory. A process the suite starts in a
# temporary folder (a console script, a nested pytest) computed it all again: 3 s of CPU before its
# first example. Every process of the suite shares the checkout's folder.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(Path(__file__).resolve().parent.parent / ".hypothesis"))

# yaml too: the scenario loader imports it lazily, so a nested run could import it first; pytester
# then forgets it and the next import makes a second yaml module, while libyaml's C extension (never
# loaded twice) keeps the first one's event classes, and vcrpy's CDumper fails with "expected SCALAR"
_PLUGIN_BACKENDS = ("yaml", "httpcore", "loopkit.recording", "loopkit.scenario", "loopkit.conformance", "loopkit.probe", "loopkit.snapshot", "loopkit.fakes")


# The cyclic garbage collector, tuned for a test process: measured over tests/strategies, the
# planted Chat adapters and tests/recording in one process, it took 9.7-12 s of about 85 s, most of
# it in 14 full collections of 0.6 s each, each scanning every object of the process (the imported
# SDKs, hypothesis, the collected items). What exists once collection ends stays for the session:
# frozen, no full collection scans it again, and a full collection waits for ten times as many
# younger ones. Then it took 5.8-6.1 s (gen2: 0.4 s), the rest being the young collections every
# allocation pays for. Memory is no concern at this size.
gc.set_threshold(2000, 20, 100)


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session")
def _plugin_backends() -> None:
    """loopkit's plugin backends (and yaml), imported before pytester snapshots ``sys.modules``.

    pytester forgets every module imported after it started, so each nested run would import (and
    assertion-rewrite) these again; imported first, they stay, once per process. httpcore too:
    httpx maps httpcore's exceptions through a table it fills at first use, so an httpcore first
    imported in a nested run, forgotten and imported again, raises classes the table does not
    hold, and they leave httpx unmapped (a raw ``httpcore.ConnectError``).
    """
    for module in _PLUGIN_BACKENDS:
        importlib.import_module(module)


@pytest.fixture
def pytester(_plugin_backends: None, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytester, whose own setup clears ``PYTEST_ADDOPTS``, with the nested runs' plugins off, and
    no bytecode written for the files a test makes (tests/bytecode_cache.py turns writing on):
    a file rewritten within the same second at the same size would run from its stale pyc."""
    monkeypatch.setenv("PYTEST_ADDOPTS", NESTED_ADDOPTS)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    return pytester


# Hypothesis profiles. ``default`` is the everyday run's: 50 examples per property, derandomized
# (the same examples every run, so a run is deterministic), no example database. ``full`` runs
# hypothesis's own default of 100: CI's slow set runs every property test again with it
# (tests/test_properties_full.py), so CI searches as far as it did when 100 was the default here.
# ``deep`` is a long search with a random seed (``--hypothesis-profile=deep``).
settings.register_profile(
    "default", max_examples=50, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("full", settings.get_profile("default"), max_examples=100)
settings.register_profile("deep", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")
