"""Unusual but real wire forms, and histories the loop really sends.

- Anthropic's ``content_block_start`` carries a whole content block: text, thinking, its signature
  and a tool call's ``input`` may already be in it, and the block's deltas append to that (the
  official SDK's stream accumulator reads it so). Server tools (``server_tool_use``,
  ``web_search_tool_result``) add blocks of their own, with deltas, that the loop does not run.
- A user turn can hold images, and two user messages can follow each other (a follow-up queued
  behind the prompt); every protocol has a form for both.
- A history can hold a tool call whose arguments never parsed; it must still be sent in a form
  the API accepts (docs/loop-contract.md §7.4).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ..messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    user,
)
from ..script import Turn, call
from ._case import Case, Context
from ._fixtures import (
    PROMPT,
    SIGNATURE,
    accepted,
    answer,
    call_ids,
    finished,
    history,
    kinds,
    only_calls,
    request,
)
from ._harness import is_provider_failure
from ._wire import Wire

# a 1x1 PNG, as base64
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="


def _only(protocol: str, why: str) -> Callable[[Wire, Any], str | None]:
    def applies(wire: Wire, provider: Any) -> str | None:
        return None if wire.name == protocol else f"{why} ({wire.name} has no such form)"

    return applies


# --- reading and rewriting Anthropic's SSE events (one simulator chunk is one event) ------------


def _parse(chunk: bytes) -> tuple[str | None, Any]:
    name, data = None, None
    for line in chunk.decode("utf-8").split("\n"):
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data = json.loads(line[5:])
    return name, data


def _event(data: Mapping[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()


def _content_in_block_start(chunks: list[bytes]) -> list[bytes]:
    """Moves each block's first text or thinking delta, its signature and a tool call's whole
    input into its ``content_block_start``, leaving the other deltas where they were."""
    events = [_parse(c) for c in chunks]
    pieces: dict[int, list[dict[str, Any]]] = {}
    for _, data in events:
        if isinstance(data, dict) and data.get("type") == "content_block_delta":
            pieces.setdefault(data["index"], []).append(data["delta"])
    moved: set[int] = set()  # ids of the delta objects now in a start event
    out = []
    for chunk, (_, data) in zip(chunks, events):
        if isinstance(data, dict) and data.get("type") == "content_block_start":
            block, deltas = data["content_block"], pieces.get(data["index"], [])
            if block["type"] in ("text", "thinking"):
                first = next(d for d in deltas if d["type"] in ("text_delta", "thinking_delta"))
                block[block["type"]] = first[block["type"]]
                moved.add(id(first))
            if block["type"] == "thinking":
                signature = next(d for d in deltas if d["type"] == "signature_delta")
                block["signature"] = signature["signature"]
                moved.add(id(signature))
            if block["type"] == "tool_use":
                block["input"] = json.loads("".join(d["partial_json"] for d in deltas) or "{}")
                moved.update(id(d) for d in deltas)
            chunk = _event(data)
        elif isinstance(data, dict) and data.get("type") == "content_block_delta" and id(data["delta"]) in moved:
            continue
        out.append(chunk)
    return out


def check_block_start_content(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    thinking, text = "The user asks about Paris; look it up.", "Checking the weather in Paris now."
    turn = Turn(thinking=thinking, thinking_signature=SIGNATURE, text=text, tool_calls=(call("get_weather", {"city": "Paris", "units": "c"}, id=a),), chunk_size=7)
    m = finished(ctx, answer(ctx, [turn], cut=_content_in_block_start), "an answer whose content_block_start events carry content")
    if m is None:
        return
    ctx.expect("content blocks", kinds(m), ["thinking", "text", "toolCall"])
    blocks = [b for b in m.content if isinstance(b, ThinkingContent)]
    ctx.expect("thinking (text, signature) begun in content_block_start", [(b.thinking, b.thinking_signature) for b in blocks], [(thinking, SIGNATURE)])
    ctx.expect("text begun in content_block_start", m.text, text)
    ctx.expect("the call whose input came whole in content_block_start (id, arguments)", [(c.id, c.arguments) for c in only_calls(m)], [(a, {"city": "Paris", "units": "c"})])
    ctx.expect("stop_reason", m.stop_reason, "toolUse")


SEARCH_ID = "srvtoolu_01cnfWebSearch0001"
CITATION = {"type": "web_search_result_location", "url": "https://example.com/paris", "title": "Paris weather", "encrypted_index": "Eo8BCioIAhgBIiQ=", "cited_text": "18 C and clear"}


def _web_search_first(chunks: list[bytes]) -> list[bytes]:
    """Puts a web search (a ``server_tool_use`` block whose query streams as input_json_delta, and
    its ``web_search_tool_result``) before the answer's blocks, and a citation on its text, in a
    stream or a non-streamed message alike."""
    search = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": SEARCH_ID, "name": "web_search", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"query": "weather'}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ' Paris"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {
            "type": "web_search_tool_result", "tool_use_id": SEARCH_ID,
            "content": [{"type": "web_search_result", "title": "Paris weather", "url": "https://example.com/paris", "encrypted_content": "EqgfCioIARgBIiQ=", "page_age": None}],
        }},  # fmt: skip
        {"type": "content_block_stop", "index": 1},
    ]
    if len(chunks) == 1 and chunks[0].lstrip().startswith(b"{"):  # a non-streamed message
        message = json.loads(chunks[0])
        for block in message.get("content") or ():
            if block.get("type") == "text":
                block["citations"] = [CITATION]
        whole = {**search[0]["content_block"], "input": {"query": "weather Paris"}}
        message["content"] = [whole, search[4]["content_block"], *(message.get("content") or ())]
        return [json.dumps(message, ensure_ascii=False).encode()]
    out = []
    for chunk in chunks:
        name, data = _parse(chunk)
        if isinstance(data, dict) and isinstance(data.get("index"), int):
            data["index"] += 2  # after the search's two blocks
            chunk = _event(data)
        out.append(chunk)
        if name == "message_start":
            out += [_event(e) for e in search]
        elif isinstance(data, dict) and data.get("type") == "content_block_start" and data["content_block"]["type"] == "text":
            out.append(_event({"type": "content_block_delta", "index": data["index"], "delta": {"type": "citations_delta", "citation": CITATION}}))
    return out


def check_server_tool_blocks(ctx: Context) -> None:
    a, _ = call_ids(ctx.wire)
    text = "Paris is 18 C and clear; let me get the time too."
    turn = Turn(thinking="Search first, then ask for the time.", thinking_signature=SIGNATURE, text=text, tool_calls=(call("get_time", {"tz": "Europe/Paris"}, id=a),), chunk_size=9)
    m = finished(ctx, answer(ctx, [turn], cut=_web_search_first), "an answer after a server-side web search")
    if m is None:
        return
    ctx.expect("content blocks (the server tool's blocks are not the loop's)", kinds(m), ["thinking", "text", "toolCall"])
    ctx.expect("text", m.text, text)
    ctx.expect("the loop's tool call (id, name, arguments)", [(c.id, c.name, c.arguments) for c in only_calls(m)], [(a, "get_time", {"tz": "Europe/Paris"})])
    ctx.expect("stop_reason", m.stop_reason, "toolUse")


# --- the answer's own names ---------------------------------------------------------------------

SNAPSHOT = "conformance-model-2025-09-29"  # an API answers with the dated snapshot an alias resolves to
RESPONSE_ID = "cnf_resp_01XFDUDYJgAACzvnptvVoYEL"


def _name(protocol: str, data: Any) -> None:
    """Names the answer's model SNAPSHOT and its id RESPONSE_ID where ``protocol`` names them, in
    one streamed payload or a whole non-streamed body."""
    if not isinstance(data, dict):
        return
    if protocol == "anthropic":
        target = data.get("message") if data.get("type") == "message_start" else data if data.get("type") == "message" else None
        keys = ("model", "id")
    elif protocol == "openai_responses":
        target = data.get("response") if isinstance(data.get("response"), dict) else data if data.get("object") == "response" else None
        keys = ("model", "id")
    elif protocol == "openai_chat":
        target, keys = data, ("model", "id")
    else:  # gemini
        target, keys = data, ("modelVersion", "responseId")
    if isinstance(target, dict):
        target.update({keys[0]: SNAPSHOT, keys[1]: RESPONSE_ID})


def _payloads(edit: Callable[[Any], None]) -> Callable[[list[bytes]], list[bytes]]:
    """A cut that applies ``edit`` to every JSON payload of an answer: each SSE event's data, or
    the one JSON body of a non-streamed answer."""

    def cut(chunks: list[bytes]) -> list[bytes]:
        out = []
        for chunk in chunks:
            text = chunk.decode("utf-8")
            if text.lstrip().startswith(("{", "[")):  # a JSON body
                data = json.loads(text)
                for item in data if isinstance(data, list) else [data]:
                    edit(item)
                out.append(json.dumps(data, ensure_ascii=False).encode())
                continue
            lines = text.split("\n")
            for i, line in enumerate(lines):
                if line.startswith("data:") and line[5:].strip().startswith("{"):
                    data = json.loads(line[5:])
                    edit(data)
                    lines[i] = "data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            out.append("\n".join(lines).encode())
        return out

    return cut


def _names(protocol: str) -> Callable[[list[bytes]], list[bytes]]:
    return _payloads(lambda data: _name(protocol, data))


def _names_the_answer(wire: Wire, provider: Any) -> str | None:
    if wire.name == "bedrock":
        return "a Converse answer names neither its model nor a response id (docs/wire.md §5.3, §5.4)"
    return None


def check_answer_names(ctx: Context) -> None:
    m = finished(ctx, answer(ctx, ["Named."], cut=_names(ctx.wire.name)), "an answer naming its model snapshot and id")
    if m is None:
        return
    ctx.expect("message.model (the model the answer names)", m.model, SNAPSHOT)
    ctx.expect("message.response_id (the answer's own id)", m.response_id, RESPONSE_ID)
    if not (isinstance(m.api, str) and m.api and isinstance(m.provider, str) and m.provider):
        ctx.fail("message.api and message.provider (which API and provider answered)", "two non-empty names", (m.api, m.provider))


CACHED = Usage(input=11, output=7, cache_read=100, cache_write=20, total_tokens=138)


def check_cache_usage(ctx: Context) -> None:
    writes = ctx.wire.name != "gemini"  # Gemini reports cache reads only (cachedContentTokenCount)
    usage = CACHED if writes else Usage(input=11, output=7, cache_read=100, total_tokens=118)
    m = finished(ctx, answer(ctx, [Turn(text="Cached.", usage=usage)]), "an answer that read and wrote the prompt cache")
    if m is None:
        return
    u = m.usage
    expected = (usage.input, usage.output, usage.cache_read, usage.cache_write)
    ctx.expect("usage (input without the cache, output, cache_read, cache_write)", (u.input, u.output, u.cache_read, u.cache_write), expected)
    ctx.expect("usage.total_tokens (all four counts)", u.total_tokens, sum(expected))


# --- a stop reason the API adds later -------------------------------------------------------------

NEW_STOP = {"anthropic": "conformance_new_reason", "openai_chat": "conformance_new_reason", "gemini": "CONFORMANCE_NEW_REASON"}


def _new_stop(protocol: str) -> Callable[[Any], None]:
    def edit(data: Any) -> None:
        if not isinstance(data, dict):
            return
        if protocol == "anthropic":
            holder = data.get("delta") if data.get("type") == "message_delta" else data if data.get("type") == "message" else None
            if isinstance(holder, dict) and holder.get("stop_reason"):
                holder["stop_reason"] = NEW_STOP[protocol]
            return
        key, items = ("finish_reason", data.get("choices")) if protocol == "openai_chat" else ("finishReason", data.get("candidates"))
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and item.get(key):
                item[key] = NEW_STOP[protocol]

    return edit


def _open_stop_field(wire: Wire, provider: Any) -> str | None:
    if wire.name in NEW_STOP:
        return None
    if wire.name == "openai_responses":
        return "a Responses answer ends with a status (completed, incomplete with its reason, failed), not an open list of stop reasons"
    return "Bedrock's stopReason comes in a binary event stream the suite does not rewrite"


def check_new_stop_reason(ctx: Context) -> None:
    ex = answer(ctx, ["Done, for a reason this adapter has never seen."], cut=_payloads(_new_stop(ctx.wire.name)))
    if ex.failure() is not None and (ex.error is None or is_provider_failure(ex)):
        return  # failing the call as an error is one of the four
    if ex.contract is not None or ex.message is None:
        ctx.fail(f"the answer with the new stop reason {NEW_STOP[ctx.wire.name]!r}", "a message, or a failure", ex.outcome())
        return
    ctx.expect_in(f"stop_reason for the new wire stop reason {NEW_STOP[ctx.wire.name]!r}", ex.message.stop_reason, ["stop", "length", "toolUse", "error"])


# --- user content -------------------------------------------------------------------------------

Part = tuple[str, ...]  # ("text", text) or ("image", mime type, base64 data)


def _data_url(url: Any) -> Part:
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        mime, data = url[5:].split(";base64,", 1)
        return ("image", mime, data)
    return ("image", "?", str(url))


def user_parts(protocol: str, body: Any) -> list[Part]:
    """The text and image parts of the user turns in a request body, in order (tool results left out)."""
    if not isinstance(body, Mapping):
        return []
    out: list[Part] = []
    if protocol == "gemini":
        for c in body.get("contents") or ():
            if isinstance(c, Mapping) and c.get("role") == "user":
                for p in c.get("parts") or ():
                    inline = p.get("inlineData", p.get("inline_data")) if isinstance(p, Mapping) else None
                    if isinstance(p, Mapping) and isinstance(p.get("text"), str):
                        out.append(("text", p["text"]))
                    elif isinstance(inline, Mapping):
                        out.append(("image", str(inline.get("mimeType", inline.get("mime_type"))), str(inline.get("data"))))
        return out
    items = body.get("input") if protocol == "openai_responses" else body.get("messages")
    for m in items or ():
        if not isinstance(m, Mapping) or m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, str):
            out.append(("text", content))
            continue
        for p in content if isinstance(content, list) else ():
            if not isinstance(p, Mapping):
                continue
            kind = p.get("type")
            if kind in ("text", "input_text") or (protocol == "bedrock" and isinstance(p.get("text"), str)):
                out.append(("text", str(p.get("text"))))
            elif kind == "image_url" and isinstance(p.get("image_url"), Mapping):
                out.append(_data_url(p["image_url"].get("url")))
            elif kind == "input_image":
                out.append(_data_url(p.get("image_url")))
            elif kind == "image" and isinstance(p.get("source"), Mapping) and p["source"].get("type") == "base64":
                out.append(("image", str(p["source"].get("media_type")), str(p["source"].get("data"))))
            elif protocol == "bedrock" and isinstance(p.get("image"), Mapping):
                source = p["image"].get("source")
                out.append(("image", f"image/{p['image'].get('format')}", str(source.get("bytes") if isinstance(source, Mapping) else source)))
    return out


def check_user_content(ctx: Context) -> None:
    follow_up = "And what is in this picture?"
    messages = [user(PROMPT), UserMessage(content=[TextContent(text=follow_up), ImageContent(data=PNG, mime_type="image/png")])]
    ex = answer(ctx, ["A single transparent pixel."], request(messages=messages))
    accepted(ctx, ex)
    parts = user_parts(ctx.wire.name, ex.body)
    ctx.expect("images in the user turns (mime type, base64 data)", [p[1:] for p in parts if p[0] == "image"], [("image/png", PNG)])
    texts = [p[1] for p in parts if p[0] == "text"]
    joined = "\n".join(texts)
    if not (PROMPT in joined and follow_up in joined and joined.index(PROMPT) < joined.index(follow_up)):
        ctx.fail("the texts of two user messages in a row, in order", [PROMPT, follow_up], texts)
    image_at = next((i for i, p in enumerate(parts) if p[0] == "image"), None)
    if image_at is not None and not any(follow_up in p[1] for p in parts[:image_at] if p[0] == "text"):
        ctx.fail("the image after the text it follows in its message", [follow_up, "<image>"], parts)
    # a steering message right after the tool results (docs/loop-contract.md §3.2)
    steer = "Also, what about Lyon?"
    ex = answer(ctx, ["Lyon is 16 C."], request(messages=[*history(ctx.wire), user(steer)]))
    accepted(ctx, ex)
    texts = [p[1] for p in user_parts(ctx.wire.name, ex.body) if p[0] == "text"]
    ctx.expect("the user texts of a history whose tool results are followed by a user message", texts, [PROMPT, steer])


# --- histories ------------------------------------------------------------------------------------


def check_unparsed_arguments_history(ctx: Context) -> None:
    a, b = call_ids(ctx.wire)
    assistant = AssistantMessage(
        content=[
            ToolCall(id=a, name="get_weather", arguments=None, raw_arguments='{"city": "Par'),
            ToolCall(id=b, name="get_time", arguments=[1, 2]),
        ],
        stop_reason="toolUse",
    )
    messages = [
        user(PROMPT),
        assistant,
        ToolResultMessage(tool_call_id=a, tool_name="get_weather", content=[TextContent(text="Invalid JSON in the arguments")], is_error=True),
        ToolResultMessage(tool_call_id=b, tool_name="get_time", content=[TextContent(text="Arguments must be an object")], is_error=True),
    ]
    ex = answer(ctx, ["Let me try again."], request(messages=messages))
    accepted(ctx, ex)
    echoed = [(c.id, c.name) for c in ctx.wire.echoed_calls(ex.body or {})]
    if ctx.wire.name == "gemini":  # functionCall.id is optional on this wire; when sent it must be the same
        echoed = [(e if i is None else i, n) for (i, n), e in zip(echoed, (a, b))] + echoed[2:]
    ctx.expect("calls with unparsed or non-object arguments echoed (id, name)", echoed, [(a, "get_weather"), (b, "get_time")])
    ctx.expect("their results sent", [r.id is None or r.id in (a, b) for r in ctx.wire.results(ex.body or {})], [True, True])


IMAGE_RESULTS = ("openai_responses", "anthropic", "bedrock")
"""Where a tool result can hold an image: Chat Completions' tool messages carry text only, and
Gemini's functionResponse.response is a JSON object (docs/wire.md §1.6, §4.6)."""


