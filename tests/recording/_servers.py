"""In-process SSE servers (httpx.MockTransport) that send their body in known chunks."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import httpx


class Chunked(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body sent as exactly these chunks; ``on_chunk`` is called as each one goes out."""

    def __init__(self, chunks: list[bytes], on_chunk: Callable[[int], None] | None = None) -> None:
        self.chunks = chunks
        self.on_chunk = on_chunk

    def __iter__(self) -> Iterator[bytes]:
        for i, c in enumerate(self.chunks):
            if self.on_chunk:
                self.on_chunk(i)
            yield c

    async def __aiter__(self):
        for i, c in enumerate(self.chunks):
            if self.on_chunk:
                self.on_chunk(i)
            yield c


def sse(*events: dict, split: int | None = None) -> list[bytes]:
    """OpenAI-chat-style SSE chunks: one per event, or cut every ``split`` bytes."""
    body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
    if split is None:
        return [b"data: " + json.dumps(e).encode() + b"\n\n" for e in events] + [b"data: [DONE]\n\n"]
    return [body[i : i + split] for i in range(0, len(body), split)]


def chat_server(answers: dict[str, list[bytes]], log: list | None = None, on_chunk=None) -> httpx.MockTransport:
    """Answer a chat-completions request with the chunks keyed by the last user message text."""

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if log is not None:
            log.append(body)
        last = body["messages"][-1]["content"]
        chunks = answers.get(last)
        if chunks is None:
            return httpx.Response(404, json={"error": {"message": f"no answer for {last!r}"}})
        return httpx.Response(
            200,
            headers=[("content-type", "text/event-stream"), ("x-request-id", "req_123"), ("set-cookie", "__cf_bm=abc")],
            stream=Chunked(chunks, on_chunk),
        )

    return httpx.MockTransport(handler)


class FakeClock:
    """A clock that advances by ``step`` seconds on every reading."""

    def __init__(self, step: float = 0.01) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return round(self.now, 6)


def chat_body(text: str, **extra) -> dict:
    return {"model": "gpt-x", "stream": True, "messages": [{"role": "user", "content": text}], **extra}
