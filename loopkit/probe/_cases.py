"""The probe's cases: scripts built from the tools the agent declared, and the checks each runs.

A case's ``build`` gets a :class:`CaseContext` (protocol, declared tools, the tools the model may
call, whether the agent streams, an argument drawer) and returns a :class:`Plan`, or a
:class:`NotApplicable` with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..script import HttpFault, MidStreamError, Script, ScriptedCall, Truncate, Turn
from ._arguments import ArgumentDrawer
from ._observe import Plan

UNKNOWN_TOOL = "loopkit_probe_no_such_tool"
FINAL = "All done: the probe's final answer."
LONG_UNICODE = "".join(
    f"{i}: Grüße, こんにちは, Привет, مرحبا, 🦀🚀 — naïve café ½ ∑ ≠ ∞. " for i in range(1, 13)
)  # fmt: skip
PARTIAL = "The answer is forty-two, because the probe says so and the stream will break off right about here."
RECOVERED = "Recovered: the full answer after a retry."
REFUSAL = "I can't help with that request."
SIGNATURE = "loopkit-probe-signature-0001"
PROBE_LIMIT = 60

REFUSALS: dict[str, Callable[[], Turn]] = {
    # how each simulator sends a refusal in its API's own form; Bedrock's API has no refusal (only
    # a content filter without text), so it is reported as not applicable
    "openai_chat": lambda: Turn(refusal=REFUSAL),  # delta.refusal
    "openai_responses": lambda: Turn(refusal=REFUSAL),  # a refusal content part
    "anthropic": lambda: Turn(text=REFUSAL, error="refusal"),  # text, then stop_reason "refusal" (docs/wire.md §0.2)
    "gemini": lambda: Turn(text=REFUSAL, error="SAFETY: refusal"),  # finishReason SAFETY
}


@dataclass(slots=True, frozen=True)
class DeclaredTool:
    """A tool as the agent declared it in its first request."""

    name: str
    description: str
    schema: Any


@dataclass(slots=True, frozen=True)
class NotApplicable:
    """Why a case does not apply to this agent or protocol."""

    reason: str


@dataclass(slots=True, kw_only=True)
class CaseContext:
    """What a case's script is built from.

    Args:
        protocol: the wire protocol.
        tools: the tools the agent declared, in order.
        allowed: the declared tools the probe's model may call (they run for real).
        streaming: whether the agent asked for a stream.
        drawer: draws arguments from a tool's schema with the probe's seed.
        limit: the probe's own cap on model calls for a model that never stops.
        retry_after: seconds a rate-limit answer asks the agent to wait.
    """

    protocol: str
    tools: list[DeclaredTool]
    allowed: list[DeclaredTool]
    streaming: bool = True
    drawer: ArgumentDrawer = field(default_factory=ArgumentDrawer)
    limit: int = PROBE_LIMIT
    retry_after: float = 0.3
    _ids: int = 0

    def call_id(self) -> str | None:
        """A fresh id in the protocol's style (None on Gemini, whose API sends none)."""
        self._ids += 1
        prefix = {"anthropic": "toolu_probe", "bedrock": "tooluse_probe", "gemini": None}.get(self.protocol, "call_probe")
        return None if prefix is None else f"{prefix}{self._ids:03d}"

    def valid_call(self, tool: DeclaredTool, n: int = 0) -> ScriptedCall:
        args = self.drawer.valid(tool.schema, n + 1)[n]
        return ScriptedCall(name=tool.name, arguments=args, id=self.call_id())

    def key(self, call: ScriptedCall) -> str:
        return call.name if self.protocol == "gemini" else str(call.id)

    def needs_tool(self) -> DeclaredTool | NotApplicable:
        if not self.tools:
            return NotApplicable("the agent declared no tools in its first request")
        if not self.allowed:
            names = ", ".join(t.name for t in self.tools)
            return NotApplicable(f"no tool may be called: allow one of {names} with tools=[...] (--tools NAME)")
        return self.allowed[0]


Builder = Callable[[CaseContext], "Plan | NotApplicable"]


@dataclass(slots=True, frozen=True)
class ProbeCase:
    """One probe case: a name, what it does, how to script it, and the checks it runs.

    Args:
        name: a short identifier (``valid_call``).
        description: one line saying what the model does.
        build: ``(CaseContext) -> Plan | NotApplicable``.
        checks: names from :data:`loopkit.probe.CHECKS`; the time limit and API acceptance
            checks always run.
    """

    name: str
    description: str
    build: Builder
    checks: tuple[str, ...] = ("calls_answered", "stops_after_text", "answer_returned")

    def __str__(self) -> str:
        return self.name


