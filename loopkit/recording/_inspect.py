"""Reading cassettes for people: a session summary (``cassette show``) and a semantic diff
(``cassette diff``), as plain data; :mod:`._render` turns them into rich renderables."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from ..errors import LoopkitError
from ._bodies import chunk_bytes
from ._format import CassetteFile, Interaction, RecordedResponse
from ._match import first_difference, message_index, short

_SSE_END = re.compile(r"\r\n\r\n|\n\n|\r\r")


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One event of a recorded stream: its name (SSE ``event`` or ``:event-type``), its data, and
    the time offset of the chunk it completed in."""

    t: float
    name: str | None
    data: str


def stream_events(response: RecordedResponse) -> list[StreamEvent]:
    """The response body as events: SSE events, decoded frames, or one event for a plain body."""
    out: list[StreamEvent] = []
    if response.codec is not None:
        for c in response.chunks:
            for f in c.frames or []:
                headers = f.get("headers", {}) if isinstance(f, dict) else {}
                payload = f.get("json", f.get("text", f.get("base64", ""))) if isinstance(f, dict) else f
                name = headers.get(":event-type") or headers.get(":exception-type")
                out.append(StreamEvent(c.t, name, payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)))
        return out
    buf, t = "", 0.0
    for c, raw in zip(response.chunks, _safe_bytes(response)):
        buf += raw.decode("utf-8", "replace")
        t = c.t
        while True:
            m = _SSE_END.search(buf)
            if m is None:
                break
            block, buf = buf[: m.start()], buf[m.end() :]
            out.append(_sse_event(block, t))
    if buf.strip():
        if out:
            out.append(_sse_event(buf, t))
        else:
            out.append(StreamEvent(t, None, buf))
    return out


def _safe_bytes(response: RecordedResponse) -> list[bytes]:
    try:
        return chunk_bytes(response)
    except LoopkitError:
        return [b"" for _ in response.chunks]


def _sse_event(block: str, t: float) -> StreamEvent:
    name, data = None, []
    for line in block.splitlines():
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    return StreamEvent(t, name, "\n".join(data) if data else block)


@dataclass(frozen=True, slots=True)
class Summary:
    """One interaction for ``cassette show``."""

    index: int
    method: str | None
    path: str | None
    status: int | None
    chunks: int
    size: int
    first_t: float | None
    last_t: float | None
    events: list[StreamEvent]
    new_messages: list[dict[str, Any]]
    answer: dict[str, Any] | None

    def as_json(self) -> dict[str, Any]:
        return {
            "index": self.index, "method": self.method, "path": self.path, "status": self.status,
            "chunks": self.chunks, "bytes": self.size, "first_t": self.first_t, "last_t": self.last_t,
            "events": [{"t": e.t, "event": e.name, "data": e.data} for e in self.events],
            "new_messages": self.new_messages, "answer": self.answer,
        }  # fmt: skip


