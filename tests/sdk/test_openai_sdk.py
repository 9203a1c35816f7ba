"""The official ``openai`` SDK pointed at the loopback simulators (Chat Completions and Responses).

The SDK (3.x) runs on ``httpx2``; it only needs ``base_url`` (``sim.base_url`` ends in ``/v1``).
Its stream helpers must parse the simulators' streams, and HTTP / mid-stream errors must raise the
SDK's own exception classes.
"""

from __future__ import annotations

import json

import pytest

openai = pytest.importorskip("openai")

from loopkit import simulators  # noqa: E402
from loopkit.script import HttpFault, MidStreamError, Turn, call  # noqa: E402

TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
RTOOL = {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "strict": False}
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]


_HTTP: list = []


def client(sim, max_retries: int = 0) -> openai.OpenAI:
    """An SDK client for ``sim``; one httpx2 client is shared (building one loads TLS roots)."""
    if not _HTTP:
        _HTTP.append(openai.DefaultHttpxClient())
    return openai.OpenAI(base_url=sim.base_url, api_key="sk-test", max_retries=max_retries, http_client=_HTTP[0])


# --- Chat Completions -----------------------------------------------------------------------


def test_chat_stream_helper_parses_tool_calls():
    script = [Turn(tool_calls=[call("get_weather", {"city": "Paris ✓"}, id="call_a"), call("get_weather", {"city": "Oslo"}, id="call_b")], chunk_size=3)]
    with simulators.serve("openai_chat", script) as sim:
        with client(sim).chat.completions.stream(model="gpt-x", messages=MESSAGES, tools=[TOOL], stream_options={"include_usage": True}) as stream:
            kinds = {event.type for event in stream}
            final = stream.get_final_completion()
    choice = final.choices[0]
    assert choice.finish_reason == "tool_calls"
    # ids and names are sent once per call, so the SDK's concatenating accumulator keeps them whole
    assert [(t.id, t.function.name, json.loads(t.function.arguments)) for t in choice.message.tool_calls] == [
        ("call_a", "get_weather", {"city": "Paris ✓"}),
        ("call_b", "get_weather", {"city": "Oslo"}),
    ]
    assert "tool_calls.function.arguments.done" in kinds
    assert final.usage is not None and final.usage.total_tokens > 0


def test_chat_stream_helper_parses_text():
    with simulators.serve("openai_chat", [Turn(text="It is sunny in Paris, 21°C.", chunk_size=4)]) as sim:
        with client(sim).chat.completions.stream(model="gpt-x", messages=MESSAGES) as stream:
            deltas = [e.delta for e in stream if e.type == "content.delta"]
            final = stream.get_final_completion()
    assert "".join(deltas) == final.choices[0].message.content == "It is sunny in Paris, 21°C."
    assert final.choices[0].finish_reason == "stop"


def test_chat_non_streaming_create():
    with simulators.serve("openai_chat", [Turn(text="hi", tool_calls=[call("get_weather", {"city": "X"}, id="call_z")])]) as sim:
        completion = client(sim).chat.completions.create(model="gpt-x", messages=MESSAGES, tools=[TOOL])
    assert completion.choices[0].message.tool_calls[0].id == "call_z" and completion.choices[0].message.content == "hi"


@pytest.mark.parametrize(
    ("status", "exc"),
    [(400, "BadRequestError"), (401, "AuthenticationError"), (404, "NotFoundError"), (429, "RateLimitError"), (500, "InternalServerError"), (503, "InternalServerError")],
)
def test_chat_http_errors_raise_sdk_classes(status, exc):
    with simulators.serve("openai_chat", [Turn(faults=[HttpFault(status=status, message=f"status {status}")])]) as sim:
        with pytest.raises(getattr(openai, exc)) as info:
            client(sim).chat.completions.create(model="gpt-x", messages=MESSAGES, stream=True)
    assert info.value.status_code == status and info.value.message.endswith(f"status {status}")
    assert info.value.request_id and info.value.request_id.startswith("req_sim")


