"""Amazon Bedrock Converse / ConverseStream adapter (docs/wire.md §5).

``POST {base_url}/model/{modelId}/converse-stream`` (an AWS event stream, decoded by
:mod:`loopkit.eventstream`) or ``/converse`` (one JSON body, ``stream=False``).

Auth: a Bedrock API key is sent as ``Authorization: Bearer`` (``api_key=`` or the
``AWS_BEARER_TOKEN_BEDROCK`` variable, as botocore reads it). Otherwise requests are signed with
SigV4 through botocore (the optional extra ``loopkit[bedrock]``). Precedence: ``api_key=``, then
explicit ``aws_access_key_id``/``aws_secret_access_key``/``aws_session_token``, then
``AWS_BEARER_TOKEN_BEDROCK``, then botocore's default credential chain.

Mapping choices, where Converse has no direct equivalent:

- ``tool_choice``: ``"auto"`` -> ``{"auto": {}}``, ``"required"`` -> ``{"any": {}}``, a forced
  function -> ``{"tool": {"name": ...}}``, None -> no ``toolChoice`` (the service default, auto).
- ``tool_choice="none"``: Converse has no ``none`` member; the API's way is to omit
  ``toolConfig``. loopkit does that when the history holds no ``toolUse``/``toolResult`` block.
  When it does, the API rejects a request without ``toolConfig`` (ValidationException), so loopkit
  keeps the declared tools and sends no ``toolChoice``: the request is valid, but the model *can*
  still call a tool, and any call it makes is returned like any other (never silently dropped).
  loopkit adds no hidden instruction to the prompt; if a test needs "none" enforced on Bedrock,
  send no tools.
- ``parallel_tool_calls``: Converse has no knob (Claude's ``disable_parallel_tool_use`` lives in
  Anthropic's ``tool_choice``, which Converse does not expose); the flag is ignored.
- A tool result with ``is_error`` is sent as ``toolResult.status: "error"`` (supported by Nova and
  Claude; pass ``error_status=False`` for families that reject ``status``: the text is then
  prefixed with ``Error: ``). Successful results send no ``status``.
- Consecutive messages of one role are merged (Converse requires alternating roles), so the
  results of parallel calls travel in one user message. Empty text blocks are dropped (the API
  rejects blank text); an assistant message left with nothing to say is skipped, and so is one
  that ended in ``error`` or was aborted (its calls never ran, and a ``toolUse`` no result answers
  is a ValidationException; docs/loop-contract.md §1.5).
- A tool call whose arguments never parsed is echoed with ``input: {}`` (``input`` must be a JSON
  object for Claude); unsigned thinking is not echoed (the service would reject it).
- Stop reasons (docs/wire.md §0.2): ``end_turn``/``stop_sequence`` -> ``stop``, ``tool_use`` ->
  ``toolUse``, ``max_tokens``/``model_context_window_exceeded`` -> ``length``; ``guardrail_intervened``,
  ``content_filtered``, ``malformed_tool_use``, ``malformed_model_output`` -> an ``error`` stop whose
  ``error_type`` is the wire reason.
- Errors: ``error_type`` is the shape from ``x-amzn-errortype`` (read as botocore reads it); the
  class follows that shape's modelled status (a ``ThrottlingException`` is a ``RateLimitError``
  whatever the status), else the HTTP status. In-stream exceptions (``throttlingException``, ``modelStreamErrorException`` ...) raise
  the class of their modelled HTTP status (``RateLimitError`` for throttling, a plain ``ProviderError``
  for ``modelStreamErrorException``, 424 like ``ModelErrorException``) with ``status=None``.
  ``x-amz-retry-after`` (milliseconds) and ``retry-after`` (seconds) are honoured.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import aclosing, closing
from dataclasses import replace
from typing import Any
from urllib.parse import quote

import httpx

from .._credentials import remember_credential
from ..errors import (
    ConnectionClosedError,
    EventStreamTruncated,
    ProviderError,
    StreamError,
    UsageError,
    WireError,
    error_class_for_status,
)
from ..events import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    StreamEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from ..messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    parse_arguments,
)
from ..provider import ModelRequest, ToolChoice, forced_tool_name
from ..retry import parse_retry_after
from ..eventstream import EventStreamDecoder
from ._http import HttpCall, HttpProvider, WireHistory, json_or_wire_error

API = "bedrock-converse"
PROVIDER = "bedrock"

STOP_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "toolUse",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}
"""Bedrock ``stopReason`` -> loopkit stop reason; any other reason is an ``error`` stop."""

# ConverseStreamOutput exception members and HTTP error shapes -> their modelled status
EXCEPTION_STATUS: dict[str, int] = {
    "validationexception": 400,
    "accessdeniedexception": 403,
    "resourcenotfoundexception": 404,
    "modeltimeoutexception": 408,
    "modelerrorexception": 424,
    "modelstreamerrorexception": 424,  # service-2.json: a failed dependency (the model), as ModelErrorException
    "throttlingexception": 429,
    "modelnotreadyexception": 429,
    "internalserverexception": 500,
    "serviceunavailableexception": 503,
}

_CONTENT_TYPE_FORMATS = {"image/jpeg": "jpeg", "image/jpg": "jpeg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}


class BedrockProvider(HttpProvider):
    """The Bedrock Converse adapter.

    Args:
        model: the model id or inference-profile ARN (URL-encoded into the path).
        region: the AWS region of the default endpoint and of SigV4 signatures.
        api_key: a Bedrock API key (bearer); defaults to ``AWS_BEARER_TOKEN_BEDROCK``.
        aws_access_key_id / aws_secret_access_key / aws_session_token: SigV4 credentials (needs botocore).
        max_tokens / temperature / top_p / stop_sequences: ``inferenceConfig``.
        error_status: send ``toolResult.status: "error"`` for error results (else prefix the text).
        (other options as :class:`loopkit.providers._http.HttpProvider`)
    """

    api = API
    provider_name = PROVIDER
    api_key_env = ("AWS_BEARER_TOKEN_BEDROCK",)

    def __init__(
        self,
        *,
        model: str,
        region: str = "us-east-1",
        api_key: str | None = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        aws_session_token: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop_sequences: list[str] | None = None,
        error_status: bool = True,
        base_url: str | None = None,
        **options: Any,
    ) -> None:  # pragma: no mutate block
        # (out of the mutation score: the endpoint, region and credentials are not codec, and the
        # options are stored as given; inference_config turns the inference settings into a config)
        super().__init__(
            model=model, api_key=api_key, base_url=base_url or f"https://bedrock-runtime.{region}.amazonaws.com", **options
        )
        self.region = region
        if (aws_access_key_id is None) != (aws_secret_access_key is None):
            raise UsageError("BedrockProvider: pass both aws_access_key_id and aws_secret_access_key, or neither")
        self._static_credentials = (
            None if aws_access_key_id is None else (aws_access_key_id, aws_secret_access_key, aws_session_token)
        )
        if self._static_credentials is not None and api_key is None:
            self.api_key = None  # explicit SigV4 credentials win over AWS_BEARER_TOKEN_BEDROCK
        # built once: every request sends it, with the request's max_tokens (if any) over the default
        self._inference_config = inference_config(max_tokens=max_tokens, temperature=temperature, top_p=top_p, stop_sequences=stop_sequences)
        self.error_status = error_status

    # --- request ----------------------------------------------------------------------------

    def build_request(self, request: ModelRequest) -> HttpCall:
        op = "converse-stream" if self.streaming else "converse"
        model = request.model or self.model
        return HttpCall(method="POST", path=f"/model/{quote(model, safe='')}/{op}", json=self.request_body(request))

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The Converse JSON body for ``request`` (the history goes on from the previous call's conversion: :class:`WireHistory`)."""
        messages = encode_messages(request.messages, error_status=self.error_status, history=self.wire_history)
        body: dict[str, Any] = {"messages": messages}
        if request.system:
            body["system"] = [{"text": request.system}]
        config = self._inference_config if request.max_tokens is None else {**self._inference_config, "maxTokens": request.max_tokens}
        if config:
            body["inferenceConfig"] = config
        # the history matters only with tool_choice "none"; scanning it every round would not be free
        tool_config = encode_tool_config(request, has_tool_history=request.tool_choice == "none" and _has_tool_blocks(messages))
        if tool_config is not None:
            body["toolConfig"] = tool_config
        return body

    def auth_headers(self) -> dict[str, str]:
        if self.api_key:
            return {"authorization": f"Bearer {self.api_key}"}
        return {}

    def _prepare(self, request: ModelRequest) -> tuple[HttpCall, str, dict[str, str], bytes]:
        call, url, headers, content = super()._prepare(request)
        if not self.api_key:
            headers = {**headers, **self._sigv4_headers(url, headers, content)}  # pragma: no mutate
        return call, url, headers, content

    def _sigv4_headers(self, url: str, headers: Mapping[str, str], content: bytes) -> dict[str, str]:
        """SigV4 ``Authorization``, ``X-Amz-Date`` (and session token) for one request, via botocore."""
        # pragma: no mutate block
        # (out of the mutation score: botocore signs; the conformance suite drives an adapter through
        # its factory's own auth, so it cannot observe signing; tests/providers/test_bedrock.py does)
        try:
            from botocore.auth import SigV4Auth
            from botocore.awsrequest import AWSRequest
            from botocore.credentials import Credentials
            from botocore.session import get_session
        except ImportError:
            raise UsageError(
                "BedrockProvider: no API key (api_key= or AWS_BEARER_TOKEN_BEDROCK) and botocore is not installed "
                "for SigV4; install loopkit[bedrock] or pass an API key"
            ) from None
        if self._static_credentials is not None:
            credentials = Credentials(*self._static_credentials)
        else:
            credentials = get_session().get_credentials()
            if credentials is None:
                raise UsageError(
                    "BedrockProvider: no API key (api_key= or AWS_BEARER_TOKEN_BEDROCK) and no AWS credentials "
                    "found by botocore; pass aws_access_key_id/aws_secret_access_key or set up a profile"
                )
        frozen = credentials.get_frozen_credentials()
        remember_credential(frozen.secret_key, frozen.token)  # they never travel: tell the recorders
        aws = AWSRequest(method="POST", url=url, data=content, headers={"content-type": headers.get("content-type", "application/json")})
        SigV4Auth(credentials, "bedrock", self.region).add_auth(aws)
        return {k: v for k, v in aws.headers.items() if k.lower() in ("authorization", "x-amz-date", "x-amz-security-token")}

    # --- response ---------------------------------------------------------------------------

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        events = super().stream(request)
        return events if request.model is None else _named(events, request.model)

    def astream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        events = super().astream(request)
        return events if request.model is None else _anamed(events, request.model)

    def stream_decoder(self) -> ConverseStreamDecoder:
        return ConverseStreamDecoder(api=self.api, provider=self.provider_name, model=self.model)

    def decode_body(self, data: Any) -> list[StreamEvent]:
        return decode_converse_body(data, api=self.api, provider=self.provider_name, model=self.model)

    def map_error(self, status: int, headers: httpx.Headers, body: bytes) -> ProviderError:
        return http_error(status, headers, body)