def result_images(protocol: str, body: Any) -> list[Part]:
    """The images inside the tool results of a request body (where the protocol has a form for them)."""
    out: list[Part] = []
    if not isinstance(body, Mapping):
        return out
    if protocol == "openai_responses":
        for i in body.get("input") or ():
            if isinstance(i, Mapping) and i.get("type") == "function_call_output" and isinstance(i.get("output"), list):
                out += [_data_url(p.get("image_url")) for p in i["output"] if isinstance(p, Mapping) and p.get("type") == "input_image"]
        return out
    for m in body.get("messages") or ():
        for b in m.get("content") or () if isinstance(m, Mapping) and isinstance(m.get("content"), list) else ():
            if protocol == "anthropic" and isinstance(b, Mapping) and b.get("type") == "tool_result" and isinstance(b.get("content"), list):
                out += [
                    ("image", str(p["source"].get("media_type")), str(p["source"].get("data")))
                    for p in b["content"]
                    if isinstance(p, Mapping) and p.get("type") == "image" and isinstance(p.get("source"), Mapping) and p["source"].get("type") == "base64"
                ]
            elif protocol == "bedrock" and isinstance(b, Mapping) and isinstance(b.get("toolResult"), Mapping):
                for p in b["toolResult"].get("content") or ():
                    image = p.get("image") if isinstance(p, Mapping) else None
                    if isinstance(image, Mapping) and isinstance(image.get("source"), Mapping):
                        out.append(("image", f"image/{image.get('format')}", str(image["source"].get("bytes"))))
    return out


