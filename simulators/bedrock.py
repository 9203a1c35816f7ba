"""Amazon Bedrock Converse / ConverseStream simulator (docs/wire.md §5).

Routes ``POST /model/{modelId}/converse`` (one JSON body) and ``/converse-stream`` (an AWS
event stream: ``messageStart``, text deltas with no ``contentBlockStart``, ``toolUse`` blocks with
string input fragments, ``messageStop``, then ``metadata`` last, each payload padded with ``"p"``
as the service pads it). boto3's ``bedrock-runtime`` client works against :func:`simulators.serve`
with ``endpoint_url=sim.url`` and dummy credentials; signatures are never checked.

Requests are rejected as the real API rejects them where a test depends on it, with a 400
``ValidationException``: ``toolUse``/``toolResult`` history without ``toolConfig``, a ``toolChoice``
naming an undeclared tool, blank text blocks, roles that do not alternate, an echoed ``toolUse``
whose ``input`` is not a JSON object, a ``toolResult`` that answers no ``toolUse`` of the previous
turn, a ``toolUse`` left unanswered by the next message, more results than calls, result content
that is not a list of known blocks, a bad ``toolResult.status`` (with ``tool_result_status=False``,
any ``status``: a model family that does not take the field), an ``inferenceConfig.maxTokens``
that is not an integer >= 1, reasoning sent back without its signature.

Script mapping: stop ``stop`` -> ``end_turn``, ``length`` -> ``max_tokens``, ``toolUse`` ->
``tool_use``; ``Turn.stop_sequence`` -> ``stop_sequence``, ``Turn.content_filter`` ->
``content_filtered``, ``Turn.wire_stop_reason`` any other ``stopReason`` (e.g.
``guardrail_intervened``); ``Turn.redacted_thinking`` a ``reasoningContent.redactedContent`` block
(the data is the blob's base64 text); ``Turn.reasoning_tokens`` has no field (``outputTokens``
includes them). There is no form for ``refusal`` (no such stop reason or content), ``pause_turn``
or ``split_usage`` (usage comes once, in ``metadata``). A turn with ``error`` ends a stream with a ``modelStreamErrorException`` and a
body request with HTTP 424 ``ModelErrorException``. ``aborted`` cannot travel on a wire (an abort
is the client's act): such a turn is refused when the simulator is built. Faults: :class:`~loopkit.script.HttpFault` gives
the real error body and ``x-amzn-errortype``; :class:`~loopkit.script.MidStreamError` an exception
message (``error_type`` is the ``ConverseStreamOutput`` member, e.g. ``throttlingException``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import unquote

from loopkit.messages import Usage
from loopkit.script import MidStreamError, ScriptedCall, Script, Turn

from . import _eventstream as es
from ._core import SimRequest, SimResponse, Simulator, json_response

_ROUTE = re.compile(r"^/model/(?P<model>[^/]+)/(?P<op>converse|converse-stream)$")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# service-2.json error shapes by status (docs/wire.md §5.5)
ERROR_SHAPES: dict[int, str] = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
_DEFAULT_MESSAGES: dict[str, str] = {
    "ValidationException": "Malformed input request, please reformat your input and try again.",
    "AccessDeniedException": "You don't have access to the model with the specified model ID.",
    "ResourceNotFoundException": "The requested resource could not be found.",
    "ModelTimeoutException": "Model has timed out in processing the request. Try your request again.",
    "ModelErrorException": "The model returned an error.",
    "ThrottlingException": "Too many requests, please wait before trying again.",
    "InternalServerException": "The server encountered an error processing your request.",
    "ServiceUnavailableException": "Bedrock is unable to process your request.",
}
_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"}
STOP_REASONS = frozenset({
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "guardrail_intervened", "content_filtered",
    "malformed_model_output", "malformed_tool_use", "model_context_window_exceeded",
})  # fmt: skip
_PAD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


class BedrockSimulator(Simulator):
    """Bedrock Converse and ConverseStream.

    Args:
        script: the turns to answer with.
        require_auth: answer 403 when a request carries no ``Authorization`` header.
        errortype_header: name an error's shape in the ``x-amzn-errortype`` header (the service's
            way). False sends no such header and names the shape in the body's ``__type``, as a
            JSON front end does; an ``HttpFault.body`` then replaces that body (a ``code`` or ``Code``
            member is the other place restJson1 clients read the shape from).
        tool_result_status: the model takes ``toolResult.status`` (the API reference lists it for
            Claude and Nova). False answers a model that does not: a request whose history
            carries a ``toolResult`` with a ``status`` (``success`` as well as ``error``) is a 400
            ``ValidationException`` "This model doesn't support the status field. Remove status
            and try again.", the service's words to a Writer Palmyra model as reported by users of
            an SDK that always sends the field.
        (other options as :class:`simulators.Simulator`)
    """

    protocol = "bedrock"
    base_path = ""
    unsupported_kinds: ClassVar[Mapping[str, str]] = {
        "refusal": "Converse has no refusal stop reason or content (a blocked answer is content_filter: stopReason content_filtered)",
        "pause_turn": "Converse has no paused-turn stop reason",
        "split_usage": "Converse reports usage once, in the metadata event",
    }
    wire_stop_values = STOP_REASONS

    def __init__(
        self,
        script: Script | list[Turn | str],
        *,
        require_auth: bool = True,
        errortype_header: bool = True,
        tool_result_status: bool = True,
        **options: Any,
    ) -> None:
        super().__init__(script, **options)
        self.require_auth = require_auth
        self.errortype_header = errortype_header
        self.tool_result_status = tool_result_status
        self._request_ids = 0
        self._valid = _ValidHistory()

    # --- routing and validation -------------------------------------------------------------

    def route(self, request: SimRequest) -> str | None:
        m = _ROUTE.match(request.path)
        if m is None or request.method != "POST":
            return None
        return m.group("op")

    def wants_stream(self, request: SimRequest, route: str) -> bool:
        return route == "converse-stream"

    def model_of(self, request: SimRequest) -> str:
        m = _ROUTE.match(request.path)
        return unquote(m.group("model")) if m else self.model

    def validate(self, request: SimRequest, route: str) -> SimResponse | None:
        if self.require_auth and "authorization" not in request.headers:
            # (unverified) what AWS front ends answer to an unsigned request
            resp = self.error_response(403, "Missing Authentication Token", "MissingAuthenticationTokenException")
            return resp
        body = request.json
        if not isinstance(body, dict):
            return self._invalid("Malformed input request: request body is not a JSON object")
        if not self.tool_result_status and _has_result_status(body.get("messages")):
            return self._invalid("This model doesn't support the status field. Remove status and try again.")
        problem = _validation_problem(body, self._valid)
        return None if problem is None else self._invalid(problem)

    def _invalid(self, message: str) -> SimResponse:
        return self.error_response(400, message, "ValidationException")

    # --- errors -----------------------------------------------------------------------------

    def error_response(
        self, status: int, message: str | None = None, error_type: str | None = None, *, retry_after: float | None = None
    ) -> SimResponse:
        shape = error_type or ERROR_SHAPES.get(status, "InternalServerException" if status >= 500 else "ValidationException")
        headers = {"x-amzn-requestid": self._request_id()}
        body: dict[str, Any] = {"message": message or _DEFAULT_MESSAGES.get(shape, shape)}
        if self.errortype_header:
            headers["x-amzn-errortype"] = shape
        else:
            body["__type"] = shape
        if retry_after is not None:
            headers["x-amz-retry-after"] = str(int(retry_after * 1000))
        return json_response(status, body, headers)

    def stream_error_event(self, fault: MidStreamError) -> bytes:
        kind = fault.error_type or "internalServerException"
        kind = kind[:1].lower() + kind[1:]  # the member name is lowerCamel (ThrottlingException -> throttlingException)
        payload: dict[str, Any] = {"message": fault.message}
        if kind == "modelStreamErrorException":
            payload.update(originalStatusCode=500, originalMessage=fault.message)
        return es.exception(kind, es.json_bytes(payload))

    def _request_id(self) -> str:
        self._request_ids += 1
        return f"00000000-0000-4000-8000-{self._request_ids:012d}"

    # --- answers ----------------------------------------------------------------------------

    def _stop_reason(self, turn: Turn) -> str:
        if turn.wire_stop_reason is not None:
            return turn.wire_stop_reason
        if turn.stop_sequence is not None:
            return "stop_sequence"
        if turn.content_filter:
            return "content_filtered"
        return _STOP_REASONS.get(turn.resolved_stop_reason, "end_turn")

    def _usage(self, request: SimRequest, turn: Turn) -> dict[str, int]:
        u = turn.usage
        if u is None:
            out_chars = len(turn.text or "") + len(turn.thinking or "") + sum(len(_input_text(c)) for c in turn.tool_calls)
            u = Usage(input=max(1, len(request.body) // 4), output=max(1, out_chars // 4) + (turn.reasoning_tokens or 0))
        data = {"inputTokens": u.input, "outputTokens": u.output, "totalTokens": u.total_tokens or u.input + u.output}
        if u.cache_read:
            data["cacheReadInputTokens"] = u.cache_read
        if u.cache_write:
            data["cacheWriteInputTokens"] = u.cache_write
        return data

    def _tool_use_id(self, call: ScriptedCall) -> str:
        return call.id or self.new_id("tooluse_loopkitsim00000000")  # tooluse_ + 22 characters, as the service's

    def render_body(self, request: SimRequest, route: str, turn: Turn) -> SimResponse:
        if turn.error is not None and turn.wire_stop_reason is None:
            return self.error_response(424, turn.error, "ModelErrorException")
        content: list[dict[str, Any]] = []
        if turn.redacted_thinking is not None:
            content.append({"reasoningContent": {"redactedContent": turn.redacted_thinking}})
        if turn.thinking is not None:
            text: dict[str, Any] = {"text": turn.thinking}
            if turn.thinking_signature is not None:
                text["signature"] = turn.thinking_signature
            content.append({"reasoningContent": {"reasoningText": text}})
        if turn.text:
            content.append({"text": turn.text})
        for c in turn.tool_calls:
            content.append({"toolUse": {"input": _input_document(c), "name": c.name, "toolUseId": self._tool_use_id(c)}})
        body = {
            "metrics": {"latencyMs": 100 + request.number},
            "output": {"message": {"content": content, "role": "assistant"}},
            "stopReason": self._stop_reason(turn),
            "usage": self._usage(request, turn),
        }
        return json_response(200, body, {"x-amzn-requestid": self._request_id()})

    def render_stream(self, request: SimRequest, route: str, turn: Turn) -> tuple[dict[str, str], list[bytes]]:
        frames: list[bytes] = []
        n_pad = 0

        def send(event_type: str, payload: dict[str, Any]) -> None:
            nonlocal n_pad
            n_pad += 1
            payload["p"] = _PAD[: 1 + (n_pad * 7) % len(_PAD)]  # random-looking padding (§5.4)
            frames.append(es.event(event_type, _sorted_json(payload).encode()))

        size = turn.chunk_size or self.chunk_size
        send("messageStart", {"role": "assistant"})
        index = 0
        if turn.redacted_thinking is not None:
            send("contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": {"redactedContent": turn.redacted_thinking}}})
            send("contentBlockStop", {"contentBlockIndex": index})
            index += 1
        if turn.thinking is not None:
            for piece in self.chunks_of(turn.thinking, size):
                send("contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": {"text": piece}}})
            if turn.thinking_signature is not None:
                delta = {"reasoningContent": {"signature": turn.thinking_signature}}
                send("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
            send("contentBlockStop", {"contentBlockIndex": index})
            index += 1
        if turn.text:
            for piece in self.chunks_of(turn.text, size):  # no contentBlockStart for text (§5.4)
                send("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}})
            send("contentBlockStop", {"contentBlockIndex": index})
            index += 1
        for c in turn.tool_calls:
            start = {"toolUse": {"name": c.name, "toolUseId": self._tool_use_id(c)}}
            send("contentBlockStart", {"contentBlockIndex": index, "start": start})
            text = _input_text(c)
            for piece in self.chunks_of(text, size) if text else [""]:
                send("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}})
            send("contentBlockStop", {"contentBlockIndex": index})
            index += 1
        if turn.error is not None and turn.wire_stop_reason is None:
            frames.append(self.stream_error_event(MidStreamError(message=turn.error, error_type="modelStreamErrorException")))
        else:
            send("messageStop", {"stopReason": self._stop_reason(turn)})
            send("metadata", {"metrics": {"latencyMs": 100 + request.number}, "usage": self._usage(request, turn)})
        headers = {"content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": self._request_id()}
        return headers, frames


def _input_text(call: ScriptedCall) -> str:
    """The argument text streamed in ``delta.toolUse.input`` (a raw string is sent as written)."""
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(dict(call.arguments), separators=(",", ":"), ensure_ascii=False)


def _input_document(call: ScriptedCall) -> Any:
    """``toolUse.input`` of a body: a Document (``""``, a no-argument call, is ``{}`` as the
    service sends it); broken argument text travels as a JSON string."""
    if not isinstance(call.arguments, str):
        return dict(call.arguments)
    if not call.arguments.strip():
        return {}
    try:
        return json.loads(call.arguments)
    except ValueError:
        return call.arguments


def _has_result_status(messages: Any) -> bool:
    """Whether any ``toolResult`` block of ``messages`` carries a ``status``."""
    if not isinstance(messages, list):
        return False
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        for block in content if isinstance(content, list) else ():
            result = block.get("toolResult") if isinstance(block, dict) else None
            if isinstance(result, dict) and "status" in result:
                return True
    return False


class _ValidHistory:
    """The messages of the last request that passed validation and what checking them found, so
    a request that repeats them (a loop resends them every round) checks only its new tail."""

    __slots__ = ("messages", "uses_tools", "pending")

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.uses_tools = False
        self.pending: list[str] = []  # toolUse ids of the last message when it is the assistant's


_sorted_json = json.JSONEncoder(sort_keys=True, separators=(",", ":"), check_circular=False).encode  # one encoder for every event


def _validation_problem(body: dict[str, Any], valid: _ValidHistory | None = None) -> str | None:
    """The ValidationException message the real API gives for ``body``, or None.

    Args:
        valid: the last valid request's history; updated when ``body`` is valid.
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "1 validation error detected: Value at 'messages' failed to satisfy constraint: Member must not be null"
    config = body.get("inferenceConfig")
    if isinstance(config, dict) and config.get("maxTokens") is not None:
        limit = config["maxTokens"]
        if isinstance(limit, bool) or not isinstance(limit, int):
            return "Malformed input request: inferenceConfig.maxTokens must be an integer"
        if limit < 1:
            return f"1 validation error detected: Value '{limit}' at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member must have value greater than or equal to 1"
    tool_config = body.get("toolConfig")
    declared: set[str] = set()
    if tool_config is not None:
        problem = _tool_config_problem(tool_config, declared)
        if problem:
            return problem
    uses_tools = False
    pending: list[str] = []  # toolUse ids of the previous message, which the next one must answer
    previous = None
    start = 0
    if valid is not None and valid.messages and len(messages) >= len(valid.messages) and messages[: len(valid.messages)] == valid.messages:
        start = len(valid.messages)
        uses_tools, pending, previous = valid.uses_tools, list(valid.pending), valid.messages[-1]["role"]
    for i in range(start, len(messages)):
        message = messages[i]
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return f"1 validation error detected: Value at 'messages.{i + 1}.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]"
        role = message["role"]
        if i == 0 and role != "user":
            return "A conversation must start with a user message. Try again with a conversation that starts with a user message."
        if role == previous:
            return "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again."
        previous = role
        uses: list[str] = []
        results: list[str] = []
        content = message.get("content")
        if not isinstance(content, list) or not content:
            return f"The content field in the Message object at messages.{i} is empty. Add a ContentBlock object to the content field and try again."
        for block in content:
            if not isinstance(block, dict) or len(block) != 1:
                return f"Malformed input request: messages.{i}: a ContentBlock must have exactly one member"
            (kind, value), = block.items()
            if kind == "text":
                if not isinstance(value, str) or not value.strip():
                    return f"The text field in the ContentBlock object at messages.{i}.content.{content.index(block)} is blank. Add text to the text field, and try again."
            elif kind == "toolUse":
                uses_tools = True
                if role != "assistant":
                    return f"messages.{i}: toolUse blocks are only allowed in assistant messages"
                if not isinstance(value, dict) or not {"toolUseId", "name", "input"} <= value.keys():
                    return f"Malformed input request: messages.{i}: toolUse needs toolUseId, name and input"
                if not isinstance(value["input"], dict):
                    return f"The format of the value at messages.{i}.content.{content.index(block)}.toolUse.input is invalid. Provide a json object for the field and try again."
                if not isinstance(value["toolUseId"], str) or not isinstance(value["name"], str):
                    return f"Malformed input request: messages.{i}: toolUse toolUseId and name must be strings"
                uses.append(value["toolUseId"])
            elif kind == "toolResult":
                uses_tools = True
                if role != "user":
                    return f"messages.{i}: toolResult blocks are only allowed in user messages"
                if not isinstance(value, dict) or value.get("toolUseId") not in pending:
                    return (
                        "The toolUse and toolResult blocks do not match: a toolResult block's toolUseId "
                        f"({value.get('toolUseId') if isinstance(value, dict) else None!r}) has no toolUse block in the previous turn."
                    )
                results.append(value["toolUseId"])
                if value.get("status", "success") not in ("success", "error"):
                    return f"1 validation error detected: Value at 'messages.{i + 1}.member.content.toolResult.status' failed to satisfy constraint: Member must satisfy enum value set: [success, error]"
                if not isinstance(value.get("content"), list):
                    return f"Malformed input request: messages.{i}: toolResult.content must be a list"
                for item in value["content"]:
                    if not isinstance(item, dict) or len(item) != 1 or next(iter(item)) not in ("text", "json", "image", "document", "video", "searchResult"):
                        return f"Malformed input request: messages.{i}: a ToolResultContentBlock must be one of text, json, image, document, video, searchResult"
                    if "text" in item and not isinstance(item["text"], str):
                        return f"Malformed input request: messages.{i}: toolResult text must be a string"
                    if "json" in item and not isinstance(item["json"], dict):
                        return f"The format of the value at messages.{i}.content.{content.index(block)}.toolResult.content.json is invalid. Provide a json object for the field and try again."
            elif kind == "reasoningContent":
                text = value.get("reasoningText") if isinstance(value, dict) else None
                if isinstance(text, dict) and not text.get("signature"):
                    # reasoning sent back without its signature (DeepSeek-R1 answers with none); the
                    # service's words, reported by SDK users, name user messages whatever the role
                    return "User messages cannot contain reasoning content. Please remove the reasoning content and try again."
            elif kind not in ("image", "document", "video", "cachePoint", "guardContent", "citationsContent"):
                return f"Malformed input request: messages.{i}: unknown content block {kind!r}"
        if role == "user" and pending:
            missing = [u for u in pending if u not in results]
            if missing:
                return f"Expected toolResult blocks at messages.{i}.content for the following Ids: {', '.join(missing)}"
            if len(results) > len(pending):
                return f"The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of previous turn."
        pending = uses
    if uses_tools and tool_config is None:
        return "The toolConfig field must be defined when using toolUse and toolResult content blocks."
    if valid is not None:
        valid.messages, valid.uses_tools, valid.pending = messages, uses_tools, pending
    return None


