"""Anthropic Messages simulator: ``POST /v1/messages`` answered from a Script (docs/wire.md §3).

Written from the wire description, independently of ``loopkit.providers.anthropic``. It checks
what the real API checks where tests depend on it, with the API's own error bodies and messages:

- auth: ``x-api-key`` or ``Authorization: Bearer`` (SDK 2.x) is required (401
  ``authentication_error``); ``anthropic-version`` is required (400), any value is accepted;
- ``model`` (a non-empty string), ``max_tokens`` (an integer >= 1) and ``messages`` are required;
- every ``tool_result`` must answer a ``tool_use`` of the immediately preceding assistant
  message, and every ``tool_use`` must be answered in the next message (400, ``x-should-retry:
  false``); an error ``tool_result`` needs content; text blocks must be non-empty;
- ``tool_choice`` ``none`` takes no ``disable_parallel_tool_use``; ``any``/``tool`` are refused
  with extended thinking on;
- field types: an echoed ``tool_use`` needs string ``id``/``name`` and an *object* ``input``
  (never the JSON text), ids unique within a message; ``tool_result`` needs a string
  ``tool_use_id`` and string-or-list ``content`` (of text, image, search_result or document blocks); ``thinking`` needs ``thinking`` and ``signature``,
  ``redacted_thinking`` its ``data``; custom tools need a name matching ``^[a-zA-Z0-9_-]{1,64}$``,
  unique, and an ``input_schema`` of ``type: object``.

Streams follow the real service: ``event:`` lines, a ``ping`` after the first block starts,
``input_json_delta`` starting with an empty fragment, ``signature_delta`` just before a thinking
block stops, cumulative usage in ``message_delta``, ``message_stop`` last, no ``[DONE]``. A
``max_tokens`` stop in the middle of a tool call leaves that block without ``content_block_stop``.

Stop reasons (the Turn's normalised one -> wire): stop ``end_turn``, toolUse ``tool_use``, length
``max_tokens``, error ``refusal`` (with ``stop_details`` carrying ``Turn.error``). A server cannot
express ``aborted``: such a turn is refused when the simulator is built. Stop and content kinds:
``stop_sequence`` is ``stop_reason: "stop_sequence"`` with the sequence in ``stop_sequence``;
``refusal`` is ``stop_reason: "refusal"`` with the text as ``stop_details.explanation`` (any
``Turn.text`` streams first); ``content_filter`` is the same stop with no explanation (the API's
safety classifiers end a turn this way); ``pause_turn`` is ``stop_reason: "pause_turn"``;
``redacted_thinking`` a ``redacted_thinking`` block (whole in ``content_block_start``, no deltas);
``reasoning_tokens`` ``usage.output_tokens_details.thinking_tokens``; ``split_usage`` keeps the
input counts in ``message_start`` and sends only ``output_tokens`` in ``message_delta``;
``wire_stop_reason`` any ``stop_reason``.
"""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring as _encode_str  # ensure_ascii=False, like sse()
from typing import Any

from loopkit.script import MidStreamError, ScriptedCall, Turn

from ._core import SimRequest, SimResponse, Simulator, json_response, sse

_DEFAULT_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES = {
    "invalid_request_error": "Invalid request",
    "authentication_error": "invalid x-api-key",
    "billing_error": "Your credit balance is too low to access the Anthropic API.",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "Not found",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "This request would exceed your organization's rate limit. Please try again later.",
    "api_error": "Internal server error",
    "timeout_error": "Request timed out",
    "overloaded_error": "Overloaded",
}
_WIRE_STOP = {"stop": "end_turn", "toolUse": "tool_use", "length": "max_tokens", "error": "refusal"}
STOP_REASONS = frozenset({"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal", "model_context_window_exceeded"})


