"""The checks a probe runs on what an agent sent and returned, each citing its rule in the docs.

A check is a function ``(Observed) -> list[Failure]``; :data:`CHECKS` names them all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..conformance._wire import MISSING
from ._model import Failure, Rule
from ._observe import Exchange, Observed, json_body

LOOP = "loop-contract.md"
WIRE = "wire.md"
R_RESULTS = Rule(LOOP, "2.2 Calls run one after another, in the order the model gave them")
R_ERROR_RESULT = Rule(LOOP, "2.3 Whatever goes wrong in a tool becomes an error result the model can read")
R_ERROR_FLAG = Rule(LOOP, "4.2 An error result reaches the model as an error")
R_STOP = Rule(LOOP, "1.1 The loop goes on while the model calls tools")
R_ANSWER = Rule(LOOP, "5. `Runtime.exec`")
R_CAP = Rule(LOOP, "1.4 The cap on model calls is `max(1, max_iterations)`")
R_ERROR_STOP = Rule(LOOP, "1.5 An error or aborted answer ends the run, and its tool calls never run")
R_PARTIAL = Rule(LOOP, "1.6 A provider that raises ends the run with reason `error`")
R_RETRY = Rule(WIRE, "0. Conventions shared by every protocol")
R_TIME = Rule("probe.md", "Time limits")
R_REASONING = {
    "openai_responses": Rule(WIRE, "2.6 Tool results going back"),
    "anthropic": Rule(WIRE, "3.6 Tool results going back"),
    "gemini": Rule(WIRE, "4.6 Tool results going back"),
    "bedrock": Rule(WIRE, "5.7 Tool results going back"),
}
R_PROTOCOL = {
    "openai_chat": Rule(WIRE, "1. OpenAI Chat Completions"),
    "openai_responses": Rule(WIRE, "2. OpenAI Responses API"),
    "anthropic": Rule(WIRE, "3. Anthropic Messages"),
    "gemini": Rule(WIRE, "4. Google Gemini (Developer API)"),
    "bedrock": Rule(WIRE, "5. Amazon Bedrock Converse / ConverseStream"),
}

Check = Callable[[Observed], list[Failure]]


def _fail(check: str, rule: Rule, message: str, exchange: Exchange | None = None, expected: Any = None, actual: Any = None) -> Failure:
    return Failure(
        check=check, rule=rule, message=message, request=exchange.number if exchange else None,
        body=exchange.body if exchange else None, expected=expected, actual=actual,
    )  # fmt: skip


def _clean(value: Any) -> Any:
    return None if value is MISSING else value


def _call_key(protocol: str, call: Any) -> str:
    return call.name if protocol == "gemini" else str(call.id)


def _answered(obs: Observed, body: Any, calls: tuple[Any, ...]) -> list[tuple[str, Any]]:
    """(key, SentResult) of the results in ``body`` that answer ``calls`` (by id; on Gemini, the
    last block of function responses, by name)."""
    wire = obs.wire
    if obs.protocol == "gemini":
        contents = json_body(body).get("contents") or []
        for c in reversed(contents):
            parts = c.get("parts") or [] if isinstance(c, dict) else []
            if any(isinstance(p, dict) and ("functionResponse" in p or "function_response" in p) for p in parts):
                results = wire.results({"contents": [c]})
                return [(str(r.name), r) for r in results]
        return []
    ids = {str(c.id) for c in calls}
    return [(str(_clean(r.id)), r) for r in wire.results(json_body(body)) if str(_clean(r.id)) in ids]


def calls_answered(obs: Observed) -> list[Failure]:
    """Every call of every tool-calling turn is answered exactly once, with its id, in order, in
    the next model call."""
    out = []
    script = obs.plan.script
    for k, turn in enumerate(script):
        if not turn.tool_calls or turn.faults:
            continue
        took = obs.consumed(k)
        if took is None:
            continue
        nxt = obs.after(took)
        if nxt is None:
            bad = any(_call_key(obs.protocol, c) in obs.plan.bad_calls for c in turn.tool_calls)
            if obs.plan.limit is None and not bad:  # stopping at its cap is allowed; error_results tells about bad calls
                out.append(_fail("calls_answered", R_RESULTS,
                    f"the agent never sent the results of turn {k + 1}'s {len(turn.tool_calls)} call(s) back to the model "
                    f"(it made {len(obs.posts)} model call(s) in all)", took))  # fmt: skip
            continue
        expected = [_call_key(obs.protocol, c) for c in turn.tool_calls]
        actual = [key for key, _ in _answered(obs, nxt.body, turn.tool_calls)]
        if actual != expected:
            what = "by name, in order" if obs.protocol == "gemini" else "by id, each once, in order"
            out.append(_fail("calls_answered", R_RESULTS,
                f"request #{nxt.number} should answer turn {k + 1}'s calls {what}: expected {expected}, sent {actual}",
                nxt, expected, actual))  # fmt: skip
    return out


def error_results(obs: Observed) -> list[Failure]:
    """Each bad call gets an error result: the protocol's error flag, or a non-empty text where the
    protocol has none."""
    out = []
    bad = obs.plan.bad_calls
    for k, turn in enumerate(obs.plan.script):
        calls = tuple(c for c in turn.tool_calls if _call_key(obs.protocol, c) in bad)
        took = obs.consumed(k)
        if not calls or took is None:
            continue
        nxt = obs.after(took)
        if nxt is None:
            out.append(_fail("error_results", R_ERROR_RESULT,
                f"after turn {k + 1}'s bad call(s) the agent never called the model again: the loop must go on with an error result"
                + (f"; the agent failed: {obs.run.error}" if obs.run.error else ""), took))  # fmt: skip
            continue
        sent = dict(_answered(obs, nxt.body, calls))
        for c in calls:
            key = _call_key(obs.protocol, c)
            r = sent.get(key)
            if r is None:
                continue  # calls_answered reports the missing result
            if obs.wire.error_flag != "none":
                if r.error is not True:
                    out.append(_fail("error_results", R_ERROR_FLAG,
                        f"the result of the bad call {key} ({c.name}) in request #{nxt.number} is not marked as an error "
                        f"({obs.wire.error_flag}); its text: {r.text[:200]!r}", nxt,
                        {"id": key, "error": True}, {"id": key, "error": r.error, "text": r.text[:200]}))  # fmt: skip
            elif not r.text.strip():
                out.append(_fail("error_results", R_ERROR_RESULT,
                    f"the result of the bad call {key} ({c.name}) in request #{nxt.number} has no text saying what was wrong", nxt,
                    {"id": key, "text": "<what was wrong>"}, {"id": key, "text": r.text}))  # fmt: skip
    return out


def stops_after_text(obs: Observed) -> list[Failure]:
    """No model call follows the final text answer."""
    last = len(obs.plan.script) - 1
    took = obs.consumed(last)
    if took is None:
        return []
    extra = obs.after(took)
    if extra is None:
        return []
    return [_fail("stops_after_text", R_STOP,
        f"the agent called the model again (request #{extra.number}) after the final text answer of turn {last + 1}", extra)]  # fmt: skip


def answer_returned(obs: Observed) -> list[Failure]:
    """The run succeeds and returns exactly the final answer's text as streamed."""
    expected = obs.plan.final_text
    run = obs.run
    if expected is None or run.timed_out:
        return []
    if not run.succeeded:
        last = obs.posts[-1] if obs.posts else None
        return [_fail("answer_returned", R_ANSWER, f"the run failed instead of returning the answer: {run.error}", last)]
    if run.output != expected:
        return [_fail("answer_returned", R_ANSWER, "the agent's output is not the final answer's text", None, expected, run.output)]
    return []