def _named(events: Iterator[StreamEvent], model: str) -> Iterator[StreamEvent]:
    """``events`` with the start naming ``model``: a Converse answer carries no model id, so the
    decoder names the adapter's, and a request for another model (``ModelRequest.model``) renames it."""
    with closing(events):  # type: ignore[type-var]
        for e in events:
            yield replace(e, model=model) if isinstance(e, StartEvent) else e


async def _anamed(events: AsyncIterator[StreamEvent], model: str) -> AsyncIterator[StreamEvent]:
    async with aclosing(events):  # type: ignore[type-var]
        async for e in events:
            yield replace(e, model=model) if isinstance(e, StartEvent) else e


# --- pure codec: request ----------------------------------------------------------------------


def encode_messages(messages: Any, *, error_status: bool, history: WireHistory | None = None) -> list[dict[str, Any]]:
    """loopkit messages -> Converse ``messages``, merging consecutive messages of one role.

    Args:
        error_status: whether the model takes ``toolResult.status`` (Claude and Nova do): an
            error result is then marked ``status: "error"``, else its text is prefixed with
            ``Error: ``. No default: it depends on the model, as :class:`BedrockProvider`'s
            ``error_status`` says.
        history: goes on from the previous request's conversion (see :class:`WireHistory`).
    """

    def add(out: list[dict[str, Any]], message: Message) -> None:
        role, blocks = _encode_message(message, error_status)
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1] = {"role": role, "content": out[-1]["content"] + blocks}  # a new entry: earlier bodies share the old one
        else:
            out.append({"role": role, "content": blocks})

    return (WireHistory() if history is None else history).fold(messages, list, add, list, key=error_status)


