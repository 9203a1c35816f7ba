"""A Gemini Developer API simulator: ``generateContent`` and ``streamGenerateContent?alt=sse``.

Serves ``POST /{v1,v1beta}/models/{model}:generateContent`` and ``...:streamGenerateContent``
(``alt=sse`` gives server-sent events; without it the real service sends one JSON array, and so
does this simulator). Streams are written as Google writes them (docs/wire.md §4.4): each event
is ``data: <GenerateContentResponse>\\r\\n\\r\\n`` with exactly one space after ``data:``, JSON with
``": "`` after keys, no terminator; text in several chunks, function calls whole in one chunk,
``finishReason`` on the last chunk, ``usageMetadata`` on every chunk (``candidatesTokenCount``
only once there is output).

How a :class:`~loopkit.script.Turn` renders:

- ``text`` / ``thinking`` (``"thought": true`` parts, ``thinking_signature`` on the last one) /
  ``tool_calls`` (``functionCall`` parts, no ``id`` unless the script gives one,
  ``thoughtSignature`` from the script; for ``gemini-3*`` models the first call of a turn gets a
  deterministic signature when the script has none, as the real models always sign).
- A call whose ``arguments`` string is not a JSON object cannot exist on this wire (``args`` is
  a proto Struct): the turn ends with ``finishReason: MALFORMED_FUNCTION_CALL`` and no content,
  with the text in ``finishMessage``, which is what Gemini does.
- ``stop_reason`` ``length`` -> ``MAX_TOKENS``. ``error`` -> that finish reason when the text is
  one (``"SAFETY"`` or ``"SAFETY: why"``), else ``OTHER`` with the text as ``finishMessage``.
  An ``aborted`` turn is refused when the simulator is built (the client aborts, not the server).
- Stop and content kinds: ``stop_sequence`` is ``STOP`` (Gemini does not say which sequence);
  ``content_filter`` is ``finishReason: SAFETY`` with a blocked ``safetyRatings`` entry and no
  content on the last chunk; ``reasoning_tokens`` is ``thoughtsTokenCount`` (and
  ``candidatesTokenCount`` the rest of the output); ``split_usage`` sends a growing
  ``usageMetadata`` on every chunk; ``wire_stop_reason`` any ``finishReason``. There is no form
  for ``refusal`` (a refusal is plain text; a blocked answer is ``content_filter``),
  ``pause_turn`` or ``redacted_thinking`` (Gemini's opaque reasoning state is the
  ``thoughtSignature`` on a part).

Validation follows the real API where tests depend on it: an integer
``generationConfig.maxOutputTokens``, the API key (header ``x-goog-api-key``
or query ``key``; missing -> 403 ``PERMISSION_DENIED``), JSON body, known field names (top level,
and in each content, part, functionCall, functionResponse, inlineData and systemInstruction),
``contents`` roles, function declaration names, ``functionCallingConfig`` modes and
``allowedFunctionNames`` (ANY or VALIDATED only, declared names only),
``functionCall.args`` and ``functionResponse.response`` being objects (never JSON text), a part
holding data (not only an empty ``text``), names on
both, a function-response turn directly after each
function-call turn with as many parts, and on ``gemini-3*`` models the ``thoughtSignature`` of
the first call of each model turn (``skip_thought_signature_validator`` passes, as documented).
Error messages copy Google's where they are known; the others are close paraphrases.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from loopkit.messages import Usage
from loopkit.script import HttpFault, MidStreamError, ScriptedCall, Turn

from ._core import SimRequest, SimResponse, Simulator

_ROUTE = re.compile(r"/(v1|v1beta)/models/([^/:]+):(generateContent|streamGenerateContent)\Z")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:\-]{0,63}\Z")

STATUS_NAMES: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_CODES = {name: code for code, name in STATUS_NAMES.items()}
_DEFAULT_MESSAGES = {
    400: "Request contains an invalid argument.",
    403: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    404: "models/unknown is not found for API version v1beta, or is not supported for generateContent.",
    429: "You exceeded your current quota, please check your plan and billing details.",
    500: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
    503: "The model is overloaded. Please try again later.",
}

FINISH_REASONS = frozenset({
    "STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "LANGUAGE", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT",
    "SPII", "MALFORMED_FUNCTION_CALL", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_OTHER", "NO_IMAGE",
    "IMAGE_RECITATION", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "MISSING_THOUGHT_SIGNATURE",
    "MALFORMED_RESPONSE", "ESCALATION", "PUP_LIMITED_DISABLED", "CONTINUATION", "MODEL_ARMOR",
})  # fmt: skip
_MODES = frozenset({"AUTO", "ANY", "NONE", "VALIDATED", "MODE_UNSPECIFIED"})
_TOP_LEVEL = frozenset({
    "contents", "tools", "toolConfig", "tool_config", "safetySettings", "safety_settings", "systemInstruction",
    "system_instruction", "generationConfig", "generation_config", "cachedContent", "cached_content", "model",
    "labels", "serviceTier", "service_tier",
})  # fmt: skip
# the fields of the messages a request's contents are made of (google.ai.generativelanguage
# v1beta Content, Part, FunctionCall, FunctionResponse, Blob), each in both JSON spellings; the
# API's JSON parser rejects any other name with 400 INVALID_ARGUMENT
_FIELDS: dict[str, frozenset[str]] = {
    kind: frozenset(n for name in names.split() for n in (name, re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), name)))
    for kind, names in {
        "content": "role parts",
        "part": "text inlineData fileData functionCall functionResponse executableCode codeExecutionResult thought "
                "thoughtSignature videoMetadata partMetadata mediaResolution",
        "function_call": "id name args partialArgs willContinue",
        "function_response": "id name response parts willContinue scheduling",
        "inline_data": "mimeType data displayName",
    }.items()
}  # fmt: skip
_SIGNATURE_REQUIRED = "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:{name}` , position {position}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."


def gemini_sse(data: Any) -> bytes:
    """One event as Google frames it: ``data: <json>`` and a CRLF blank line."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ": "))
    return b"data: " + payload.encode("utf-8") + b"\r\n\r\n"


