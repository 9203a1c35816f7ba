"""Wire-level properties, for every protocol that has both an adapter and a simulator on this
branch: any chunking of a simulator's stream decodes to the same message, and a decoder fed
garbage raises only loopkit's typed errors."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopkit.accumulate import accumulate
from loopkit.errors import LoopkitError
from loopkit.messages import UserMessage
from loopkit.provider import ModelRequest, ToolSpec
from loopkit.script import Script, Turn
from loopkit.strategies import chunkings, scripted_calls

# (protocol, adapter class, simulator class); a pair whose modules are not here yet is left out
PAIRS = [
    ("openai_chat", "loopkit.providers.openai_chat:OpenAIChatProvider", "loopkit.simulators.openai_chat:OpenAIChatSimulator"),
    ("openai_responses", "loopkit.providers.openai_responses:OpenAIResponsesProvider", "loopkit.simulators.openai_responses:OpenAIResponsesSimulator"),
    ("anthropic", "loopkit.providers.anthropic:AnthropicProvider", "loopkit.simulators.anthropic:AnthropicSimulator"),
    ("gemini", "loopkit.providers.gemini:GeminiProvider", "loopkit.simulators.gemini:GeminiSimulator"),
    ("bedrock", "loopkit.providers.bedrock:BedrockProvider", "loopkit.simulators.bedrock:BedrockSimulator"),
]


def _load(ref: str) -> Any:
    module, _, name = ref.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


AVAILABLE = [(p, _load(a), _load(s)) for p, a, s in PAIRS]
AVAILABLE = [(p, a, s) for p, a, s in AVAILABLE if a is not None and s is not None]
IDS = [p for p, _, _ in AVAILABLE]

SPEC = ToolSpec(
    name="lookup",
    description="Look a city up.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]},
)
TURNS = st.builds(
    Turn,
    text=st.none() | st.text(max_size=40),
    tool_calls=scripted_calls([SPEC], malformed=False, min_size=0, max_size=2).map(tuple),
)


def wire_body(adapter_cls: Any, simulator_cls: Any, turn: Turn) -> tuple[Any, bytes]:
    """The adapter and the bytes its simulator streams for ``turn``."""
    from loopkit.simulators._core import SimRequest

    adapter = adapter_cls(model="sim-model", api_key="test-key")
    call, url, headers, content = adapter._prepare(ModelRequest([UserMessage(content="hi")], tools=[SPEC]))
    sim = simulator_cls(Script([turn]))
    response = sim.handle(SimRequest.from_url(call.method, url, headers, content))
    assert response.status == 200, response.body[:300]
    return adapter, response.body


def decode(adapter: Any, chunks: list[bytes]) -> Any:
    decoder = adapter.stream_decoder()
    events = [e for chunk in chunks for e in decoder.feed(chunk)]
    events += decoder.close()
    return accumulate(events)


@pytest.mark.skipif(not AVAILABLE, reason="no protocol has both an adapter and a simulator on this branch yet")
@pytest.mark.parametrize(("protocol", "adapter_cls", "simulator_cls"), AVAILABLE, ids=IDS)
def test_any_chunking_decodes_to_the_same_message(protocol, adapter_cls, simulator_cls):
    @settings(max_examples=max(25, settings.default.max_examples // 4))
    @given(TURNS, st.data())
    def check(turn, data):
        adapter, body = wire_body(adapter_cls, simulator_cls, turn)
        whole = decode(adapter, [body])
        assert whole.text == (turn.text or "")
        assert [(c.name, c.arguments) for c in whole.tool_calls] == [(c.name, dict(c.arguments)) for c in turn.tool_calls]
        chunks = data.draw(chunkings(body), label="chunks")
        again = decode(adapter, chunks)
        assert again.content == whole.content and again.stop_reason == whole.stop_reason

    check()


@pytest.mark.skipif(not AVAILABLE, reason="no protocol has both an adapter and a simulator on this branch yet")
@pytest.mark.parametrize(("protocol", "adapter_cls", "simulator_cls"), AVAILABLE, ids=IDS)
def test_decoders_raise_only_typed_errors_on_garbage(protocol, adapter_cls, simulator_cls):
    @settings(max_examples=max(50, settings.default.max_examples // 2))
    @given(st.data())
    def check(data):
        adapter, body = wire_body(adapter_cls, simulator_cls, Turn(text="hello", tool_calls=()))
        # garbage: random bytes, or the real body with bytes flipped, cut or spliced in
        garbage = data.draw(
            st.one_of(
                st.binary(max_size=200),
                st.tuples(st.integers(0, len(body) - 1), st.binary(min_size=1, max_size=8)).map(lambda p: body[: p[0]] + p[1] + body[p[0] + len(p[1]) :]),
                st.integers(0, len(body) - 1).map(lambda i: body[:i]),
            ),
            label="garbage",
        )
        chunks = data.draw(chunkings(garbage), label="chunks") if garbage else []
        decoder = adapter.stream_decoder()
        try:
            for chunk in chunks:
                decoder.feed(chunk)
            decoder.close()
        except LoopkitError:
            pass  # WireError, a decoded ProviderError, ConnectionClosedError: all typed

    check()