def check_result_parts(ctx: Context) -> None:
    messages = history(ctx.wire)
    a, b = messages[2].tool_call_id, messages[3].tool_call_id
    messages[2] = ToolResultMessage(tool_call_id=a, tool_name="get_weather", content=[TextContent(text="18 C, "), TextContent(text="clear"), ImageContent(data=PNG, mime_type="image/png")])
    messages[3] = ToolResultMessage(tool_call_id=b, tool_name="get_time", content=[TextContent(text="Unknown time zone: "), TextContent(text="Asia/Tokyo")], is_error=True)
    ex = answer(ctx, ["Paris is clear; Tokyo's zone was not found."], request(messages=messages))
    accepted(ctx, ex)
    results = ctx.wire.results(ex.body or {})
    ctx.expect("number of tool results sent", len(results), 2)
    for r, parts in zip(results, (("18 C, ", "clear"), ("Unknown time zone: ", "Asia/Tokyo"))):
        if not any(sep.join(parts) in r.text for sep in ("", "\n")):
            ctx.fail("a result's text parts, joined in order", "".join(parts), r.text)
    if ctx.wire.name in IMAGE_RESULTS:
        ctx.expect("the image of the successful result (mime type, base64 data)", [p[1:] for p in result_images(ctx.wire.name, ex.body)], [("image/png", PNG)])
    # text parts alone, in a successful result
    messages[2] = ToolResultMessage(tool_call_id=a, tool_name="get_weather", content=[TextContent(text="18 C, "), TextContent(text="clear")])
    ex = answer(ctx, ["Paris is clear; Tokyo's zone was not found."], request(messages=messages))
    accepted(ctx, ex)
    texts = [r.text for r in ctx.wire.results(ex.body or {})][:1]
    if not any("18 C, clear" in t or "18 C, \nclear" in t for t in texts):
        ctx.fail("the text parts of a successful result without images, joined in order", "18 C, clear", texts)


