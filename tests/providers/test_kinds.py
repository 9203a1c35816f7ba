"""Every scriptable stop and content kind, on every protocol, through the adapter and its simulator.

For each kind of :data:`loopkit.script.KINDS` and each protocol, either the simulator renders the
kind and the adapter turns it into the right loopkit stop (streamed and as one body), or the
simulator refuses the turn when it is built with :class:`UnsupportedTurn` naming both.
"""

from __future__ import annotations

from typing import Any

import pytest

from loopkit import simulators
from loopkit.accumulate import accumulate
from loopkit.messages import AssistantMessage, ThinkingContent, Usage, UserMessage
from loopkit.provider import ModelRequest
from loopkit.providers import adapter_class
from loopkit.script import KINDS, Turn, UnsupportedTurn

PROTOCOLS = tuple(simulators.PROTOCOLS)
USAGE = Usage(input=10, output=50, total_tokens=60)
REFUSAL = "I can't help with that."
SECRET = "RW5jcnlwdGVkIHJlYXNvbmluZw=="  # redacted thinking data (base64, as Bedrock's blob needs)

# kind -> the turn scripting it
TURNS: dict[str, Turn] = {
    "length": Turn(text="The answer is cut sho", stop_reason="length", usage=USAGE),
    "stop_sequence": Turn(text="Counted to three", stop_sequence="FOUR", usage=USAGE),
    "refusal": Turn(refusal=REFUSAL, usage=USAGE),
    "content_filter": Turn(text="Here is how to", content_filter=True, usage=USAGE),
    "pause_turn": Turn(text="Still searching", pause_turn=True, usage=USAGE),
    "redacted_thinking": Turn(redacted_thinking=SECRET, text="Done.", usage=USAGE),
    "reasoning_tokens": Turn(text="Forty-two.", usage=USAGE, reasoning_tokens=30),
    "split_usage": Turn(text="A long answer in many small pieces.", usage=USAGE, split_usage=True, chunk_size=4),
}

# (kind, protocol) pairs whose API has no form for the kind
UNSUPPORTED = {
    ("stop_sequence", "openai_responses"),
    ("refusal", "gemini"), ("refusal", "bedrock"),
    ("pause_turn", "openai_chat"), ("pause_turn", "openai_responses"), ("pause_turn", "gemini"), ("pause_turn", "bedrock"),
    ("redacted_thinking", "openai_chat"), ("redacted_thinking", "gemini"),
    ("split_usage", "openai_chat"), ("split_usage", "openai_responses"), ("split_usage", "bedrock"),
}  # fmt: skip

# what a content filter is called in error_type, per protocol (the wire's own name)
FILTER_TYPES = {"openai_chat": "content_filter", "openai_responses": "content_filter", "anthropic": "refusal", "gemini": "SAFETY", "bedrock": "content_filtered"}


def test_every_kind_has_a_turn():
    assert set(TURNS) == set(KINDS)


def provider_for(protocol: str, sim: simulators.Simulator, stream: bool) -> Any:
    return adapter_class(protocol)(model="m", api_key="k", base_url="http://sim" + sim.base_path, transport=simulators.transport(sim), stream=stream)


def ask(protocol: str, turns: list[Turn], stream: bool) -> tuple[simulators.Simulator, Any, AssistantMessage]:
    sim = simulators.create(protocol, turns)
    provider = provider_for(protocol, sim, stream)
    return sim, provider, accumulate(provider.stream(ModelRequest([UserMessage(content="hi")])))


def check(kind: str, protocol: str, msg: AssistantMessage, stream: bool) -> None:
    if kind == "length":
        assert msg.stop_reason == "length" and msg.text == "The answer is cut sho"
    elif kind == "stop_sequence":
        assert msg.stop_reason == "stop" and msg.text == "Counted to three" and msg.error_message is None
    elif kind == "refusal":
        # never a clean stop: an error stop naming the refusal, the text kept where the API gives it
        assert msg.stop_reason == "error" and msg.error_type == "refusal"
        assert REFUSAL in (msg.error_message or "") + msg.text
    elif kind == "content_filter":
        assert msg.stop_reason == "error" and msg.error_type == FILTER_TYPES[protocol] and msg.error_message
    elif kind == "pause_turn":
        assert msg.stop_reason == "stop" and msg.text == "Still searching"
    elif kind == "redacted_thinking":
        thinking = [b for b in msg.content if isinstance(b, ThinkingContent)]
        assert len(thinking) == 1 and thinking[0].redacted and thinking[0].thinking == "" and SECRET in (thinking[0].thinking_signature or "")
        assert msg.stop_reason == "stop" and msg.text == "Done."
    if kind in ("length", "stop_sequence", "refusal", "content_filter", "pause_turn", "reasoning_tokens", "split_usage"):
        # reasoning tokens are output tokens; usage spread over chunks adds up to the final counts
        assert (msg.usage.input, msg.usage.output) == (USAGE.input, USAGE.output)