def test_chat_real_400_for_parallel_tool_calls_without_tools():
    with simulators.serve("openai_chat", []) as sim:
        with pytest.raises(openai.BadRequestError) as info:
            client(sim).chat.completions.create(model="gpt-x", messages=MESSAGES, parallel_tool_calls=False)
    assert info.value.param == "parallel_tool_calls" and info.value.type == "invalid_request_error"


def test_chat_sdk_retries_on_429_with_retry_after():
    script = [Turn(faults=[HttpFault(status=429, retry_after=0.01)]), "ok"]
    with simulators.serve("openai_chat", script) as sim:
        assert client(sim, max_retries=1).chat.completions.create(model="gpt-x", messages=MESSAGES).choices[0].message.content == "ok"
        sim.assert_complete()


def test_chat_mid_stream_error_raises_api_error():
    with simulators.serve("openai_chat", [Turn(text="partial answer", chunk_size=2, faults=[MidStreamError(after=3, message="server melted")])]) as sim:
        with pytest.raises(openai.APIError, match="server melted"):
            for _ in client(sim).chat.completions.create(model="gpt-x", messages=MESSAGES, stream=True):
                pass


# --- Responses ------------------------------------------------------------------------------


def test_responses_stream_helper_parses_function_call_and_reasoning():
    script = [Turn(thinking="Need the tool.", thinking_signature="gAAAA-enc", tool_calls=[call("get_weather", {"city": "Paris"}, id="call_r")], chunk_size=2)]
    with simulators.serve("openai_responses", script) as sim:
        with client(sim).responses.stream(model="gpt-x", input="Weather in Paris?", tools=[RTOOL]) as stream:
            kinds = [e.type for e in stream]
            final = stream.get_final_response()
    reasoning, fc = final.output
    assert reasoning.type == "reasoning" and reasoning.encrypted_content == "gAAAA-enc" and reasoning.summary[0].text == "Need the tool."
    assert (fc.type, fc.call_id, fc.name, json.loads(fc.arguments)) == ("function_call", "call_r", "get_weather", {"city": "Paris"})
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.function_call_arguments.delta" in kinds


def test_responses_stream_helper_parses_text():
    with simulators.serve("openai_responses", [Turn(text="Sunny, 21°C.", chunk_size=3)]) as sim:
        with client(sim).responses.stream(model="gpt-x", input="Weather?") as stream:
            deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
            final = stream.get_final_response()
    assert "".join(deltas) == final.output_text == "Sunny, 21°C."
    assert final.status == "completed" and final.usage.total_tokens > 0


def test_responses_non_streaming_create():
    with simulators.serve("openai_responses", [Turn(text="plain")]) as sim:
        assert client(sim).responses.create(model="gpt-x", input="x").output_text == "plain"


@pytest.mark.parametrize(("status", "exc"), [(400, "BadRequestError"), (429, "RateLimitError"), (500, "InternalServerError")])
def test_responses_http_errors_raise_sdk_classes(status, exc):
    with simulators.serve("openai_responses", [Turn(faults=[HttpFault(status=status)])]) as sim:
        with pytest.raises(getattr(openai, exc)) as info:
            client(sim).responses.create(model="gpt-x", input="x", stream=True)
    assert info.value.status_code == status


def test_responses_mid_stream_error_raises_api_error():
    script = [Turn(text="partial", faults=[MidStreamError(after=4, message="You exceeded your current quota", error_type="insufficient_quota")])]
    with simulators.serve("openai_responses", script) as sim:
        with pytest.raises(openai.APIError, match="exceeded your current quota") as info:
            with client(sim).responses.stream(model="gpt-x", input="x") as stream:
                for _ in stream:
                    pass
    assert info.value.body["code"] == "insufficient_quota"