def scripted_case(name: str, script: Script | Sequence[Turn | str], *, description: str | None = None, checks: Sequence[str] | None = None) -> ProbeCase:
    """A case of your own from a fixed script: by default the agent must answer every call by
    id, stop after the last turn, and return the last turn's text.

    Any tool the script calls must be among the tools the probe allows; a case that calls one
    that is not is reported as not applicable.
    """
    script = Script.coerce(script)
    final = script[-1].text if len(script) else None

    def build(ctx: CaseContext) -> Plan | NotApplicable:
        declared = {t.name for t in ctx.tools}
        allowed = {t.name for t in ctx.allowed}
        for turn in script:
            for c in turn.tool_calls:
                if c.name in declared and c.name not in allowed:
                    return NotApplicable(f"the script calls {c.name!r}, which the probe may not call (allow it with --tools)")
        bad = frozenset(ctx.key(c) for t in script for c in t.tool_calls if c.name not in declared)
        return Plan(script=script, final_text=final, bad_calls=bad)

    default = ("calls_answered", "error_results", "stops_after_text", "answer_returned")
    return ProbeCase(name=name, description=description or f"your script {name!r}", build=build, checks=tuple(checks or default))


# --- the built-in cases ------------------------------------------------------------------


def _text_answer(ctx: CaseContext) -> Plan:
    return Plan(script=Script([Turn(text=FINAL)]), final_text=FINAL)


def _valid_call(ctx: CaseContext) -> Plan | NotApplicable:
    tool = ctx.needs_tool()
    if isinstance(tool, NotApplicable):
        return tool
    return Plan(script=Script([Turn(tool_calls=[ctx.valid_call(tool)]), Turn(text=FINAL)]), final_text=FINAL)


def _bad_call_plan(ctx: CaseContext, call: ScriptedCall, note: str) -> Plan:
    return Plan(script=Script([Turn(tool_calls=[call]), Turn(text=FINAL)]), final_text=FINAL, bad_calls=frozenset({ctx.key(call)}), extra={"note": note})


def _invalid_arguments(ctx: CaseContext) -> Plan | NotApplicable:
    tool = ctx.needs_tool()
    if isinstance(tool, NotApplicable):
        return tool
    broken = ctx.drawer.invalid(tool.schema)
    if broken is None:
        return NotApplicable(f"{tool.name}'s schema has no rule to break while the arguments stay an object")
    args, rule = broken
    return _bad_call_plan(ctx, ScriptedCall(name=tool.name, arguments=args, id=ctx.call_id()), f"breaks {rule}")


def _unknown_tool(ctx: CaseContext) -> Plan:
    return _bad_call_plan(ctx, ScriptedCall(name=UNKNOWN_TOOL, arguments={}, id=ctx.call_id()), "no such tool")


def _malformed_json(ctx: CaseContext) -> Plan | NotApplicable:
    if ctx.protocol == "gemini":
        return NotApplicable("Gemini sends arguments as a JSON object (a Struct): they cannot be broken JSON on this wire")
    tool = ctx.needs_tool()
    if isinstance(tool, NotApplicable):
        return tool
    return _bad_call_plan(ctx, ScriptedCall(name=tool.name, arguments='{"probe": "not closed', id=ctx.call_id()), "not JSON")


def _parallel_calls(ctx: CaseContext) -> Plan | NotApplicable:
    tool = ctx.needs_tool()
    if isinstance(tool, NotApplicable):
        return tool
    calls = [ctx.valid_call(tool, 0), ctx.valid_call(tool, 1)]
    if len(ctx.allowed) > 1:
        calls.append(ctx.valid_call(ctx.allowed[1]))
    return Plan(script=Script([Turn(tool_calls=calls), Turn(text=FINAL)]), final_text=FINAL)


def _text_after_results(ctx: CaseContext) -> Plan | NotApplicable:
    tool = ctx.needs_tool()
    if isinstance(tool, NotApplicable):
        return tool
    first = Turn(text="Let me look that up first.", tool_calls=[ctx.valid_call(tool)])
    return Plan(script=Script([first, Turn(text=FINAL)]), final_text=FINAL)


def _never_stops(ctx: CaseContext) -> Plan:
    tool = ctx.allowed[0] if ctx.allowed else None
    turns = []
    for _ in range(ctx.limit):
        call = ctx.valid_call(tool) if tool else ScriptedCall(name=UNKNOWN_TOOL, arguments={}, id=ctx.call_id())
        turns.append(Turn(tool_calls=[call]))
    return Plan(script=Script(turns), limit=ctx.limit)