def _encode_message(message: Message, error_status: bool) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(message, UserMessage):
        if isinstance(message.content, str):
            return "user", [{"text": message.content}] if message.content else []
        return "user", [b for b in (_user_block(x) for x in message.content) if b is not None]
    if isinstance(message, AssistantMessage):
        blocks: list[dict[str, Any]] = []
        if message.stop_reason in ("error", "aborted"):
            return "assistant", blocks
        for b in message.content:
            if isinstance(b, TextContent):
                if b.text.strip():
                    blocks.append({"text": b.text})
            elif isinstance(b, ThinkingContent):
                if b.redacted:
                    blocks.append({"reasoningContent": {"redactedContent": b.thinking_signature or b.thinking}})
                elif b.thinking_signature is not None:
                    blocks.append({"reasoningContent": {"reasoningText": {"text": b.thinking, "signature": b.thinking_signature}}})
            elif isinstance(b, ToolCall):
                arguments = b.arguments if b.raw_arguments is None and isinstance(b.arguments, dict) else {}
                blocks.append({"toolUse": {"toolUseId": b.id, "name": b.name, "input": arguments}})
        return "assistant", blocks
    if isinstance(message, ToolResultMessage):
        content = [b for b in (_user_block(x) for x in message.content) if b is not None]
        if message.is_error and not error_status:
            content = [{"text": "Error: " + message.text}] + [b for b in content if "text" not in b]
        if not content:
            content = [{"text": ""}]
        result: dict[str, Any] = {"toolUseId": message.tool_call_id, "content": content}
        if message.is_error and error_status:
            result["status"] = "error"
        return "user", [{"toolResult": result}]
    raise UsageError(f"bedrock: cannot send a {type(message).__name__} as a Converse message")