FORM_CASES: tuple[Case, ...] = (
    Case(
        "stream.block_start_content",
        "Text, thinking with its signature, and tool input already carried by content_block_start are kept, with the deltas that follow appended.",
        "docs/wire.md §3.4; SDK: MessageStream accumulates from content_block_start",
        check_block_start_content,
        _only("anthropic", "only Anthropic's content_block_start carries a whole content block"),
        streamed_only=True,
    ),
    Case(
        "stream.server_tool_blocks",
        "Blocks of a server-side tool (server_tool_use with its input deltas, web_search_tool_result) and citations are left out, the rest kept in order.",
        "docs/wire.md §3.3, §3.4; Anthropic web search tool",
        check_server_tool_blocks,
        _only("anthropic", "Anthropic's server tools answer with blocks of their own"),
    ),
    Case(
        "stream.answer_names",
        "The message names the model the answer names (a dated snapshot of the alias asked for), the answer's id, and the API and provider.",
        "docs/wire.md §1.3, §2.3, §3.3, §3.4, §4.3; docs/loop-contract.md §7.6",
        check_answer_names,
        _names_the_answer,
    ),
    Case(
        "stream.usage_cache",
        "Prompt-cache reads and writes are reported apart from the uncached input, and the total counts all four.",
        "docs/wire.md §1.3, §2.3, §3.3, §4.3, §5.3",
        check_cache_usage,
    ),
    Case(
        "stop.new_reason",
        "A stop reason the API adds later still maps onto loopkit's four (or fails the call), never passing through raw.",
        "docs/wire.md §0.2; docs/loop-contract.md §7.3",
        check_new_stop_reason,
        _open_stop_field,
    ),
    Case(
        "request.user_content",
        "User turns reach the wire whole: text and an image in order, two user messages in a row, and a user message right after tool results.",
        "docs/wire.md §1.6, §2.6, §3.6, §4.6, §5.7; docs/loop-contract.md §3.2, §3.4",
        check_user_content,
    ),
    Case(
        "request.history.result_parts",
        "A tool result of several text parts and an image arrives whole: its texts joined in order, the image where the protocol carries one, and an error result's texts too.",
        "docs/wire.md §2.6, §3.6, §5.7; docs/loop-contract.md §7.2",
        check_result_parts,
    ),
    Case(
        "request.history.unparsed_arguments",
        "A history call whose arguments never parsed (or parsed to a non-object) is still sent, in a form the API accepts, with its result.",
        "docs/loop-contract.md §7.4; docs/wire.md §3.6",
        check_unparsed_arguments_history,
    ),
)