def _rate_limited(ctx: CaseContext) -> Plan:
    fault = HttpFault(status=429, retry_after=ctx.retry_after)
    return Plan(script=Script([Turn(faults=(fault,)), Turn(text=FINAL)]), final_text=FINAL, retry_after=ctx.retry_after)


def _overloaded(ctx: CaseContext) -> Plan:
    status = 529 if ctx.protocol == "anthropic" else 503
    return Plan(script=Script([Turn(faults=(HttpFault(status=status),)), Turn(text=FINAL)]), final_text=FINAL)


def _stream_fault(fault: Any) -> Builder:
    def build(ctx: CaseContext) -> Plan | NotApplicable:
        if not ctx.streaming:
            return NotApplicable("the agent does not stream (its first request asked for a whole body)")
        broken = Turn(text=PARTIAL, chunk_size=6, faults=(fault,))
        return Plan(script=Script([broken, Turn(text=RECOVERED)]), recovered_text=RECOVERED)

    return build


def _refusal(ctx: CaseContext) -> Plan | NotApplicable:
    make = REFUSALS.get(ctx.protocol)
    if make is None:
        return NotApplicable(f"the {ctx.protocol} API has no refusal form that carries text")
    return Plan(script=Script([make()]), refusal_text=REFUSAL)


def _reasoning(ctx: CaseContext) -> Plan | NotApplicable:
    if ctx.protocol == "openai_chat":
        return NotApplicable("Chat Completions carries no reasoning to pass back")
    if ctx.allowed:
        call = ctx.valid_call(ctx.allowed[0])
    else:
        call = ScriptedCall(name=UNKNOWN_TOOL, arguments={}, id=ctx.call_id())
    if ctx.protocol == "gemini":
        call.thought_signature = SIGNATURE  # Gemini signs the call part itself
    turn = Turn(thinking="The probe is thinking before it calls a tool.", thinking_signature=SIGNATURE, tool_calls=[call])
    bad = frozenset() if ctx.allowed else frozenset({ctx.key(call)})
    return Plan(script=Script([turn, Turn(text=FINAL)]), final_text=FINAL, signature=SIGNATURE, bad_calls=bad)


def _long_unicode(ctx: CaseContext) -> Plan:
    return Plan(script=Script([Turn(text=LONG_UNICODE, chunk_size=3)]), final_text=LONG_UNICODE)


_ANSWERED = ("calls_answered", "stops_after_text", "answer_returned")
_BAD = ("calls_answered", "error_results", "stops_after_text", "answer_returned")

CASES: tuple[ProbeCase, ...] = (
    ProbeCase("text_answer", "a plain text answer ends the run", _text_answer, ("stops_after_text", "answer_returned")),
    ProbeCase("valid_call", "a valid call of a declared tool, then a text answer", _valid_call, _ANSWERED),
    ProbeCase("invalid_arguments", "arguments that break one rule of the tool's schema", _invalid_arguments, _BAD),
    ProbeCase("unknown_tool", "a call of a tool the agent does not have", _unknown_tool, _BAD),
    ProbeCase("malformed_json", "arguments that are not JSON", _malformed_json, _BAD),
    ProbeCase("parallel_calls", "several calls in one turn, the same tool twice", _parallel_calls, _ANSWERED),
    ProbeCase("text_after_results", "text beside a call, then the answer after the results", _text_after_results, _ANSWERED),
    ProbeCase("never_stops", "a model that never stops calling tools", _never_stops, ("calls_answered", "terminates")),
    ProbeCase("rate_limited", "a 429 with retry-after, then success", _rate_limited, ("retries_after", "stops_after_text", "answer_returned")),
    ProbeCase("overloaded", "an overloaded (529) or 503 error, then success", _overloaded, ("retries_after", "stops_after_text", "answer_returned")),
    ProbeCase("stream_cut", "the connection drops mid-answer", _stream_fault(Truncate(after=4)), ("no_partial_success",)),
    ProbeCase("mid_stream_error", "an error event mid-answer", _stream_fault(MidStreamError(after=4)), ("no_partial_success",)),
    ProbeCase("refusal", "the model refuses", _refusal, ("refusal_ends_run",)),
    ProbeCase("reasoning", "reasoning with a signature before a call", _reasoning, ("reasoning_passed_back", "calls_answered", "answer_returned")),
    ProbeCase("long_unicode", "a long unicode answer in many small deltas", _long_unicode, ("stops_after_text", "answer_returned")),
)
"""The built-in cases, in the order a probe runs them (``text_answer`` first: it learns the tools)."""
