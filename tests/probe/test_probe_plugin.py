"""``@pytest.mark.loopkit_probe``: one test item per probe case, tested with pytester."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

pytest_plugins = ["pytester"]

INSTALLED = any(ep.value == "loopkit.pytest_probe" for ep in entry_points(group="pytest11"))
PLUGIN_ARGS = () if INSTALLED else ("-p", "loopkit.pytest_probe")
ROOT = str(Path(__file__).resolve().parents[2])

TEST_FILE = """
import pytest
from tests.probe.agents import AnthropicLoop, OpenAIChatLoop

@pytest.mark.loopkit_probe(agent=AnthropicLoop(), protocol="anthropic", tools=["add"], cases=["valid_call", "unknown_tool", "malformed_json"])
def test_good(loopkit_probe_case):
    loopkit_probe_case.raise_for_failure()

@pytest.mark.loopkit_probe(agent=OpenAIChatLoop("skip_results"), protocol="openai_chat", tools="all", cases=["parallel_calls", "reasoning"])
def test_broken(loopkit_probe_case):
    loopkit_probe_case.raise_for_failure()
"""


def test_each_case_is_an_item_with_its_outcome(pytester, monkeypatch):
    monkeypatch.syspath_prepend(ROOT)
    pytester.makepyfile(test_agent=TEST_FILE)
    result = pytester.runpytest(*PLUGIN_ARGS, "-v", "-rs", "-p", "no:randomly")
    result.assert_outcomes(passed=5, failed=1, skipped=1)
    result.stdout.fnmatch_lines([
        "*test_good?anthropic-text_answer? PASSED*",
        "*test_good?anthropic-valid_call? PASSED*",
        "*test_good?anthropic-unknown_tool? PASSED*",
        "*test_good?anthropic-malformed_json? PASSED*",
        "*test_broken?openai_chat-text_answer? PASSED*",
        "*test_broken?openai_chat-parallel_calls? FAILED*",
        "*probe case 'parallel_calls' failed*",
        "*rule: loop-contract.md § 2.2 Calls run one after another, in the order the model gave them*",
        "*SKIPPED*reasoning: Chat Completions carries no reasoning to pass back*",
    ])  # fmt: skip


def test_a_marker_without_a_protocol_is_a_usage_error(pytester, monkeypatch):
    monkeypatch.syspath_prepend(ROOT)
    pytester.makepyfile(test_agent="""
import pytest

@pytest.mark.loopkit_probe(agent=print)
def test_agent(loopkit_probe_case):
    pass
""")
    result = pytester.runpytest(*PLUGIN_ARGS)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*needs protocol='...'*"])