def _user_block(block: Any) -> dict[str, Any] | None:
    if isinstance(block, TextContent):
        return {"text": block.text} if block.text.strip() else None
    if isinstance(block, ImageContent):
        fmt = _CONTENT_TYPE_FORMATS.get(block.mime_type.lower())
        if fmt is None:
            raise UsageError(f"bedrock: image type {block.mime_type!r} is not one of {sorted(set(_CONTENT_TYPE_FORMATS))}")
        return {"image": {"format": fmt, "source": {"bytes": block.data}}}
    raise UsageError(f"bedrock: cannot send a {type(block).__name__} block")


def _has_tool_blocks(messages: list[dict[str, Any]]) -> bool:
    return any("toolUse" in b or "toolResult" in b for m in messages for b in m["content"])


def inference_config(*, max_tokens: int | None, temperature: float | None, top_p: float | None, stop_sequences: list[str] | None) -> dict[str, Any]:
    """Converse ``inferenceConfig`` of these settings; a None setting is left to the service."""
    # pragma: no mutate block
    # (out of the mutation score: the constructor's settings, turned into a config once by __init__;
    # no request carries them, so no conformance case can; tests/providers/test_bedrock.py checks them.
    # A request's max_tokens is codec: request_body puts it in, where request.max_tokens checks it)
    fields = {"maxTokens": max_tokens, "temperature": temperature, "topP": top_p, "stopSequences": stop_sequences}
    return {k: v for k, v in fields.items() if v is not None}


def encode_tool_choice(choice: ToolChoice) -> dict[str, Any] | None:
    """loopkit ``tool_choice`` -> Converse ``toolChoice`` (None: send none; see the module docstring)."""
    if choice is None or choice == "none":
        return None
    if choice == "auto":
        return {"auto": {}}
    if choice == "required":
        return {"any": {}}
    name = forced_tool_name(choice)
    if name is None:
        raise UsageError(f"bedrock: unsupported tool_choice {choice!r}; expected 'auto', 'required', 'none' or a function name")
    return {"tool": {"name": name}}


def encode_tool_config(request: ModelRequest, *, has_tool_history: bool) -> dict[str, Any] | None:
    """``toolConfig`` for ``request``, or None to omit it."""
    if not request.tools:
        return None
    if request.tool_choice == "none" and not has_tool_history:
        return None
    tools = []
    for t in request.tools:
        spec: dict[str, Any] = {"name": t.name, "inputSchema": {"json": dict(t.parameters)}}
        if t.description:
            spec["description"] = t.description
        if t.strict is not None:
            spec["strict"] = t.strict
        tools.append({"toolSpec": spec})
    config: dict[str, Any] = {"tools": tools}
    choice = encode_tool_choice(request.tool_choice)
    if choice is not None:
        config["toolChoice"] = choice
    return config


