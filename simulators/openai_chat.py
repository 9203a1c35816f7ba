"""A simulator of OpenAI Chat Completions (``POST /v1/chat/completions``, docs/wire.md §1).

It streams as the real service does: ``data: {chunk}`` events only, the role on the first chunk,
a tool call's ``id``/``type``/``name`` on its first fragment only with its arguments split at
uneven places after it, the ``finish_reason`` on a chunk of its own with ``delta: {}``, a usage
chunk with ``choices: []`` when ``stream_options.include_usage`` is set, then ``data: [DONE]``.
It rejects what the API rejects where tests rely on it: ``parallel_tool_calls`` or
``tool_choice`` without ``tools``, ``stream_options`` without ``stream``, an unknown role, an
echoed tool call whose ``id``/``function.name``/``function.arguments`` is not a string (the
arguments go back as the JSON *text*) or whose ``type`` is not ``function``, a
``tool`` message whose content is not a string or parts, a ``tool`` message that answers no
preceding tool call (or answers one twice), and an assistant tool call left without its ``tool``
message, a system, developer or user message whose ``content`` is neither a string nor parts, a
``max_tokens``/``max_completion_tokens`` that is not an integer >= 1, a tool without a ``type`` or
of a type other than ``function``/``custom``, and a function tool whose name breaks
``^[a-zA-Z0-9_-]+$`` or whose ``parameters`` is not an object. Each answer
is the API's 400 body: ``invalid_request_error`` with ``param`` and ``code``
(``invalid_type``, ``invalid_value``, ``missing_required_parameter``).

Script mapping: ``Turn.thinking`` is not sent (OpenAI's Chat Completions shows no reasoning)
unless ``reasoning_field`` names the field an OpenAI-compatible server carries it in:
``"reasoning_content"`` (DeepSeek, older vLLM) or ``"reasoning"`` (vLLM >= 0.9, OpenRouter). The
reasoning then streams as ``delta.<field>`` pieces before the text (the text chunks carry
``"<field>": null``, as DeepSeek's do), and a non-streamed answer carries it as
``message.<field>``; ``Turn.thinking_signature`` has no form there. ``Turn.error`` becomes the in-stream error frame (non-streaming: a 500). Stop and content kinds:
``stop_sequence`` is ``finish_reason: "stop"`` (the API does not say which sequence), ``length``
``"length"``, ``content_filter`` ``"content_filter"``, ``refusal`` the ``refusal`` field (``delta.refusal``
pieces after a first chunk with ``content: null, refusal: ""``; ``message.refusal`` with ``content:
null``) and ``"stop"``, ``reasoning_tokens`` ``completion_tokens_details.reasoning_tokens``,
``wire_stop_reason`` any ``finish_reason``. With a forced named ``tool_choice`` the real API ends a
call with ``"stop"``, not ``"tool_calls"``, and so does this simulator. There is no form for
``pause_turn``, ``redacted_thinking`` or ``split_usage`` (usage comes once, in the last chunk).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from loopkit.errors import UsageError
from loopkit.script import MidStreamError, Turn

from ._core import SimRequest, SimResponse, json_response, sse
from ._openai_common import BASE_HEADERS, STREAM_HEADERS, OpenAISimulator, arguments_text, split_arbitrarily, token_counts

_FINISH = {"stop": "stop", "toolUse": "tool_calls", "length": "length", "error": "stop"}
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}\Z")
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
FINISH_REASONS = frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"})


def _json_type(value: Any) -> str:
    """How the API names a JSON value's type in "Invalid type" messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "an integer" if isinstance(value, int) else "a decimal"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


REASONING_FIELDS = frozenset({"reasoning_content", "reasoning"})


