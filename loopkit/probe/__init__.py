"""``loopkit probe``: check any agent's tool-call loop against the loop contract, over the wire.

The agent (any framework, any language) is pointed at a simulator on 127.0.0.1; the probe reads
its tools from its first request, scripts the model from them one case at a time, and checks
what the agent sends back and what it returns. See ``docs/probe.md``.

    report = probe(my_agent, "openai_chat", tools=["add"])
    report.raise_for_failures()
"""

from __future__ import annotations

from ._cases import CASES, CaseContext, DeclaredTool, NotApplicable, ProbeCase, scripted_case
from ._checks import CHECKS, RULES
from ._env import DUMMY_KEY, protocol_env
from ._model import CaseResult, Failure, ProbeFailed, ProbeReport, Rule
from ._observe import Exchange, Observed, Plan
from ._runner import Probe, probe
from ._subjects import AgentRun, CallableSubject, CommandSubject, Subject

__all__ = [
    "CASES",
    "CHECKS",
    "DUMMY_KEY",
    "RULES",
    "AgentRun",
    "CallableSubject",
    "CaseContext",
    "CaseResult",
    "CommandSubject",
    "DeclaredTool",
    "Exchange",
    "Failure",
    "NotApplicable",
    "Observed",
    "Plan",
    "Probe",
    "ProbeCase",
    "ProbeFailed",
    "ProbeReport",
    "Rule",
    "Subject",
    "probe",
    "protocol_env",
    "scripted_case",
]
