"""The Bedrock simulator: its own encoder, request validation, and boto3 over a loopback server."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.eventstream import EventStreamBuffer
from botocore.exceptions import ClientError, EventStreamError

from loopkit import simulators
from loopkit.errors import IncompleteScript
from loopkit.script import HttpFault, MidStreamError, Turn, call
from loopkit.simulators import SimRequest
from loopkit.simulators import _eventstream as sim_es

FIXTURES = Path(__file__).parent.parent / "fixtures" / "bedrock"
TOOL_CONFIG = {"tools": [{"toolSpec": {"name": "add", "inputSchema": {"json": {"type": "object"}}}}]}
TOOL_HISTORY = [
    {"role": "user", "content": [{"text": "2+3?"}]},
    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_a", "name": "add", "input": {"a": 2}}}]},
    {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_a", "content": [{"text": "5"}], "status": "error"}}]},
]


def post(sim, body, *, op="converse", model="us.amazon.nova-micro-v1%3A0", headers=None):
    return sim.handle(
        SimRequest(
            method="POST",
            path=f"/model/{model}/{op}",
            headers={"authorization": "Bearer k", "content-type": "application/json", **(headers or {})},
            body=json.dumps(body).encode(),
        )
    )


def frames(resp):
    buf = EventStreamBuffer()
    buf.add_data(resp.body)
    return [(m.headers, json.loads(m.payload)) for m in buf]


def test_independent_encoder_reproduces_the_recorded_stream_byte_for_byte():
    recorded = base64.b64decode((FIXTURES / "converse_stream_tool_use.bin.b64").read_text())
    view = json.loads((FIXTURES / "converse_stream_tool_use.decoded.json").read_text())
    rebuilt = b"".join(
        sim_es.event(m["headers"][":event-type"], json.dumps(m["payload"], separators=(",", ":")).encode()) for m in view
    )
    assert rebuilt == recorded


def test_stream_is_shaped_like_the_service():
    sim = simulators.create("bedrock", [Turn(text="Hello world!", tool_calls=[call("add", {"a": 1}, id="tooluse_1")], chunk_size=5)])
    resp = post(sim, {"messages": [{"role": "user", "content": [{"text": "hi"}]}], "toolConfig": TOOL_CONFIG}, op="converse-stream")
    assert resp.status == 200 and resp.headers["content-type"] == "application/vnd.amazon.eventstream"
    got = frames(resp)
    assert len(resp.chunks) == len(got)  # one event-stream message per HTTP chunk
    assert all(h[":message-type"] == "event" and h[":content-type"] == "application/json" for h, _ in got)
    assert all(p.pop("p") for _, p in got)  # every payload is padded
    assert [(h[":event-type"], p) for h, p in got] == [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hello"}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": " worl"}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "d!"}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolUse": {"name": "add", "toolUseId": "tooluse_1"}}}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"a":'}}}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": "1}"}}}),
        ("contentBlockStop", {"contentBlockIndex": 1}),
        ("messageStop", {"stopReason": "tool_use"}),
        ("metadata", {"metrics": {"latencyMs": 101}, "usage": {"inputTokens": 41, "outputTokens": 4, "totalTokens": 45}}),
    ]


def test_no_argument_call_streams_an_empty_input_fragment():
    sim = simulators.create("bedrock", [Turn(tool_calls=[call("now", "")])])
    got = frames(post(sim, {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}, op="converse-stream"))
    assert [p["delta"] for h, p in got if h[":event-type"] == "contentBlockDelta"] == [{"toolUse": {"input": ""}}]


def test_mid_stream_error_is_an_exception_message():
    sim = simulators.create("bedrock", [Turn(text="abcdefghij", faults=[MidStreamError(after=2, message="slow", error_type="ThrottlingException")])])
    got = frames(post(sim, {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}, op="converse-stream"))
    assert len(got) == 3
    headers, payload = got[-1]
    assert headers == {":exception-type": "throttlingException", ":content-type": "application/json", ":message-type": "exception"}
    assert payload == {"message": "slow"}


def test_http_fault_has_the_real_error_shape():
    sim = simulators.create("bedrock", [Turn(faults=[HttpFault(status=429, retry_after=2)])])
    resp = post(sim, {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}, op="converse-stream")
    assert resp.status == 429
    assert resp.headers["x-amzn-errortype"] == "ThrottlingException" and resp.headers["x-amz-retry-after"] == "2000"
    assert resp.headers["content-type"] == "application/json"  # a rejected stream gets plain JSON (§5.5)
    assert json.loads(resp.body) == {"message": "Too many requests, please wait before trying again."}


@pytest.mark.parametrize(
    ("messages", "extra", "fragment"),
    [
        (TOOL_HISTORY, {}, "toolConfig field must be defined"),
        ([{"role": "user", "content": [{"text": "  "}]}], {}, "is blank"),
        ([{"role": "assistant", "content": [{"text": "x"}]}], {}, "must start with a user message"),
        ([{"role": "user", "content": [{"text": "a"}]}, {"role": "user", "content": [{"text": "b"}]}], {}, "must alternate"),
        ([{"role": "user", "content": []}], {}, "is empty"),
        (TOOL_HISTORY[:1] + [{"role": "assistant", "content": [{"text": "hm"}]}, TOOL_HISTORY[2]], {"toolConfig": TOOL_CONFIG}, "do not match"),
        (TOOL_HISTORY[:1], {"toolConfig": {**TOOL_CONFIG, "toolChoice": {"tool": {"name": "sub"}}}}, "not defined in toolConfig"),
        (TOOL_HISTORY[:1], {"toolConfig": {**TOOL_CONFIG, "toolChoice": {"none": {}}}}, "toolChoice must be one of"),
        (TOOL_HISTORY[:1], {"toolConfig": {"tools": []}}, "toolConfig.tools"),
        (TOOL_HISTORY[:1], {"toolConfig": {"tools": [{"toolSpec": {"name": "a b", "inputSchema": {"json": {}}}}]}}, "regular expression"),
    ],
)
def test_requests_the_real_api_rejects(messages, extra, fragment):
    sim = simulators.create("bedrock", [Turn(text="never")])
    resp = post(sim, {"messages": messages, **extra})
    assert resp.status == 400 and resp.headers["x-amzn-errortype"] == "ValidationException"
    assert fragment in json.loads(resp.body)["message"]
    assert sim.used == 0


def test_tool_history_with_tool_config_is_accepted_without_tool_choice():
    sim = simulators.create("bedrock", [Turn(text="fine")])
    resp = post(sim, {"messages": TOOL_HISTORY, "toolConfig": TOOL_CONFIG})
    assert resp.status == 200
    assert json.loads(resp.body)["output"]["message"] == {"content": [{"text": "fine"}], "role": "assistant"}


@pytest.mark.parametrize("status", ["error", "success"])
def test_a_model_without_tool_result_status_refuses_the_field(status):
    """tool_result_status=False: a model family that does not take toolResult.status refuses any
    status with the service's ValidationException; the same result without one is accepted."""
    with_status = [*TOOL_HISTORY[:2], {"role": "user", "content": [{"toolResult": {**TOOL_HISTORY[2]["content"][0]["toolResult"], "status": status}}]}]
    sim = simulators.create("bedrock", [Turn(text="fine")], tool_result_status=False)
    resp = post(sim, {"messages": with_status, "toolConfig": TOOL_CONFIG})
    assert resp.status == 400 and resp.headers["x-amzn-errortype"] == "ValidationException"
    assert json.loads(resp.body) == {"message": "This model doesn't support the status field. Remove status and try again."}
    without = [*TOOL_HISTORY[:2], {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_a", "content": [{"text": "Error: 5"}]}}]}]
    assert post(sim, {"messages": without, "toolConfig": TOOL_CONFIG}).status == 200
    assert sim.used == 1
    # the default model takes the field
    assert post(simulators.create("bedrock", [Turn(text="fine")]), {"messages": with_status, "toolConfig": TOOL_CONFIG}).status == 200


def test_unsigned_request_and_unknown_route():
    sim = simulators.create("bedrock", [])
    resp = sim.handle(SimRequest(method="POST", path="/model/m/converse", body=b"{}"))
    assert resp.status == 403 and resp.headers["x-amzn-errortype"] == "MissingAuthenticationTokenException"
    resp = post(sim, {}, op="invoke")
    assert resp.status == 404 and resp.headers["x-amzn-errortype"] == "ResourceNotFoundException"


def test_script_exhaustion_and_unused_turns_are_reported():
    sim = simulators.create("bedrock", [Turn(text="one"), Turn(text="two")])
    post(sim, {"messages": [{"role": "user", "content": [{"text": "hi"}]}]})
    with pytest.raises(IncompleteScript, match="turns 2..2"):
        sim.assert_complete()


# --- boto3 over a real loopback server --------------------------------------------------------


def client(sim, **config):
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=sim.url,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, **config),
    )


