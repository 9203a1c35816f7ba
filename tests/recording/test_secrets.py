"""No saved cassette and no printed line holds a secret: every protocol, every place, split streams.

Each test records through loopkit's own adapters and the protocol simulators (or hand-built
files), then greps the saved file for every 8-character piece of every secret.
"""

from __future__ import annotations

import importlib.util
import json

import httpx
import pytest

import loopkit
from loopkit import simulators
from loopkit.cli import main
from loopkit.recording import (
    Cassette,
    CassetteFile,
    CassetteTransport,
    Interaction,
    RecordedRequest,
    RecordedResponse,
    RecordingProvider,
    Scrubber,
    Transcript,
    find_secrets,
    load_cassette_file,
    save_cassette,
)
from loopkit.recording._format import Chunk
from loopkit.script import Turn, call

from .test_secret_properties import reassembled

ANTHROPIC_KEY = "sk-ant-api03-Qw3rTy" + "U1oP" * 10 + "zz"
OPENAI_KEY = "sk-proj-Zx8" + "Cv7Bn6Mm5" * 4
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # no shape knows it: only name and value rules
AWS_TOKEN = "IQoJb3JpZ2luX2VjEPr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD"
ENV_PASSWORD = "hunter2-but-longer-9876"
SIGNATURE = "EqQBCkYIBxgCKkB" + "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlcw" + "AKIAIOSFODNN7EXAMPLE"  # shape-like on purpose

SECRETS = {"anthropic": ANTHROPIC_KEY, "openai": OPENAI_KEY, "aws-secret": AWS_SECRET, "aws-token": AWS_TOKEN, "env": ENV_PASSWORD}
MODELS = {"anthropic": "claude-test", "bedrock": "us.amazon.nova-micro-v1:0", "gemini": "gemini-2.5-flash", "openai_chat": "gpt-test", "openai_responses": "gpt-test"}
PROTOCOLS = sorted(MODELS)


def pieces(secret: str, n: int = 8) -> list[str]:
    return [secret[i : i + n] for i in range(len(secret) - n + 1)]


def assert_nothing_survives(text: str, secrets: dict[str, str] = SECRETS) -> None:
    for kind, secret in secrets.items():
        for piece in pieces(secret):
            assert piece not in text, f"{kind}: {piece!r} survived"


def lookup(token: str, q: str) -> str:
    """Look something up with a token."""
    return f"found {q}"


def script(protocol: str) -> list[Turn]:
    # The model echoes secrets in text streamed 3 characters at a time, and sends a tool call
    # whose argument named "token" holds an AWS secret no shape rule knows.
    thinking = {"thinking": "Let me look.", "thinking_signature": SIGNATURE} if protocol in ("anthropic", "bedrock") else {}
    return [
        Turn(
            text=f"Your keys: {ANTHROPIC_KEY} and {OPENAI_KEY}; the AWS one is {AWS_SECRET}.",
            tool_calls=[call("lookup", {"token": AWS_SECRET, "q": "weather"}, id="call_1")],
            chunk_size=3,
            **thinking,
        ),
        Turn(text=f"Done. Password {ENV_PASSWORD} and token {AWS_TOKEN} were used.", chunk_size=4),
    ]


def provider_for(protocol: str, transport: httpx.BaseTransport):
    from loopkit.providers import adapter_class

    if protocol == "bedrock":
        return adapter_class(protocol)(
            model=MODELS[protocol], aws_access_key_id="AKIAIOSFODNN7EXAMPLE", aws_secret_access_key=AWS_SECRET, aws_session_token=AWS_TOKEN, transport=transport
        )
    key = ANTHROPIC_KEY if protocol == "anthropic" else OPENAI_KEY
    return adapter_class(protocol)(model=MODELS[protocol], api_key=key, transport=transport)