# --- pure codec: responses --------------------------------------------------------------------


def usage_from(data: Any) -> Usage:
    """Converse ``usage`` -> :class:`Usage`."""
    if not isinstance(data, Mapping):
        return Usage()

    def n(key: str) -> int:
        v = data.get(key)
        return v if isinstance(v, int) else 0

    u = Usage(input=n("inputTokens"), output=n("outputTokens"), cache_read=n("cacheReadInputTokens"), cache_write=n("cacheWriteInputTokens"))
    u.total_tokens = n("totalTokens") or u.input + u.output
    return u


def _terminal(stop_reason: Any, usage: Usage | None) -> StreamEvent:
    reason = STOP_REASONS.get(stop_reason)  # stopReason is a String enum the model requires
    if reason is not None:
        return DoneEvent(reason=reason, usage=usage)  # type: ignore[arg-type]
    return ErrorEvent(
        reason="error",
        error_message=f"Bedrock stopped with stopReason {stop_reason!r}",
        error_type=str(stop_reason),
        usage=usage,
    )


def decode_converse_body(data: Any, *, model: str, api: str = API, provider: str = PROVIDER) -> list[StreamEvent]:
    """A Converse JSON body -> the stream events of the same answer, whose start names ``model``
    (a Converse answer does not name its model: the caller says which it asked for).

    Raises:
        WireError: a member the service model requires is missing or not of its type.
    """
    try:
        return _body_events(data, StartEvent(api=api, provider=provider, model=model))
    except (KeyError, TypeError, AttributeError) as exc:
        raise WireError(f"bedrock: Converse body lacks a member the service always sends ({exc!r}): {str(data)[:200]}") from None


def _body_events(data: Any, start: StartEvent) -> list[StreamEvent]:
    content = data["output"]["message"]["content"]
    stop_reason = data["stopReason"]
    events: list[StreamEvent] = [start]
    i = 0
    for block in content:
        if "text" in block:
            events += [TextStartEvent(content_index=i), TextDeltaEvent(content_index=i, delta=str(block["text"])), TextEndEvent(content_index=i)]
        elif "reasoningContent" in block:
            rc = block["reasoningContent"]
            if "redactedContent" in rc:
                events += [ThinkingStartEvent(content_index=i, redacted=True), ThinkingEndEvent(content_index=i, thinking_signature=rc["redactedContent"])]
            else:
                rt = rc["reasoningText"]
                events += [
                    ThinkingStartEvent(content_index=i),
                    ThinkingDeltaEvent(content_index=i, delta=str(rt["text"])),
                    ThinkingEndEvent(content_index=i, thinking_signature=rt.get("signature")),
                ]
        elif "toolUse" in block and block["toolUse"].get("type", "tool_use") == "tool_use":
            tu = block["toolUse"]
            raw = tu["input"]
            arguments, raw_arguments = parse_arguments(raw) if isinstance(raw, str) else (raw, None)
            call = ToolCall(id=str(tu["toolUseId"]), name=str(tu["name"]), arguments=arguments, raw_arguments=raw_arguments)
            events.append(ToolCallEndEvent(content_index=i, tool_call=call))
        else:
            continue  # images, citations, server-side tool use and results: not part of loopkit's vocabulary
        i += 1
    events.append(_terminal(stop_reason, usage_from(data.get("usage"))))
    return events