def terminates(obs: Observed) -> list[Failure]:
    """Under a model that never stops calling tools, the agent stops within its cap."""
    limit = obs.plan.limit or 0
    calls = len(obs.posts)
    over = obs.overruns
    if over:
        return [_fail("terminates", R_CAP,
            f"the agent never stopped: it was still calling the model after the probe's limit of {limit} model calls", over[0])]  # fmt: skip
    if obs.max_calls is not None and calls > obs.max_calls:
        return [_fail("terminates", R_CAP,
            f"the agent made {calls} model calls, more than its stated cap of {obs.max_calls}", obs.posts[obs.max_calls])]  # fmt: skip
    return []


def retries_after(obs: Observed) -> list[Failure]:
    """A 429 or 5xx is retried (after the retry-after the answer gave), and the retry succeeds."""
    posts = obs.posts
    if not posts:
        return []
    first = posts[0]
    if len(posts) < 2:
        return [_fail("retries_after", R_RETRY,
            f"the agent gave up after the HTTP {first.status} of request #{first.number} instead of retrying"
            + (f": {obs.run.error}" if obs.run.error else ""), first)]  # fmt: skip
    wait = posts[1].at - first.at
    wanted = obs.plan.retry_after
    if wanted is not None and wait < wanted * 0.9:
        return [_fail("retries_after", R_RETRY,
            f"the agent retried {wait:.3f} s after the 429, before the {wanted:g} s its retry-after asked for", posts[1],
            {"wait_seconds": f">= {wanted:g}"}, {"wait_seconds": round(wait, 3)})]  # fmt: skip
    return []