def _tool_config_problem(tool_config: Any, declared: set[str]) -> str | None:
    tools = tool_config.get("tools") if isinstance(tool_config, dict) else None
    if not isinstance(tools, list) or not tools:
        return "1 validation error detected: Value at 'toolConfig.tools' failed to satisfy constraint: Member must have length greater than or equal to 1"
    for j, tool in enumerate(tools):
        spec = tool.get("toolSpec") if isinstance(tool, dict) else None
        if not isinstance(spec, dict):
            return f"Malformed input request: toolConfig.tools.{j}: expected a toolSpec"
        name = spec.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            return f"1 validation error detected: Value at 'toolConfig.tools.{j + 1}.member.toolSpec.name' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+"
        schema = spec.get("inputSchema")
        if not isinstance(schema, dict) or not isinstance(schema.get("json"), dict):
            return f"Malformed input request: toolConfig.tools.{j}.toolSpec.inputSchema must be {{\"json\": {{...}}}}"
        declared.add(name)
    choice = tool_config.get("toolChoice")
    if choice is not None:
        if not isinstance(choice, dict) or len(choice) != 1 or next(iter(choice)) not in ("auto", "any", "tool"):
            return "Malformed input request: toolChoice must be one of {auto: {}}, {any: {}}, {tool: {name}}"
        forced = choice.get("tool")
        if forced is not None and (not isinstance(forced, dict) or forced.get("name") not in declared):
            return "The tool specified in toolChoice is not defined in toolConfig.tools."  # (unverified wording)
    return None