BOTO_TOOLS = {"tools": [{"toolSpec": {"name": "add", "inputSchema": {"json": {"type": "object", "properties": {"a": {"type": "number"}}}}}}], "toolChoice": {"any": {}}}


@pytest.fixture
def no_bearer(monkeypatch):
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_boto3_converse_with_a_tool_call(no_bearer):
    script = [Turn(text="Adding.", tool_calls=[call("add", {"a": 2}, id="tooluse_b")], usage=None)]
    with simulators.serve("bedrock", script) as sim:
        out = client(sim).converse(
            modelId="us.amazon.nova-micro-v1:0", messages=[{"role": "user", "content": [{"text": "2+2?"}]}], toolConfig=BOTO_TOOLS
        )
        sim.assert_complete()
        req = sim.requests[0]
    assert out["stopReason"] == "tool_use"
    assert out["output"]["message"]["content"] == [{"text": "Adding."}, {"toolUse": {"input": {"a": 2}, "name": "add", "toolUseId": "tooluse_b"}}]
    assert out["ResponseMetadata"]["RequestId"].startswith("00000000-")
    assert req.path == "/model/us.amazon.nova-micro-v1%3A0/converse"
    assert req.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=x/")


def test_boto3_converse_stream_with_a_tool_call(no_bearer):
    script = [Turn(text="Let me add.", tool_calls=[call("add", {"a": 2}, id="tooluse_s")])]
    with simulators.serve("bedrock", script) as sim:
        out = client(sim).converse_stream(
            modelId="us.amazon.nova-micro-v1:0", messages=[{"role": "user", "content": [{"text": "2+2?"}]}], toolConfig=BOTO_TOOLS
        )
        events = list(out["stream"])
    text = "".join(e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e)
    args = "".join(e["contentBlockDelta"]["delta"]["toolUse"]["input"] for e in events if "toolUse" in e.get("contentBlockDelta", {}).get("delta", {}))
    assert text == "Let me add." and json.loads(args) == {"a": 2}
    assert [next(iter(e)) for e in events][-2:] == ["messageStop", "metadata"]
    assert events[-2]["messageStop"]["stopReason"] == "tool_use"
    start = next(e["contentBlockStart"] for e in events if "contentBlockStart" in e)
    assert start["start"]["toolUse"] == {"toolUseId": "tooluse_s", "name": "add"}


