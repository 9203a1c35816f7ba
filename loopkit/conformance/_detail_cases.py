"""Details a shallow adapter gets wrong: the answer's metadata, cached prompt tokens, image parts
of a user message, an answer the model itself failed, and the call item ids a stateless Responses
conversation must echo.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ProviderError
from ..events import DoneEvent
from ..messages import (
    TextContent,
    ThinkingContent,
    ToolResultMessage,
    Usage,
    user,
)
from ..script import MidStreamError, Turn, call
from ._case import Case, Context
from ._failure_cases import expect_error_details, expect_failure, said
from ._fixtures import (
    PROMPT,
    SIGNATURE,
    accepted,
    answer,
    call_ids,
    finished,
    only_calls,
    request,
)
from ._harness import MAX_RETRIES, Exchange
from ._wire import Wire

MODEL = "conformance-model-2026-01"
RESPONSE_ID = "conformance-response-0001"


def _stamp(data: Any) -> Any:
    """Give the answer a distinctive model name and response id, where the protocol carries them:
    a Chat chunk's ``model``/``id``, a Responses lifecycle event's ``response``, Anthropic's
    ``message_start.message``, Gemini's ``modelVersion``/``responseId``."""
    if not isinstance(data, dict):
        return data
    for holder in (data, data.get("response"), data.get("message")):
        if isinstance(holder, dict) and isinstance(holder.get("model"), str):
            holder["model"] = MODEL
            if "id" in holder:
                holder["id"] = RESPONSE_ID
    if "modelVersion" in data:
        data["modelVersion"] = MODEL
    if "responseId" in data:
        data["responseId"] = RESPONSE_ID
    return data


def _payloads(chunks: list[bytes], edit: Callable[[Any], Any]) -> list[bytes]:
    """Apply ``edit`` to every JSON payload of an answer: each ``data:`` line of a server-sent
    event stream, or the whole JSON body of a non-streamed answer."""
    if not any(b"data:" in c for c in chunks):
        try:
            return [json.dumps(edit(json.loads(b"".join(chunks))), ensure_ascii=False).encode()]
        except ValueError:
            return chunks
    out = []
    for chunk in chunks:
        lines = chunk.decode("utf-8").split("\n")
        for i, line in enumerate(lines):
            if line.startswith("data:"):
                try:
                    data = json.loads(line[5:])
                except ValueError:
                    continue
                lines[i] = "data: " + json.dumps(edit(data), ensure_ascii=False, separators=(",", ":"))
        out.append("\n".join(lines).encode("utf-8"))
    return out



CACHED = Usage(input=11, output=7, cache_read=40, total_tokens=58)



PIXEL = base64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000" "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082")).decode()
PICTURE_PROMPT = "What is in this picture?"


def _user_parts(protocol: str, body: Any) -> list[tuple[str, ...]]:
    """The parts of the request's user messages, as ``("text", text)`` / ``("image", mime, base64)``."""
    if not isinstance(body, Mapping):
        return []
    if protocol == "openai_responses":
        turns = [i.get("content") for i in body.get("input") or () if isinstance(i, Mapping) and i.get("role") == "user"]
    elif protocol == "gemini":
        turns = [c.get("parts") for c in body.get("contents") or () if isinstance(c, Mapping) and c.get("role") == "user"]
    else:
        turns = [m.get("content") for m in body.get("messages") or () if isinstance(m, Mapping) and m.get("role") == "user"]
    out: list[tuple[str, ...]] = []
    for content in turns:
        if isinstance(content, str):
            out.append(("text", content))
            continue
        for p in content if isinstance(content, list) else ():
            if isinstance(p, Mapping):
                out.append(_part(protocol, p))
    return out


