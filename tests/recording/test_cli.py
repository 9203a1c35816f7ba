"""``loopkit cassette show|diff|scrub|verify`` end to end on files."""

from __future__ import annotations

import argparse
import io
import json

import httpx

from loopkit.cli import cassette as cassette_cli
from loopkit.messages import AssistantMessage, TextContent, ToolCall, UserMessage
from loopkit.provider import ModelRequest
from loopkit.recording import Cassette, RecordingTransport, Transcript, dump_cassette, load_cassette_file
from loopkit.serde import dump_message, dump_request

from ._servers import Chunked, FakeClock, chat_body, sse


def cli(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="loopkit")
    cassette_cli.add_parser(parser.add_subparsers(dest="command"))
    out = io.StringIO()
    return cassette_cli.run(parser.parse_args(list(argv)), out=out), out.getvalue()


def make(path, text="What is 2+2?", answer="4"):
    cassette = Cassette(path, record_mode="all")
    chunks = sse({"choices": [{"delta": {"content": answer}}]}, {"choices": [{"finish_reason": "stop"}]})
    server = httpx.MockTransport(lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Chunked(chunks)))
    with httpx.Client(transport=RecordingTransport(server, cassette, clock=FakeClock(0.02))) as c:
        c.post("https://api.openai.com/v1/chat/completions", json=chat_body(text)).read()
    req = ModelRequest([UserMessage(content=text)])
    msg = AssistantMessage(content=[TextContent(text=answer), ToolCall(id="c1", name="calc", arguments={"x": 1})], stop_reason="toolUse")
    cassette.interactions[0].transcript = Transcript(request=dump_request(req), message=dump_message(msg))
    cassette.save()


def test_show_renders_the_conversation_and_the_stream(tmp_path):
    path = tmp_path / "a.json"
    make(path)
    code, out = cli("cassette", "show", str(path))
    assert code == 0
    assert "#0 POST /v1/chat/completions → 200" in out
    assert "3 chunk(s)" in out and "first at 20 ms, last at 60 ms" in out
    assert "What is 2+2?" in out and "assistant [toolUse]" in out and '→ calc({"x": 1}) #c1' in out
    assert '{"choices": [{"delta": {"content": "4"}}]}' in out and "[DONE]" in out
    code, out = cli("cassette", "show", str(path), "--json")
    data = json.loads(out)
    assert data[0]["status"] == 200 and [e["data"] for e in data[0]["events"]][-1] == "[DONE]"


def test_diff_names_interaction_message_and_field(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    make(a)
    make(b, text="What is 2+3?", answer="5")
    code, out = cli("cassette", "diff", str(a), str(b), "--json")
    assert code == 1
    wheres = [(d["where"], d["message"]) for d in json.loads(out)]
    assert wheres == [
        ("request.json.messages[0].content", 0),
        ("response.events[0]", None),
        ("transcript.request.messages[0].content", 0),
        ("transcript.message.content[0].text", None),
    ]
    code, out = cli("cassette", "diff", str(a), str(b))
    assert code == 1 and "4 difference(s)" in out
    assert cli("cassette", "diff", str(a), str(a))[0] == 0


def test_verify_and_scrub(tmp_path):
    good, bad, broken = tmp_path / "good.json", tmp_path / "bad.json", tmp_path / "broken.json"
    make(good)
    file = load_cassette_file(good)
    file.interactions[0].request.headers.append(("authorization", "Bearer sk-abcdefghijklmnopqrstuvwxyz"))
    file.interactions[0].response.chunks[0].text = "data: {\"k\": \"AKIAIOSFODNN7EXAMPLE\"}\n\n"
    bad.write_text(dump_cassette(file))  # written past the guard, as a hand edit would be
    broken.write_text('{"format_version": 9}')
    code, out = cli("cassette", "verify", str(good), str(bad), str(broken))
    assert code == 1
    assert f"{good}: ok" in out
    assert "(authorization): secret-header" in out and "interactions[0].response.chunks[0].k: aws-access-key-id" in out
    assert "AKIAIOSF" not in out and "sk-abcde" not in out  # the place and the kind, never the secret
    assert "format_version 9 is newer" in out
    code, out = cli("cassette", "scrub", str(bad))
    assert code == 0, out
    assert cli("cassette", "verify", str(bad))[0] == 0
    assert "AKIAIOSFODNN7EXAMPLE" not in bad.read_text()


def test_show_reassembles_sdk_recordings_with_loopkit_decoders():
    """A recording with no transcript (an SDK's) is decoded by loopkit's adapter for its protocol."""
    from pathlib import Path

    examples = Path(__file__).parent.parent.parent / "cassettes"
    expected = {
        "anthropic/sdk_messages_stream.json": "assistant [stop]  Hello from the simulator.",
        "bedrock/boto3_converse_stream.json": "assistant [toolUse]  <thinking>I should add.</thinking>",
        "gemini/google_genai_stream.json": "assistant [stop]  The capital of France is Paris.",
        "openai_chat/sdk_chat_stream.json": "assistant [stop]  Hello from the simulator.",
        "openai_responses/sdk_responses_stream.json": "assistant [stop]  Hello from the simulator.",
    }
    for name, line in expected.items():
        code, out = cli("cassette", "show", str(examples / name), "--no-events")
        assert code == 0 and line in out, out
