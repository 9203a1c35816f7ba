"""Checking a name given on the command line against the names that exist, with a hint."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from ..errors import UsageError


def check_choice(value: str, choices: Sequence[str], *, what: str) -> str:
    """``value`` when it is one of ``choices``; else a :class:`UsageError` (exit status 2) that
    names the closest choice and lists them all."""
    if value in choices:
        return value
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise UsageError(f"unknown {what} {value!r}{hint}; expected one of: {', '.join(choices)}")
