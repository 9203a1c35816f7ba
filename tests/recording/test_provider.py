"""Transcripts: RecordingProvider stores them, ReplayProvider answers the loop from them."""

from __future__ import annotations

import json

import httpx
import pytest

from loopkit.accumulate import accumulate
from loopkit.errors import NoMatchingInteraction, UnplayedInteractions
from loopkit.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, ToolResultMessage, Usage, UserMessage
from loopkit.provider import BaseProvider, ModelRequest, ToolSpec
from loopkit.recording import (
    Cassette,
    CassetteTransport,
    RecordingProvider,
    ReplayProvider,
    events_for_message,
    load_cassette_file,
)
from loopkit.script import ScriptedCall, Turn

ANSWERS = [
    AssistantMessage(
        content=[
            ThinkingContent(thinking="need a tool", thinking_signature="sig1"),
            TextContent(text="Let me add."),
            ToolCall(id="call_1", name="add", arguments={"a": 1, "b": 2}),
            ToolCall(id="call_2", name="add", arguments=None, raw_arguments='{"a": 1'),
        ],
        stop_reason="toolUse",
        api="openai-chat",
        provider="openai",
        model="gpt-x",
        usage=Usage(input=10, output=5, total_tokens=15),
    ),
    AssistantMessage(content=[TextContent(text="3")], stop_reason="stop", api="openai-chat", provider="openai", model="gpt-x"),
]
TOOLS = [ToolSpec(name="add", description="Add.", parameters={"type": "object"})]


@pytest.mark.parametrize("message", ANSWERS + [AssistantMessage(stop_reason="error", error_message="overloaded", error_type="overloaded_error")])
def test_events_rebuild_the_message_exactly(message):
    assert accumulate(events_for_message(message)) == message


class HttpBackedProvider(BaseProvider):
    """Answers with canned messages, after one HTTP request per call through the given client."""

    def __init__(self, client: httpx.Client, answers: list[AssistantMessage]) -> None:
        self.client, self.answers = client, list(answers)

    def stream(self, request):
        self.client.post("https://api.example.com/v1/chat", json={"n": len(request.messages)}).read()
        yield from events_for_message(self.answers.pop(0))


def conversation(provider) -> list[ModelRequest]:
    """Two model calls as the loop makes them: prompt, then prompt + answer + tool results."""
    history = [UserMessage(content="add 1 and 2", timestamp=1)]
    requests = []
    for _ in range(2):
        req = ModelRequest(list(history), tools=TOOLS, model="gpt-x", call_number=len(requests) + 1)
        requests.append(req)
        msg = accumulate(provider.stream(req))
        history.append(msg)
        for call in msg.tool_calls:
            history.append(ToolResultMessage(tool_call_id=call.id, tool_name=call.name, content=[TextContent(text="3")]))
    return requests


def record(path):
    cassette = Cassette(path, record_mode="once")
    server = httpx.MockTransport(lambda r: httpx.Response(200, json={"ok": True}))
    with httpx.Client(transport=CassetteTransport(cassette, server)) as client:
        conversation(RecordingProvider(HttpBackedProvider(client, ANSWERS), cassette))
    cassette.save()


def test_recording_provider_attaches_transcripts_to_http_interactions(tmp_path):
    path = tmp_path / "c.json"
    record(path)
    file = load_cassette_file(path)
    assert len(file.interactions) == 2
    assert all(i.request is not None and i.transcript is not None for i in file.interactions)
    assert file.interactions[1].transcript.request["messages"][1]["content"][2]["id"] == "call_1"


def test_replay_provider_answers_the_same_conversation_without_http(tmp_path):
    path = tmp_path / "c.json"
    record(path)
    replay = ReplayProvider(Cassette(path))
    conversation(replay)
    replay.assert_complete()
    assert replay.messages() == ANSWERS


def test_replay_provider_reports_the_first_difference(tmp_path):
    path = tmp_path / "c.json"
    record(path)
    replay = ReplayProvider(Cassette(path))
    list(replay.stream(ModelRequest([UserMessage(content="add 1 and 2")], tools=TOOLS, model="gpt-x")))
    with pytest.raises(NoMatchingInteraction) as info:
        list(replay.stream(ModelRequest([UserMessage(content="add 1 and 3")], tools=TOOLS, model="gpt-x")))
    msg = str(info.value)
    assert "model call 2 differs from the recording at messages[0].content (message 0)" in msg
    assert "- recorded: 'add 1 and 2'" in msg and "+ live:     'add 1 and 3'" in msg
    with pytest.raises(UnplayedInteractions):
        ReplayProvider(Cassette(path)).assert_complete()


def test_script_from_transcripts(tmp_path):
    path = tmp_path / "c.json"
    record(path)
    script = ReplayProvider(Cassette(path)).script()
    assert list(script) == [
        Turn(
            text="Let me add.",
            thinking="need a tool",
            thinking_signature="sig1",
            tool_calls=(ScriptedCall(name="add", arguments={"a": 1, "b": 2}, id="call_1"), ScriptedCall(name="add", arguments='{"a": 1', id="call_2")),
            stop_reason="toolUse",
            usage=Usage(input=10, output=5, total_tokens=15),
        ),
        Turn(text="3", stop_reason="stop", usage=Usage()),
    ]


def test_transcript_only_cassette_without_http(tmp_path):
    """A provider that makes no HTTP request still gets its calls recorded as transcripts."""

    class Canned(BaseProvider):
        def __init__(self):
            self.answers = list(ANSWERS)

        def stream(self, request):
            yield from events_for_message(self.answers.pop(0))

    path = tmp_path / "c.json"
    cassette = Cassette(path, record_mode="once")
    conversation(RecordingProvider(Canned(), cassette))
    cassette.save()
    data = json.loads(path.read_text())
    assert [sorted(i) for i in data["interactions"]] == [["transcript"], ["transcript"]]
    conversation(ReplayProvider(Cassette(path)))
