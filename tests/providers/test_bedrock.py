"""The Bedrock Converse adapter against the Bedrock simulator (in process) and recorded fixtures."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopkit import simulators
from loopkit.accumulate import accumulate
from loopkit.errors import (
    BadRequestError,
    ConnectionClosedError,
    EventStreamChecksumError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamError,
    UsageError,
    WireError,
)
from loopkit.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    user,
)
from loopkit.provider import ModelRequest, ToolSpec
from loopkit.providers.bedrock import (
    BedrockProvider,
    ConverseStreamDecoder,
    decode_converse_body,
    encode_messages,
    http_error,
    inference_config,
    stream_exception,
)
from loopkit.retry import RetryPolicy
from loopkit.script import Delay, HttpFault, MidStreamError, Truncate, Turn, call
from loopkit.simulators import _eventstream as sim_es

FIXTURES = Path(__file__).parent.parent / "fixtures" / "bedrock"
MODEL = "us.amazon.nova-micro-v1:0"
ADD = ToolSpec(
    name="add",
    description="Add two numbers.",
    parameters={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
)
WEATHER = ToolSpec(name="weather", description="Weather in a city.", parameters={"type": "object", "properties": {"city": {"type": "string"}}})


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(script, *, stream=True, sim_options=None, **options):
    """A simulator and an adapter wired to it in process, with recorded sleeps."""
    sim = simulators.create("bedrock", script, **(sim_options or {}))
    sleeps = Sleeps()
    provider = BedrockProvider(
        model=MODEL,
        api_key="test-key",
        base_url="http://bedrock.test",
        transport=simulators.transport(sim, sleep=sleeps),
        stream=stream,
        retry=RetryPolicy(max_retries=2, base_delay=0.25, sleep=sleeps),
        **options,
    )
    return sim, provider, sleeps


def ask(provider, *messages, tools=(ADD,), **kw):
    return accumulate(provider.stream(ModelRequest(list(messages) or [user("hi")], tools=tools, **kw)))


def expected(content, stop="stop", usage=None, **kw):
    return AssistantMessage(
        content=content, stop_reason=stop, api="bedrock-converse", provider="bedrock", model=MODEL, usage=usage or Usage(), **kw
    )


USAGE = Usage(input=11, output=7, total_tokens=18)


@pytest.mark.parametrize("stream", [True, False])
def test_text_answer(stream):
    sim, provider, _ = make([Turn(text="Hello from Bedrock, in pieces.", usage=USAGE)], stream=stream)
    assert ask(provider) == expected([TextContent(text="Hello from Bedrock, in pieces.")], usage=USAGE)
    req = sim.requests[0]
    assert req.path == f"/model/us.amazon.nova-micro-v1%3A0/{'converse-stream' if stream else 'converse'}"
    assert req.headers["authorization"] == "Bearer test-key"
    assert req.json == {
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "add", "inputSchema": {"json": dict(ADD.parameters)}, "description": "Add two numbers."}}]},
    }
    sim.assert_complete()


@pytest.mark.parametrize("stream", [True, False])
def test_one_tool_call_then_result_round_trip(stream):
    sim, provider, _ = make(
        [Turn(text="<thinking>add</thinking>", tool_calls=[call("add", {"a": 2, "b": 3}, id="tooluse_Ze_bgl9CSqu8aJv7XD-_Dw")], usage=USAGE), Turn(text="5", usage=USAGE)],
        stream=stream,
    )
    first = ask(provider, user("2+3?"))
    tc = ToolCall(id="tooluse_Ze_bgl9CSqu8aJv7XD-_Dw", name="add", arguments={"a": 2, "b": 3})
    assert first == expected([TextContent(text="<thinking>add</thinking>"), tc], stop="toolUse", usage=USAGE)
    result = ToolResultMessage(tool_call_id=tc.id, tool_name="add", content=[TextContent(text="5")])
    assert ask(provider, user("2+3?"), first, result).text == "5"
    assert sim.requests[1].json["messages"] == [
        {"role": "user", "content": [{"text": "2+3?"}]},
        {"role": "assistant", "content": [{"text": "<thinking>add</thinking>"}, {"toolUse": {"toolUseId": tc.id, "name": "add", "input": {"a": 2, "b": 3}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": tc.id, "content": [{"text": "5"}]}}]},
    ]
    sim.assert_complete()


@pytest.mark.parametrize("stream", [True, False])
def test_parallel_calls_and_their_results_in_one_user_message(stream):
    calls = [call("add", {"a": 1, "b": 2}), call("weather", {"city": "Paris"}), call("add", {"a": 3, "b": 4})]
    sim, provider, _ = make([Turn(tool_calls=calls), Turn(text="done")], stream=stream)
    first = ask(provider, tools=(ADD, WEATHER))
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("add", {"a": 1, "b": 2}), ("weather", {"city": "Paris"}), ("add", {"a": 3, "b": 4})]
    assert len({c.id for c in first.tool_calls}) == 3 and all(c.id.startswith("tooluse_") for c in first.tool_calls)
    assert first.stop_reason == "toolUse" and first.content == first.tool_calls
    results = [ToolResultMessage(tool_call_id=c.id, tool_name=c.name, content=[TextContent(text=f"r{i}")]) for i, c in enumerate(first.tool_calls)]
    ask(provider, user("hi"), first, *results, tools=(ADD, WEATHER))
    sent = sim.requests[1].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert [b["toolResult"]["toolUseId"] for b in sent[2]["content"]] == [c.id for c in first.tool_calls]


@pytest.mark.parametrize(
    ("raw", "arguments", "raw_arguments"),
    [('{"a": 1, "b"', None, '{"a": 1, "b"'), ("[1, 2]", [1, 2], None), ("", {}, None), ('"just a string"', "just a string", None)],
)
def test_malformed_arguments_reach_the_message_as_sent(raw, arguments, raw_arguments):
    sim, provider, _ = make([Turn(tool_calls=[call("add", raw, id="tooluse_x")], chunk_size=3)])
    [tc] = ask(provider).tool_calls
    assert (tc.arguments, tc.raw_arguments) == (arguments, raw_arguments)


def test_unparseable_arguments_are_echoed_as_an_empty_object():
    bad = ToolCall(id="tooluse_x", name="add", arguments=None, raw_arguments='{"a": 1')
    nonobject = ToolCall(id="tooluse_y", name="add", arguments=[1, 2])
    history = [user("hi"), expected([bad, nonobject], stop="toolUse")]
    sent = encode_messages(history, error_status=True)
    assert [b["toolUse"]["input"] for b in sent[1]["content"]] == [{}, {}]


@pytest.mark.parametrize("stop", ["error", "aborted"])
def test_an_answer_that_failed_with_an_unrun_call_is_left_out_of_the_next_request(stop):
    """The run ended at the failed answer, so its call never got a result; echoing it made the
    next request a ValidationException ("Expected toolResult blocks ...")."""
    sim, provider, _ = make([Turn(text="It is 5.")])
    failed = expected([TextContent(text="Let me add."), ToolCall(id="tooluse_f", name="add", arguments={"a": 2, "b": 3})], stop=stop, error_message="Overloaded")
    assert ask(provider, user("2+3?"), failed, user("Again, please.")).text == "It is 5."
    assert sim.requests[0].json["messages"] == [{"role": "user", "content": [{"text": "2+3?"}, {"text": "Again, please."}]}]


TOOL_HISTORY = [
    user("2+3?"),
    expected([ToolCall(id="tooluse_a", name="add", arguments={"a": 2, "b": 3})], stop="toolUse"),
    ToolResultMessage(tool_call_id="tooluse_a", tool_name="add", content=[TextContent(text="5")]),
]


@pytest.mark.parametrize(
    ("choice", "history", "tool_choice"),
    [
        (None, False, "absent"),
        ("auto", False, {"auto": {}}),
        ("required", False, {"any": {}}),
        ({"type": "function", "name": "add"}, False, {"tool": {"name": "add"}}),
        ({"type": "function", "function": {"name": "add"}}, False, {"tool": {"name": "add"}}),
        ("none", False, "no toolConfig"),
        ("none", True, "absent"),
        ("required", True, {"any": {}}),
    ],
)
def test_every_tool_choice_form_in_the_received_body(choice, history, tool_choice):
    sim, provider, _ = make([Turn(text="ok")])
    messages = TOOL_HISTORY if history else [user("hi")]
    assert ask(provider, *messages, tool_choice=choice, parallel_tool_calls=False).text == "ok"
    body = sim.requests[0].json
    if tool_choice == "no toolConfig":
        assert "toolConfig" not in body
    elif tool_choice == "absent":
        assert "toolChoice" not in body["toolConfig"] and body["toolConfig"]["tools"]
    else:
        assert body["toolConfig"]["toolChoice"] == tool_choice
    assert "parallel" not in json.dumps(body)


def test_unknown_tool_choice_is_a_usage_error():
    _, provider, _ = make([])
    with pytest.raises(UsageError, match="unsupported tool_choice"):
        ask(provider, tool_choice={"type": "mystery"})


@pytest.mark.parametrize(("error_status", "block"), [
    (True, {"toolUseId": "tooluse_a", "content": [{"text": "country not supported"}], "status": "error"}),
    (False, {"toolUseId": "tooluse_a", "content": [{"text": "Error: country not supported"}]}),
])
def test_is_error_round_trip(error_status, block):
    sim, provider, _ = make([Turn(text="sorry")], error_status=error_status)
    failed = ToolResultMessage(tool_call_id="tooluse_a", tool_name="add", content=[TextContent(text="country not supported")], is_error=True)
    ask(provider, *TOOL_HISTORY[:2], failed)
    assert sim.requests[0].json["messages"][2]["content"] == [{"toolResult": block}]


STOP_CASES = [
    ("end_turn", "stop"),
    ("stop_sequence", "stop"),
    ("tool_use", "toolUse"),
    ("max_tokens", "length"),
    ("model_context_window_exceeded", "length"),
    ("guardrail_intervened", "error"),
    ("content_filtered", "error"),
    ("malformed_tool_use", "error"),
    ("malformed_model_output", "error"),
]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(("wire", "normalised"), STOP_CASES)
def test_every_stop_reason(stream, wire, normalised):
    sim, provider, _ = make([Turn(text="partial answer", usage=USAGE, wire_stop_reason=wire)], stream=stream)
    msg = ask(provider)
    assert msg.stop_reason == normalised
    assert msg.text == "partial answer" and msg.usage == USAGE
    if normalised == "error":
        assert msg.error_type == wire and wire in msg.error_message
    else:
        assert msg.error_message is None


@pytest.mark.parametrize("stream", [True, False])
def test_usage_with_cache_counts(stream):
    usage = Usage(input=100, output=20, cache_read=64, cache_write=8, total_tokens=120)
    _, provider, _ = make([Turn(text="x", usage=usage)], stream=stream)
    assert ask(provider).usage == usage


@pytest.mark.parametrize("stream", [True, False])
def test_thinking_with_signature_round_trips(stream):
    sim, provider, _ = make([Turn(thinking="let me think", thinking_signature="sig==", text="42"), Turn(text="ok")], stream=stream)
    msg = ask(provider)
    assert msg.content == [ThinkingContent(thinking="let me think", thinking_signature="sig=="), TextContent(text="42")]
    ask(provider, user("q"), msg, user("and?"))
    assert sim.requests[1].json["messages"][1]["content"][0] == {"reasoningContent": {"reasoningText": {"text": "let me think", "signature": "sig=="}}}


# --- faults and retries -----------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
def test_429_is_retried_honouring_x_amz_retry_after(stream):
    sim, provider, sleeps = make([Turn(faults=[HttpFault(status=429, retry_after=1.5)]), Turn(faults=[HttpFault(status=503)]), Turn(text="ok")], stream=stream)
    assert ask(provider).text == "ok"
    assert sleeps == [1.5, 0.5]
    assert provider.attempts == [3]
    sim.assert_complete()


@pytest.mark.parametrize(
    ("status", "cls", "shape"),
    [
        (400, BadRequestError, "ValidationException"),
        (403, PermissionDeniedError, "AccessDeniedException"),
        (424, ProviderError, "ModelErrorException"),
        (429, RateLimitError, "ThrottlingException"),
        (500, ServerError, "InternalServerException"),
        (503, ServerError, "ServiceUnavailableException"),
    ],
)
def test_http_errors_map_to_typed_errors(status, cls, shape):
    faults = [Turn(faults=[HttpFault(status=status, message="nope")])] * 3
    sim, provider, sleeps = make(faults)
    with pytest.raises(cls) as info:
        ask(provider)
    err = info.value
    assert type(err) is cls
    assert (err.status, err.error_type, err.message, err.provider) == (status, shape, "nope", "bedrock")
    assert provider.attempts == [3 if err.retryable else 1]
    assert len(sleeps) == (2 if err.retryable else 0)


def test_simulator_rejection_is_a_bad_request_naming_the_rule():
    sim, provider, _ = make([Turn(text="never")])
    with pytest.raises(BadRequestError, match="toolConfig field must be defined") as info:
        ask(provider, *TOOL_HISTORY, tools=())
    assert info.value.error_type == "ValidationException"
    assert sim.used == 0


@pytest.mark.parametrize(
    ("kind", "cls"),
    [
        ("throttlingException", RateLimitError),
        ("modelStreamErrorException", ProviderError),  # 424 in service-2.json, as ModelErrorException
        ("internalServerException", ServerError),
        ("serviceUnavailableException", ServerError),
        ("validationException", BadRequestError),
        ("somethingNewException", StreamError),
    ],
)
def test_mid_stream_exception_after_events_raises_without_retry(kind, cls):
    sim, provider, sleeps = make([Turn(text="a long answer", faults=[MidStreamError(after=3, message="slow down", error_type=kind)]), Turn(text="unused")])
    events = []
    with pytest.raises(cls) as info:
        for e in provider.stream(ModelRequest([user("hi")])):
            events.append(e)
    assert type(info.value) is cls
    assert (info.value.error_type, info.value.message, info.value.status) == (kind, "slow down", None)
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "text_delta"]
    assert sleeps == [] and sim.used == 1


@pytest.mark.parametrize(
    ("headers", "payload", "what"),
    [
        ({":message-type": "error", ":error-message": "boom"}, b"", ":error-code"),
        ({":message-type": "error", ":error-code": "InternalFailure"}, b"", ":error-message"),
        ({":message-type": "exception"}, b'{"message": "boom"}', ":exception-type"),
        ({":message-type": "exception", ":exception-type": "throttlingException"}, b"Rate exceeded", "not JSON"),
        ({":message-type": "exception", ":exception-type": "throttlingException"}, b"", "not JSON"),
        ({":message-type": "exception", ":exception-type": "throttlingException"}, b'["boom"]', "not a JSON object"),
    ],
)
def test_stream_exception_without_what_the_service_always_sends_is_a_wire_error(headers, payload, what):
    with pytest.raises(WireError, match=what):
        stream_exception(headers, payload)


def test_exception_before_any_event_is_retried():
    sim, provider, sleeps = make([Turn(text="x", faults=[MidStreamError(after=0, error_type="throttlingException")]), Turn(text="ok")])
    assert ask(provider).text == "ok"
    assert sleeps == [0.25] and provider.attempts == [2]


def test_scripted_error_turn_is_a_model_stream_error():
    _, provider, _ = make([Turn(text="half", error="model crashed")] * 3)
    with pytest.raises(ProviderError, match="model crashed") as info:
        ask(provider)
    assert type(info.value) is ProviderError and info.value.error_type == "modelStreamErrorException"


def test_model_stream_error_before_any_event_is_not_retried():
    # modelled as HTTP 424 (a failed dependency, like ModelErrorException): not a retryable 5xx
    sim, provider, sleeps = make([Turn(text="x", faults=[MidStreamError(after=0, error_type="modelStreamErrorException")]), Turn(text="ok")])
    with pytest.raises(ProviderError) as info:
        ask(provider)
    assert not info.value.retryable and info.value.status is None
    assert sleeps == [] and sim.used == 1


def test_scripted_error_turn_without_streaming_is_http_424():
    _, provider, _ = make([Turn(error="model crashed")], stream=False)
    with pytest.raises(ProviderError, match="model crashed") as info:
        ask(provider)
    assert (info.value.status, info.value.error_type) == (424, "ModelErrorException")


def test_truncated_stream_is_connection_closed():
    _, provider, _ = make([Turn(text="abcdefghijklmnop", faults=[Truncate(after=3)])] * 3)
    events = []
    with pytest.raises(ConnectionClosedError):
        for e in provider.stream(ModelRequest([user("hi")])):
            events.append(e)
    assert len(events) == 4


def test_decoders_name_the_model_they_are_given_and_a_cassette_its_path_s():
    """A Converse answer names no model: the decoder's start names the one its caller gives, and
    a cassette's reassembly the one in the recorded request's path."""
    from loopkit.cli.cassette import _decoder_for

    raw = base64.b64decode((FIXTURES / "converse_stream_tool_use.bin.b64").read_text())
    assert accumulate(ConverseStreamDecoder(model="m-1").feed(raw)).model == "m-1"
    decoder = _decoder_for(f"/model/{quote(MODEL, safe='')}/converse-stream")
    assert accumulate(decoder.feed(raw)).model == MODEL


def test_clean_close_mid_frame_or_before_message_stop_is_connection_closed():
    raw = base64.b64decode((FIXTURES / "converse_stream_tool_use.bin.b64").read_text())
    decoder = ConverseStreamDecoder(model=MODEL)
    decoder.feed(raw[:500])
    with pytest.raises(ConnectionClosedError, match="part-way through"):
        decoder.close()
    decoder = ConverseStreamDecoder(model=MODEL)
    decoder.feed(raw[:144])
    with pytest.raises(ConnectionClosedError, match="before messageStop"):
        decoder.close()


def _events(*pairs: tuple[str, dict]) -> bytes:
    return b"".join(sim_es.event(t, json.dumps(p).encode()) for t, p in pairs)


def test_a_stopped_blocks_index_is_free_and_metadata_ends_the_answer():
    """Forms the service never sends: a contentBlockStop frees its index, so a later delta for it
    opens a new block (no event ever follows a block's end) and a second stop ends nothing;
    metadata ends the answer, and one with no messageStop before it ends it as an error stop."""
    start = ("messageStart", {"role": "assistant"})
    text = [("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}}) for t in "ab"]
    stop = ("contentBlockStop", {"contentBlockIndex": 0})
    end = [("messageStop", {"stopReason": "end_turn"}), ("metadata", {"usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}})]
    late = ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "late"}})
    decoder = ConverseStreamDecoder(model=MODEL)
    message = accumulate(decoder.feed(_events(start, text[0], stop, text[1], stop, stop, *end, late)) + decoder.close())
    assert [b.text for b in message.content] == ["a", "b"]
    assert (message.stop_reason, message.usage.total_tokens) == ("stop", 3)
    decoder = ConverseStreamDecoder(model=MODEL)
    events = decoder.feed(_events(start, text[0], stop, end[1], end[0]))
    assert events[-1].type == "error" and events[-1].reason == "error" and decoder.close() == []


@pytest.mark.parametrize(
    ("event_type", "payload", "missing"),
    [
        ("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {"name": "add"}}}, "toolUseId"),
        ("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "tooluse_a"}}}, "name"),
        ("contentBlockStart", {"contentBlockIndex": 0}, "start"),
        ("messageStop", {"p": "abc"}, "stopReason"),
    ],
)
def test_an_event_without_a_required_member_is_a_wire_error(event_type, payload, missing):
    decoder = ConverseStreamDecoder(model=MODEL)
    with pytest.raises(WireError, match=f"lacks a member.*{missing}"):
        decoder.feed(sim_es.event(event_type, json.dumps(payload).encode()))


def test_a_tool_delta_without_input_is_a_wire_error():
    decoder = ConverseStreamDecoder(model=MODEL)
    decoder.feed(sim_es.event("contentBlockStart", json.dumps({"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t", "name": "add"}}}).encode()))
    with pytest.raises(WireError, match="input"):
        decoder.feed(sim_es.event("contentBlockDelta", json.dumps({"contentBlockIndex": 0, "delta": {"toolUse": {}}}).encode()))


@pytest.mark.parametrize(
    ("block", "missing"),
    [
        ({"toolUse": {"toolUseId": "t", "name": "add"}}, "input"),
        ({"toolUse": {"name": "add", "input": {}}}, "toolUseId"),
        ({"reasoningContent": {"reasoningText": {"signature": "s"}}}, "text"),
    ],
)
def test_a_body_block_without_a_required_member_is_a_wire_error(block, missing):
    body = {"output": {"message": {"role": "assistant", "content": [block]}}, "stopReason": "end_turn"}
    with pytest.raises(WireError, match=f"lacks a member.*{missing}"):
        decode_converse_body(body, model=MODEL)


def test_inference_config_sends_only_the_settings_given():
    assert inference_config(max_tokens=None, temperature=None, top_p=None, stop_sequences=None) == {}
    config = inference_config(max_tokens=64, temperature=0.2, top_p=0.9, stop_sequences=["END"])
    assert config == {"maxTokens": 64, "temperature": 0.2, "topP": 0.9, "stopSequences": ["END"]}
    provider = BedrockProvider(model="m", api_key="k", max_tokens=64, temperature=0.0, stop_sequences=["END"])
    body = provider.request_body(ModelRequest([user("hi")]))
    assert body["inferenceConfig"] == {"maxTokens": 64, "temperature": 0.0, "stopSequences": ["END"]}
    assert provider.request_body(ModelRequest([user("hi")], max_tokens=8))["inferenceConfig"]["maxTokens"] == 8  # the request's wins


def test_corrupt_frame_raises_a_wire_error():
    raw = bytearray(base64.b64decode((FIXTURES / "converse_stream_tool_use.bin.b64").read_text()))
    raw[200] ^= 1
    with pytest.raises(EventStreamChecksumError):
        ConverseStreamDecoder(model=MODEL).feed(bytes(raw))


def test_delay_uses_the_injected_sleep():
    _, provider, sleeps = make([Turn(text="ok", faults=[Delay(seconds=2.0, after=1)])])
    assert ask(provider).text == "ok"
    assert sleeps == [2.0]


def test_async_stream():
    sim, provider, _ = make([Turn(text="async hello", tool_calls=[call("add", {"a": 1, "b": 1}, id="tooluse_q")])])

    async def run():
        return [e async for e in provider.astream(ModelRequest([user("hi")], tools=[ADD]))]

    msg = accumulate(asyncio.run(run()))
    assert msg.text == "async hello" and msg.tool_calls == [ToolCall(id="tooluse_q", name="add", arguments={"a": 1, "b": 1})]


# --- auth -------------------------------------------------------------------------------------


def test_bearer_key_from_environment(monkeypatch):
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "env-key")
    sim = simulators.create("bedrock", [Turn(text="ok")])
    provider = BedrockProvider(model=MODEL, base_url="http://bedrock.test", transport=simulators.transport(sim))
    ask(provider)
    assert sim.requests[0].headers["authorization"] == "Bearer env-key"


def test_sigv4_with_dummy_credentials(monkeypatch):
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "env-key")  # explicit credentials win over it
    sim = simulators.create("bedrock", [Turn(text="ok")])
    provider = BedrockProvider(
        model=MODEL, region="eu-west-3", base_url="http://bedrock.test", transport=simulators.transport(sim),
        aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret", aws_session_token="token",
    )
    ask(provider)
    h = sim.requests[0].headers
    assert h["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-3/bedrock/aws4_request" in h["authorization"]
    assert h["x-amz-security-token"] == "token" and h["x-amz-date"].endswith("Z")


def test_half_a_credential_pair_is_a_usage_error():
    with pytest.raises(UsageError, match="both"):
        BedrockProvider(model=MODEL, aws_access_key_id="AKID")


def test_default_endpoint_names_the_region():
    assert BedrockProvider(model=MODEL, region="ap-south-1", api_key="k").base_url == "https://bedrock-runtime.ap-south-1.amazonaws.com"


# --- recorded fixtures ------------------------------------------------------------------------

RECORDED = base64.b64decode((FIXTURES / "converse_stream_tool_use.bin.b64").read_text())


def _recorded_text() -> str:
    view = json.loads((FIXTURES / "converse_stream_tool_use.decoded.json").read_text())
    return "".join(m["payload"]["delta"]["text"] for m in view if m["headers"][":event-type"] == "contentBlockDelta" and "text" in m["payload"]["delta"])


def _decode_in_pieces(raw: bytes, cuts: list[int]) -> AssistantMessage:
    decoder = ConverseStreamDecoder(model=MODEL)
    events = []
    bounds = [0, *cuts, len(raw)]
    for a, b in zip(bounds, bounds[1:]):
        events += decoder.feed(raw[a:b])
    events += decoder.close()
    return accumulate(events)


def test_recorded_converse_stream_parses():
    msg = _decode_in_pieces(RECORDED, [])
    assert msg == expected(
        [TextContent(text=_recorded_text()), ToolCall(id="tooluse_lAG_zP8QRHmSYOwZzzaCqA", name="get_temperature", arguments={"city": "Paris"})],
        stop="toolUse",
        usage=Usage(input=471, output=91, total_tokens=562),
    )
    assert msg.text.startswith("<thinking")


@given(st.lists(st.integers(0, len(RECORDED)), max_size=15).map(sorted))
def test_any_rechunking_of_the_recorded_stream_gives_the_same_message(cuts):
    assert _decode_in_pieces(RECORDED, cuts) == _decode_in_pieces(RECORDED, [])


def test_recorded_exchange_body_decodes_and_history_encodes_as_recorded():
    exchange = json.loads((FIXTURES / "exchange_converse_tool_result_error.json").read_text())
    first, second = exchange
    msg = accumulate(decode_converse_body(first["response"]["body"], model=MODEL))
    tc = ToolCall(id="tooluse_Ze_bgl9CSqu8aJv7XD-_Dw", name="get_capital", arguments={"country": "France"})
    assert msg.content[1] == tc and msg.stop_reason == "toolUse"
    assert msg.usage == Usage(input=426, output=66, total_tokens=492)
    failed = ToolResultMessage(
        tool_call_id=tc.id, tool_name="get_capital", is_error=True,
        content=[TextContent(text="The country is not supported.\n\nFix the errors and try again.")],
    )
    history = [user("What is the capital of France?"), msg, failed]
    assert encode_messages(history, error_status=True) == second["request"]["body"]["messages"]
    final = accumulate(decode_converse_body(second["response"]["body"], model=MODEL))
    assert final.stop_reason == "stop" and final.text


def test_recorded_tool_config_matches_what_the_adapter_sends():
    exchange = json.loads((FIXTURES / "exchange_converse_tool_result_error.json").read_text())
    recorded = exchange[0]["request"]["body"]
    spec = recorded["toolConfig"]["tools"][0]["toolSpec"]
    tool = ToolSpec(name=spec["name"], description=spec["description"], parameters=spec["inputSchema"]["json"])
    provider = BedrockProvider(model=MODEL, api_key="k", temperature=0.0)
    body = provider.request_body(ModelRequest([user("What is the capital of France?")], tools=[tool], tool_choice="auto", system="You are a helpful chatbot."))
    assert body == recorded


def test_recorded_400_maps_to_bad_request():
    fixture = json.loads((FIXTURES / "error_400_invalid_model.json").read_text())
    body = json.dumps(fixture["response"]["body"]).encode()
    err = http_error(400, {"content-type": "application/json"}, body)
    assert type(err) is BadRequestError
    assert (err.status, err.message, err.error_type) == (400, "The provided model identifier is invalid.", None)
    err = http_error(400, {"x-amzn-errortype": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"}, body)
    assert err.error_type == "ValidationException"


def test_error_class_follows_the_shape_over_the_status():
    err = http_error(400, {"x-amzn-errortype": "ThrottlingException"}, b'{"message": "Rate exceeded"}')
    assert type(err) is RateLimitError and err.retryable and err.status == 400
    err = http_error(418, {}, b'{"__type": "com.amazon.coral#ServiceUnavailableException", "message": "x"}')
    assert type(err) is ServerError and err.error_type == "ServiceUnavailableException"


@pytest.mark.parametrize("stream", [True, False])
def test_a_request_for_another_model_names_that_model(stream):
    # a Converse answer carries no model id: the message must name the model the request went to
    sim, provider, _ = make([Turn(text="ok"), Turn(text="ok")], stream=stream)
    assert ask(provider, model="us.amazon.nova-pro-v1:0").model == "us.amazon.nova-pro-v1:0"
    assert sim.requests[0].path.endswith("/model/us.amazon.nova-pro-v1%3A0/" + ("converse-stream" if stream else "converse"))
    assert ask(provider).model == MODEL


def test_a_request_for_another_model_names_it_in_astream_and_closes_the_stream():
    import asyncio

    sim, provider, _ = make([Turn(text="a long answer", chunk_size=2)])

    async def first_two():
        events = provider.astream(ModelRequest([user("hi")], model="other-model"))
        got = [await anext(events), await anext(events)]
        await events.aclose()
        return got

    start, _ = asyncio.run(first_two())
    assert start.model == "other-model" and provider.attempts == [1]


def test_a_server_side_tool_in_a_body_is_not_a_call():
    body = {
        "output": {"message": {"role": "assistant", "content": [
            {"text": "Searching."},
            {"toolUse": {"toolUseId": "srvtoolu_1", "name": "web_search", "input": {"query": "Paris"}, "type": "server_tool_use"}},
            {"toolResult": {"toolUseId": "srvtoolu_1", "content": [{"text": "18 C"}], "status": "success", "type": "web_search_result"}},
            {"toolUse": {"toolUseId": "tooluse_1", "name": "add", "input": {"a": 1, "b": 2}}},
        ]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
    }  # fmt: skip
    message = accumulate(decode_converse_body(body, model=MODEL))
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [("tooluse_1", "add", {"a": 1, "b": 2})]
    assert message.text == "Searching."
