"""A simulator of OpenAI Responses (``POST /v1/responses``, docs/wire.md §2).

It streams typed events (``event: <type>`` + ``data: {"type": <type>, "sequence_number": n, ...}``):
``response.created``, ``response.in_progress``, then per output item ``output_item.added`` ...
``output_item.done`` (a reasoning item with ``encrypted_content`` and a streamed summary, a message
with one ``output_text`` part, one ``function_call`` item per call with its arguments split at
uneven places), and a terminal ``response.completed`` (``response.incomplete`` for a length stop,
``response.failed`` for ``Turn.error``). A scripted mid-stream error is the ``error`` event in the
nested form real traffic uses. No ``[DONE]``. It rejects, with the API's 400 body, a
``function_call_output`` whose ``call_id`` matches no ``function_call`` in the input (by
``call_id`` or item ``id``), a ``function_call`` with no output after it, an echoed
``function_call`` whose ``call_id``, ``name`` or ``arguments`` is missing or not a string (the
arguments go back as the JSON *text*), an ``output`` that is not a string or a list, a
``max_output_tokens`` that is not an integer >= 16, a tool without a ``type`` or of an unknown
one (a function tool without a ``name``), an input item that is not an object or whose ``type``
is no input item type of the API's, and an ``input_image`` part with a key it does not have
or a ``detail`` other than ``low``, ``high``, ``auto`` or ``original``.

Script mapping: ``Turn.thinking`` becomes a reasoning item whose summary is the text and whose
``encrypted_content`` is ``Turn.thinking_signature`` (or a made-up token). Stop and content kinds:
``length`` and ``content_filter`` are ``status: "incomplete"`` with ``incomplete_details.reason``
``max_output_tokens`` / ``content_filter`` (terminal event ``response.incomplete``); ``refusal`` is a
message whose one content part is ``{"type": "refusal", "refusal": text}``, streamed as
``response.refusal.delta`` / ``.done``; ``redacted_thinking`` is a reasoning item with an empty
summary and the data as ``encrypted_content``; ``reasoning_tokens`` goes in
``output_tokens_details.reasoning_tokens``; ``wire_stop_reason`` is any ``incomplete_details.reason``.
There is no form for ``stop_sequence`` (the API takes no stop sequences), ``pause_turn`` (``steered``
exists only on WebSocket sessions) or ``split_usage`` (usage comes once, in the terminal event).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from loopkit.script import MidStreamError, Turn

from ._core import SimRequest, SimResponse, json_response, sse
from ._openai_common import (
    BASE_HEADERS,
    STREAM_HEADERS,
    OpenAISimulator,
    arguments_text,
    split_arbitrarily,
    token_counts,
)

_TOOL_TYPES = (
    "function", "custom", "file_search", "web_search", "web_search_preview", "computer_use_preview", "mcp",
    "code_interpreter", "image_generation", "local_shell", "shell", "apply_patch",
)  # fmt: skip
_IMAGE_KEYS = frozenset({"type", "image_url", "file_id", "detail"})
_IMAGE_DETAILS = ("low", "high", "auto", "original")



INPUT_ITEM_TYPES = (
    "message", "reasoning", "function_call", "function_call_output", "item_reference", "file_search_call", "computer_call", "computer_call_output",
    "web_search_call", "image_generation_call", "code_interpreter_call", "local_shell_call", "local_shell_call_output", "mcp_list_tools",
    "mcp_approval_request", "mcp_approval_response", "mcp_call", "custom_tool_call", "custom_tool_call_output",
)  # fmt: skip
"""The ``type`` values an item of ``input`` may have (an item without one is a message by its ``role``)."""

class OpenAIResponsesSimulator(OpenAISimulator):
    """Answers ``/v1/responses`` from a Script.

    Args:
        script / model / chunk_size: as :class:`~simulators._core.Simulator`.
        created: the ``created_at`` timestamp every answer carries (fixed, for snapshots).
    """

    protocol = "openai_responses"
    unsupported_kinds: ClassVar[Mapping[str, str]] = {
        "stop_sequence": "the Responses API takes no stop sequences",
        "pause_turn": "the only paused form (incomplete_details.reason 'steered') exists on WebSocket sessions, not over HTTP",
        "split_usage": "the Responses API reports usage once, in the terminal response event",
    }
    wire_stop_values = frozenset({"max_output_tokens", "max_messages", "content_filter", "steered"})

    @classmethod
    def cannot_send(cls, turn: Turn) -> tuple[str, str] | None:
        if turn.refusal is not None and turn.text:
            return "refusal", "a refusal is the message's content part instead of output_text: script the refusal text alone"
        return super().cannot_send(turn)

    _valid_items: tuple[list[Any], set[str]] = ([], set())  # the last valid request's items and their call ids

    # --- request side ---------------------------------------------------------------------

    def route(self, request: SimRequest) -> str | None:
        if request.method == "POST" and request.path.rstrip("/").endswith("/responses"):
            return "responses"
        return None



    def validate(self, request: SimRequest, route: str) -> SimResponse | None:
        body = self.body(request)
        if not isinstance(body, Mapping):
            return self.bad_request("We could not parse the JSON body of your request. The OpenAI API expects a JSON payload.")
        if not body.get("model"):
            return self.bad_request("Missing required parameter: 'model'.", "model", "missing_required_parameter")
        limit = body.get("max_output_tokens")
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int):
                return self._invalid_type("max_output_tokens", "an integer", limit)
            if limit < 16:
                return self.bad_request(
                    f"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got {limit} instead.",
                    "max_output_tokens", "integer_below_min_value",
                )
        problem = self._check_tools(body.get("tools"))
        if problem is not None:
            return problem
        items = body.get("input")
        if not isinstance(items, (str, list)):
            return self.bad_request("Missing required parameter: 'input'.", "input", "missing_required_parameter")
        if isinstance(items, str):
            return None
        # Call ids only accumulate, so when this request repeats the last valid one's items (a
        # loop resends them every round) only the new tail needs checking.
        prev, prev_known = self._valid_items
        start = len(prev) if prev and len(items) >= len(prev) and items[: len(prev)] == prev else 0
        known: set[str] = set(prev_known) if start else set()
        answered: set[str] = set()
        calls: list[tuple[str, str | None]] = []  # (call_id, item id) of the new function_call items
        for i in range(start, len(items)):
            item = items[i]
            if not isinstance(item, Mapping):
                return self._invalid_type(f"input[{i}]", "an object", item)
            kind = item.get("type")
            if kind is not None and kind not in INPUT_ITEM_TYPES:
                supported = ", ".join(f"'{t}'" for t in INPUT_ITEM_TYPES)
                return self.bad_request(f"Invalid value: '{kind}'. Supported values are: {supported}.", f"input[{i}].type", "invalid_value")
            parts = item.get("output") if kind == "function_call_output" else item.get("content")
            if isinstance(parts, list):
                problem = self._check_parts(parts, f"input[{i}].{'output' if kind == 'function_call_output' else 'content'}")
                if problem is not None:
                    return problem
            if kind == "function_call":
                for key in ("call_id", "name", "arguments"):
                    if key not in item:
                        return self.bad_request(f"Missing required parameter: 'input[{i}].{key}'.", f"input[{i}].{key}", "missing_required_parameter")
                    if not isinstance(item[key], str):
                        return self._invalid_type(f"input[{i}].{key}", "a string", item[key])
                known.update(str(item[k]) for k in ("call_id", "id") if item.get(k))
                calls.append((item["call_id"], item.get("id")))
            elif kind == "function_call_output":
                if str(item.get("call_id")) not in known:
                    return self.bad_request(f"No tool call found for function call output with call_id {item.get('call_id')}.", "input")
                output = item.get("output")
                if not isinstance(output, (str, list)):
                    return self._invalid_type(f"input[{i}].output", "a string or an array", output)
                answered.add(str(item["call_id"]))
        for call_id, item_id in calls:
            if call_id not in answered and (item_id is None or item_id not in answered):
                return self.bad_request(f"No tool output found for function call {call_id}.", "input")
        self._valid_items = (items, known)
        return None

    def _check_tools(self, tools: Any) -> SimResponse | None:
        """``tools``: each has a known ``type``; a function tool has a string ``name``."""
        if tools is None:
            return None
        if not isinstance(tools, list):
            return self._invalid_type("tools", "an array", tools)
        for k, t in enumerate(tools):
            if not isinstance(t, Mapping):
                return self._invalid_type(f"tools[{k}]", "an object", t)
            if "type" not in t:
                return self.bad_request(f"Missing required parameter: 'tools[{k}].type'.", f"tools[{k}].type", "missing_required_parameter")
            if t["type"] not in _TOOL_TYPES:
                supported = ", ".join(f"'{v}'" for v in _TOOL_TYPES)
                return self.bad_request(f"Invalid value: '{t['type']}'. Supported values are: {supported}.", f"tools[{k}].type", "invalid_value")
            if t["type"] == "function" and not isinstance(t.get("name"), str):
                return self.bad_request(f"Missing required parameter: 'tools[{k}].name'.", f"tools[{k}].name", "missing_required_parameter")
        return None

    def _check_parts(self, parts: list[Any], where: str) -> SimResponse | None:
        """Content parts: an ``input_image`` carries only its known keys, and a known ``detail``."""
        for j, part in enumerate(parts):
            if not isinstance(part, Mapping) or part.get("type") != "input_image":
                continue
            for key in part:
                if key not in _IMAGE_KEYS:
                    return self.bad_request(f"Unknown parameter: '{where}[{j}].{key}'.", f"{where}[{j}].{key}", "unknown_parameter")
            if "detail" in part and part["detail"] not in _IMAGE_DETAILS:
                supported = ", ".join(f"'{v}'" for v in _IMAGE_DETAILS)
                return self.bad_request(f"Invalid value: '{part['detail']}'. Supported values are: {supported}.", f"{where}[{j}].detail", "invalid_value")
        return None

    def _invalid_type(self, param: str, expected: str, value: Any) -> SimResponse:
        kind = "null" if value is None else "an array" if isinstance(value, list) else "an object" if isinstance(value, Mapping) else f"a {type(value).__name__}"
        return self.bad_request(f"Invalid type for '{param}': expected {expected}, but got {kind} instead.", param, "invalid_type")


    # --- answers --------------------------------------------------------------------------

    def _skeleton(self, request: SimRequest, response_id: str) -> dict[str, Any]:
        body = self.options(request)
        return {
            "id": response_id,
            "object": "response",
            "created_at": self.created,
            "status": "in_progress",
            "background": False,
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "max_tool_calls": body.get("max_tool_calls"),
            "model": str(body.get("model") or self.model),
            "output": [],
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None},
            "store": body.get("store", True),
            "temperature": 1.0,
            "text": {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": None,
            "user": None,
            "metadata": {},
        }

    def _items(self, turn: Turn) -> list[dict[str, Any]]:
        """The finished output items of ``turn``."""
        items: list[dict[str, Any]] = []
        if turn.redacted_thinking is not None:
            items.append({"id": self.new_id("rs_sim"), "type": "reasoning", "summary": [], "encrypted_content": turn.redacted_thinking})
        if turn.thinking is not None:
            rs = self.new_id("rs_sim")
            items.append(
                {
                    "id": rs,
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": turn.thinking}] if turn.thinking else [],
                    "encrypted_content": turn.thinking_signature or f"gAAAA-sim-{rs}",
                }
            )
        if turn.refusal is not None:
            part: dict[str, Any] = {"type": "refusal", "refusal": turn.refusal}
            items.append({"id": self.new_id("msg_sim"), "type": "message", "status": "completed", "role": "assistant", "content": [part]})
        elif turn.text:
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": turn.text}
            items.append({"id": self.new_id("msg_sim"), "type": "message", "status": "completed", "role": "assistant", "content": [part]})
        for c in turn.tool_calls:
            fc = self.new_id("fc_sim")
            items.append(
                {"id": fc, "type": "function_call", "status": "completed", "arguments": arguments_text(c.arguments), "call_id": c.id or f"call_{fc[3:]}", "name": c.name}
            )
        return items

    def _finish(self, response: dict[str, Any], request: SimRequest, turn: Turn, items: list[dict[str, Any]]) -> str:
        """Fill the terminal fields of ``response``; return the terminal event type."""
        response["output"] = items
        chars = len(turn.text or turn.refusal or "") + len(turn.thinking or "") + sum(len(i.get("arguments", "")) for i in items)
        prompt, completion, total, cached, written = token_counts(turn, request.body, chars)
        details: dict[str, int] = {"cached_tokens": cached}
        if written:
            details["cache_write_tokens"] = written
        response["usage"] = {
            "input_tokens": prompt,
            "input_tokens_details": details,
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": turn.reasoning_tokens or 0},
            "total_tokens": total,
        }
        if turn.error is not None:
            response["status"] = "failed"
            response["error"] = {"code": "server_error", "message": turn.error}
            return "response.failed"
        incomplete = turn.wire_stop_reason or ("content_filter" if turn.content_filter else "max_output_tokens" if turn.resolved_stop_reason == "length" else None)
        if incomplete is not None:
            response["status"] = "incomplete"
            response["incomplete_details"] = {"reason": incomplete}
            return "response.incomplete"
        response["status"] = "completed"
        return "response.completed"

    def render_body(self, request: SimRequest, route: str, turn: Turn) -> SimResponse:
        response = self._skeleton(request, self.new_id("resp_sim"))
        self._finish(response, request, turn, self._items(turn))
        return json_response(200, response, {"x-request-id": self.new_id("req_sim"), **BASE_HEADERS})

    def render_stream(self, request: SimRequest, route: str, turn: Turn) -> tuple[dict[str, str], list[bytes]]:
        size = turn.chunk_size or self.chunk_size
        response = self._skeleton(request, self.new_id("resp_sim"))
        # the two lifecycle events carry the same in-progress snapshot: encode it once
        snapshot = json.dumps(response, ensure_ascii=False, separators=(",", ":"))
        events = [
            sse(f'{{"type":"{kind}","sequence_number":{seq},"response":{snapshot}}}', event=kind)
            for seq, kind in enumerate(("response.created", "response.in_progress"))
        ]
        items = self._items(turn)
        payloads: list[dict[str, Any]] = []
        for n, item in enumerate(items):
            payloads += self._item_events(n, item, size)
        terminal = self._finish(response, request, turn, items)
        payloads.append({"type": terminal, "response": response})
        events += [sse({"type": p["type"], "sequence_number": seq, **p}, event=p["type"]) for seq, p in enumerate(payloads, start=len(events))]
        return {**STREAM_HEADERS, "x-request-id": self.new_id("req_sim")}, events

    def _item_events(self, n: int, item: dict[str, Any], size: int) -> list[dict[str, Any]]:
        kind, item_id = item["type"], item["id"]
        at = {"item_id": item_id, "output_index": n}
        if kind == "reasoning":
            added = {**item, "summary": []}
            out: list[dict[str, Any]] = [{"type": "response.output_item.added", "output_index": n, "item": added}]
            for s, part in enumerate(item["summary"]):
                out.append({"type": "response.reasoning_summary_part.added", **at, "summary_index": s, "part": {"type": "summary_text", "text": ""}})
                out += [{"type": "response.reasoning_summary_text.delta", **at, "summary_index": s, "delta": d} for d in self.chunks_of(part["text"], size)]
                out.append({"type": "response.reasoning_summary_text.done", **at, "summary_index": s, "text": part["text"]})
                out.append({"type": "response.reasoning_summary_part.done", **at, "summary_index": s, "part": part})
        elif kind == "message" and item["content"][0]["type"] == "refusal":
            part = item["content"][0]
            at_part = {**at, "content_index": 0}
            out = [
                {"type": "response.output_item.added", "output_index": n, "item": {**item, "status": "in_progress", "content": []}},
                {"type": "response.content_part.added", **at_part, "part": {**part, "refusal": ""}},
            ]
            out += [{"type": "response.refusal.delta", **at_part, "delta": d} for d in self.chunks_of(part["refusal"], size)]
            out.append({"type": "response.refusal.done", **at_part, "refusal": part["refusal"]})
            out.append({"type": "response.content_part.done", **at_part, "part": part})
        elif kind == "message":
            part = item["content"][0]
            added = {**item, "status": "in_progress", "content": []}
            at_part = {**at, "content_index": 0}
            out = [
                {"type": "response.output_item.added", "output_index": n, "item": added},
                {"type": "response.content_part.added", **at_part, "part": {**part, "text": ""}},
            ]
            out += [{"type": "response.output_text.delta", **at_part, "delta": d, "logprobs": []} for d in self.chunks_of(part["text"], size)]
            out.append({"type": "response.output_text.done", **at_part, "text": part["text"], "logprobs": []})
            out.append({"type": "response.content_part.done", **at_part, "part": part})
        else:
            added = {**item, "status": "in_progress", "arguments": ""}
            out = [{"type": "response.output_item.added", "output_index": n, "item": added}]
            out += [{"type": "response.function_call_arguments.delta", **at, "delta": d} for d in split_arbitrarily(item["arguments"], size)]
            out.append({"type": "response.function_call_arguments.done", **at, "arguments": item["arguments"]})
        out.append({"type": "response.output_item.done", "output_index": n, "item": item})
        return out

    def stream_error_event(self, fault: MidStreamError) -> bytes:
        kind = fault.error_type or "server_error"
        data = {"type": "error", "sequence_number": fault.after, "error": {"type": kind, "code": kind, "message": fault.message, "param": None}}
        return sse(data, event="error")
