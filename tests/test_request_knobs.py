"""``ModelRequest.max_tokens`` and ``ToolSpec.strict``: carried by the loop, kept by serde.

Each adapter's wire form of both is checked by the conformance cases ``request.max_tokens`` and
``request.tools.strict`` (tests/conformance/test_builtin.py runs them for every adapter).
"""

from __future__ import annotations

import asyncio

import loopkit
from loopkit.fakes import FunctionProvider
from loopkit.messages import user
from loopkit.provider import ModelRequest, ToolSpec
from loopkit.serde import dump_request, load_request


def test_run_and_arun_send_max_tokens_on_every_model_call() -> None:
    def weather(city: str) -> str:
        """Weather."""
        return "sunny"

    answers = iter([loopkit.Turn(tool_calls=(loopkit.call("weather", {"city": "Oslo"}),)), "Sunny."])
    provider = FunctionProvider(lambda request: next(answers))
    result = loopkit.run(provider, "Weather?", tools=[weather], max_tokens=77)
    assert result.reason == "stop"
    assert [r.max_tokens for r in provider.requests] == [77, 77]
    provider = FunctionProvider(lambda request: "Hi.")
    asyncio.run(loopkit.arun(provider, "Hi?", max_tokens=5))
    assert [r.max_tokens for r in provider.requests] == [5]


def test_serde_round_trips_max_tokens_and_strict() -> None:
    request = ModelRequest([user("Hi")], tools=[ToolSpec(name="t", strict=True), ToolSpec(name="u")], max_tokens=99)
    data = dump_request(request)
    assert data["max_tokens"] == 99 and data["tools"][0]["strict"] is True and "strict" not in data["tools"][1]
    assert load_request(data) == request
    assert load_request(data).tools[0].strict is True
    assert ModelRequest([user("Hi")], max_tokens=1) != ModelRequest([user("Hi")], max_tokens=2)
    assert request.next_call(2).max_tokens == 99