def test_boto3_raises_throttling_for_a_429_fault(no_bearer):
    with simulators.serve("bedrock", [Turn(faults=[HttpFault(status=429)])]) as sim:
        with pytest.raises(ClientError) as info:
            client(sim).converse(modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}])
    assert type(info.value).__name__ == "ThrottlingException"
    assert info.value.response["Error"]["Code"] == "ThrottlingException"
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429


def test_errortype_header_false_names_the_shape_in_the_body(no_bearer):
    fault = HttpFault(status=400, error_type="com.amazonaws.bedrockruntime#ValidationException", message="bad model")
    resp = post(simulators.create("bedrock", [Turn(faults=[fault])], errortype_header=False), {"messages": [{"role": "user", "content": [{"text": "hi"}]}]})
    assert resp.status == 400 and "x-amzn-errortype" not in resp.headers
    assert json.loads(resp.body) == {"message": "bad model", "__type": "com.amazonaws.bedrockruntime#ValidationException"}
    # botocore reads the shape from the body then, namespace and all
    with simulators.serve("bedrock", [Turn(faults=[fault]), Turn(faults=[HttpFault(status=403, body={"code": "AccessDeniedException", "message": "no"})])], errortype_header=False) as sim:
        for code in ("ValidationException", "AccessDeniedException"):
            with pytest.raises(ClientError) as info:
                client(sim).converse(modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}])
            assert info.value.response["Error"]["Code"] == code


def test_boto3_sees_a_validation_exception(no_bearer):
    with simulators.serve("bedrock", [Turn(text="never")]) as sim:
        with pytest.raises(ClientError) as info:
            client(sim).converse(modelId="m", messages=TOOL_HISTORY)
    assert info.value.response["Error"] == {"Message": "The toolConfig field must be defined when using toolUse and toolResult content blocks.", "Code": "ValidationException"}


def test_boto3_mid_stream_exception(no_bearer):
    script = [Turn(text="abcdefghijklmnop", faults=[MidStreamError(after=2, message="slow down", error_type="throttlingException")])]
    with simulators.serve("bedrock", script) as sim:
        out = client(sim).converse_stream(modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}])
        with pytest.raises(EventStreamError) as info:
            list(out["stream"])
    assert info.value.response["Error"]["Code"] == "throttlingException"