class ConverseStreamDecoder:
    """ConverseStream bytes -> loopkit stream events (incremental, any chunking).

    Wire block indexes are mapped to loopkit's dense ``content_index``; text blocks start on their
    first delta (the service sends no ``contentBlockStart`` for text), and a ``contentBlockStop``
    frees its index (the service never reuses one in a message). The terminal event is emitted at
    ``metadata``, which the service sends last, after ``messageStop`` (a ``metadata`` with no
    ``messageStop`` before it, which the service never sends, ends the answer as an ``error`` stop
    with no stop reason); or at the end of the body after ``messageStop`` alone. An exception
    message raises a :class:`ProviderError`; an event without a member the service model requires
    raises a :class:`WireError`. The start event names ``model``: a Converse answer does not name
    its model, so the caller says which it asked for.
    """

    __slots__ = ("_frames", "_api", "_provider", "_model", "_blocks", "_signatures", "_count", "_stop", "_done")

    def __init__(self, *, model: str, api: str = API, provider: str = PROVIDER) -> None:
        self._frames = EventStreamDecoder()
        self._api, self._provider, self._model = api, provider, model
        self._blocks: dict[int, tuple[str, int]] = {}  # wire index of an open block -> (kind, loopkit index)
        self._signatures: dict[int, str] = {}
        self._count = 0
        self._stop: Any = None
        self._done = False

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        frames = self._frames.feed(chunk)  # corrupt framing raises an EventStreamError (a WireError)
        out: list[StreamEvent] = []
        for frame in frames:
            kind = frame.message_type
            if kind == "event":
                try:
                    self._event(frame.event_type or "", frame.payload, out)
                except (KeyError, TypeError, AttributeError) as exc:
                    raise WireError(f"bedrock: {frame.event_type} event lacks a member the service always sends ({exc!r}): {frame.payload[:200]!r}") from None
            elif kind in ("exception", "error"):
                raise stream_exception(frame.headers, frame.payload)
            else:
                raise WireError(f"bedrock: event-stream message with :message-type {kind!r}")
        return out

    def close(self) -> list[StreamEvent]:
        try:
            self._frames.close()
        except EventStreamTruncated as exc:
            raise ConnectionClosedError(f"Bedrock stream ended part-way through an event-stream message ({exc})", provider=PROVIDER) from exc
        if self._done:
            return []
        if self._stop is None:
            raise ConnectionClosedError("Bedrock stream ended before messageStop", provider=PROVIDER)
        return [_terminal(self._stop, None)]  # no metadata came: with it, the answer had ended there

    def _event(self, event_type: str, payload: bytes, out: list[StreamEvent]) -> None:
        if self._done:
            return
        data = json_or_wire_error(payload.decode("utf-8", "replace"), f"bedrock {event_type} event")
        if not isinstance(data, dict):
            raise WireError(f"bedrock: {event_type} payload is not a JSON object: {payload[:200]!r}")
        if event_type == "contentBlockDelta":
            self._delta(data, out)
        elif event_type == "contentBlockStart":
            wire = data.get("contentBlockIndex")
            tool = data["start"].get("toolUse")
            if tool is not None and tool.get("type", "tool_use") == "tool_use":
                i = self._new_block(wire, "tool")
                out.append(ToolCallStartEvent(content_index=i, id=str(tool["toolUseId"]), name=str(tool["name"])))
            else:
                self._blocks[wire] = ("ignored", -1)  # server-side tool use/result, images
        elif event_type == "contentBlockStop":
            wire = data.get("contentBlockIndex")
            kind, i = self._blocks.pop(wire, (None, -1))  # (a block no delta opened has nothing to end)
            if kind == "text":
                out.append(TextEndEvent(content_index=i))
            elif kind == "thinking":
                out.append(ThinkingEndEvent(content_index=i, thinking_signature=self._signatures.pop(i, None)))
            elif kind == "tool":
                out.append(ToolCallEndEvent(content_index=i))
        elif event_type == "messageStart":
            out.append(StartEvent(api=self._api, provider=self._provider, model=self._model))
        elif event_type == "messageStop":
            self._stop = data["stopReason"]
        elif event_type == "metadata":  # the last event, after messageStop (without one: an error stop with no reason)
            self._done = True
            out.append(_terminal(self._stop, usage_from(data.get("usage"))))
        # other event types are ignored: the union may grow

    def _new_block(self, wire: Any, kind: str) -> int:
        if wire in self._blocks:
            raise WireError(f"bedrock: content block {wire!r} started twice")
        i = self._count
        self._count += 1
        self._blocks[wire] = (kind, i)
        return i

    def _delta(self, data: dict[str, Any], out: list[StreamEvent]) -> None:
        wire = data.get("contentBlockIndex")
        delta = data.get("delta")
        if not isinstance(delta, dict):
            raise WireError(f"bedrock: contentBlockDelta without a delta object: {data!r}"[:300])
        kind, i = self._blocks.get(wire, (None, -1))
        if kind == "ignored":
            return
        if "text" in delta:
            if kind is None:
                i = self._new_block(wire, "text")
                out.append(TextStartEvent(content_index=i))
            elif kind != "text":
                raise WireError(f"bedrock: text delta for {kind} block {wire!r}")
            out.append(TextDeltaEvent(content_index=i, delta=str(delta["text"])))
        elif "toolUse" in delta:
            if kind != "tool":
                raise WireError(f"bedrock: toolUse delta for block {wire!r}, which no toolUse contentBlockStart opened")
            out.append(ToolCallDeltaEvent(content_index=i, delta=str(delta["toolUse"]["input"])))  # a String the model requires
        elif "reasoningContent" in delta:
            rc = delta["reasoningContent"] or {}
            if kind is None:
                i = self._new_block(wire, "thinking")
                out.append(ThinkingStartEvent(content_index=i, redacted="redactedContent" in rc))
            elif kind != "thinking":
                raise WireError(f"bedrock: reasoningContent delta for {kind} block {wire!r}")
            if "text" in rc:
                out.append(ThinkingDeltaEvent(content_index=i, delta=str(rc["text"])))
            if "signature" in rc:
                self._signatures[i] = self._signatures.get(i, "") + str(rc["signature"])
            if "redactedContent" in rc:
                self._signatures[i] = self._signatures.get(i, "") + str(rc["redactedContent"])
        # citation, image and server toolResult deltas carry nothing loopkit keeps


