"""A non-streamed answer decodes to the same message as the streamed answer to the same turn.

Each built-in adapter is run twice against its simulator for one scripted Turn: asking for a
stream (``stream=True``) and for a single JSON body (``stream=False``). The two messages must be
equal field by field (content blocks, stop reason, error type and message, usage, response id),
and :func:`loopkit.providers.decode` must give the same message from the two recorded bodies.
Every stop and content kind, every wire stop value and the tool-call shapes are covered.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from loopkit import simulators
from loopkit.accumulate import accumulate
from loopkit.errors import ConnectionClosedError, ProviderError
from loopkit.messages import AssistantMessage, Usage, UserMessage
from loopkit.provider import ModelRequest
from loopkit.providers import ADAPTERS, adapter_class, decode
from loopkit.retry import RetryPolicy
from loopkit.script import Truncate, Turn, call

USAGE = Usage(input=120, output=40, cache_read=30, cache_write=10)

TURNS: dict[str, Turn] = {
    "text": Turn(text="Hello there, friend."),
    "usage": Turn(text="Counted.", usage=Usage(input=11, output=7, cache_read=5, cache_write=2)),
    "tool_call": Turn(tool_calls=(call("get_weather", {"city": "Paris"}, id="call_w1"),)),
    "text_and_parallel_calls": Turn(text="Checking both.", tool_calls=(call("get_weather", {"city": "Paris"}, id="call_p1"), call("get_time", {"tz": "Asia/Tokyo"}, id="call_p2"))),
    "same_tool_twice": Turn(tool_calls=(call("get_weather", {"city": "Paris"}, id="call_s1"), call("get_weather", {"city": "Oslo"}, id="call_s2"))),
    "empty_arguments": Turn(tool_calls=(call("list_files", {}, id="call_e1"),)),
    "malformed_arguments": Turn(tool_calls=(call("get_weather", '{"city": "Par', id="call_m1"),)),
    "unicode": Turn(text="héllo 🌍 日本語 שלום e\u0301 \"quoted\"", tool_calls=(call("echo", {"s": "ü🌍\n"}, id="call_u1"),)),
    "thinking_then_calls": Turn(thinking="Let me think.", thinking_signature="sig-1", text="Calling.", tool_calls=(call("get_weather", {"city": "Paris"}, id="call_t1"),)),
    "length": Turn(text="Cut sho", stop_reason="length"),
    "length_mid_call": Turn(tool_calls=(call("get_weather", '{"city": "Pa', id="call_l1"),), stop_reason="length"),
    "stop_sequence": Turn(text="Up to the", stop_sequence="END"),
    "refusal": Turn(refusal="I can't help with that."),
    "content_filter": Turn(text="Partial answer", content_filter=True),
    "pause_turn": Turn(text="Still searching", pause_turn=True),
    "redacted_thinking": Turn(redacted_thinking="RW5jcnlwdGVk", text="Done."),
    "redacted_thinking_and_call": Turn(redacted_thinking="RW5jcnlwdGVk", thinking="visible", thinking_signature="sig-2", tool_calls=(call("get_time", {"tz": "UTC"}, id="call_r1"),)),
    "reasoning_tokens": Turn(text="Thought hard.", reasoning_tokens=25),
    "split_usage": Turn(text="Split.", split_usage=True),
    "refusal_split_usage": Turn(refusal="No.", split_usage=True),
}


def _cases() -> list[Any]:
    out = []
    for protocol in ADAPTERS:
        sim_class = type(simulators.create(protocol, []))
        turns = dict(TURNS)
        turns.update({f"wire:{w}": Turn(text="Done.", wire_stop_reason=w) for w in sorted(sim_class.wire_stop_values)})
        for name, turn in turns.items():
            if sim_class.cannot_send(turn) is None:
                out.append(pytest.param(protocol, turn, id=f"{protocol}-{name}"))
    return out


def _answer(protocol: str, turn: Turn, *, stream: bool) -> tuple[AssistantMessage, bytes]:
    """The message the adapter returns, and the response body the simulator sent."""
    if turn.usage is None:  # the simulator's own estimate counts the request, whose stream flag differs
        turn = dataclasses.replace(turn, usage=Usage(input=USAGE.input, output=max(USAGE.output, turn.reasoning_tokens or 0), cache_read=USAGE.cache_read, cache_write=USAGE.cache_write))
    sim = simulators.create(protocol, [turn])
    bodies: list[bytes] = []
    handle = sim.handle

    def recording(request: Any) -> Any:
        resp = handle(request)
        bodies.append(resp.body)
        return resp

    sim.handle = recording  # type: ignore[method-assign]
    provider = adapter_class(protocol)(model="sim-model", api_key="sim-key", stream=stream, transport=simulators.transport(sim))
    message = accumulate(list(provider.stream(ModelRequest([UserMessage(content="Go.")]))))
    assert sim.requests[0].json.get("stream", None) in ((True,) if stream else (False, None)) or protocol in ("gemini", "bedrock")
    return message, bodies[0]


def _fields(m: AssistantMessage) -> dict[str, Any]:
    out = dataclasses.asdict(m)
    out.pop("timestamp")
    return out


@pytest.mark.parametrize(("protocol", "turn"), _cases())
def test_non_streamed_answer_decodes_to_the_streamed_message(protocol: str, turn: Turn) -> None:
    streamed, stream_body = _answer(protocol, turn, stream=True)
    body_message, json_body = _answer(protocol, turn, stream=False)
    assert json_body.lstrip().startswith(b"{")
    assert _fields(body_message) == _fields(streamed)
    # the public decoder reads both recordings alike, as the adapter did (a Converse body names
    # no model: the adapter reports the one it asked for, decode() has none to report)
    decoded = _fields(decode(protocol, json_body))
    assert decoded == _fields(decode(protocol, stream_body))
    assert {**decoded, "model": streamed.model} == _fields(streamed)


@pytest.mark.parametrize("protocol", list(ADAPTERS))
def test_a_json_body_whose_connection_drops_is_not_an_answer(protocol: str) -> None:
    """A non-streamed body cut off by a dropped connection raises (and is retried when the policy
    allows, since nothing reached the caller): never a message read from half a body."""
    sim = simulators.create(protocol, [Turn(text="This body is cut off half-way.", faults=(Truncate(),))])
    provider = adapter_class(protocol)(model="sim-model", api_key="sim-key", stream=False, transport=simulators.transport(sim), retry=RetryPolicy(max_retries=0))
    with pytest.raises(ConnectionClosedError):
        list(provider.stream(ModelRequest([UserMessage(content="Go.")])))
    assert len(sim.requests) == 1

    sim = simulators.create(protocol, [Turn(text="Cut.", faults=(Truncate(),)), "Whole."])
    waits: list[float] = []
    retry = RetryPolicy(max_retries=1, base_delay=0.5, sleep=waits.append)
    provider = adapter_class(protocol)(model="sim-model", api_key="sim-key", stream=False, transport=simulators.transport(sim), retry=retry)
    message = accumulate(list(provider.stream(ModelRequest([UserMessage(content="Go.")]))))
    assert (message.text, len(sim.requests), waits) == ("Whole.", 2, [0.5])


@pytest.mark.parametrize("protocol", ["openai_responses", "anthropic", "gemini"])
def test_an_error_turn_fails_the_same_way_in_both_forms(protocol: str) -> None:
    """Where the API's JSON body can say the answer failed, both forms say the same."""
    turn = Turn(text="Par", error="The model failed", usage=Usage(input=3, output=1))
    outcomes = []
    for stream in (True, False):
        try:
            outcomes.append(_fields(_answer(protocol, turn, stream=stream)[0]))
        except ProviderError as exc:
            outcomes.append((type(exc), exc.error_type, str(exc)))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("protocol", list(ADAPTERS))
def test_the_simulator_cuts_a_json_body_half_way_and_drops_the_connection(protocol: str) -> None:
    text = "This body is cut off half-way."
    probe = simulators.create(protocol, [text])
    _ = list(adapter_class(protocol)(model="sim-model", api_key="sim-key", stream=False, transport=simulators.transport(probe)).stream(ModelRequest([UserMessage(content="Go.")])))
    request = probe.requests[0]  # a non-streamed request, as the adapter sends it
    full = simulators.create(protocol, [text]).handle(request)
    cut = simulators.create(protocol, [Turn(text=text, faults=(Truncate(),))]).handle(request)
    assert cut.truncated and not full.truncated
    assert cut.body == full.body[: len(full.body) // 2]