def _retryable(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


class AnthropicSimulator(Simulator):
    """Anthropic Messages, streamed (``"stream": true``) or as one JSON body.

    Args: those of :class:`~simulators._core.Simulator`.
    """

    protocol = "anthropic"
    wire_stop_values = STOP_REASONS
    base_path = ""  # the SDK's base_url is the host; it appends /v1/messages itself

    _parsed: tuple[SimRequest | None, Any] = (None, None)
    _valid_history: list[Any] = []

    def _body(self, request: SimRequest) -> Any:
        """The request's JSON body, parsed once per request (handle() runs under a lock)."""
        if self._parsed[0] is not request:
            self._parsed = (request, request.json)
        return self._parsed[1]

    # --- routing and validation -----------------------------------------------------------

    def route(self, request: SimRequest) -> str | None:
        if request.method == "POST" and request.path.rstrip("/").endswith("/v1/messages"):
            return "messages"
        return None

    def validate(self, request: SimRequest, route: str) -> SimResponse | None:
        h = request.headers
        if not h.get("x-api-key") and not h.get("authorization", "").lower().startswith("bearer "):
            return self.error_response(401, "x-api-key header is required", "authentication_error")
        if not h.get("anthropic-version"):
            return self.error_response(400, "anthropic-version: header is required", "invalid_request_error")
        body = self._body(request)
        if not isinstance(body, dict):
            return self._bad("There was an issue with your request body: it must be a JSON object")
        for key in ("model", "max_tokens", "messages"):
            if key not in body:
                return self._bad(f"{key}: Field required")
        if not isinstance(body["model"], str) or not body["model"]:
            return self._bad("model: Input should be a valid string")
        limit = body["max_tokens"]
        if isinstance(limit, bool) or not isinstance(limit, int):
            return self._bad("max_tokens: Input should be a valid integer")
        if limit < 1:
            return self._bad("max_tokens: Input should be greater than or equal to 1")
        messages = body["messages"]
        if not isinstance(messages, list) or not messages:
            return self._bad("messages: at least one message is required")
        # Message i's checks look at messages i-1 and i+1 only, so when this request repeats the
        # last valid one's history (a loop resends it every round), only the tail needs checking.
        prev = self._valid_history
        start = len(prev) - 1 if prev and len(messages) >= len(prev) and messages[: len(prev)] == prev else 0
        problem = _check_messages(messages, max(start, 0)) or _check_tool_choice(body) or _check_tools(body)
        if problem:
            return self._bad(problem)
        self._valid_history = messages
        return None

    def _bad(self, message: str) -> SimResponse:
        return self.error_response(400, message, "invalid_request_error")

    def wants_stream(self, request: SimRequest, route: str) -> bool:
        return bool((self._body(request) or {}).get("stream"))

    # --- errors ---------------------------------------------------------------------------

    def error_response(
        self, status: int, message: str | None = None, error_type: str | None = None, *, retry_after: float | None = None
    ) -> SimResponse:
        etype = error_type or _DEFAULT_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        body = {
            "type": "error",
            "error": {"type": etype, "message": message or _DEFAULT_MESSAGES.get(etype, f"HTTP {status}")},
            "request_id": self.new_id("req_sim"),
        }
        headers = {"request-id": body["request_id"], "x-should-retry": "true" if _retryable(status) else "false"}
        if retry_after is not None:
            headers["retry-after"] = str(int(retry_after)) if float(retry_after).is_integer() else str(retry_after)
        return json_response(status, body, headers)

    def stream_error_event(self, fault: MidStreamError) -> bytes:
        error = {"type": fault.error_type or "api_error", "message": fault.message}
        return sse({"type": "error", "error": error}, event="error")

    # --- answers --------------------------------------------------------------------------

    def _plan(self, request: SimRequest, turn: Turn) -> dict[str, Any]:
        """Ids, blocks, stop reason and usage of the answer, shared by both renderings."""
        body = self._body(request) or {}
        blocks: list[dict[str, Any]] = []
        if turn.redacted_thinking is not None:
            blocks.append({"type": "redacted_thinking", "data": turn.redacted_thinking})
        if turn.thinking is not None:
            blocks.append({"type": "thinking", "thinking": turn.thinking, "signature": turn.thinking_signature or self.new_id("sig_sim")})
        if turn.text:
            blocks.append({"type": "text", "text": turn.text})
        for c in turn.tool_calls:
            blocks.append({"type": "tool_use", "id": c.id or self.new_id("toolu_sim"), "name": c.name, "args": _args_text(c)})
        if turn.wire_stop_reason is not None:
            stop = turn.wire_stop_reason
        elif turn.stop_sequence is not None:
            stop = "stop_sequence"
        elif turn.pause_turn:
            stop = "pause_turn"
        else:
            stop = _WIRE_STOP[turn.resolved_stop_reason]
        explanation = turn.refusal if turn.refusal is not None else None if turn.content_filter else turn.error
        u = turn.usage
        prompt = len(request.body) // 4 + 1  # a deterministic stand-in for a token count
        produced = sum(len(b.get("text") or b.get("thinking") or b.get("args") or "") for b in blocks) // 4 + 1 + (turn.reasoning_tokens or 0)
        usage: dict[str, Any] = {
            "input_tokens": u.input if u else prompt,
            "cache_creation_input_tokens": u.cache_write if u else 0,
            "cache_read_input_tokens": u.cache_read if u else 0,
            "output_tokens": u.output if u else produced,
        }
        if turn.reasoning_tokens is not None:
            usage["output_tokens_details"] = {"thinking_tokens": turn.reasoning_tokens}
        return {
            "id": self.new_id("msg_sim"),
            "model": body.get("model") or self.model,
            "blocks": blocks,
            "stop": stop,
            "stop_sequence": turn.stop_sequence,
            "stop_details": {"type": "refusal", "category": None, "explanation": explanation} if stop == "refusal" else None,
            "usage": usage,
        }

    def render_body(self, request: SimRequest, route: str, turn: Turn) -> SimResponse:
        plan = self._plan(request, turn)
        content = []
        for b in plan["blocks"]:
            if b["type"] == "tool_use":
                content.append({"type": "tool_use", "id": b["id"], "name": b["name"], "input": _input_value(b["args"])})
            else:
                content.append(b)
        message: dict[str, Any] = {
            "id": plan["id"],
            "type": "message",
            "role": "assistant",
            "model": plan["model"],
            "content": content,
            "stop_reason": plan["stop"],
            "stop_sequence": plan["stop_sequence"],
            "usage": {**plan["usage"], "service_tier": "standard"},
        }
        if plan["stop_details"]:
            message["stop_details"] = plan["stop_details"]
        return json_response(200, message, {"request-id": self.new_id("req_sim")})

    def render_stream(self, request: SimRequest, route: str, turn: Turn) -> tuple[dict[str, str], list[bytes]]:
        plan = self._plan(request, turn)
        size = turn.chunk_size or self.chunk_size
        usage = plan["usage"]
        start_usage = {**usage, "output_tokens": 1, "service_tier": "standard"}
        start_usage.pop("output_tokens_details", None)
        events = [
            sse(
                {
                    "type": "message_start",
                    "message": {
                        "id": plan["id"], "type": "message", "role": "assistant", "model": plan["model"], "content": [],
                        "stop_reason": None, "stop_sequence": None, "usage": start_usage,
                    },
                },  # fmt: skip
                "message_start",
            )
        ]
        blocks = plan["blocks"]
        for i, b in enumerate(blocks):
            t = b["type"]
            if t == "redacted_thinking":
                start = b
            elif t == "thinking":
                start = {"type": "thinking", "thinking": "", "signature": ""}
            elif t == "text":
                start = {"type": "text", "text": ""}
            else:
                start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            events.append(sse({"type": "content_block_start", "index": i, "content_block": start}, "content_block_start"))
            if i == 0:
                events.append(sse({"type": "ping"}, "ping"))
            if t == "redacted_thinking":
                pass  # the whole block came in content_block_start
            elif t == "thinking":
                for piece in self.chunks_of(b["thinking"], size):
                    events.append(_delta(i, "thinking_delta", "thinking", piece))
                events.append(_delta(i, "signature_delta", "signature", b["signature"]))
            elif t == "text":
                for piece in self.chunks_of(b["text"], size):
                    events.append(_delta(i, "text_delta", "text", piece))
            else:
                events.append(_delta(i, "input_json_delta", "partial_json", ""))
                if b["args"]:
                    for piece in self.chunks_of(b["args"], size):
                        events.append(_delta(i, "input_json_delta", "partial_json", piece))
            cut_short = plan["stop"] == "max_tokens" and t == "tool_use" and i == len(blocks) - 1
            if not cut_short:
                events.append(sse({"type": "content_block_stop", "index": i}, "content_block_stop"))
        delta: dict[str, Any] = {"stop_reason": plan["stop"], "stop_sequence": plan["stop_sequence"]}
        if plan["stop_details"]:
            delta["stop_details"] = plan["stop_details"]
        if turn.split_usage:  # the input counts stay in message_start, as older traffic has it
            usage = {k: v for k, v in usage.items() if k in ("output_tokens", "output_tokens_details")}
        events.append(sse({"type": "message_delta", "delta": delta, "usage": usage}, "message_delta"))
        events.append(sse({"type": "message_stop"}, "message_stop"))
        headers = {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            "request-id": self.new_id("req_sim"),
        }
        return headers, events


def _delta(index: int, kind: str, field: str, value: str) -> bytes:
    """One ``content_block_delta`` event. Deltas are most of a stream, so the frame is a
    template around the one encoded string (same bytes as ``sse()`` would write)."""
    return (
        f'event: content_block_delta\ndata: {{"type":"content_block_delta","index":{index},'
        f'"delta":{{"type":"{kind}","{field}":{_encode_str(value)}}}}}\n\n'
    ).encode("utf-8")


def _args_text(c: ScriptedCall) -> str:
    if isinstance(c.arguments, str):
        return c.arguments
    return json.dumps(dict(c.arguments), ensure_ascii=False) if c.arguments else ""


def _input_value(text: str) -> Any:
    """The non-streamed ``input``. The real API always sends an object; scripted broken JSON has
    no object form, so it is sent as the raw string for the client to reject."""
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def _content_blocks(message: dict[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _check_messages(messages: list[Any], start: int = 0) -> str | None:
    """The API's message checks, from message ``start`` on (earlier ones passed before): the
    field types of every block first (the request schema), then the rules between messages."""
    for i in range(start, len(messages)):
        m = messages[i]
        if isinstance(m, dict) and isinstance(m.get("content"), list):
            for j, b in enumerate(m["content"]):
                problem = _check_block(b, f"messages.{i}.content.{j}", m.get("role", "")) if isinstance(b, dict) else None
                if problem:
                    return problem
    for i in range(start, len(messages)):
        m = messages[i]
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        content = m.get("content")
        if isinstance(content, str):
            if not content and i < len(messages) - 1:
                return "messages: text content blocks must be non-empty"
            continue
        if not isinstance(content, list):
            return f"messages.{i}.content: Input should be a valid list"
        if not content and not (m["role"] == "assistant" and i == len(messages) - 1):
            return f"messages.{i}: all messages must have non-empty content except for the optional final assistant message"
        for j, b in enumerate(content):
            if not isinstance(b, dict):
                return f"messages.{i}.content.{j}: Input should be an object"
            if b.get("type") == "text" and not b.get("text"):
                return "messages: text content blocks must be non-empty"
            if b.get("type") == "tool_result" and b.get("is_error") and not b.get("content"):
                return f"messages.{i}.content.{j}.tool_result: content cannot be empty if `is_error` is true"
        # tool_result blocks must answer the previous assistant message's tool_use blocks
        results = [(j, b) for j, b in enumerate(content) if b.get("type") == "tool_result"]
        if results:
            prev = messages[i - 1] if i > 0 and isinstance(messages[i - 1], dict) else {}
            uses = {b.get("id") for b in _content_blocks(prev) if isinstance(b, dict) and b.get("type") == "tool_use"} if prev.get("role") == "assistant" else set()
            for j, b in results:
                if b.get("tool_use_id") not in uses:
                    return (
                        f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {b.get('tool_use_id')}. "
                        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                    )
        if m["role"] == "assistant":
            seen: set[Any] = set()
            for j, b in enumerate(content):
                if b.get("type") == "tool_use":
                    if b.get("id") in seen:
                        return f"messages.{i}.content.{j}: `tool_use` ids must be unique"
                    seen.add(b.get("id"))
        if m["role"] == "assistant" and i < len(messages) - 1:
            uses = [b.get("id") for b in content if b.get("type") == "tool_use"]
            nxt = messages[i + 1] if isinstance(messages[i + 1], dict) else {}
            answered = {b.get("tool_use_id") for b in _content_blocks(nxt) if isinstance(b, dict) and b.get("type") == "tool_result"}
            missing = [u for u in uses if u not in answered]
            if missing:
                return (
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(map(str, missing))}. "
                    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
                )
    return None


_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_RESULT_PARTS = ("text", "image", "search_result", "document")  # the blocks a tool_result's content may hold


def _check_block(b: dict[str, Any], at: str, role: str) -> str | None:
    """The field types the API checks on one content block (pydantic-style messages)."""
    t = b.get("type")
    if t == "tool_use":
        if role != "assistant":
            return f"{at}: `tool_use` blocks can only be in `assistant` messages"  # (unverified wording)
        for key in ("id", "name"):
            if not isinstance(b.get(key), str):
                return f"{at}.tool_use.{key}: " + ("Field required" if key not in b else "Input should be a valid string")
        if "input" not in b:
            return f"{at}.tool_use.input: Field required"
        if not isinstance(b["input"], dict):
            return f"{at}.tool_use.input: Input should be a valid dictionary"
    elif t == "tool_result":
        if role != "user":
            return f"{at}: `tool_result` blocks can only be in `user` messages"  # (unverified wording)
        if not isinstance(b.get("tool_use_id"), str):
            return f"{at}.tool_result.tool_use_id: " + ("Field required" if "tool_use_id" not in b else "Input should be a valid string")
        if "content" in b and not isinstance(b["content"], (str, list)):
            return f"{at}.tool_result.content: Input should be a valid list"
        for k, part in enumerate(b["content"] if isinstance(b.get("content"), list) else ()):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind not in _RESULT_PARTS:
                return f"{at}.tool_result.content.{k}: Input tag {kind!r} found using 'type' does not match any of the expected tags: " + ", ".join(map(repr, _RESULT_PARTS))
            if kind == "text" and not isinstance(part.get("text"), str):
                return f"{at}.tool_result.content.{k}.text.text: Field required"
    elif t == "thinking":
        for key in ("thinking", "signature"):
            if not isinstance(b.get(key), str):
                return f"{at}.thinking.{key}: " + ("Field required" if key not in b else "Input should be a valid string")
    elif t == "redacted_thinking":
        if not isinstance(b.get("data"), str):
            return f"{at}.redacted_thinking.data: " + ("Field required" if "data" not in b else "Input should be a valid string")
    elif t == "text":
        if not isinstance(b.get("text"), str):
            return f"{at}.text.text: Input should be a valid string"
    return None


def _check_tools(body: dict[str, Any]) -> str | None:
    tools = body.get("tools")
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    names: set[str] = set()
    for k, tool in enumerate(tools):
        if not isinstance(tool, dict):
            return f"tools.{k}: Input should be a valid dictionary"
        if "type" in tool and tool["type"] != "custom":
            continue  # server tools (web_search_20250305 ...) have their own shapes
        name = tool.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            return f"tools.{k}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
        if name in names:
            return "tools: Tool names must be unique."
        names.add(name)
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            return f"tools.{k}.custom.input_schema: Field required" if schema is None else f"tools.{k}.custom.input_schema: Input should be a valid dictionary"
        if schema.get("type") != "object":
            return f"tools.{k}.custom.input_schema.type: Input should be 'object'"
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool" and isinstance(choice.get("name"), str) and choice["name"] not in names:
        return f"tool_choice.tool.name: Tool '{choice['name']}' not found in tools"  # (unverified wording)
    return None


def _check_tool_choice(body: dict[str, Any]) -> str | None:
    choice = body.get("tool_choice")
    if choice is None:
        return None
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        return "tool_choice: Input tag does not match any of the expected tags: 'auto', 'any', 'tool', 'none'"
    t = choice["type"]
    allowed = {"type", "disable_parallel_tool_use"} | ({"name"} if t == "tool" else set())
    if t == "none":
        allowed = {"type"}
    extra = sorted(set(choice) - allowed)
    if extra:
        return f"tool_choice.{t}.{extra[0]}: Extra inputs are not permitted"
    if t == "tool" and not isinstance(choice.get("name"), str):
        return "tool_choice.tool.name: Field required"
    thinking = body.get("thinking")
    if t in ("any", "tool") and isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive"):
        return "Thinking may not be enabled when tool_choice forces tool use."
    return None