class GeminiSimulator(Simulator):
    """Answers the Gemini Developer API from a script (see the module docstring)."""

    protocol = "gemini"
    base_path = ""
    unsupported_kinds: ClassVar[Mapping[str, str]] = {
        "refusal": "Gemini has no refusal field: a refusal is plain text, and a blocked answer is content_filter (finishReason SAFETY)",
        "pause_turn": "Gemini has no paused-turn finish reason",
        "redacted_thinking": "Gemini sends thought summaries or nothing; its opaque reasoning state is the thoughtSignature on a part",
    }
    wire_stop_values = FINISH_REASONS
    # the last valid request's contents, whether they were checked for signatures, and the
    # functionCall count of the content before their last one
    _valid_contents: tuple[list[Any], bool, int] = ([], False, 0)

    # --- routing and validation -----------------------------------------------------------

    def route(self, request: SimRequest) -> str | None:
        if request.method != "POST":
            return None
        m = _ROUTE.match(request.path)
        if m is None:
            return None
        return "stream" if m.group(3) == "streamGenerateContent" else "generate"

    def wants_stream(self, request: SimRequest, route: str) -> bool:
        return route == "stream"

    def _model(self, request: SimRequest) -> str:
        m = _ROUTE.match(request.path)
        return m.group(2) if m else self.model

    def validate(self, request: SimRequest, route: str) -> SimResponse | None:
        key = request.headers.get("x-goog-api-key", request.query.get("key"))
        if key is None:
            return self.error_response(403, _DEFAULT_MESSAGES[403])
        if not key.strip():
            return self._api_key_invalid()
        body = request.json
        if not isinstance(body, Mapping):
            return self._invalid(f"Invalid JSON payload received. Unexpected token.\n{request.body[:40]!r}")
        for name in body:
            if name not in _TOP_LEVEL:
                return self._invalid(f'Invalid JSON payload received. Unknown name "{name}": Cannot find field.')
        problem = (_check_generation_config(body) or self._check_tools(body) or _check_system(body)
                   or self._check_contents(body, self._model(request)))  # fmt: skip
        return None if problem is None else self._invalid(problem)

    def _check_tools(self, body: Mapping[str, Any]) -> str | None:
        names: list[str] = []
        for i, tool in enumerate(body.get("tools") or []):
            decls = tool.get("functionDeclarations", tool.get("function_declarations", [])) if isinstance(tool, Mapping) else None
            if not isinstance(decls, list):
                return f"Invalid value at 'tools[{i}]': expected an object with functionDeclarations."
            for j, d in enumerate(decls):
                name = d.get("name") if isinstance(d, Mapping) else None
                if not isinstance(name, str) or not _NAME.match(name):
                    return (f"* GenerateContentRequest.tools[{i}].function_declarations[{j}].name: Invalid function name. "
                            "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contains underscores, "
                            "dots, colons and dashes, with a maximum length of 64.")  # fmt: skip
                if "parameters" in d and ("parametersJsonSchema" in d or "parameters_json_schema" in d):
                    return f"* GenerateContentRequest.tools[{i}].function_declarations[{j}]: parameters and parameters_json_schema cannot both be set."
                names.append(name)
        config = body.get("toolConfig", body.get("tool_config"))
        if config is None:
            return None
        fcc = config.get("functionCallingConfig", config.get("function_calling_config")) if isinstance(config, Mapping) else None
        if not isinstance(fcc, Mapping):
            return "Invalid value at 'tool_config': expected functionCallingConfig."
        mode = fcc.get("mode", "AUTO")
        if mode not in _MODES:
            return f'Invalid value at \'tool_config.function_calling_config.mode\' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), "{mode}"'
        allowed = fcc.get("allowedFunctionNames", fcc.get("allowed_function_names"))
        if allowed is not None:
            if mode not in ("ANY", "VALIDATED"):  # the docs: "Only set when the Mode is ANY" (VALIDATED also constrains names)
                return "* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: only allowed when mode is ANY or VALIDATED."
            for name in allowed:
                if name not in names:
                    return f"* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: function `{name}` is not declared in tools."
        if mode in ("ANY", "VALIDATED") and not names:
            return "* GenerateContentRequest.tool_config.function_calling_config.mode: function calling mode is ANY but no function declarations were provided."
        return None

    def _check_contents(self, body: Mapping[str, Any], model: str) -> str | None:
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            return "* GenerateContentRequest.contents: contents is not specified"
        signed = model.startswith("gemini-3")
        last = len(contents) - 1
        prev_calls = 0  # functionCall parts of the previous content when it was a model turn
        # Content i's checks look at content i-1 (through prev_calls) and at whether i is last, so
        # when this request repeats the last valid one's contents (a loop resends them every
        # round) only its last content and the new tail need checking.
        valid, valid_signed, calls_before_last = self._valid_contents
        n = len(valid)
        start = n - 1 if n and valid_signed == signed and len(contents) >= n and contents[:n] == valid else 0
        if start:
            prev_calls = calls_before_last
        for i in range(start, len(contents)):
            c = contents[i]
            if i == last:
                calls_before = prev_calls
            if not isinstance(c, Mapping):
                return f"Invalid value at 'contents[{i}]': expected an object."
            problem = _unknown_field(c, "content", f"contents[{i}]")
            if problem:
                return problem
            role = c.get("role", "user")
            if role != "user" and role != "model":
                return "Please use a valid role: user, model."
            parts = c.get("parts")
            if not isinstance(parts, list) or not parts:
                return f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty."
            calls = responses = 0
            for j, p in enumerate(parts):
                if not isinstance(p, Mapping):
                    return f"Invalid value at 'contents[{i}].parts[{j}]': expected an object."
                problem = _check_part(p, f"contents[{i}].parts[{j}]")
                if problem:
                    return problem
                if "functionCall" in p:
                    problem = _check_call(p["functionCall"], f"contents[{i}].parts[{j}].function_call")
                    if problem:
                        return problem
                    if calls == 0 and role == "model" and signed and i < last and not (p.get("thoughtSignature") or p.get("thought_signature")):
                        return _SIGNATURE_REQUIRED.format(name=p["functionCall"].get("name"), position=j + 1)
                    calls += 1
                elif "functionResponse" in p:
                    if not isinstance(p["functionResponse"], Mapping) or not isinstance(p["functionResponse"].get("name"), str) or not p["functionResponse"]["name"]:
                        return f"* GenerateContentRequest.contents[{i}].parts[{j}].function_response.name: Name cannot be empty."
                    if not isinstance(p["functionResponse"].get("response"), Mapping):
                        return (f"Invalid value at 'contents[{i}].parts[{j}].function_response.response' "
                                "(type.googleapis.com/google.protobuf.Struct), expected an object")  # fmt: skip
                    responses += 1
            if calls and role != "model":
                return "Please ensure that function call turn comes immediately after a user turn or after a function response turn."
            if responses:
                if not prev_calls:
                    return "Please ensure that function response turn comes immediately after a function call turn."
                if prev_calls != responses:
                    return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."
            prev_calls = calls
        self._valid_contents = (contents, signed, calls_before)
        return None

    # --- errors -----------------------------------------------------------------------------

    def error_response(
        self, status: int, message: str | None = None, error_type: str | None = None, *, retry_after: float | None = None
    ) -> SimResponse:
        error: dict[str, Any] = {
            "code": status,
            "message": message or _DEFAULT_MESSAGES.get(status, "Error"),
            "status": error_type or STATUS_NAMES.get(status, "UNKNOWN"),
        }
        details: list[dict[str, Any]] = []
        if status == 429:
            details.append({"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                            "violations": [{"quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]})  # fmt: skip
        if retry_after is not None:
            details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": _duration(retry_after)})
        if details:
            error["details"] = details
        body = json.dumps({"error": error}, ensure_ascii=False, indent=2).encode("utf-8")
        return SimResponse(status=status, headers={"content-type": "application/json; charset=UTF-8", "vary": "Origin, X-Origin, Referer"}, chunks=[body])

    def _invalid(self, message: str) -> SimResponse:
        return self.error_response(400, message, "INVALID_ARGUMENT")

    def _api_key_invalid(self) -> SimResponse:
        resp = self.error_response(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT")
        data = json.loads(resp.body)
        data["error"]["details"] = [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com",
             "metadata": {"service": "generativelanguage.googleapis.com"}},
            {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": "API key not valid. Please pass a valid API key."},
        ]  # fmt: skip
        resp.chunks = [json.dumps(data, indent=2).encode("utf-8")]
        return resp

    def stream_error_event(self, fault: MidStreamError) -> bytes:
        status = fault.error_type or "INTERNAL"
        return gemini_sse({"error": {"code": _CODES.get(status, 500), "message": fault.message, "status": status}})

    # --- answers ----------------------------------------------------------------------------

    def render_body(self, request: SimRequest, route: str, turn: Turn) -> SimResponse:
        chunks = self._chunks(request, turn)
        if route == "stream":  # streamGenerateContent without alt=sse: one JSON array
            body = json.dumps(chunks, ensure_ascii=False, indent=2)
        else:
            body = json.dumps(_merge(chunks), ensure_ascii=False, indent=2)
        return SimResponse(status=200, headers={"content-type": "application/json; charset=UTF-8", "vary": "Origin, X-Origin, Referer"}, chunks=[body.encode("utf-8")])

    def render_stream(self, request: SimRequest, route: str, turn: Turn) -> tuple[dict[str, str], list[bytes]]:
        headers = {"content-type": "text/event-stream", "content-disposition": "attachment", "vary": "Origin, X-Origin, Referer"}
        return headers, [gemini_sse(c) for c in self._chunks(request, turn)]

    def _answer(self, request: SimRequest, route: str, turn: Turn) -> SimResponse:
        # streamGenerateContent without alt=sse answers one JSON array; HTTP faults still apply
        if route == "stream" and request.query.get("alt") != "sse" and turn.fault(HttpFault) is None:
            return self.render_body(request, route, turn)
        return super()._answer(request, route, turn)

    def _chunks(self, request: SimRequest, turn: Turn) -> list[dict[str, Any]]:
        """The turn as the list of GenerateContentResponse chunks a stream would carry."""
        model = self._model(request)
        response_id = self.new_id("simresp")
        prompt = _prompt_tokens(request)
        finish, finish_message = _finish(turn)
        parts_chunks: list[list[dict[str, Any]]] = []
        malformed = _malformed_call(turn.tool_calls)
        if malformed is not None:
            finish, finish_message = "MALFORMED_FUNCTION_CALL", f"Malformed function call: {malformed.name}({malformed.arguments})"
        else:
            if turn.thinking:
                pieces = self.chunks_of(turn.thinking, turn.chunk_size)
                for k, piece in enumerate(pieces):
                    part: dict[str, Any] = {"text": piece, "thought": True}
                    if k == len(pieces) - 1 and turn.thinking_signature:
                        part["thoughtSignature"] = turn.thinking_signature
                    parts_chunks.append([part])
            if turn.text:
                parts_chunks += [[{"text": piece}] for piece in self.chunks_of(turn.text, turn.chunk_size)]
            if turn.tool_calls:
                parts_chunks.append([self._call_part(c, k, model) for k, c in enumerate(turn.tool_calls)])
        usage = _usage_for(turn, prompt)
        out: list[dict[str, Any]] = []
        for k, parts in enumerate(parts_chunks):
            early = _partial_usage(usage, k + 1, len(parts_chunks) + 1) if turn.split_usage else _early_usage(usage)
            out.append(self._chunk([{"content": {"parts": parts, "role": "model"}, "index": 0}], early, model, response_id))
        last: dict[str, Any] = {"finishReason": finish, "index": 0}
        if finish_message:
            last["finishMessage"] = finish_message
        if finish == "SAFETY":
            last["safetyRatings"] = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]
        if out and not turn.tool_calls and finish in ("STOP", "MAX_TOKENS"):
            out[-1]["candidates"][0].update(last)  # text answers end on their last text chunk
            out[-1]["usageMetadata"] = usage
        else:
            # tool-call and length turns end with an empty text part; blocked ones carry no content
            cand = {"content": {"parts": [{"text": ""}], "role": "model"}, **last} if finish in ("STOP", "MAX_TOKENS") else last
            out.append(self._chunk([cand], usage, model, response_id))
        return out

    def _chunk(self, candidates: list[dict[str, Any]], usage: dict[str, Any], model: str, response_id: str) -> dict[str, Any]:
        return {"candidates": candidates, "usageMetadata": usage, "modelVersion": model, "responseId": response_id}

    def _call_part(self, call: ScriptedCall, k: int, model: str) -> dict[str, Any]:
        args = call.arguments if isinstance(call.arguments, Mapping) else (json.loads(call.arguments) if call.arguments.strip() else {})
        fc: dict[str, Any] = {"name": call.name, "args": dict(args)}
        if call.id is not None:
            fc["id"] = call.id
        part: dict[str, Any] = {"functionCall": fc}
        signature = call.thought_signature
        if signature is None and k == 0 and model.startswith("gemini-3"):
            signature = base64.b64encode(self.new_id("loopkit-sim-signature-").encode()).decode("ascii")
        if signature is not None:
            part["thoughtSignature"] = signature
        return part