class OpenAIChatSimulator(OpenAISimulator):
    """Answers ``/v1/chat/completions`` from a Script.

    Args:
        script / model / chunk_size: as :class:`~simulators._core.Simulator`.
        created: the ``created`` timestamp every answer carries (fixed, for snapshots).
        reasoning_field: send ``Turn.thinking`` the way an OpenAI-compatible server does, in this
            field (``"reasoning_content"`` or ``"reasoning"``); None (the default, OpenAI's own
            API): never send it.
    """

    protocol = "openai_chat"
    unsupported_kinds: ClassVar[Mapping[str, str]] = {
        "pause_turn": "Chat Completions has no paused-turn stop (finish_reason is stop, length, tool_calls or content_filter)",
        "redacted_thinking": "Chat Completions sends no reasoning content at all",
        "split_usage": "Chat Completions reports usage once, in the last chunk (stream_options.include_usage)",
    }
    wire_stop_values = FINISH_REASONS
    _valid_messages: list[Any] = []  # the messages of the last request that passed validation

    def __init__(self, script: Any, *, reasoning_field: str | None = None, **options: Any) -> None:
        if reasoning_field is not None and reasoning_field not in REASONING_FIELDS:
            raise UsageError(f"openai_chat simulator: reasoning_field {reasoning_field!r} is not one of {', '.join(sorted(REASONING_FIELDS))} (or None)")
        super().__init__(script, **options)
        self.reasoning_field = reasoning_field

    @classmethod
    def cannot_send(cls, turn: Turn) -> tuple[str, str] | None:
        if turn.refusal is not None and (turn.text or turn.tool_calls):
            return "refusal", "a refusal replaces the answer (message.content is null): script the refusal text alone"
        return super().cannot_send(turn)

    # --- request side ---------------------------------------------------------------------

    def route(self, request: SimRequest) -> str | None:
        if request.method == "POST" and request.path.rstrip("/").endswith("/chat/completions"):
            return "chat"
        return None



    def validate(self, request: SimRequest, route: str) -> SimResponse | None:
        body = self.body(request)
        if not isinstance(body, Mapping):
            return self.bad_request(
                "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP "
                "library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)"
            )
        if not body.get("model"):
            return self.bad_request("you must provide a model parameter")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return self.bad_request("Missing required parameter: 'messages'.", "messages", "missing_required_parameter")
        for key in ("max_tokens", "max_completion_tokens"):
            if body.get(key) is not None:
                problem = self._positive_int(key, body[key], 1)
                if problem is not None:
                    return problem
        problem = self._check_tools(body.get("tools"))
        if problem is not None:
            return problem
        if not body.get("tools"):
            if "parallel_tool_calls" in body:
                return self.bad_request("parallel_tool_calls is only allowed when 'tools' are specified", "parallel_tool_calls")
            if "tool_choice" in body:
                return self.bad_request("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", "tool_choice")
        if "stream_options" in body and body.get("stream") is not True:
            return self.bad_request("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options")
        # A valid history leaves no call waiting, so when this request repeats the last valid one's
        # messages (a loop resends them every round) only the new tail needs checking.
        prev = self._valid_messages
        start = len(prev) if prev and len(messages) >= len(prev) and messages[: len(prev)] == prev else 0
        problem = self._check_tool_messages(messages, start)
        if problem is None:
            self._valid_messages = messages
        return problem

    def _check_tool_messages(self, messages: list[Any], start: int = 0) -> SimResponse | None:
        """The tool-message checks from message ``start`` on (the ones before left no call waiting)."""
        waiting: list[str] = []  # ids of the last assistant's calls not yet answered
        waiting_at = 0
        for i in range(start, len(messages)):
            m = messages[i]
            role = m.get("role") if isinstance(m, Mapping) else None
            if role not in _ROLES:
                return self.bad_request(
                    f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
                    f"messages[{i}].role", "invalid_value",
                )
            if role in ("system", "developer", "user") and not isinstance(m.get("content"), (str, list)):
                return self._invalid_type(f"messages[{i}].content", "one of a string or array of objects", m.get("content"))
            if role == "tool":
                content = m.get("content")
                if not isinstance(content, (str, list)):
                    return self._invalid_type(f"messages[{i}].content", "a string or an array", content)
                if m.get("tool_call_id") not in waiting:
                    return self.bad_request(
                        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
                        f"messages.[{i}].role",
                    )
                waiting.remove(m["tool_call_id"])
                continue
            if waiting:
                return self._unanswered(waiting, waiting_at)
            if role == "assistant" and m.get("tool_calls") is not None:
                problem = self._check_calls(m["tool_calls"], i)
                if problem is not None:
                    return problem
                waiting = [c["id"] for c in m["tool_calls"]]
                waiting_at = i
        return self._unanswered(waiting, waiting_at) if waiting else None

    def _check_calls(self, calls: Any, i: int) -> SimResponse | None:
        """An echoed assistant ``tool_calls`` array: the types the API checks (``arguments`` is
        a JSON *string*, never an object)."""
        where = f"messages[{i}].tool_calls"
        if not isinstance(calls, list):
            return self._invalid_type(where, "an array", calls)
        for j, c in enumerate(calls):
            at = f"{where}[{j}]"
            if not isinstance(c, Mapping):
                return self._invalid_type(at, "an object", c)
            if not isinstance(c.get("id"), str):
                return self._missing(f"{at}.id") if "id" not in c else self._invalid_type(f"{at}.id", "a string", c["id"])
            if c.get("type") != "function":
                return self.bad_request(f"Invalid value: '{c.get('type')}'. Supported values are: 'function' and 'custom'.", f"{at}.type", "invalid_value")
            fn = c.get("function")
            if not isinstance(fn, Mapping):
                return self._missing(f"{at}.function") if fn is None else self._invalid_type(f"{at}.function", "an object", fn)
            for key in ("name", "arguments"):
                if key not in fn:
                    return self._missing(f"{at}.function.{key}")
                if not isinstance(fn[key], str):
                    return self._invalid_type(f"{at}.function.{key}", "a string", fn[key])
        return None

    def _check_tools(self, tools: Any) -> SimResponse | None:
        """``tools``: a list of ``{"type": "function", "function": {name, parameters?, ...}}``."""
        if tools is None:
            return None
        if not isinstance(tools, list):
            return self._invalid_type("tools", "an array", tools)
        for k, t in enumerate(tools):
            at = f"tools[{k}]"
            if not isinstance(t, Mapping):
                return self._invalid_type(at, "an object", t)
            if "type" not in t:
                return self._missing(f"{at}.type")
            if t["type"] not in ("function", "custom"):
                return self.bad_request(f"Invalid value: '{t['type']}'. Supported values are: 'function' and 'custom'.", f"{at}.type", "invalid_value")
            if t["type"] == "custom":
                continue
            fn = t.get("function")
            if not isinstance(fn, Mapping):
                return self._missing(f"{at}.function") if fn is None else self._invalid_type(f"{at}.function", "an object", fn)
            name = fn.get("name")
            if not isinstance(name, str):
                return self._missing(f"{at}.function.name") if name is None else self._invalid_type(f"{at}.function.name", "a string", name)
            if not _TOOL_NAME.match(name):
                return self.bad_request(
                    f"Invalid '{at}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                    f"{at}.function.name", "invalid_value",
                )
            if "parameters" in fn and not isinstance(fn["parameters"], Mapping):
                return self._invalid_type(f"{at}.function.parameters", "an object", fn["parameters"])
        return None

    def _positive_int(self, param: str, value: Any, minimum: int) -> SimResponse | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return self._invalid_type(param, "an integer", value)
        if value < minimum:
            return self.bad_request(
                f"Invalid '{param}': integer below minimum value. Expected a value >= {minimum}, but got {value} instead.", param, "integer_below_min_value"
            )
        return None

    def _invalid_type(self, param: str, expected: str, value: Any) -> SimResponse:
        return self.bad_request(f"Invalid type for '{param}': expected {expected}, but got {_json_type(value)} instead.", param, "invalid_type")

    def _missing(self, param: str) -> SimResponse:
        return self.bad_request(f"Missing required parameter: '{param}'.", param, "missing_required_parameter")

    def _unanswered(self, ids: list[str], at: int) -> SimResponse:
        return self.bad_request(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
            f"The following tool_call_ids did not have response messages: {', '.join(map(str, ids))}",
            f"messages.[{at}].role",
        )


    # --- answers --------------------------------------------------------------------------

    def _calls(self, turn: Turn) -> list[tuple[str, str, str]]:
        return [(c.id or self.new_id("call_sim"), c.name, arguments_text(c.arguments)) for c in turn.tool_calls]

    def _usage(self, request: SimRequest, turn: Turn, calls: list[tuple[str, str, str]]) -> dict[str, Any]:
        chars = len(turn.text or "") + sum(len(a) for _, _, a in calls)
        prompt, completion, total, cached, written = token_counts(turn, request.body, chars)
        details: dict[str, int] = {"cached_tokens": cached, "audio_tokens": 0}
        if written:
            details["cache_write_tokens"] = written
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": total,
            "prompt_tokens_details": details,
            "completion_tokens_details": {"reasoning_tokens": turn.reasoning_tokens or 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
        }

    def _model(self, request: SimRequest) -> str:
        body = self.body(request)
        return str(body.get("model")) if isinstance(body, Mapping) and body.get("model") else self.model

    def _finish(self, request: SimRequest, turn: Turn) -> str:
        if turn.wire_stop_reason is not None:
            return turn.wire_stop_reason
        if turn.content_filter:
            return "content_filter"
        reason = _FINISH[turn.resolved_stop_reason]
        choice = self.options(request).get("tool_choice")
        if reason == "tool_calls" and isinstance(choice, Mapping) and choice.get("type") == "function":
            return "stop"  # a forced named tool_choice ends the choice with "stop", as recorded traffic shows
        return reason

    def render_body(self, request: SimRequest, route: str, turn: Turn) -> SimResponse:
        if turn.error is not None:
            return self.error_response(500, turn.error)
        calls = self._calls(turn)
        message: dict[str, Any] = {"role": "assistant", "content": turn.text if turn.text else None, "refusal": turn.refusal, "annotations": []}
        if self.reasoning_field is not None:
            message[self.reasoning_field] = turn.thinking or None
        if calls:
            message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls]
        body = {
            "id": self.new_id("chatcmpl-sim"),
            "object": "chat.completion",
            "created": self.created,
            "model": self._model(request),
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": self._finish(request, turn)}],
            "usage": self._usage(request, turn, calls),
            "service_tier": "default",
            "system_fingerprint": "fp_sim",
        }
        return json_response(200, body, {"x-request-id": self.new_id("req_sim"), **BASE_HEADERS})

    def render_stream(self, request: SimRequest, route: str, turn: Turn) -> tuple[dict[str, str], list[bytes]]:
        body = self.body(request)
        opts = body.get("stream_options") if isinstance(body, Mapping) else None
        include_usage = isinstance(opts, Mapping) and opts.get("include_usage") is True
        head = {"id": self.new_id("chatcmpl-sim"), "object": "chat.completion.chunk", "created": self.created, "model": self._model(request), "system_fingerprint": "fp_sim"}
        size = turn.chunk_size or self.chunk_size
        calls = self._calls(turn)

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            data = {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
            if include_usage:
                data["usage"] = None
            return sse(data)

        events: list[bytes] = []
        field = self.reasoning_field
        after = {} if field is None else {field: None}  # what the chunks after the reasoning carry
        if field is not None and turn.thinking:
            events.append(chunk({"role": "assistant", "content": None, field: ""}))
            events += [chunk({"content": None, field: piece}) for piece in self.chunks_of(turn.thinking, size)]

        def opening(delta: dict[str, Any]) -> dict[str, Any]:  # the role comes on the first chunk only
            return {**delta, **after} if events else {"role": "assistant", **delta, **after}

        if turn.refusal is not None:
            events.append(chunk(opening({"content": None, "refusal": ""})))
            events += [chunk({"refusal": piece, **after}) for piece in self.chunks_of(turn.refusal, size)]
        elif turn.text or not calls:
            events.append(chunk(opening({"content": "", "refusal": None})))
            if turn.text:
                events += [chunk({"content": piece, **after}) for piece in self.chunks_of(turn.text, size)]
        for n, (call_id, name, args) in enumerate(calls):
            header = {"tool_calls": [{"index": n, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}]}
            if not events:
                header = {"role": "assistant", "content": None, **header, "refusal": None}
            events.append(chunk(header))
            events += [chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]}) for piece in split_arbitrarily(args, size)]
        if turn.error is not None:
            events.append(self.stream_error_event(MidStreamError(message=turn.error)))
            return self._headers(), events
        events.append(chunk({}, self._finish(request, turn)))
        if include_usage:
            events.append(sse({**head, "choices": [], "usage": self._usage(request, turn, calls)}))
        events.append(b"data: [DONE]\n\n")
        return self._headers(), events

    def _headers(self) -> dict[str, str]:
        return {**STREAM_HEADERS, "x-request-id": self.new_id("req_sim")}

    def stream_error_event(self, fault: MidStreamError) -> bytes:
        return sse({"error": {"message": fault.message, "type": fault.error_type or "server_error", "param": None, "code": None}})
