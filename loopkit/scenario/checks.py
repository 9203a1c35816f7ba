"""The assertion checkers: each compares one part of ``expect`` with a :class:`RunRecord` and
returns :class:`Failure`\\ s (what was checked, where, what was expected, what happened)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..events import AgentEnd, MessageEnd, MessageStart, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate, TurnEnd, TurnStart
from ..loop import SKIPPED_TEXT
from ..messages import AssistantMessage, ToolResultMessage, UserMessage
from . import wire as wire_format
from .model import CallRef, EventSpec, Expect, Match, NextRequest, RequestExpect
from .runner import CallInfo, RunRecord


@dataclass(slots=True, frozen=True)
class Failure:
    """One expectation the run did not meet."""

    check: str  # e.g. "end.reason", "calls[1] (round 1 call 2).text", "next_request[0] wire"
    expected: str
    actual: str

    def __str__(self) -> str:
        return f"{self.check}: expected {self.expected}, got {self.actual}"


def check_all(expect: Expect, rec: RunRecord) -> list[Failure]:
    """Every failure of ``rec`` against ``expect`` (empty: the run met every expectation)."""
    out: list[Failure] = []
    if rec.raised is not None:
        out.append(Failure("run", "the run to end normally", f"it raised {type(rec.raised).__name__}: {rec.raised}"))
        return out
    if rec.unused_turns:
        out.append(Failure("script", "every scripted turn to be used", f"{rec.unused_turns} of {rec.total_turns} turn(s) never used"))
    if rec.overruns:
        out.append(Failure("script", "no request after the script ran out", f"request(s) #{', #'.join(map(str, rec.overruns))} found the script exhausted"))
    out += check_end(expect, rec)
    out += check_calls(expect, rec)
    out += check_executions(expect, rec)
    out += check_next_requests(expect, rec)
    out += check_requests(expect, rec)
    out += check_events(expect.events, rec)
    if expect.sleeps is not None and not _same_floats(expect.sleeps, rec.sleeps):
        out.append(Failure("sleeps", repr(expect.sleeps), repr(rec.sleeps)))
    return out


def _same_floats(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9) for x, y in zip(a, b))


def _text_failures(check: str, match: Match, text: str) -> list[Failure]:
    return [Failure(check, p.removeprefix("text should "), repr(text)) for p in match.problems(text)]


# --- end ---------------------------------------------------------------------------------------


def check_end(expect: Expect, rec: RunRecord) -> list[Failure]:
    end, result = expect.end, rec.result
    assert result is not None
    out = []
    if end.reason is not None and result.reason != end.reason:
        detail = ""
        last = result.last_assistant
        if last is not None and last.error_message:
            detail = f" ({last.error_message})"
        out.append(Failure("end.reason", repr(end.reason), repr(result.reason) + detail))
    if end.model_calls is not None and result.model_calls != end.model_calls:
        out.append(Failure("end.model_calls", str(end.model_calls), str(result.model_calls)))
    last = result.last_assistant
    if end.text is not None:
        out += _text_failures("end.text", end.text, last.text if last is not None else "")
    if end.error is not None:
        out += _text_failures("end.error", end.error, (last.error_message or "") if last is not None else "")
    if end.pending is not None:
        got = [m.text for m in result.pending if isinstance(m, UserMessage)]
        if got != end.pending:
            out.append(Failure("end.pending", repr(end.pending), repr(got)))
    return out


# --- calls -------------------------------------------------------------------------------------


def find_call(ref: CallRef, rec: RunRecord) -> CallInfo | None:
    for c in rec.calls:
        if (ref.id is not None and c.id == ref.id) or (ref.id is None and c.round == ref.round and c.call == ref.call):
            return c
    return None


def _missing(check: str, ref: CallRef, rec: RunRecord) -> Failure:
    known = ", ".join(f"r{c.round}c{c.call}={c.name}[{c.id}]" for c in rec.calls) or "none"
    return Failure(check, f"a tool call at {ref.label()}", f"no such call (the run's calls: {known})")


def check_calls(expect: Expect, rec: RunRecord) -> list[Failure]:
    out = []
    for i, ce in enumerate(expect.calls):
        where = f"calls[{i}] ({ce.label()})"
        info = find_call(ce, rec)
        if info is None:
            out.append(_missing(where, ce, rec))
            continue
        if ce.executed is not None and info.executed != ce.executed:
            out.append(Failure(f"{where}.executed", str(ce.executed).lower(), str(info.executed).lower()))
        if info.result is None:
            if ce.is_error is not None or ce.text is not None:
                out.append(Failure(f"{where}.result", "a tool result", "none (the run ended before the result)"))
            continue
        if ce.is_error is not None and info.result.is_error != ce.is_error:
            out.append(Failure(f"{where}.is_error", str(ce.is_error).lower(), f"{str(info.result.is_error).lower()} (text {info.result.text!r})"))
        if ce.text is not None:
            out += _text_failures(f"{where}.text", ce.text, info.result.text)
    for i, ref in enumerate(expect.skipped):
        where = f"skipped[{i}] ({ref.label()})"
        info = find_call(ref, rec)
        if info is None:
            out.append(_missing(where, ref, rec))
            continue
        got = "no result" if info.result is None else f"{'error' if info.result.is_error else 'ok'} result {info.result.text!r}"
        if info.result is None or info.result.text != SKIPPED_TEXT or not info.result.is_error:
            out.append(Failure(where, f"an error result {SKIPPED_TEXT!r}", got))
        if info.executed:
            out.append(Failure(f"{where}.executed", "false (a skipped call never runs)", "true"))
    return out


def check_executions(expect: Expect, rec: RunRecord) -> list[Failure]:
    counts = Counter(name for _, name in rec.executions)
    return [
        Failure(f"executions.{name}", str(n), str(counts.get(name, 0)))
        for name, n in expect.executions.items()
        if counts.get(name, 0) != n
    ]


# --- what the model was sent -------------------------------------------------------------------


def check_next_requests(expect: Expect, rec: RunRecord) -> list[Failure]:
    out = []
    for i, nr in enumerate(expect.next_request):
        out += _next_request(f"next_request[{i}]", nr, rec)
    return out


def _next_request(where: str, nr: NextRequest, rec: RunRecord) -> list[Failure]:
    info = find_call(nr.result_for, rec)
    if info is None:
        return [_missing(where, nr.result_for, rec)]
    if info.result is None:
        return [Failure(where, f"a result for {nr.result_for.label()}", "the call has no result")]
    if nr.model_call > len(rec.requests):
        return [Failure(where, f"model call {nr.model_call}", f"only {len(rec.requests)} model call(s) were made")]
    request = rec.requests[nr.model_call - 1]
    target = info.result
    sent = [m for m in request.iter_messages() if isinstance(m, ToolResultMessage)]
    found = next((m for m in sent if m is target), None) or next((m for m in sent if m.tool_call_id == info.id and m.tool_name == info.name), None)
    out = []
    if found is None:
        ids = [m.tool_call_id for m in sent]
        out.append(Failure(f"{where} request", f"model call {nr.model_call} to carry the result of {nr.result_for.label()} [{info.id}]", f"it carried results for {ids}"))
    else:
        if nr.is_error is not None and found.is_error != nr.is_error:
            out.append(Failure(f"{where} request.is_error", str(nr.is_error).lower(), str(found.is_error).lower()))
        if nr.text is not None:
            out += _text_failures(f"{where} request.text", nr.text, found.text)
    if rec.wire is not None:
        out += _next_request_wire(where, nr, rec, info)
    return out


def _next_request_wire(where: str, nr: NextRequest, rec: RunRecord, info: CallInfo) -> list[Failure]:
    protocol = rec.provider
    label = f"{where} wire ({protocol}: {wire_format.ERROR_CONVENTION[protocol]})"
    if rec.wire_misaligned:
        return [Failure(label, "one request body per model call", rec.wire_misaligned)]
    body = rec.wire[nr.model_call - 1] if rec.wire is not None and nr.model_call <= len(rec.wire) else None
    results = wire_format.tool_results(protocol, body)
    match = next((r for r in results if r.call_id is not None and r.call_id == info.id), None)
    if match is None:
        # protocols that match results by name: take the same-named results in order
        same = [c for c in rec.calls if c.name == info.name and c.result is not None and c.round <= info.round]
        named = [r for r in results if r.call_id is None and r.name == info.name]
        k = next((j for j, c in enumerate(same) if c is info), None)
        if k is not None and k < len(named):
            match = named[k]
    if match is None:
        shown = [(r.call_id or r.name, r.text[:40]) for r in results]
        return [Failure(label, f"a tool result for [{info.id}] in the body of model call {nr.model_call}", f"results {shown}")]
    out = []
    if nr.is_error is not None and match.is_error is not None and match.is_error != nr.is_error:
        out.append(Failure(f"{label}.is_error", str(nr.is_error).lower(), str(match.is_error).lower()))
    if nr.text is not None:
        out += _text_failures(f"{label}.text", nr.text, match.text)
    return out


def check_requests(expect: Expect, rec: RunRecord) -> list[Failure]:
    out = []
    for i, re_ in enumerate(expect.requests):
        out += _request(f"requests[{i}] (model call {re_.model_call})", re_, rec)
    return out


def _request(where: str, re_: RequestExpect, rec: RunRecord) -> list[Failure]:
    if re_.model_call > len(rec.requests):
        return [Failure(where, f"model call {re_.model_call}", f"only {len(rec.requests)} model call(s) were made")]
    request = rec.requests[re_.model_call - 1]
    given = re_.model_fields_set
    out = []
    if "tool_choice" in given and request.tool_choice != re_.tool_choice:
        out.append(Failure(f"{where}.tool_choice", repr(re_.tool_choice), repr(request.tool_choice)))
    if "parallel_tool_calls" in given and request.parallel_tool_calls != re_.parallel_tool_calls:
        out.append(Failure(f"{where}.parallel_tool_calls", repr(re_.parallel_tool_calls), repr(request.parallel_tool_calls)))
    if re_.tools is not None and request.tool_names != re_.tools:
        out.append(Failure(f"{where}.tools", repr(re_.tools), repr(request.tool_names)))
    if rec.wire is None:
        return out
    protocol = rec.provider
    label = f"{where} wire ({protocol})"
    if rec.wire_misaligned:
        return out + [Failure(label, "one request body per model call", rec.wire_misaligned)]
    body = rec.wire[re_.model_call - 1]
    if not isinstance(body, dict):
        return out + [Failure(label, "a JSON request body", repr(body)[:80])]
    if "tool_choice" in given:
        got = wire_format.tool_choice(protocol, body)
        if got != re_.tool_choice:
            out.append(Failure(f"{label}.tool_choice", repr(re_.tool_choice), repr(got)))
    if "parallel_tool_calls" in given:
        got = wire_format.parallel_tool_calls(protocol, body)
        wanted = False if re_.parallel_tool_calls is False else None
        if got is not wire_format.ABSENT and got != wanted:
            out.append(Failure(f"{label}.parallel_tool_calls", repr(wanted), repr(got)))
    if re_.tools is not None:
        got = wire_format.tool_names(protocol, body)
        if got != re_.tools:
            out.append(Failure(f"{label}.tools", repr(re_.tools), repr(got)))
    return out


# --- events ------------------------------------------------------------------------------------


def annotate(events: list[Any]) -> list[dict[str, Any]]:
    """Each loop event as the fields an :class:`EventSpec` can narrow on."""
    out = []
    rnd = call = 0
    for e in events:
        t = type(e)
        a: dict[str, Any] = {"type": e.type}
        if t in (MessageStart, MessageEnd):
            m = e.message
            if isinstance(m, AssistantMessage) and t is MessageStart:
                rnd += 1
                call = 0
            a["role"] = m.role
            a["text"] = m.text
            if isinstance(m, AssistantMessage):
                a["round"] = rnd
                a["reason"] = m.stop_reason
            elif isinstance(m, ToolResultMessage):
                a.update(round=rnd, call=call, id=m.tool_call_id, name=m.tool_name, is_error=m.is_error)
        elif t is ToolExecutionStart:
            call += 1
            a.update(round=rnd, call=call, id=e.tool_call_id, name=e.tool_name)
        elif t in (ToolExecutionUpdate, ToolExecutionEnd):
            a.update(round=rnd, call=call, id=e.tool_call_id, name=e.tool_name)
            if t is ToolExecutionEnd:
                a["is_error"] = e.is_error
                a["text"] = e.result.text
        elif t is TurnEnd:
            a.update(round=rnd, reason=e.message.stop_reason)
        elif t is TurnStart:
            a["round"] = rnd + 1
        elif t is AgentEnd:
            a["reason"] = e.reason
        out.append(a)
    return out


def _matches(spec: EventSpec, a: dict[str, Any]) -> bool:
    if spec.type != a["type"]:
        return False
    for key in ("round", "call", "id", "name", "is_error", "role", "reason"):
        want = getattr(spec, key)
        if want is not None and a.get(key) != want:
            return False
    return spec.text is None or not spec.text.problems(a.get("text", ""))


def check_events(specs: list[EventSpec], rec: RunRecord) -> list[Failure]:
    """The specs must match events in order (other events may come between)."""
    if not specs:
        return []
    assert rec.result is not None
    seen = annotate(rec.result.events)
    i = 0
    for spec in specs:
        while i < len(seen) and not _matches(spec, seen[i]):
            i += 1
        if i == len(seen):
            done = specs.index(spec)
            shown = " → ".join(s.describe() for s in specs[: done + 1])
            tail = ", ".join(_brief(a) for a in seen)
            return [Failure(f"events[{done}]", f"the ordered subsequence {shown}", f"no {spec.describe()} after the earlier matches; events were: {tail}")]
        i += 1
    return []


def _brief(a: dict[str, Any]) -> str:
    extra = [f"{k}={a[k]}" for k in ("round", "call", "role", "is_error", "reason") if k in a]
    return a["type"] + (f"({', '.join(extra)})" if extra else "")
