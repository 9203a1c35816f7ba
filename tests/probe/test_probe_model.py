"""The probe's own behaviour: only allowed tools are called, the same seed draws the same calls,
reports render and serialise, and bad options are usage errors."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

import loopkit
from loopkit.errors import UsageError
from loopkit.probe import CASES, Probe
from loopkit.probe._model import heading_anchor
from loopkit.probe._render import report_table
from loopkit.providers import adapter_class

RAN: list[str] = []


@loopkit.tool
def delete_everything(path: str) -> str:
    """A tool with side effects."""
    RAN.append(path)
    return "deleted"


@loopkit.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    RAN.append("add")
    return a + b


def agent(base_url: str, prompt: str) -> str:
    provider = adapter_class("anthropic")(model="m", api_key="k", base_url=base_url)
    return loopkit.Runtime(provider).exec(prompt, tools=[delete_everything, add], max_iterations=5)


def test_a_tool_not_allowed_is_never_called():
    RAN.clear()
    report = Probe(agent, "anthropic", tools=["add"]).run()
    assert report.ok, [r.explain() for r in report.results if r.failed]
    assert "add" in RAN and set(RAN) == {"add"}
    assert report.tools == ["delete_everything", "add"] and report.allowed == ["add"]


def test_without_allowed_tools_the_cases_that_need_one_say_how_to_allow_it():
    RAN.clear()
    report = Probe(agent, "anthropic", cases=["valid_call", "unknown_tool", "never_stops", "reasoning"]).run()
    assert RAN == []
    assert report.result("valid_call").reason == "no tool may be called: allow one of delete_everything, add with tools=[...] (--tools NAME)"
    assert [r.status for r in report.results] == ["pass", "not-applicable", "pass", "pass", "pass"]
    assert report.result("never_stops").reason == "stopped after 5 model call(s)"


def test_the_same_seed_sends_the_same_calls():
    def plan(seed):
        p = Probe(agent, "anthropic", tools="all", seed=seed, cases=["parallel_calls"])
        try:
            p.run_case("text_answer")
            return [c.arguments for c in p._context and next(c for c in CASES if c.name == "parallel_calls").build(p._context).script[0].tool_calls]
        finally:
            p.close()

    assert plan(3) == plan(3)


def test_a_tool_the_agent_does_not_declare_is_a_usage_error():
    with pytest.raises(UsageError, match=r"tools=\['rm'\] are not among the tools the agent declared in its first request \(delete_everything, add\)"):
        Probe(agent, "anthropic", tools=["rm"], cases=[]).run()


def test_report_renders_and_serialises():
    report = Probe(agent, "anthropic", tools=["add"], cases=["valid_call", "refusal"]).run()
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(report_table(report))
    text = out.getvalue()
    assert "probe: agent (anthropic)" in text and "✓ pass" in text and "valid_call" in text
    data = json.loads(json.dumps(report.to_json()))
    assert data["counts"] == {"pass": 3, "fail": 0, "not-applicable": 0}
    assert data["results"][1]["rules"][0]["link"] == "probe.md#time-limits"


def test_heading_anchors_match_the_docs_site():
    assert heading_anchor("1.4 The cap on model calls is `max(1, max_iterations)`") == "14-the-cap-on-model-calls-is-max1-max_iterations"
    assert heading_anchor("5. `Runtime.exec`") == "5-runtimeexec"


def test_an_async_agent_is_awaited():
    import httpx

    async def async_agent(base_url: str, prompt: str) -> str:
        async with httpx.AsyncClient() as client:
            provider = adapter_class("anthropic")(model="m", api_key="k", base_url=base_url, async_client=client)
            result = await loopkit.arun(provider, prompt, tools=[add], max_iterations=5)
            return result.text

    report = Probe(async_agent, "anthropic", tools=["add"], cases=["valid_call"]).run()
    assert [r.status for r in report.results] == ["pass", "pass"], [r.explain() for r in report.results]


def test_an_agent_that_returns_no_text_fails_with_the_reason():
    report = Probe(lambda base_url, prompt: None, "anthropic", cases=[]).run()
    result = report.result("text_answer")
    assert result.status == "fail" and result.agent_error == "the agent returned NoneType, not the answer's text (str)"