def _part(protocol: str, p: Mapping[str, Any]) -> tuple[str, ...]:
    kind = p.get("type")
    if protocol == "openai_chat" and kind == "text" or protocol == "openai_responses" and kind == "input_text" or protocol == "anthropic" and kind == "text":
        return ("text", p.get("text"))
    if protocol in ("gemini", "bedrock") and "text" in p:
        return ("text", p["text"])
    url = None
    if protocol == "openai_chat" and kind == "image_url":
        url = (p.get("image_url") or {}).get("url")
    elif protocol == "openai_responses" and kind == "input_image":
        url = p.get("image_url")
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        mime, _, data = url[5:].partition(";base64,")
        return ("image", mime, data)
    if protocol == "anthropic" and kind == "image" and isinstance(p.get("source"), Mapping) and p["source"].get("type") == "base64":
        return ("image", p["source"].get("media_type"), p["source"].get("data"))
    inline = p.get("inlineData") or p.get("inline_data") if protocol == "gemini" else None
    if isinstance(inline, Mapping):
        return ("image", inline.get("mimeType") or inline.get("mime_type"), inline.get("data"))
    image = p.get("image") if protocol == "bedrock" else None
    if isinstance(image, Mapping) and isinstance(image.get("source"), Mapping):
        return ("image", f"image/{image.get('format')}", image["source"].get("bytes"))
    return ("unreadable", repr(dict(p))[:120])



def check_model_error(ctx: Context) -> None:
    """``Turn.error``: the model failed the answer (Responses ``response.failed``, an in-stream
    error frame, an ``error`` finish). Scripted on every attempt, so a protocol whose failure is
    an HTTP 5xx fails after its retries too."""
    message = "The model failed to produce an answer (conformance)"
    ex = answer(ctx, [Turn(text="Partial", error=message) for _ in range(MAX_RETRIES + 1)])
    expect_failure(ctx, ex, (ProviderError,), "an answer the model failed")
    if message not in said(ex):
        ctx.fail("the provider's error message", f"text containing {message!r}", said(ex))
    if any(isinstance(e, DoneEvent) for e in ex.events):
        ctx.fail("events", "no 'done' event", ex.outcome())
    if isinstance(ex.error, ProviderError):  # loopkit's errors say where they come from and keep the decoded error
        if not ex.error.provider:
            ctx.fail("the error's provider", "the protocol that raised it", ex.error.provider)
        if message not in json.dumps(ex.error.body, ensure_ascii=False, default=str):
            ctx.fail("the error's body (the provider's decoded error)", f"holding {message!r}", ex.error.body)
    if ctx.wire.name == "openai_responses" and isinstance(ex.error, ProviderError):
        if (ex.error.error_type or "").lower() != "server_error":
            ctx.fail("the error's error_type (response.error.code)", "server_error", ex.error.error_type)


def _flat_errors(chunks: list[bytes]) -> list[bytes]:
    """Responses' in-stream ``error`` event in its flat form, ``{"type": "error", "code", "message",
    "param"}``, as some real traffic sends it (docs/wire.md §2.5), instead of the nested one."""

    def flatten(data: Any) -> Any:
        if isinstance(data, dict) and data.get("type") == "error" and isinstance(data.get("error"), dict):
            nested = data.pop("error")
            data.update({"code": nested.get("code") or nested.get("type"), "message": nested.get("message"), "param": nested.get("param")})
        return data

    return _payloads(chunks, flatten)


def check_flat_error_event(ctx: Context) -> None:
    message = "Upstream model failure (conformance, flat error event)"
    error_type = ctx.wire.error_types[1]
    ex = answer(ctx, [Turn(text="This answer stops at a flat error event.", chunk_size=4, faults=(MidStreamError(after=3, message=message, error_type=error_type),)), "Never reached."], cut=_flat_errors)
    expect_failure(ctx, ex, (ProviderError,), "a flat error event in the middle of the stream")
    expect_error_details(ctx, ex, status=None, error_type=error_type)
    if message not in said(ex):
        ctx.fail("the provider's error message", f"text containing {message!r}", said(ex))
    if isinstance(ex.error, ProviderError) and not ex.error.provider:
        ctx.fail("the error's provider", "the protocol that raised it", ex.error.provider)
    ctx.expect("requests sent (a stream that failed part-way is not retried)", ex.attempts, 1)


def _responses_flat(wire: Wire, provider: Any) -> str | None:
    if wire.name == "openai_responses":
        return None
    return f"only the Responses API has two forms of its in-stream error event ({wire.name} has one)"


