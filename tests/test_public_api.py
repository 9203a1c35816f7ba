"""The public namespace: ``loopkit.__all__`` is sorted, complete and importable."""

from __future__ import annotations

import loopkit


def test_all_is_sorted_and_unique() -> None:
    assert list(loopkit.__all__) == sorted(set(loopkit.__all__))


def test_every_exported_name_exists() -> None:
    missing = [name for name in loopkit.__all__ if not hasattr(loopkit, name)]
    assert missing == []


def test_entry_points_are_exported() -> None:
    for name in ("run", "arun", "tool", "Runtime", "RunResult", "Turn", "Script"):
        assert name in loopkit.__all__
    from loopkit.fakes import FunctionProvider, ScriptedProvider  # noqa: F401
    from loopkit.script import Turn

    assert loopkit.Turn is Turn
