"""google-genai (the official SDK) against the Gemini simulator on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

genai = pytest.importorskip("google.genai")
from google.genai import errors, types  # noqa: E402

from loopkit import simulators  # noqa: E402
from loopkit.script import HttpFault, MidStreamError, Turn, call  # noqa: E402

MODEL = "gemini-2.5-flash"
WEATHER = types.Tool(function_declarations=[types.FunctionDeclaration(
    name="get_weather", description="Weather for a city",
    parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)])  # fmt: skip
NO_AFC = types.AutomaticFunctionCallingConfig(disable=True)


@pytest.fixture(scope="module")
def client() -> Any:
    """One SDK client for the module (building one costs ~0.1 s); each test points its requests at
    its own simulator with per-request ``http_options``."""
    return genai.Client(api_key="test-key", http_options={"base_url": "http://127.0.0.1:9"})


@pytest.fixture
def served() -> Iterator[Any]:
    servers: list[Any] = []

    def start(script: list[Any], api_version: str | None = None, **config: Any) -> tuple[Any, types.GenerateContentConfig]:
        sim = simulators.serve("gemini", script, sleep=lambda s: None).start()
        servers.append(sim)
        options = types.HttpOptions(base_url=sim.base_url, api_version=api_version)
        return sim, types.GenerateContentConfig(http_options=options, **config)

    yield start
    for sim in servers:
        sim.stop()


def test_streamed_text_parses_with_the_sdk(served: Any, client: Any) -> None:
    sim, config = served([Turn(text="The capital of France is Paris.")])
    chunks = list(client.models.generate_content_stream(model=MODEL, contents="capital of France?", config=config))
    assert "".join(c.text or "" for c in chunks) == "The capital of France is Paris."
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    assert chunks[-1].usage_metadata.total_token_count > 0
    assert sim.requests[0].path == f"/v1/models/{MODEL}:streamGenerateContent"
    assert sim.requests[0].query == {"alt": "sse"}
    assert sim.requests[0].headers["x-goog-api-key"] == "test-key"
    sim.assert_complete()


def test_streamed_function_call_parses_with_the_sdk_on_v1beta(served: Any, client: Any) -> None:
    sim, config = served(
        [Turn(tool_calls=[call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "Oslo"})])], api_version="v1beta",
        tools=[WEATHER], automatic_function_calling=NO_AFC,
        tool_config=types.ToolConfig(function_calling_config=types.FunctionCallingConfig(mode="ANY", allowed_function_names=["get_weather"])),
    )  # fmt: skip
    chunks = list(client.models.generate_content_stream(model=MODEL, contents="weather?", config=config))
    calls = [fc for c in chunks for fc in (c.function_calls or [])]
    assert [(fc.name, fc.args, fc.id) for fc in calls] == [("get_weather", {"city": "Paris"}, None), ("get_weather", {"city": "Oslo"}, None)]
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    sent = json.loads(sim.requests[0].body)
    assert sim.requests[0].path == f"/v1beta/models/{MODEL}:streamGenerateContent"
    assert sent["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}}


def test_non_streaming_function_call_round_trip_with_the_sdk(served: Any, client: Any) -> None:
    sim, config = served([Turn(tool_calls=[call("get_weather", {"city": "Paris"})]), "It is sunny in Paris."], tools=[WEATHER], automatic_function_calling=NO_AFC)
    first = client.models.generate_content(model=MODEL, contents="weather in Paris?", config=config)
    fc = first.function_calls[0]
    assert (fc.name, fc.args) == ("get_weather", {"city": "Paris"})
    history = [
        types.Content(role="user", parts=[types.Part(text="weather in Paris?")]),
        first.candidates[0].content,
        types.Content(role="user", parts=[types.Part.from_function_response(name="get_weather", response={"output": "sunny"})]),
    ]
    assert client.models.generate_content(model=MODEL, contents=history, config=config).text == "It is sunny in Paris."
    sim.assert_complete()


@pytest.mark.parametrize(
    ("status", "cls", "status_name"),
    [(400, errors.ClientError, "INVALID_ARGUMENT"), (429, errors.ClientError, "RESOURCE_EXHAUSTED"), (500, errors.ServerError, "INTERNAL"), (503, errors.ServerError, "UNAVAILABLE")],
)
@pytest.mark.parametrize("stream", [True, False])
def test_http_errors_raise_the_sdk_exceptions(served: Any, client: Any, status: int, cls: type, status_name: str, stream: bool) -> None:
    _, config = served([Turn(faults=[HttpFault(status=status, message="scripted failure", retry_after=2 if status == 429 else None)])])
    with pytest.raises(cls) as info:
        if stream:
            list(client.models.generate_content_stream(model=MODEL, contents="x", config=config))
        else:
            client.models.generate_content(model=MODEL, contents="x", config=config)
    err = info.value
    assert (err.code, err.status, err.message) == (status, status_name, "scripted failure")
    if status == 429:
        assert {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"} in err.details["error"]["details"]


def test_mid_stream_error_raises_the_sdk_server_error(served: Any, client: Any) -> None:
    _, config = served([Turn(text="abcdefghijklmnopqrstuvwxyz", faults=[MidStreamError(after=1, message="overloaded", error_type="UNAVAILABLE")])])
    seen = []
    with pytest.raises(errors.ServerError) as info:
        for chunk in client.models.generate_content_stream(model=MODEL, contents="x", config=config):
            seen.append(chunk.text)
    assert seen == ["abcdefgh"]
    assert (info.value.code, info.value.status, info.value.message) == (503, "UNAVAILABLE", "overloaded")


def test_a_bad_api_key_is_a_client_error(served: Any) -> None:
    sim, config = served(["never"])
    client = genai.Client(api_key=" ", http_options={"base_url": sim.base_url})
    with pytest.raises(errors.ClientError) as info:
        client.models.generate_content(model=MODEL, contents="x", config=config)
    assert (info.value.code, info.value.status) == (400, "INVALID_ARGUMENT")
    assert info.value.details["error"]["details"][0]["reason"] == "API_KEY_INVALID"


def test_async_stream_function_call_and_error_with_the_sdk(served: Any) -> None:
    import asyncio

    sim, config = served([Turn(tool_calls=[call("get_weather", {"city": "Oslo"})]), Turn(faults=[HttpFault(status=429, retry_after=1)])],
                         tools=[WEATHER], automatic_function_calling=NO_AFC)  # fmt: skip

    async def go() -> list[Any]:
        client = genai.Client(api_key="test-key", http_options={"base_url": sim.base_url})
        stream = await client.aio.models.generate_content_stream(model=MODEL, contents="weather?", config=config)
        calls = [fc async for chunk in stream for fc in (chunk.function_calls or [])]
        with pytest.raises(errors.ClientError) as info:
            await client.aio.models.generate_content(model=MODEL, contents="again", config=config)
        assert info.value.code == 429
        return calls

    calls = asyncio.run(go())
    assert [(fc.name, fc.args) for fc in calls] == [("get_weather", {"city": "Oslo"})]
    sim.assert_complete()