def echoed_redacted(protocol: str, body: dict[str, Any]) -> list[Any]:
    """The redacted-thinking data the adapter sent back in a request body."""
    if protocol == "anthropic":
        return [b.get("data") for m in body["messages"] if m["role"] == "assistant" for b in m["content"] if b.get("type") == "redacted_thinking"]
    if protocol == "openai_responses":
        return [i.get("encrypted_content") for i in body["input"] if isinstance(i, dict) and i.get("type") == "reasoning"]
    if protocol == "bedrock":
        return [b["reasoningContent"].get("redactedContent") for m in body["messages"] if m["role"] == "assistant" for b in m["content"] if "reasoningContent" in b]
    raise AssertionError(protocol)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("kind", KINDS)
def test_kind(kind, protocol):
    turn = TURNS[kind]
    if (kind, protocol) in UNSUPPORTED:
        with pytest.raises(UnsupportedTurn) as info:
            simulators.create(protocol, [turn])
        assert (info.value.protocol, info.value.kind, info.value.turn) == (protocol, kind, 1)
        assert protocol in str(info.value) and repr(kind) in str(info.value)
        return
    for stream in (True, False):
        if kind == "split_usage" and not stream:
            continue  # one body has one usage
        sim, provider, msg = ask(protocol, [turn, Turn(text="ok")], stream)
        check(kind, protocol, msg, stream)
        if kind == "redacted_thinking":  # sent back unchanged on the next request
            accumulate(provider.stream(ModelRequest([UserMessage(content="hi"), msg, UserMessage(content="go on")])))
            assert echoed_redacted(protocol, sim.requests[1].json) == [SECRET]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_wire_stop_reason_must_be_one_of_the_protocols_values(protocol):
    with pytest.raises(UnsupportedTurn) as info:
        simulators.create(protocol, [Turn(text="x", wire_stop_reason="not_a_reason")])
    assert info.value.kind == "wire_stop_reason" and "not_a_reason" in str(info.value)


@pytest.mark.parametrize(
    ("protocol", "wire", "stop", "error_type"),
    [
        ("openai_chat", "content_filter", "error", "content_filter"),
        ("openai_responses", "max_output_tokens", "length", None),
        ("anthropic", "model_context_window_exceeded", "length", None),
        ("gemini", "RECITATION", "error", "RECITATION"),
        ("gemini", "MAX_TOKENS", "length", None),
        ("bedrock", "guardrail_intervened", "error", "guardrail_intervened"),
    ],
)
@pytest.mark.parametrize("stream", [True, False])
def test_wire_stop_reason_is_sent_as_written(protocol, wire, stop, error_type, stream):
    _, _, msg = ask(protocol, [Turn(text="partial", wire_stop_reason=wire)], stream)
    assert msg.stop_reason == stop and msg.error_type == error_type


def test_the_documented_table_says_which_protocols_refuse_which_kind():
    rows = [line for line in (simulators.__doc__ or "").splitlines() if line.split() and line.split()[0] in KINDS]
    table = {row.split()[0]: [cell.strip() for cell in _columns(row)] for row in rows}
    assert set(table) == set(KINDS)
    for kind, cells in table.items():
        refused = {p for p, cell in zip(PROTOCOLS, cells[1:]) if cell == "-"}
        assert refused == {p for k, p in UNSUPPORTED if k == kind}, kind


def _columns(line: str) -> list[str]:
    """Cut a table row at the column starts of the ``====`` rule under the header."""
    rule = next(l for l in (simulators.__doc__ or "").splitlines() if l.startswith("===="))
    starts = [i for i, ch in enumerate(rule) if ch == "=" and (i == 0 or rule[i - 1] == " ")]
    return [line[a:b] for a, b in zip(starts, starts[1:] + [None])]


def test_the_scripted_provider_reads_the_kinds_as_the_adapters_do():
    from loopkit.fakes import ScriptedProvider

    provider = ScriptedProvider([TURNS["refusal"], TURNS["content_filter"], TURNS["redacted_thinking"], TURNS["pause_turn"]])
    refusal, blocked, redacted, paused = (accumulate(provider.stream(ModelRequest([UserMessage(content="hi")]))) for _ in range(4))
    assert (refusal.stop_reason, refusal.error_type, refusal.text) == ("error", "refusal", REFUSAL)
    assert (blocked.stop_reason, blocked.error_type) == ("error", "content_filter")
    assert [(b.redacted, b.thinking_signature) for b in redacted.content if isinstance(b, ThinkingContent)] == [(True, SECRET)]
    assert (paused.stop_reason, paused.text) == ("stop", "Still searching")
