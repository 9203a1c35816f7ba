"""Correct agents pass every probe case that applies: loopkit's own engine behind its adapter on
every protocol, and hand-written loops over the official openai and anthropic SDKs."""

from __future__ import annotations

import pytest

from loopkit.probe import Probe

from .agents import AnthropicLoop, OpenAIChatLoop, engine_agent

QUICK = ["valid_call", "unknown_tool", "malformed_json", "parallel_calls", "reasoning", "refusal"]


def _assert_clean(report):
    assert [r.explain() for r in report.results if r.failed] == []
    return {r.case: r.status for r in report.results}


def test_engine_on_anthropic_passes_every_case():
    report = Probe(engine_agent("anthropic"), "anthropic", tools="all", timeout=60).run()
    statuses = _assert_clean(report)
    assert statuses == {c: "pass" for c in statuses}  # Anthropic can script every case, refusals too
    assert report.tools == ["add", "get_weather"]
    assert report.result("never_stops").reason == "stopped after 10 model call(s)"


@pytest.mark.parametrize("protocol", ["openai_chat", "openai_responses", "gemini", "bedrock"])
def test_engine_on_other_protocols(protocol):
    report = Probe(engine_agent(protocol), protocol, tools="all", cases=QUICK, timeout=60).run()
    statuses = _assert_clean(report)
    not_applicable = {r.case: r.reason for r in report.results if r.status == "not-applicable"}
    expected = {
        "openai_chat": {"reasoning": "Chat Completions carries no reasoning to pass back"},
        "openai_responses": {},
        "gemini": {"malformed_json": "Gemini sends arguments as a JSON object (a Struct): they cannot be broken JSON on this wire"},
        "bedrock": {"refusal": "the bedrock API has no refusal form that carries text"},
    }[protocol]
    assert not_applicable == expected, statuses


def test_anthropic_sdk_loop_passes_every_case():
    report = Probe(AnthropicLoop(), "anthropic", tools=["add", "get_weather"], timeout=60).run()
    _assert_clean(report)
    assert report.result("rate_limited").model_calls == 2


def test_openai_sdk_loop_passes_every_case_that_applies():
    report = Probe(OpenAIChatLoop(), "openai_chat", tools="all", timeout=60, cases=["valid_call", "unknown_tool", "parallel_calls", "rate_limited", "long_unicode"]).run()
    _assert_clean(report)