def _responses_only(wire: Wire, provider: Any) -> str | None:
    if wire.name == "openai_responses":
        return None
    return f"only the Responses API gives a call an item id apart from its call id ({wire.name} has one id per call)"


def check_call_item_ids(ctx: Context) -> None:
    item_ids: list[str] = []

    def note_ids(data: Any) -> Any:
        """The item ids of the answer's function calls (streamed, or in a whole response's output)."""
        if isinstance(data, dict):
            items = [data.get("item")] + list(data.get("output") or ()) + list((data.get("response") or {}).get("output") or ())
            item_ids.extend(i["id"] for i in items if isinstance(i, dict) and i.get("type") in ("reasoning", "function_call") and i.get("id") and i["id"] not in item_ids)
        return data

    a, _ = call_ids(ctx.wire)

    def next_request(done: list[Exchange]) -> Any:
        if not done:
            return request()
        if len(done) > 1 or done[0].message is None:
            return None
        results = [ToolResultMessage(tool_call_id=c.id, tool_name=c.name, content=[TextContent(text="18 C")]) for c in only_calls(done[0].message)]
        return request(messages=[user(PROMPT), done[0].message, *results])

    first = Turn(thinking="The user wants the weather.", thinking_signature=SIGNATURE, tool_calls=(call("get_weather", {"city": "Paris"}, id=a),))
    rounds = ctx.harness.run_rounds([first, Turn(text="Done.")], next_request, cut=lambda chunks: _payloads(chunks, note_ids))
    m = finished(ctx, rounds[0], "model call 1")
    if m is None:
        return
    if len(rounds) < 2 or not rounds[1].bodies:
        ctx.fail("the next request", "sent, with the calls in the history", "not sent")
        return
    accepted(ctx, rounds[1])
    items = [i for i in (rounds[1].bodies[0] or {}).get("input") or () if isinstance(i, Mapping) and i.get("type") in ("function_call", "reasoning")]
    rs, fc = (item_ids + ["rs_...", "fc_..."])[:2]
    ctx.expect("the echoed call (call_id, item id)", [(i.get("call_id"), i.get("id")) for i in items if i.get("type") == "function_call"], [(a, fc)])
    ctx.expect("the reasoning item echoed just before its call", [i.get("type") for i in items], ["reasoning", "function_call"])
    ctx.expect(
        "the echoed reasoning item (id, summary, encrypted_content), as the answer gave it",
        [(i.get("id"), i.get("summary"), i.get("encrypted_content")) for i in items if i.get("type") == "reasoning"],
        [(rs, [{"type": "summary_text", "text": "The user wants the weather."}], SIGNATURE)],
    )


SUMMARY_PARTS = ("First, find the city.", "Then ask for its weather.")


def _payload(chunk: bytes) -> dict[str, Any] | None:
    for line in chunk.decode("utf-8").splitlines():
        if line.startswith("data:"):
            try:
                data = json.loads(line[5:])
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