def _check_generation_config(body: Mapping[str, Any]) -> str | None:
    config = body.get("generationConfig", body.get("generation_config"))
    if config is None:
        return None
    if not isinstance(config, Mapping):
        return "Invalid value at 'generation_config' (type.googleapis.com/google.ai.generativelanguage.v1beta.GenerationConfig), expected an object"
    for key in ("maxOutputTokens", "max_output_tokens"):
        limit = config.get(key)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            return f"Invalid value at 'generation_config.max_output_tokens' (TYPE_INT32), {json.dumps(limit)}"
    return None


def _unknown_field(obj: Mapping[str, Any], kind: str, at: str) -> str | None:
    """The API's error for the first field ``obj`` (a ``kind`` message at ``at``) does not have."""
    for name in obj:
        if name not in _FIELDS[kind]:
            return f'Invalid JSON payload received. Unknown name "{name}" at \'{at}\': Cannot find field.'
    return None


def _check_part(p: Mapping[str, Any], at: str) -> str | None:
    """A part's field names, and those of the functionCall, functionResponse or inlineData in it;
    and that it holds data: the API's JSON parser leaves an empty ``text`` unset, so a part that is
    only ``{"text": ""}`` is refused (one carrying a ``thoughtSignature``, as Gemini itself sends
    them, passes)."""
    problem = _unknown_field(p, "part", at)
    for key, kind in (("functionCall", "function_call"), ("function_call", "function_call"), ("functionResponse", "function_response"),
                      ("function_response", "function_response"), ("inlineData", "inline_data"), ("inline_data", "inline_data")):  # fmt: skip
        if problem is None and isinstance(p.get(key), Mapping):
            problem = _unknown_field(p[key], kind, f"{at}.{kind}")
    if problem is None and not any(p.get(k) not in (None, "") for k in _DATA_FIELDS) and not (p.get("thoughtSignature") or p.get("thought_signature")):
        problem = f"* GenerateContentRequest.{at}.data: required oneof field 'data' must have one initialized field"
    return problem