# --- errors -----------------------------------------------------------------------------------


def _shape_name(value: str) -> str:
    """botocore's reading of ``x-amzn-errortype``: before ``:``, after ``#``."""
    return value.split(":", 1)[0].rsplit("#", 1)[-1]


def http_error(status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
    """An HTTP error response -> the ProviderError for its status."""
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = None
    message = body.decode("utf-8", "replace")[:500] or f"HTTP {status}"
    error_type = None
    if isinstance(data, Mapping):
        m = data.get("message", data.get("Message"))
        if isinstance(m, str):
            message = m
        code = data.get("code") or data.get("Code") or data.get("__type")  # botocore's order for restJson1
        error_type = _shape_name(code) if isinstance(code, str) else None
    header = headers.get("x-amzn-errortype")
    if header:
        error_type = _shape_name(header)
    # The class follows the modelled shape when there is one (botocore retries by code, not status).
    cls = error_class_for_status(EXCEPTION_STATUS.get((error_type or "").lower(), status))
    return cls(message, status=status, error_type=error_type, retry_after=_retry_after(headers), provider=PROVIDER, body=data)


def _retry_after(headers: Mapping[str, str]) -> float | None:
    ms = headers.get("x-amz-retry-after")
    if ms is not None:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    return parse_retry_after(headers)


def stream_exception(headers: Mapping[str, Any], payload: bytes) -> ProviderError:
    """An in-stream ``exception`` (or generic ``error``) message -> a ProviderError.

    Raises:
        WireError: the message lacks a header its type requires (``:error-code`` and
            ``:error-message``; ``:exception-type``), or an exception's payload is not a JSON object.
    """
    try:
        if headers.get(":message-type") == "error":
            code = str(headers[":error-code"])
            return StreamError(str(headers[":error-message"]), error_type=code, provider=PROVIDER)
        kind = str(headers[":exception-type"])
    except KeyError as exc:
        raise WireError(f"bedrock: event-stream {headers.get(':message-type')} message without its {exc.args[0]} header") from None
    data = json_or_wire_error(payload.decode("utf-8", "replace"), f"bedrock {kind} exception")
    if not isinstance(data, Mapping):
        raise WireError(f"bedrock: {kind} exception payload is not a JSON object: {payload[:200]!r}")
    message = str(data.get("message") or kind)  # the service model's message is optional
    status = EXCEPTION_STATUS.get(kind.lower())
    cls = StreamError if status is None else error_class_for_status(status)
    return cls(message, error_type=kind, provider=PROVIDER, body=data)


__all__ = [
    "BedrockProvider",
    "ConverseStreamDecoder",
    "decode_converse_body",
    "encode_messages",
    "encode_tool_choice",
    "encode_tool_config",
    "http_error",
    "inference_config",
    "stream_exception",
    "usage_from",
]
