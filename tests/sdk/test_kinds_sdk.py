"""Each scriptable stop and content kind, read back by the official SDK of every protocol that has
a field for it (openai, anthropic, google-genai, boto3), streamed and as one body."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from loopkit import simulators
from loopkit.messages import Usage
from loopkit.script import Turn

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")
boto3 = pytest.importorskip("boto3")
from botocore.config import Config
from google.genai import types

USAGE = Usage(input=10, output=50, total_tokens=60)
REFUSAL = "I can't help with that."
SECRET = base64.b64encode(b"encrypted reasoning").decode()
MESSAGES = [{"role": "user", "content": "hi"}]
_SHARED: dict[str, Any] = {}


def shared(name: str, make: Any) -> Any:
    """One HTTP client / session per SDK for the module: building one loads TLS roots or service
    models, which costs more than a test."""
    if name not in _SHARED:
        _SHARED[name] = make()
    return _SHARED[name]


def serve(protocol: str, turn: Turn) -> Any:
    return simulators.serve(protocol, [turn], sleep=lambda s: None)


# --- openai: Chat Completions --------------------------------------------------------------------


def oai(sim: Any) -> Any:
    return openai.OpenAI(base_url=sim.base_url, api_key="sk-test", max_retries=0, http_client=shared("openai", openai.DefaultHttpxClient))


def chat(turn: Turn, stream: bool) -> tuple[str | None, str | None, str | None, Any]:
    """``(content, refusal, finish_reason, usage)`` as the SDK's types carry them (streams read
    chunk by chunk: the stream helper raises on a length stop by design)."""
    with serve("openai_chat", turn) as sim:
        if not stream:
            out = oai(sim).chat.completions.create(model="gpt-x", messages=MESSAGES)
            m = out.choices[0].message
            return m.content, m.refusal, out.choices[0].finish_reason, out.usage
        content, refusal, finish, usage = [], [], None, None
        for chunk in oai(sim).chat.completions.create(model="gpt-x", messages=MESSAGES, stream=True, stream_options={"include_usage": True}):
            usage = chunk.usage or usage
            for choice in chunk.choices:
                content.append(choice.delta.content or "")
                refusal.append(choice.delta.refusal or "")
                finish = choice.finish_reason or finish
        return "".join(content) or None, "".join(refusal) or None, finish, usage


@pytest.mark.parametrize("stream", [True, False])
def test_chat_refusal(stream):
    assert chat(Turn(refusal=REFUSAL), stream)[:3] == (None, REFUSAL, "stop")


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(
    ("turn", "finish"),
    [(Turn(text="cut", stop_reason="length"), "length"), (Turn(text="Counted", stop_sequence="FOUR"), "stop"), (Turn(text="Here is", content_filter=True), "content_filter")],
    ids=["length", "stop_sequence", "content_filter"],
)
def test_chat_finish_reasons(turn, finish, stream):
    assert chat(turn, stream)[2] == finish


@pytest.mark.parametrize("stream", [True, False])
def test_chat_reasoning_tokens(stream):
    usage = chat(Turn(text="42", usage=USAGE, reasoning_tokens=30), stream)[3]
    assert usage.completion_tokens == 50 and usage.completion_tokens_details.reasoning_tokens == 30


# --- openai: Responses ---------------------------------------------------------------------------


def responses(turn: Turn, stream: bool) -> tuple[Any, list[str]]:
    """The final Response and the event types (raw stream: the helper insists on completed)."""
    with serve("openai_responses", turn) as sim:
        client = oai(sim)
        if not stream:
            return client.responses.create(model="gpt-x", input="hi"), []
        events = list(client.responses.create(model="gpt-x", input="hi", stream=True))
        return events[-1].response, [e.type for e in events]


@pytest.mark.parametrize("stream", [True, False])
def test_responses_refusal(stream):
    response, kinds = responses(Turn(refusal=REFUSAL), stream)
    [part] = response.output[0].content
    assert part.type == "refusal" and part.refusal == REFUSAL and response.status == "completed"
    assert not stream or {"response.refusal.delta", "response.refusal.done"} <= set(kinds)


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(("turn", "reason"), [(Turn(text="cut", stop_reason="length"), "max_output_tokens"), (Turn(text="Here is", content_filter=True), "content_filter")], ids=["length", "content_filter"])
def test_responses_incomplete(turn, reason, stream):
    response, kinds = responses(turn, stream)
    assert response.status == "incomplete" and response.incomplete_details.reason == reason
    assert not stream or kinds[-1] == "response.incomplete"


@pytest.mark.parametrize("stream", [True, False])
def test_responses_redacted_thinking_and_reasoning_tokens(stream):
    response, _ = responses(Turn(redacted_thinking=SECRET, text="Done.", usage=USAGE, reasoning_tokens=30), stream)
    reasoning = response.output[0]
    assert reasoning.type == "reasoning" and reasoning.encrypted_content == SECRET and reasoning.summary == []
    assert response.usage.output_tokens == 50 and response.usage.output_tokens_details.reasoning_tokens == 30


# --- anthropic -----------------------------------------------------------------------------------


def message(turn: Turn, stream: bool) -> Any:
    with serve("anthropic", turn) as sim:
        client = anthropic.Anthropic(base_url=sim.base_url, api_key="test-key", max_retries=0, http_client=shared("anthropic", anthropic.DefaultHttpxClient))
        if stream:
            with client.messages.stream(model="claude-x", max_tokens=100, messages=MESSAGES) as s:
                return s.get_final_message()
        return client.messages.create(model="claude-x", max_tokens=100, messages=MESSAGES)


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(
    ("turn", "stop", "sequence", "explanation"),
    [
        (Turn(text="Counted", stop_sequence="FOUR"), "stop_sequence", "FOUR", None),
        (Turn(text="cut", stop_reason="length"), "max_tokens", None, None),
        (Turn(text="Searching", pause_turn=True), "pause_turn", None, None),
        (Turn(refusal=REFUSAL), "refusal", None, REFUSAL),
        (Turn(text="Here is", content_filter=True), "refusal", None, None),
    ],
    ids=["stop_sequence", "length", "pause_turn", "refusal", "content_filter"],
)
def test_anthropic_stops(turn, stop, sequence, explanation, stream):
    msg = message(turn, stream)
    assert (msg.stop_reason, msg.stop_sequence) == (stop, sequence)
    assert (msg.stop_details.explanation if msg.stop_details else None) == explanation
    assert stop != "refusal" or msg.stop_details.type == "refusal"


@pytest.mark.parametrize("stream", [True, False])
def test_anthropic_redacted_thinking_and_thinking_tokens(stream):
    msg = message(Turn(redacted_thinking=SECRET, text="Done.", usage=USAGE, reasoning_tokens=30), stream)
    assert msg.content[0].type == "redacted_thinking" and msg.content[0].data == SECRET
    assert msg.usage.output_tokens == 50 and msg.usage.output_tokens_details.thinking_tokens == 30


def test_anthropic_split_usage_adds_up_in_the_stream_helper():
    msg = message(Turn(text="A long answer in pieces.", usage=USAGE, split_usage=True, chunk_size=4), True)
    assert (msg.usage.input_tokens, msg.usage.output_tokens) == (10, 50)


# --- google-genai --------------------------------------------------------------------------------


def gemini(turn: Turn, stream: bool) -> list[Any]:
    """The response chunks (one when not streaming)."""
    with serve("gemini", turn) as sim:
        client = shared("genai", lambda: genai.Client(api_key="test-key", http_options={"base_url": "http://127.0.0.1:9"}))
        config = types.GenerateContentConfig(http_options=types.HttpOptions(base_url=sim.base_url))
        if stream:
            return list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi", config=config))
        return [client.models.generate_content(model="gemini-2.5-flash", contents="hi", config=config)]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(
    ("turn", "finish"),
    [(Turn(text="cut", stop_reason="length"), "MAX_TOKENS"), (Turn(text="Counted", stop_sequence="FOUR"), "STOP"), (Turn(text="Here is", content_filter=True), "SAFETY")],
    ids=["length", "stop_sequence", "content_filter"],
)
def test_gemini_finish_reasons(turn, finish, stream):
    last = gemini(turn, stream)[-1].candidates[0]
    assert last.finish_reason == finish
    assert finish != "SAFETY" or any(r.blocked for r in last.safety_ratings)


@pytest.mark.parametrize("stream", [True, False])
def test_gemini_reasoning_tokens(stream):
    usage = gemini(Turn(text="42", usage=USAGE, reasoning_tokens=30), stream)[-1].usage_metadata
    assert (usage.candidates_token_count, usage.thoughts_token_count, usage.total_token_count) == (20, 30, 60)


def test_gemini_split_usage_grows_over_the_chunks():
    chunks = gemini(Turn(text="A long answer in many pieces.", usage=USAGE, split_usage=True, chunk_size=4), True)
    counts = [c.usage_metadata.candidates_token_count for c in chunks]
    assert len(chunks) > 2 and counts == sorted(counts) and counts[0] < counts[-1] == 50


# --- boto3 (Bedrock) -----------------------------------------------------------------------------


@pytest.fixture
def no_bearer(monkeypatch):
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def converse(turn: Turn, stream: bool) -> tuple[str, list[Any]]:
    """``(stopReason, content blocks or stream events)``."""
    with serve("bedrock", turn) as sim:
        client = shared("boto3", boto3.session.Session).client("bedrock-runtime", endpoint_url=sim.url, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x",
                              config=Config(retries={"total_max_attempts": 1, "mode": "standard"}))  # fmt: skip
        kw = {"modelId": "anthropic.claude", "messages": [{"role": "user", "content": [{"text": "hi"}]}]}
        if stream:
            events = list(client.converse_stream(**kw)["stream"])
            return next(e["messageStop"]["stopReason"] for e in events if "messageStop" in e), events
        out = client.converse(**kw)
        return out["stopReason"], out["output"]["message"]["content"]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(
    ("turn", "stop"),
    [(Turn(text="cut", stop_reason="length"), "max_tokens"), (Turn(text="Counted", stop_sequence="FOUR"), "stop_sequence"),
     (Turn(text="Here is", content_filter=True), "content_filtered"), (Turn(text="x", wire_stop_reason="guardrail_intervened"), "guardrail_intervened")],
    ids=["length", "stop_sequence", "content_filter", "wire_stop_reason"],
)  # fmt: skip
def test_bedrock_stop_reasons(turn, stop, stream, no_bearer):
    assert converse(turn, stream)[0] == stop


@pytest.mark.parametrize("stream", [True, False])
def test_bedrock_redacted_thinking(stream, no_bearer):
    _, out = converse(Turn(redacted_thinking=SECRET, text="Done."), stream)
    if stream:
        blob = next(e["contentBlockDelta"]["delta"]["reasoningContent"]["redactedContent"] for e in out if "reasoningContent" in e.get("contentBlockDelta", {}).get("delta", {}))
    else:
        blob = out[0]["reasoningContent"]["redactedContent"]
    assert blob == b"encrypted reasoning"  # botocore decodes the blob's base64