_DATA_FIELDS = ("text", "inlineData", "inline_data", "fileData", "file_data", "functionCall", "function_call", "functionResponse",
                "function_response", "executableCode", "executable_code", "codeExecutionResult", "code_execution_result")  # fmt: skip


def _check_system(body: Mapping[str, Any]) -> str | None:
    """``systemInstruction``: a Content (its role is not read) whose parts have known fields."""
    si = body.get("systemInstruction", body.get("system_instruction"))
    if si is None:
        return None
    if not isinstance(si, Mapping) or not isinstance(si.get("parts", []), list):
        return "Invalid value at 'system_instruction' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), expected an object"
    problem = _unknown_field(si, "content", "system_instruction")
    for j, p in enumerate(si.get("parts") or []):
        if problem is None:
            problem = _check_part(p, f"system_instruction.parts[{j}]") if isinstance(p, Mapping) else f"Invalid value at 'system_instruction.parts[{j}]': expected an object."
    return problem


def _check_call(fc: Any, at: str) -> str | None:
    """An echoed ``functionCall``: an object with a name, and ``args`` (when present) an object."""
    if not isinstance(fc, Mapping):
        return f"Invalid value at '{at}' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCall), expected an object"
    if not isinstance(fc.get("name"), str) or not fc["name"]:
        return f"* GenerateContentRequest.{at}.name: Name cannot be empty."
    if "args" in fc and not isinstance(fc["args"], Mapping):
        value = json.dumps(fc["args"])[:60]
        return f"Invalid value at '{at}.args' (type.googleapis.com/google.protobuf.Struct), {value}"
    return None