def no_partial_success(obs: Observed) -> list[Failure]:
    """A stream that broke off is never reported as a success (a retry's full answer is fine)."""
    run = obs.run
    if not run.succeeded or run.output == obs.plan.recovered_text:
        return []
    cut = obs.posts[0] if obs.posts else None
    return [_fail("no_partial_success", R_PARTIAL,
        "the agent reported a stream that broke off as a successful answer", cut, obs.plan.recovered_text, run.output)]  # fmt: skip


def refusal_ends_run(obs: Observed) -> list[Failure]:
    """A refusal ends the run: no further model call, and no answer other than the refusal."""
    out = []
    posts = obs.posts
    if len(posts) > 1:
        out.append(_fail("refusal_ends_run", R_ERROR_STOP, f"the agent called the model again (request #{posts[1].number}) after a refusal", posts[1]))
    run = obs.run
    text = obs.plan.refusal_text or ""
    if run.succeeded and text not in (run.output or ""):
        out.append(_fail("refusal_ends_run", R_ERROR_STOP, "the agent reported a refusal as an answer that does not show it", None, text, run.output))
    return out


def reasoning_passed_back(obs: Observed) -> list[Failure]:
    """Reasoning comes back to the model with its signature in the next request."""
    sig = obs.plan.signature
    took = obs.consumed(0)
    if sig is None or took is None:
        return []
    nxt = obs.after(took)
    rule = R_REASONING.get(obs.protocol, R_RESULTS)
    if nxt is None:
        return [_fail("reasoning_passed_back", rule, "the agent never called the model again after the reasoning turn", took)]
    body = json_body(nxt.body)
    passed = [_clean(s) for _, s in obs.wire.reasoning_passed_back(body)]
    if sig in passed:
        return []
    if obs.protocol == "openai_responses" and body.get("store") is not False:
        items = [i for i in body.get("input") or [] if isinstance(i, dict) and i.get("type") in ("reasoning", "item_reference")]
        if items:
            return []  # stored on the server side: the item's id stands for its content
    return [_fail("reasoning_passed_back", rule,
        f"request #{nxt.number} does not pass the reasoning signature back", nxt, [sig], passed)]  # fmt: skip


def accepted_by_api(obs: Observed) -> list[Failure]:
    """Every request is one the real API accepts (the simulator validates as the API does)."""
    out = []
    for e in obs.exchanges:
        if e.status in (400, 404, 422):
            out.append(_fail("accepted_by_api", R_PROTOCOL[obs.protocol],
                f"the simulator rejected request #{e.number} ({e.request.method} {e.request.path}) with HTTP {e.status}, as the real API would",
                e))  # fmt: skip
            break
    return out


def finishes_in_time(obs: Observed) -> list[Failure]:
    """The agent finishes within the probe's wall-clock limit."""
    if not obs.run.timed_out:
        return []
    last = obs.posts[-1] if obs.posts else None
    where = f"; its last model call was request #{last.number}" if last else "; it made no model call"
    return [_fail("finishes_in_time", R_TIME, f"the agent hung: {obs.run.error}{where}", last)]


CHECKS: dict[str, Check] = {
    f.__name__: f
    for f in (
        calls_answered, error_results, stops_after_text, answer_returned, terminates, retries_after,
        no_partial_success, refusal_ends_run, reasoning_passed_back, accepted_by_api, finishes_in_time,
    )
}  # fmt: skip
RULES: dict[str, Rule] = {
    "calls_answered": R_RESULTS, "error_results": R_ERROR_RESULT, "stops_after_text": R_STOP, "answer_returned": R_ANSWER,
    "terminates": R_CAP, "retries_after": R_RETRY, "no_partial_success": R_PARTIAL, "refusal_ends_run": R_ERROR_STOP,
    "reasoning_passed_back": Rule(WIRE, "0.3 Tool calls at a glance"), "accepted_by_api": Rule(WIRE, "0. Conventions shared by every protocol"),
    "finishes_in_time": R_TIME,
}  # fmt: skip
"""The rule each check cites (a check may cite a more precise one per protocol in its failures)."""
ALWAYS = ("finishes_in_time", "accepted_by_api")
"""Checks every case runs."""
