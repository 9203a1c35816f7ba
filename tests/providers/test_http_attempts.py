"""``HttpProvider.attempts`` counts HTTP attempts per model call, also when the loop closes the
stream at its terminal event (code after a generator's last yield never runs then)."""

from __future__ import annotations

import asyncio

from loopkit import simulators

import loopkit
from loopkit.providers import adapter_class
from loopkit.retry import RetryPolicy
from loopkit.script import HttpFault, Turn


def _provider(protocol: str, turns: list) -> object:
    sim = simulators.create(protocol, turns)
    waits: list[float] = []

    async def asleep(s: float) -> None:
        waits.append(s)

    retry = RetryPolicy(max_retries=2, sleep=waits.append, asleep=asleep)
    return adapter_class(protocol)(model="m", api_key="k", base_url="http://sim" + sim.base_path, transport=simulators.transport(sim), retry=retry)


def test_attempts_are_counted_under_the_sync_loop() -> None:
    turns = [Turn(faults=(HttpFault(status=429, retry_after=0.25),)), "hello", "again"]
    provider = _provider("anthropic", turns)
    assert loopkit.run(provider, "hi").text == "hello"
    assert loopkit.run(provider, "hi").text == "again"
    assert provider.attempts == [2, 1]


def test_attempts_are_counted_under_the_async_loop() -> None:
    provider = _provider("openai_chat", [Turn(faults=(HttpFault(status=500),)), Turn(faults=(HttpFault(status=503),)), "ok"])
    assert asyncio.run(loopkit.arun(provider, "hi")).text == "ok"
    assert provider.attempts == [3]


def test_a_failed_call_records_its_attempts_too() -> None:
    provider = _provider("bedrock", [Turn(faults=(HttpFault(status=400),))])
    result = loopkit.run(provider, "hi")
    assert result.reason == "error"
    assert provider.attempts == [1]