def _malformed_call(calls: tuple[ScriptedCall, ...]) -> ScriptedCall | None:
    for c in calls:
        if isinstance(c.arguments, str):
            try:
                value = json.loads(c.arguments) if c.arguments.strip() else {}
            except ValueError:
                return c
            if not isinstance(value, dict):
                return c
    return None


def _finish(turn: Turn) -> tuple[str, str | None]:
    if turn.wire_stop_reason is not None:
        return turn.wire_stop_reason, None
    if turn.content_filter:
        return "SAFETY", None
    reason = turn.resolved_stop_reason
    if reason == "length":
        return "MAX_TOKENS", None
    if reason == "error":
        text = turn.error or ""
        head, sep, rest = text.partition(":")
        if head.strip() in FINISH_REASONS:
            return head.strip(), (rest.strip() or None) if sep else None
        return "OTHER", text or None
    return "STOP", None


def _prompt_tokens(request: SimRequest) -> int:
    return max(1, len(request.body) // 16)


def _usage_for(turn: Turn, prompt: int) -> dict[str, Any]:
    u = turn.usage
    if u is None:
        size = len(turn.text or "") + sum(len(json.dumps(c.arguments)) for c in turn.tool_calls)
        u = Usage(input=prompt, output=max(1, size // 4) + (turn.reasoning_tokens or 0))
    thoughts = turn.reasoning_tokens if turn.reasoning_tokens is not None else len(turn.thinking) // 4 if turn.thinking else 0
    prompt_count = u.input + u.cache_read
    candidates = max(0, u.output - thoughts)
    out: dict[str, Any] = {"promptTokenCount": prompt_count, "candidatesTokenCount": candidates,
                           "totalTokenCount": u.total_tokens or prompt_count + u.output,
                           "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt_count}]}  # fmt: skip
    if u.cache_read:
        out["cachedContentTokenCount"] = u.cache_read
    if thoughts:
        out["thoughtsTokenCount"] = thoughts
    return out


def _early_usage(final: dict[str, Any]) -> dict[str, Any]:
    """Usage on a chunk before the last: the prompt only, as the real stream reports it."""
    prompt = final["promptTokenCount"]
    return {"promptTokenCount": prompt, "totalTokenCount": prompt, "promptTokensDetails": final["promptTokensDetails"]}


def _partial_usage(final: dict[str, Any], k: int, n: int) -> dict[str, Any]:
    """Usage on chunk ``k`` of ``n`` (1-based) when it is spread: cumulative counts that grow
    towards the final ones, as every chunk of a real stream reports them."""
    out = dict(final)
    grown = 0
    for key in ("candidatesTokenCount", "thoughtsTokenCount"):
        if key in final:
            out[key] = final[key] * k // n
            grown += out[key]
    out["totalTokenCount"] = final["promptTokenCount"] + grown
    return out


def _merge(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streaming body: every chunk's parts in one candidate (adjacent text joined)."""
    parts: list[dict[str, Any]] = []
    last = chunks[-1]
    for c in chunks:
        for p in (c["candidates"][0].get("content") or {}).get("parts", []):
            if p.get("text") == "" and len(p) == 1:
                continue
            if parts and "text" in p and "text" in parts[-1] and bool(p.get("thought")) == bool(parts[-1].get("thought")) and "thoughtSignature" not in parts[-1]:
                merged = {**parts[-1], **p, "text": parts[-1]["text"] + p["text"]}
                parts[-1] = merged
            else:
                parts.append(dict(p))
    cand: dict[str, Any] = {}
    if parts:
        cand["content"] = {"parts": parts, "role": "model"}
    for key in ("finishReason", "index", "finishMessage", "safetyRatings"):
        if key in last["candidates"][0]:
            cand[key] = last["candidates"][0][key]
    return {"candidates": [cand], "usageMetadata": last["usageMetadata"], "modelVersion": last["modelVersion"], "responseId": last["responseId"]}


def _duration(seconds: float) -> str:
    text = f"{seconds:.3f}".rstrip("0").rstrip(".")
    return f"{text}s"
