"""Hypothesis strategies for tool-call loops: the only part of loopkit that imports hypothesis.

Every public strategy is a plural noun with keyword-only bounds checked when it is called, so a
mistake surfaces as a :class:`~loopkit.errors.UsageError` that says how to fix it, before any
example is drawn.
"""

from __future__ import annotations

from ._arguments import RULES, Violation, arguments, violations
from ._calls import CALL_KINDS, scripted_calls, tool_calls
from ._chunkings import chunkings
from ._edge_cases import EdgeCase, edge_cases
from ._exercise import Exercised, ExerciseProvider
from ._faults import FAULT_KINDS, PROTOCOLS, faults
from ._schedules import Schedule, follow_up_schedules, steering_schedules
from ._scripts import Session, scripts, sessions
from ._turns import TURN_KINDS, expressible_kinds, turns

__all__ = [
    "CALL_KINDS",
    "FAULT_KINDS",
    "PROTOCOLS",
    "RULES",
    "TURN_KINDS",
    "EdgeCase",
    "ExerciseProvider",
    "Exercised",
    "Schedule",
    "Session",
    "Violation",
    "arguments",
    "chunkings",
    "edge_cases",
    "expressible_kinds",
    "faults",
    "follow_up_schedules",
    "scripted_calls",
    "scripts",
    "sessions",
    "steering_schedules",
    "tool_calls",
    "turns",
    "violations",
]
