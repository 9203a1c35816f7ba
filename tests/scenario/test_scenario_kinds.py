"""Scenario scripts take the stop and content kinds; a protocol with no form for one skips the
scenario with the simulator's own reason."""

from __future__ import annotations

import pytest

from loopkit.scenario import Scenario
from loopkit.scenario.loader import ScenarioFileError
from loopkit.scenario.model import PROVIDER_NAMES

REFUSAL = """
name: refusal_ends_the_run
prompt: Tell me a secret.
script:
  - refusal: I can't share that.
expect:
  end: {reason: error, model_calls: 1, error: {contains: "I can't share that."}}
"""

REDACTED = """
name: redacted_thinking_then_answer
prompt: Add them.
tools: {add: counter}
script:
  - redacted_thinking: RW5jcnlwdGVk
    tool_calls: [{name: add, arguments: {path: a}}]
  - text: Done.
    usage: {input: 10, output: 40}
    reasoning_tokens: 25
expect:
  end: {reason: stop, model_calls: 2}
"""


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_a_refusal_ends_the_run_as_an_error_or_is_skipped_with_the_reason(provider):
    result = Scenario.parse(REFUSAL).run(provider)
    if provider in ("gemini", "bedrock"):
        assert result.status == "skipped" and "cannot send a turn's 'refusal'" in result.skip_reason
    else:
        assert result.status == "passed", result.failures


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_redacted_thinking_round_trips_where_the_protocol_has_it(provider):
    result = Scenario.parse(REDACTED).run(provider)
    if provider in ("openai_chat", "gemini"):
        assert result.status == "skipped" and "redacted_thinking" in result.skip_reason
    else:
        assert result.status == "passed", result.failures


@pytest.mark.parametrize(
    ("turn", "words"),
    [
        ("{text: x, refusal: 'No.', pause_turn: true}", "a turn ends one way only"),
        ("{text: x, stop_sequence: ''}", "stop_sequence"),
        ("{text: x, reasoning_tokens: -1}", "reasoning_tokens"),
        ("{text: x, content_filter: maybe}", "content_filter"),
    ],
)
def test_bad_kinds_are_reported_with_their_place(turn, words):
    with pytest.raises(ScenarioFileError) as info:
        Scenario.parse(f"name: bad\nprompt: hi\nscript:\n  - {turn}\nexpect: {{end: {{reason: stop}}}}\n")
    assert words in str(info.value) and "script[0]" in str(info.value) and "1 problem" in str(info.value)
