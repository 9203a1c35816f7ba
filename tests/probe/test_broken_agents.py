"""Each check catches an agent that breaks its rule: a deliberately broken agent per check fails
the case that shows it, with the rule cited and the request that shows it."""

from __future__ import annotations

import pytest

from loopkit.probe import Probe

from .agents import RELEASE, AnthropicLoop, OpenAIChatLoop

BROKEN = [
    # (agent, protocol, case, the check that must fail, a phrase of its message)
    (OpenAIChatLoop("skip_results"), "openai_chat", "parallel_calls", "calls_answered", "by id, each once, in order"),
    (OpenAIChatLoop("wrong_ids"), "openai_chat", "parallel_calls", "calls_answered", "expected ['call_probe"),
    (AnthropicLoop("skip_results"), "anthropic", "parallel_calls", "accepted_by_api", "as the real API would"),
    (AnthropicLoop("no_error_flag"), "anthropic", "unknown_tool", "error_results", "is not marked as an error"),
    (AnthropicLoop("crash_on_bad"), "anthropic", "invalid_arguments", "error_results", "never called the model again"),
    (OpenAIChatLoop("extra_call"), "openai_chat", "text_answer", "stops_after_text", "after the final text answer"),
    (AnthropicLoop("first_delta_only"), "anthropic", "long_unicode", "answer_returned", "not the final answer's text"),
    (AnthropicLoop("no_cap"), "anthropic", "never_stops", "terminates", "never stopped"),
    (AnthropicLoop("no_retry"), "anthropic", "rate_limited", "retries_after", "gave up after the HTTP 429"),
    (AnthropicLoop("eager_retry"), "anthropic", "rate_limited", "retries_after", "before the 2 s its retry-after asked for"),
    (AnthropicLoop("partial_success"), "anthropic", "stream_cut", "no_partial_success", "broke off as a successful answer"),
    (AnthropicLoop("partial_success"), "anthropic", "mid_stream_error", "no_partial_success", "broke off as a successful answer"),
    (AnthropicLoop("refusal_blank"), "anthropic", "refusal", "refusal_ends_run", "does not show it"),
    (AnthropicLoop("drop_thinking"), "anthropic", "reasoning", "reasoning_passed_back", "does not pass the reasoning signature back"),
]


@pytest.mark.parametrize(("agent", "protocol", "case", "check", "phrase"), BROKEN, ids=[f"{a.defect}-{c}" for a, _, c, _, _ in BROKEN])
def test_broken_agent_fails_the_case(agent, protocol, case, check, phrase):
    # a 2 s retry-after: the eager agent's immediate retry took over the default 0.3 s once on a
    # loaded two-core machine, and passed the check it is here to fail
    report = Probe(agent, protocol, tools="all", cases=[case], limit=6, timeout=60, retry_after=2.0).run()
    assert report.result("text_answer").status == ("fail" if agent.defect in ("extra_call", "first_delta_only") else "pass")
    result = report.result(case)
    assert result.status == "fail", result
    failure = next(f for f in result.failures if f.check == check)
    assert phrase in failure.message
    assert failure.rule.link.endswith(".md#" + failure.rule.link.split("#")[1]) and failure.rule.heading in open(f"docs/{failure.rule.page}", encoding="utf-8").read() or failure.rule.page == "probe.md"
    assert report.exit_code == 1
    with pytest.raises(AssertionError, match=case):
        result.raise_for_failure()


def test_failure_carries_the_request_and_a_diff():
    report = Probe(OpenAIChatLoop("wrong_ids"), "openai_chat", tools="all", cases=["parallel_calls"]).run()
    checks = {f.check: f for f in report.result("parallel_calls").failures}
    assert set(checks) == {"accepted_by_api", "calls_answered", "answer_returned"}  # the simulator refuses it as the API does
    failure = checks["calls_answered"]
    assert failure.request == 2 and failure.body["messages"][-1]["role"] == "tool"
    assert failure.expected == ["call_probe001", "call_probe002", "call_probe003"]
    assert failure.actual == ["call_probe001", "call_probe001", "call_probe001"]
    assert failure.diff.splitlines()[3:] == [" [", '  "call_probe001",', '- "call_probe002",', '- "call_probe003"', '+ "call_probe001",', '+ "call_probe001"', " ]"]


def test_a_hung_agent_is_reported_with_the_time_limit():
    try:
        report = Probe(AnthropicLoop("hang"), "anthropic", tools="all", cases=["valid_call"], timeout=1.5).run()
    finally:
        RELEASE.set()
    result = report.result("valid_call")
    assert result.status == "fail"
    assert result.failures[0].check == "finishes_in_time"
    assert result.failures[0].message == "the agent hung: the agent did not return within 1.5 s; its last model call was request #1"


def test_a_hung_agent_does_not_leak_into_the_next_case():
    """Each case has its own URL prefix: the stale agent's late request is refused and kept
    aside, and the next case sees only its own."""
    import time

    from .agents import echo_agent

    gate = __import__("threading").Event()
    calls, late = [], []

    def agent(base_url: str, prompt: str) -> str:
        calls.append(base_url)
        if len(calls) == 3:  # the next case: wake the stale run and let its late request land now
            gate.set()
            for _ in range(500):
                if late:
                    break
                time.sleep(0.01)
        answer = echo_agent(base_url, prompt)
        if len(calls) == 2:  # the second run hangs, then sends one more request
            gate.wait(30)
            try:
                echo_agent(base_url, "a late request")
            except Exception as exc:
                late.append(str(exc))
        return answer

    probe = Probe(agent, "anthropic", cases=["long_unicode"], timeout=1)
    try:
        assert probe.run_case("text_answer").status == "pass"
        first = probe.run_case("long_unicode")
        probe._discovery = None  # run text_answer again: the case after the hang
        second = probe.run_case("text_answer")
    finally:
        probe.close()
    assert first.failures[0].check == "finishes_in_time"
    assert calls[1] != calls[2]  # a new address prefix for every case
    assert second.status == "pass" and second.model_calls == 1
    assert late and "410" in late[0] and [n for n, _ in probe._board.strays] == [2]