@pytest.fixture
def env_secret(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_PASSWORD", ENV_PASSWORD)
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # shorter than 8 characters: never scrubbed by value
    monkeypatch.setenv("AWS_SESSION_TOKEN", AWS_TOKEN)  # a value of a *TOKEN* variable
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_secrets_streamed_in_pieces_never_reach_the_file(protocol, tmp_path, env_secret):
    if protocol == "bedrock" and importlib.util.find_spec("botocore") is None:
        pytest.skip("botocore is needed for SigV4")
    path = tmp_path / "c.json"
    question = f"Use my password {ENV_PASSWORD} to look up the weather"
    cassette = Cassette(path, record_mode="once")
    sim = simulators.transport(protocol, script(protocol))
    provider = provider_for(protocol, CassetteTransport(cassette, sim))
    first = loopkit.run(RecordingProvider(provider, cassette), question, tools=[lookup], clock=loopkit.TickClock(start=1))
    assert first.reason == "stop", first.messages[-1]
    cassette.save()
    text = reassembled(path)  # the file, and its streams decoded with every delta joined
    assert_nothing_survives(text)
    if protocol in ("anthropic", "bedrock"):
        assert SIGNATURE in text  # reasoning signatures survive byte for byte
    file = load_cassette_file(path)
    assert find_secrets(file, values=SECRETS.values()) == []
    assert main(["cassette", "verify", str(path)]) == 0

    # Replay offline: the live requests carry the secrets again and still match the scrubbed file.
    replay = Cassette(path)
    again = loopkit.run(provider_for(protocol, CassetteTransport(replay)), question, tools=[lookup], clock=loopkit.TickClock(start=1))
    assert again.reason == "stop" and again.messages[-1].text == "Done. Password <scrubbed> and token <scrubbed> were used."
    replay.assert_all_played()


def _sse(events: list[dict]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def test_a_key_split_over_chunks_and_events_is_redacted_and_every_chunk_stays_valid(tmp_path):
    """Anthropic text deltas carry a key in 4 pieces, and the chunk cuts fall inside events."""
    key = ANTHROPIC_KEY
    parts = [key[:5], key[5:20], key[20:41], key[41:]]
    events = [{"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
    events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}} for p in ["key: "] + parts]
    events += [{"type": "content_block_delta", "index": 1, "delta": {"type": "signature_delta", "signature": SIGNATURE}}]
    body = _sse(events)
    cuts = [0, 37, 140, 141, 260, 390, len(body)]
    chunks = [Chunk(t=i / 10, text=body[a:b]) for i, (a, b) in enumerate(zip(cuts, cuts[1:]))]
    file = CassetteFile(
        meta={"note": f"recorded with {OPENAI_KEY}", "auth": {"client_secret": "s3cr3t-value-123"}},
        interactions=[
            Interaction(
                request=RecordedRequest(method="POST", url="https://api.anthropic.com/v1/messages", json={"messages": []}),
                response=RecordedResponse(status=200, headers=[("content-type", "text/event-stream")], chunks=chunks),
            )
        ],
    )
    found = find_secrets(file)
    assert {(f.interaction, f.kind) for f in found} >= {(0, "anthropic-key"), (None, "openai-key"), (None, "secret-field")}
    assert all(key[:8] not in str(f) for f in found)
    Scrubber().cassette(file)
    new = file.interactions[0].response.chunks
    assert len(new) == len(chunks)
    joined = "".join(c.text for c in new)
    assert_nothing_survives(joined + json.dumps(file.meta), {"key": key, "openai": OPENAI_KEY})
    assert "s3cr3t-value-123" not in json.dumps(file.meta)
    data = [json.loads(line[6:]) for line in joined.splitlines() if line.startswith("data: ")]
    assert [d["type"] for d in data] == [e["type"] for e in events]  # every event still parses
    assert data[-1]["delta"]["signature"] == SIGNATURE
    assert "".join(d["delta"].get("text", "") for d in data[1:-1]) == "key: <scrubbed:anthropic-key>"
    save_cassette(file, tmp_path / "c.json")


def test_scrub_command_handles_meta_and_split_keys(tmp_path):
    path = tmp_path / "c.json"
    file = CassetteFile(
        meta={"recorded_by": f"ci with {OPENAI_KEY}"},
        interactions=[Interaction(transcript=Transcript(request={"messages": []}, message={"role": "assistant", "content": [{"type": "text", "text": "hi"}]}))],
    )
    path.write_text(json.dumps(file.model_dump(mode="json", by_alias=True, exclude_defaults=True) | {"format_version": 1}))
    assert main(["cassette", "verify", str(path)]) == 1
    assert main(["cassette", "scrub", str(path)]) == 0
    assert OPENAI_KEY[:8] not in path.read_text()
    assert main(["cassette", "verify", str(path)]) == 0


def test_verify_names_interaction_place_and_kind_never_the_secret(tmp_path, capsys):
    path = tmp_path / "c.json"
    body = _sse([{"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": p}} for p in ['{"tok', 'en": "', AWS_SECRET[:10], AWS_SECRET[10:], '"}']])
    data = {
        "format_version": 1,
        "interactions": [
            {"request": {"method": "POST", "url": "https://api.example.com/v1/partial", "json": {}}, "response": {"status": 200, "headers": [["content-type", "text/event-stream"]], "chunks": [{"text": body}]}}
        ],
    }
    path.write_text(json.dumps(data))
    assert main(["cassette", "verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert "interactions[0]" in out and "secret-field" in out
    assert AWS_SECRET[:8] not in out
    assert main(["cassette", "scrub", str(path)]) == 0
    assert AWS_SECRET[:8] not in path.read_text() and AWS_SECRET[-8:] not in path.read_text()
    capsys.readouterr()
    assert main(["cassette", "verify", str(path)]) == 0


def test_values_the_user_lists_and_environment_values_are_scrubbed_everywhere(monkeypatch):
    monkeypatch.setenv("INTERNAL_API_TOKEN", "tok-7f3a9c2e1b")
    monkeypatch.setenv("KEYBOARD", "us")  # too short to be scrubbed by value
    scrubber = Scrubber(secrets=["my-tenant-secret-42"])
    inter = Interaction(
        request=RecordedRequest(method="POST", url="https://x/v1/a?tenant=my-tenant-secret-42", json={"note": "tok-7f3a9c2e1b and us"}),
        response=RecordedResponse(status=200, chunks=[Chunk(text="my-tenant-"), Chunk(text="secret-42 done")]),
    )
    scrubber.interaction(inter)
    dumped = inter.model_dump_json()
    assert "my-tenant-secret-42" not in dumped and "tok-7f3a9c2e1b" not in dumped
    assert inter.request.json_body == {"note": "<scrubbed> and us"}
    assert [c.text for c in inter.response.chunks] == ["<scrubbed>", " done"]


def test_boto3_under_vcrpy_never_saves_the_secret_key_it_signed_with(tmp_path, monkeypatch):
    """boto3 signs with a secret access key read from the shared credentials file; the key never
    travels, the model echoes it in frames cut 3 characters at a time, and it is not saved."""
    boto3 = pytest.importorskip("boto3")
    from botocore.config import Config

    from loopkit.recording import make_vcr

    creds = tmp_path / "credentials"
    creds.write_text(f"[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = {AWS_SECRET}\n")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(creds))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    path = tmp_path / "b.json"
    with simulators.serve("bedrock", [Turn(text=f"I know your key: {AWS_SECRET}", chunk_size=3)]) as sim:
        client = boto3.client("bedrock-runtime", endpoint_url=sim.url, region_name="us-east-1", config=Config(retries={"total_max_attempts": 1, "mode": "standard"}))
        with make_vcr(record_mode="all").use_cassette(str(path)):
            out = client.converse_stream(modelId=MODELS["bedrock"], messages=[{"role": "user", "content": [{"text": "hi"}]}])
            text = "".join(e["contentBlockDelta"]["delta"].get("text", "") for e in out["stream"] if "contentBlockDelta" in e)
    assert AWS_SECRET in text  # the live caller saw it
    assert_nothing_survives(reassembled(path), {"aws-secret": AWS_SECRET})
    assert main(["cassette", "verify", str(path)]) == 0
