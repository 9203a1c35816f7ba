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


def test_retry_policy_and_every_error_class_are_top_level() -> None:
    from loopkit import errors
    from loopkit.retry import RetryPolicy

    assert loopkit.RetryPolicy is RetryPolicy
    classes = {name for name, value in vars(errors).items() if isinstance(value, type) and issubclass(value, errors.LoopkitError)}
    internal = {"EventStreamChecksumError", "EventStreamHeaderError", "EventStreamLengthError", "EventStreamTruncated"}
    assert classes - internal <= set(loopkit.__all__)
    assert all(getattr(loopkit, name) is getattr(errors, name) for name in classes - internal)


def test_request_knobs_and_the_decode_api() -> None:
    from loopkit.providers import decode

    assert loopkit.ModelRequest([], max_tokens=64).max_tokens == 64
    assert loopkit.ToolSpec(name="t", strict=True).strict is True
    assert callable(decode)