def _event(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()


def _two_summary_parts(chunks: list[bytes]) -> list[bytes]:
    """The Responses answer with its reasoning summary in two parts (what the API sends for a
    summary of several paragraphs, docs/wire.md §2.4): streamed, each part with its own
    ``reasoning_summary_part.added`` ... ``.done`` events, and the finished item and response
    listing both; whole, the reasoning item's ``summary`` listing both."""
    parts = [{"type": "summary_text", "text": t} for t in SUMMARY_PARTS]
    if not any(b"data:" in c for c in chunks):  # a whole response: its reasoning item lists both parts

        def two_parts(data: Any) -> Any:
            for item in data.get("output") or () if isinstance(data, dict) else ():
                if isinstance(item, dict) and item.get("type") == "reasoning" and item.get("summary"):
                    item["summary"] = parts
            return data

        return _payloads(chunks, two_parts)
    out: list[dict[str, Any]] = []
    for data in (_payload(c) for c in chunks):
        if data is None:
            continue
        kind = data.get("type", "")
        if kind.startswith("response.reasoning_summary_"):
            if kind == "response.reasoning_summary_part.added":
                at = {"item_id": data.get("item_id"), "output_index": data.get("output_index")}
                for n, part in enumerate(parts):
                    out.append({"type": "response.reasoning_summary_part.added", **at, "summary_index": n, "part": {"type": "summary_text", "text": ""}})
                    words = part["text"].split(" ")
                    out += [{"type": "response.reasoning_summary_text.delta", **at, "summary_index": n, "delta": d} for d in [w + " " for w in words[:-1]] + words[-1:]]
                    out.append({"type": "response.reasoning_summary_text.done", **at, "summary_index": n, "text": part["text"]})
                    out.append({"type": "response.reasoning_summary_part.done", **at, "summary_index": n, "part": part})
            continue
        for item in [data.get("item")] + list((data.get("response") or {}).get("output") or []):
            if isinstance(item, dict) and item.get("type") == "reasoning" and item.get("summary"):
                item["summary"] = parts
        out.append(data)
    for n, data in enumerate(out):
        data["sequence_number"] = n
    return [_event(d) for d in out]


def _responses_summary(wire: Wire, provider: Any) -> str | None:
    if wire.name == "openai_responses":
        return None
    return f"only the Responses API splits a reasoning summary into parts ({wire.name} streams thinking as one block)"


def check_summary_parts(ctx: Context) -> None:
    ex = answer(ctx, [Turn(thinking="One part, made two by the case.", thinking_signature=SIGNATURE, text="Sunny.")], cut=_two_summary_parts)
    m = finished(ctx, ex, "an answer whose reasoning summary has two parts")
    if m is None:
        return
    blocks = [b for b in m.content if isinstance(b, ThinkingContent)]
    thinking = [b.thinking for b in blocks]
    first, second = SUMMARY_PARTS
    if len(thinking) != 1 or not re.fullmatch(re.escape(first) + r"\s+" + re.escape(second), thinking[0]):
        ctx.fail("the thinking block (both summary parts, in order, kept apart)", f"{first!r}, white space, {second!r}", thinking)
    ctx.expect("redacted flag of thinking that has its text", [b.redacted for b in blocks], [False])
    ctx.expect("text", m.text, "Sunny.")


def check_text_then_parallel_calls(ctx: Context) -> None:
    a, b = call_ids(ctx.wire)
    turn = Turn(text="Checking both.", tool_calls=(call("get_weather", {"city": "Paris"}, id=a), call("get_time", {"tz": "Asia/Tokyo"}, id=b)))
    m = finished(ctx, answer(ctx, [turn]))
    if m is None:
        return
    ctx.expect("content blocks", [blk.type for blk in m.content], ["text", "toolCall", "toolCall"])
    ctx.expect("text", m.text, "Checking both.")
    ctx.expect("tool calls (id, name, arguments), in order", [(c.id, c.name, c.arguments) for c in only_calls(m)], [(a, "get_weather", {"city": "Paris"}), (b, "get_time", {"tz": "Asia/Tokyo"})])
    ctx.expect("stop_reason", m.stop_reason, "toolUse")


DETAIL_CASES: tuple[Case, ...] = (
    Case("stream.text_then_parallel_calls", "Text followed by two tool calls keeps the three blocks, in order, each call whole.", "docs/wire.md §1.7 #7, §1.4 #4, §2.3, §3.7 #3, §5.8 #1", check_text_then_parallel_calls),
    Case("failure.model_error", "An answer the model itself failed (response.failed, an error frame or finish) fails the call with the provider's message, never a 'done'; a raised ProviderError names its provider and keeps the decoded error.", "docs/wire.md §2.5, §6.3; docs/loop-contract.md §7.5", check_model_error),
    Case("stream.thinking.summary_parts", "A reasoning summary in several parts becomes one thinking block (not redacted) with every part, in order.", "docs/wire.md §2.3, §2.4", check_summary_parts, _responses_summary),
    Case("failure.flat_error_event", "Responses' flat in-stream error event fails the call with its message and code, as the nested one does.", "docs/wire.md §2.5, §2.7 #4", check_flat_error_event, _responses_flat, streamed_only=True),
    Case("request.history.call_item_ids", "An echoed function call carries its call_id and the item id the answer gave it, after its reasoning item, echoed whole (id, summary, encrypted_content).", "docs/wire.md §2.6, §2.7 #2", check_call_item_ids, _responses_only),
)