def _text_of(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _blocks(content: Any) -> list[dict[str, Any]]:
    """A provider message's content as loopkit content blocks (text, toolCall) for display."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out: list[dict[str, Any]] = []
    for b in content if isinstance(content, list) else [content]:
        if not isinstance(b, dict):
            out.append({"type": "text", "text": _text_of(b)})
            continue
        kind = b.get("type")
        if "text" in b and isinstance(b["text"], str) and kind in (None, "text", "input_text", "output_text"):
            out.append({"type": "text", "text": b["text"]})
        elif kind == "tool_use" or "functionCall" in b or "toolUse" in b:
            call = b.get("functionCall") or b.get("toolUse") or b
            out.append({"type": "toolCall", "name": call.get("name"), "arguments": call.get("input", call.get("args", {})), "id": call.get("id", call.get("toolUseId", ""))})
        elif kind == "tool_result" or "functionResponse" in b or "toolResult" in b:
            res = b.get("functionResponse") or b.get("toolResult") or b
            body = res.get("content", res.get("response", ""))
            out.append({"type": "text", "text": "← " + (_text_of(_plain(body)))})
        elif kind in ("thinking", "reasoning") or "reasoningContent" in b:
            out.append({"type": "thinking", "thinking": _text_of(b.get("thinking", b.get("reasoningContent", {}).get("reasoningText", {}).get("text", "")))})
        elif kind in ("image", "image_url", "input_image") or "inlineData" in b:
            out.append({"type": "image", "mime_type": (b.get("inlineData") or b.get("source") or {}).get("mime_type", (b.get("source") or {}).get("media_type", "?"))})
        else:
            out.append({"type": "text", "text": _text_of(b)})
    return out


def _plain(body: Any) -> Any:
    """Tool-result content as text where it is a list of text blocks."""
    if isinstance(body, list) and all(isinstance(x, dict) and isinstance(x.get("text"), str) for x in body):
        return "\n".join(x["text"] for x in body)
    return body


def request_messages(body: Any) -> list[dict[str, Any]]:
    """The conversation a provider request body carries, as loopkit-style message data (role,
    content blocks, tool name of a result) for display: OpenAI Chat and Responses, Anthropic,
    Gemini and Bedrock bodies; [] for anything else."""
    if not isinstance(body, dict):
        return []
    out: list[dict[str, Any]] = []
    system = body.get("system") or body.get("instructions") or body.get("systemInstruction") or body.get("system_instruction")
    if system:
        if isinstance(system, dict):
            system = system.get("parts", system)
        out.append({"role": "system", "content": [{"type": "text", "text": "\n".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in system) if isinstance(system, list) else _text_of(system)}]})
    items = body.get("messages") or body.get("contents") or body.get("input") or []
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for m in items if isinstance(items, list) else []:
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        kind = m.get("type")
        if kind == "function_call":  # Responses
            out.append({"role": "assistant", "content": [{"type": "toolCall", "name": m.get("name"), "arguments": m.get("arguments"), "id": m.get("call_id", "")}]})
        elif kind == "function_call_output":
            out.append({"role": "toolResult", "tool_name": m.get("call_id"), "content": [{"type": "text", "text": _text_of(m.get("output", ""))}]})
        elif role == "tool":  # Chat
            out.append({"role": "toolResult", "tool_name": m.get("name") or m.get("tool_call_id"), "content": _blocks(m.get("content"))})
        else:
            blocks = _blocks(m.get("content") if "content" in m else m.get("parts"))
            for call in m.get("tool_calls") or []:
                fn = call.get("function", {})
                blocks.append({"type": "toolCall", "name": fn.get("name"), "raw_arguments": fn.get("arguments"), "id": call.get("id", "")})
            results = [b for b in blocks if b.get("type") == "text" and b.get("text", "").startswith("← ")]
            if results and len(results) == len(blocks):
                for r in results:
                    out.append({"role": "toolResult", "tool_name": "", "content": [{"type": "text", "text": r["text"][2:]}]})
                continue
            out.append({"role": {"model": "assistant", "function": "toolResult"}.get(role, role or "user"), "content": blocks})
    return out


def summarise(file: CassetteFile, *, reassemble: Callable[[Interaction], dict[str, Any] | None] | None = None) -> list[Summary]:
    """Each interaction with its stream events and, from transcripts, the turn's new messages.

    Args:
        reassemble: for an interaction without a transcript (a vcrpy or SDK recording), a
            function that decodes the response into assistant-message data (the CLI passes one
            built on loopkit's adapters), or None.
    """
    out, seen = [], 0
    for n, inter in enumerate(file.interactions):
        req, resp = inter.request, inter.response
        new: list[dict[str, Any]] = []
        answer = None
        if inter.transcript is not None:
            messages = inter.transcript.request.get("messages", [])
            new, seen = messages[seen:], len(messages) + 1
            answer = inter.transcript.message
        else:
            if req is not None and req.has_json:
                messages = request_messages(req.json_body)
                if len(messages) < seen:  # a new conversation
                    seen = 0
                new, seen = messages[seen:], len(messages) + 1
            if reassemble is not None and resp is not None:
                answer = reassemble(inter)
        sizes = [len(b) for b in _safe_bytes(resp)] if resp else []
        out.append(
            Summary(
                index=n,
                method=req.method if req else None,
                path=urlsplit(req.url).path if req else None,
                status=resp.status if resp else None,
                chunks=len(resp.chunks) if resp else 0,
                size=sum(sizes),
                first_t=resp.chunks[0].t if resp and resp.chunks else None,
                last_t=resp.chunks[-1].t if resp and resp.chunks else None,
                events=stream_events(resp) if resp else [],
                new_messages=new,
                answer=answer,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where two cassettes differ."""

    interaction: int
    where: str
    a: Any
    b: Any

    @property
    def message(self) -> int | None:
        """The message index the difference is in, when it is inside a conversation."""
        path = self.where.split(".", 2)[-1] if self.where.startswith(("request.json.", "transcript.request.")) else ""
        return message_index(path)

    def __str__(self) -> str:
        msg = f" (message {self.message})" if self.message is not None else ""
        return f"interaction {self.interaction}: {self.where}{msg}: {short(self.a, self.b)} -> {short(self.b, self.a)}"

    def as_json(self) -> dict[str, Any]:
        return {"interaction": self.interaction, "where": self.where, "message": self.message, "a": _jsonable(self.a), "b": _jsonable(self.b)}


def _jsonable(v: Any) -> Any:
    try:
        json.dumps(v)
        return v
    except TypeError:
        return repr(v)


def _diff(n: int, prefix: str, a: Any, b: Any) -> list[Difference]:
    d = first_difference(a, b)
    return [] if d is None else [Difference(n, f"{prefix}.{d[0]}" if d[0] != "(body)" else prefix, d[1], d[2])]


def _interaction_diff(n: int, a: Interaction, b: Interaction) -> list[Difference]:
    out: list[Difference] = []
    if a.request and b.request:
        if a.request.method != b.request.method:
            out.append(Difference(n, "request.method", a.request.method, b.request.method))
        pa, pb = urlsplit(a.request.url).path, urlsplit(b.request.url).path
        if pa != pb:
            out.append(Difference(n, "request.path", pa, pb))
        out += _diff(n, "request.json", a.request.json_body, b.request.json_body)
        if a.request.text != b.request.text:
            out.append(Difference(n, "request.text", a.request.text, b.request.text))
    elif (a.request is None) != (b.request is None):
        out.append(Difference(n, "request", a.request is not None, b.request is not None))
    if a.response and b.response:
        if a.response.status != b.response.status:
            out.append(Difference(n, "response.status", a.response.status, b.response.status))
        ea, eb = stream_events(a.response), stream_events(b.response)
        for i, (x, y) in enumerate(zip(ea, eb)):
            if (x.name, x.data) != (y.name, y.data):
                out.append(Difference(n, f"response.events[{i}]" + (f" ({x.name})" if x.name else ""), x.data, y.data))
                break
        else:
            if len(ea) != len(eb):
                out.append(Difference(n, "response.events (count)", len(ea), len(eb)))
            elif len(a.response.chunks) != len(b.response.chunks):
                out.append(Difference(n, "response.chunks (count)", len(a.response.chunks), len(b.response.chunks)))
    if a.transcript and b.transcript:
        out += _diff(n, "transcript.request", a.transcript.request, b.transcript.request)
        out += _diff(n, "transcript.message", a.transcript.message, b.transcript.message)
    return out


def diff_cassettes(a: CassetteFile, b: CassetteFile) -> list[Difference]:
    """Interaction by interaction: which turn, which message, which field differs."""
    out: list[Difference] = []
    for n, (x, y) in enumerate(zip(a.interactions, b.interactions)):
        out += _interaction_diff(n, x, y)
    if len(a.interactions) != len(b.interactions):
        n = min(len(a.interactions), len(b.interactions))
        out.append(Difference(n, "interactions (count)", len(a.interactions), len(b.interactions)))
    return out
