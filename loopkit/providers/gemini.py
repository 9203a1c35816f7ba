"""Google Gemini (``generateContent`` / ``streamGenerateContent?alt=sse``): codec and Provider.

Wire facts this adapter rests on (docs/wire.md §4):

- Tools go out as one ``{"functionDeclarations": [...]}`` entry with plain JSON Schema under
  ``parametersJsonSchema``. ``tool_choice`` maps to ``toolConfig.functionCallingConfig.mode``:
  ``"auto"`` -> ``AUTO``, ``"required"`` -> ``ANY``, ``"none"`` -> ``NONE``, a forced function ->
  ``ANY`` with ``allowedFunctionNames: [name]``. With no tools, neither ``tools`` nor
  ``toolConfig`` is sent.
- **Gemini has no parallel-calls knob**: the model may return several ``functionCall`` parts in
  one turn whatever the caller wants. ``parallel_tool_calls`` is therefore not sent; the class
  says so with :attr:`GeminiProvider.supports_parallel_tool_calls` (False), which the conformance
  suite reports as not applicable instead of passing silently.
- Function calls arrive whole, usually **without an id**. loopkit gives each call without one the
  id ``gcall_<n>``, ``n`` from a per-provider counter that only grows and that is moved past every
  ``gcall_<n>`` already present in the request history, so ids never repeat within a run (not
  across rounds, not when a new provider resumes an old history) and are deterministic for a
  given sequence of calls. Such generated ids are never sent back: the API has not seen them, and
  the API pairs responses with such calls by name and order. An id the API did send is
  echoed on the ``functionCall`` and its ``functionResponse``.
- Tool results become ``functionResponse`` parts in one user turn, in the order of the calls of
  the model turn they answer (matched by id, never by name). ``response`` is
  ``{"output": text}``, or ``{"error": text}`` when ``is_error``: the two keys the API documents
  (google-genai ``types.FunctionResponse.response``). Image blocks of a result are not sent.
- ``args`` must be an object: a history call whose arguments were not one (another provider's
  broken JSON) is echoed with ``args: {}``; the error result after it quotes what the model sent.
- ``thoughtSignature`` sits on a part, beside ``text`` or ``functionCall``; it is kept on the
  block (``text_signature``, ``thinking_signature``, ``ToolCall.thought_signature``) and echoed
  on the same part. Parts with ``"thought": true`` are thinking.
- There is no "tool" finish reason: ``STOP`` with ``functionCall`` parts is ``toolUse``.
  ``MAX_TOKENS`` is ``length``; ``CONTINUATION`` and ``FINISH_REASON_UNSPECIFIED`` are ``stop``;
  every other reason (``SAFETY``, ``RECITATION``, ``MALFORMED_FUNCTION_CALL``,
  ``UNEXPECTED_TOOL_CALL``, a blocked prompt's ``promptFeedback.blockReason`` ...) is an
  ``error`` stop whose message names the reason and whose ``error_type`` is the reason.
- Streams have no terminator: the chunk with ``finishReason`` is the last one that matters, and a
  body that ends without it raises :class:`ConnectionClosedError`. ``usageMetadata`` is
  cumulative; the last one wins. Framing is ``data: <json>`` + CRLF CRLF; bare JSON lines (how
  google-genai says errors can arrive) are joined until their braces balance and decoded too.
- Errors: ``{"error": {"code", "message", "status", "details"}}``. ``status`` becomes
  ``error_type``; ``google.rpc.RetryInfo.retryDelay`` (``"34.4s"``) becomes ``retry_after``
  (a ``retry-after`` header wins). An ``{"error": ...}`` object inside a stream raises
  :class:`StreamError` (``status`` None, the code in ``body``; retried by the base only when
  nothing was yielded yet and the code is 429 or 5xx).
- Vertex's streamed arguments (``streamFunctionCallArguments``) are assembled into whole calls:
  a part ``{"functionCall": {"name", "willContinue": true}}`` opens a call, parts with
  ``partialArgs`` (``jsonPath`` + ``stringValue``/``numberValue``/``boolValue``/``nullValue``;
  strings at the same path concatenate) fill in its arguments, and the part whose ``willContinue``
  is not true (often an empty ``{"functionCall": {}}``) closes it. In recorded Vertex streams only
  the opening part names the call and carries its ``thoughtSignature`` (kept from whichever part
  has one), and no part carries whole ``args``, so none are read there. A fragment with no open
  call, a part naming another function while a call is open, a value of no known kind, or a JSON
  path this decoder cannot follow raises :class:`WireError` naming the form, and a stream that
  ends inside a call :class:`ConnectionClosedError`; never a nameless or empty call.
- Not covered: Vertex AI's URL and OAuth (point ``base_url`` at a proxy that handles them).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Mapping
from typing import Any

import httpx

from ..errors import ConnectionClosedError, ProviderError, StreamError, WireError, error_class_for_status
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
)
from ..provider import ModelRequest, ToolSpec, forced_tool_name
from ..retry import parse_retry_after
from ._http import HttpCall, HttpProvider, WireHistory, json_or_wire_error
from ._sse import RAW_LINE, SSEDecoder

GENERATED_ID_PREFIX = "gcall_"
NO_RESULT = "No result provided"


def is_generated_id(call_id: str) -> bool:
    """True for an id loopkit made up (``gcall_<n>``), which is never sent to the API."""
    return call_id.startswith(GENERATED_ID_PREFIX) and call_id[len(GENERATED_ID_PREFIX) :].isdigit()


_LENGTH_REASONS = frozenset({"MAX_TOKENS"})
_STOP_REASONS = frozenset({"STOP", "FINISH_REASON_UNSPECIFIED", "CONTINUATION"})


class GeminiProvider(HttpProvider):
    """The Gemini Developer API (``x-goog-api-key``).

    Args:
        api_version: the path version, ``"v1beta"`` (default; what every recording uses) or
            ``"v1"`` (google-genai 3.x's default).
        (the rest): see :class:`~loopkit.providers._http.HttpProvider`.
    """

    api = "gemini"
    provider_name = "google"
    default_base_url = "https://generativelanguage.googleapis.com"
    api_key_env = ("GOOGLE_API_KEY", "GEMINI_API_KEY")  # google-genai's precedence
    supports_parallel_tool_calls = False
    """Gemini has no knob to allow or forbid parallel calls; ``parallel_tool_calls`` is not sent."""

    def __init__(self, *, model: str, api_version: str = "v1beta", **options: Any) -> None:
        super().__init__(model=model, **options)
        self.api_version = api_version
        self._last_id = 0
        self._ids_lock = threading.Lock()
        self._floor_history = WireHistory()  # the highest generated id in the history so far

    # --- ids --------------------------------------------------------------------------------

    def _new_call_id(self) -> str:
        with self._ids_lock:
            self._last_id += 1
            return f"{GENERATED_ID_PREFIX}{self._last_id}"

    def _raise_floor(self, messages: list[Message]) -> None:
        top = self._floor_history.fold(messages, lambda: [0], _top_generated_id, lambda top: top[0])
        with self._ids_lock:
            self._last_id = max(self._last_id, top)

    # --- codec hooks ------------------------------------------------------------------------

    def auth_headers(self) -> dict[str, str]:  # credentials, not codec
        return {"x-goog-api-key": self.api_key} if self.api_key else {}  # pragma: no mutate

    def build_request(self, request: ModelRequest) -> HttpCall:
        messages = request.messages
        self._raise_floor(messages)
        model = (request.model or self.model).removeprefix("models/")
        body = encode_request(request, messages, self.wire_history)
        if self.streaming:
            return HttpCall(
                method="POST",
                path=f"/{self.api_version}/models/{model}:streamGenerateContent",
                json=body,
                params={"alt": "sse"},
            )
        return HttpCall(method="POST", path=f"/{self.api_version}/models/{model}:generateContent", json=body)

    def stream_decoder(self) -> GeminiStreamDecoder:
        return GeminiStreamDecoder(self._new_call_id, provider=self.provider_name, api=self.api, model=self.model)

    def decode_body(self, data: Any) -> list[StreamEvent]:
        """One ``generateContent`` answer (a JSON object; the stream endpoint's JSON-array form is
        a stream, which :meth:`stream_decoder` reads as bare JSON lines)."""
        decoder = self.stream_decoder()
        return decoder.handle(data) + decoder.close()

    def map_error(self, status: int, headers: httpx.Headers, body: bytes) -> ProviderError:
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        return google_error(status, data, body, retry_after=parse_retry_after(headers), provider=self.provider_name)


# --- request encoding ---------------------------------------------------------------------------


def encode_request(request: ModelRequest, messages: list[Message] | None = None, history: WireHistory | None = None) -> dict[str, Any]:
    """The ``generateContent`` body for ``request`` (camelCase REST JSON; ``history``: see
    :func:`encode_contents`)."""
    body: dict[str, Any] = {"contents": encode_contents(request.messages if messages is None else messages, history)}
    if request.system:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}  # no role: the API reads none (REST docs)
    if request.tools:
        body["tools"] = [{"functionDeclarations": [encode_tool(t) for t in request.tools]}]
        config = encode_tool_choice(request.tool_choice)
        if config is not None:
            body["toolConfig"] = {"functionCallingConfig": config}
    if request.max_tokens is not None:
        body["generationConfig"] = {"maxOutputTokens": request.max_tokens}
    return body


def encode_tool(tool: ToolSpec) -> dict[str, Any]:
    """One ``FunctionDeclaration`` with plain JSON Schema parameters (it has no ``strict``)."""
    return {"name": tool.name, "description": tool.description, "parametersJsonSchema": dict(tool.parameters)}


def encode_tool_choice(choice: Any) -> dict[str, Any] | None:
    """``functionCallingConfig`` for a tool_choice (None: leave the API default, AUTO)."""
    if choice is None:
        return None
    if choice == "auto":
        return {"mode": "AUTO"}
    if choice == "required":
        return {"mode": "ANY"}
    if choice == "none":
        return {"mode": "NONE"}
    name = forced_tool_name(choice)
    if name is not None:
        return {"mode": "ANY", "allowedFunctionNames": [name]}
    raise WireError(
        f"gemini: tool_choice {choice!r} has no Gemini form; use 'auto', 'required', 'none' or "
        "{'type': 'function', 'name': NAME}"
    )


class _Contents:
    __slots__ = ("contents", "calls", "pending")

    def __init__(self) -> None:
        self.contents: list[dict[str, Any]] = []  # complete turns
        self.calls: list[ToolCall] = []  # the calls of the last model turn
        self.pending: list[ToolResultMessage] = []  # results after it, not yet a turn


def encode_contents(messages: list[Message], history: WireHistory | None = None) -> list[dict[str, Any]]:
    """History -> ``contents``. The tool results after a model turn form one user turn, in the
    order of that turn's calls; a call left without a result (a history cut short) gets
    ``{"error": "No result provided"}``, because Gemini rejects a call turn whose responses do not
    match it one for one.

    Args:
        history: goes on from the previous request's conversion (see :class:`WireHistory`).
    """
    return (WireHistory() if history is None else history).fold(messages, _Contents, _add_content, _finish_contents)


def _add_content(state: _Contents, m: Message) -> None:
    t = type(m)
    if t is ToolResultMessage:
        state.pending.append(m)  # type: ignore[arg-type]
        return
    if state.calls or state.pending:
        state.contents.append({"role": "user", "parts": _responses(state.calls, state.pending)})
        state.calls, state.pending = [], []
    if t is UserMessage:
        parts = _user_parts(m)  # type: ignore[arg-type]
        if parts:  # the API refuses empty parts, and a part that is only an empty text
            state.contents.append({"role": "user", "parts": parts})
    elif t is AssistantMessage:
        parts = _model_parts(m)  # type: ignore[arg-type]
        if parts:
            state.contents.append({"role": "model", "parts": parts})
        state.calls = [b for b in m.content if type(b) is ToolCall]  # type: ignore[union-attr]


def _finish_contents(state: _Contents) -> list[dict[str, Any]]:
    if state.pending:
        return [*state.contents, {"role": "user", "parts": _responses(state.calls, state.pending)}]
    return list(state.contents)


def _top_generated_id(top: list[int], m: Message) -> None:
    """Raise ``top[0]`` to the highest ``gcall_<n>`` among ``m``'s calls."""
    if type(m) is AssistantMessage:
        for block in m.content:  # type: ignore[union-attr]
            if type(block) is ToolCall and is_generated_id(block.id):
                top[0] = max(top[0], int(block.id[len(GENERATED_ID_PREFIX) :]))


def _responses(calls: list[ToolCall], results: list[ToolResultMessage]) -> list[dict[str, Any]]:
    return [_function_response(r) for r in results_in_call_order(calls, results)]


def results_in_call_order(calls: list[ToolCall], results: list[ToolResultMessage]) -> list[ToolResultMessage]:
    """``results`` in the order of ``calls``, matched by id only (never by tool name:
    docs/loop-contract.md §7.2); a call that no result answers gets a synthetic error result, and
    results that answer no call come last."""
    by_id: dict[str, ToolResultMessage] = {}
    for r in results:
        by_id.setdefault(r.tool_call_id, r)
    ids = {c.id for c in calls}
    return [by_id.get(c.id) or _no_result(c) for c in calls] + [r for r in results if r.tool_call_id not in ids]


def _no_result(call: ToolCall) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call.id, tool_name=call.name, content=[TextContent(text=NO_RESULT)], is_error=True)


def _function_response(result: ToolResultMessage) -> dict[str, Any]:
    """The result's id (its call's) unless loopkit made it up, its tool's name, and its text."""
    fr: dict[str, Any] = {}
    call_id = result.tool_call_id
    if call_id and not is_generated_id(call_id):
        fr["id"] = call_id
    fr["name"] = result.tool_name
    fr["response"] = {"error" if result.is_error else "output": result.text}
    return {"functionResponse": fr}


def _user_parts(m: UserMessage) -> list[dict[str, Any]]:
    """The message's parts, empty texts left out (the API refuses a part that is only ``{"text": ""}``)."""
    if isinstance(m.content, str):
        return [{"text": m.content}] if m.content else []
    parts: list[dict[str, Any]] = []
    for b in m.content:
        if isinstance(b, TextContent):
            if b.text:
                parts.append({"text": b.text})
        elif isinstance(b, ImageContent):
            parts.append({"inlineData": {"mimeType": b.mime_type, "data": b.data}})
    return parts


def _model_parts(m: AssistantMessage) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for b in m.content:
        t = type(b)
        if t is TextContent:
            part: dict[str, Any] = {"text": b.text}
            sig = b.text_signature
        elif t is ThinkingContent:
            part = {"text": b.thinking, "thought": True}
            sig = b.thinking_signature
        elif t is ToolCall:
            fc: dict[str, Any] = {"name": b.name, "args": b.arguments if b.arguments_ok else {}}  # args must be an object
            if not is_generated_id(b.id):
                fc["id"] = b.id
            part = {"functionCall": fc}
            sig = b.thought_signature
        else:
            continue
        if sig is not None:
            part["thoughtSignature"] = sig
        elif part.get("text") == "":
            continue  # the API refuses a part that is only an empty text
        parts.append(part)
    return parts


# --- response decoding --------------------------------------------------------------------------


class GeminiStreamDecoder:
    """``GenerateContentResponse`` chunks -> stream events (SSE bytes via :meth:`feed`, or parsed
    chunks via :meth:`handle`). The terminal event is emitted by :meth:`close`, because usage may
    still change after the chunk that carries ``finishReason``.

    Args:
        new_id: gives the id of a call the API sent without one.
        provider / api / model: the StartEvent's metadata, ``provider`` also the errors' (by default
            :class:`GeminiProvider`'s own names; ``model`` until a chunk names one).
    """

    __slots__ = ("_sse", "_raw", "_new_id", "_provider", "_api", "_model", "_started", "_index", "_open",
                 "_open_sig", "_has_calls", "_finish", "_finish_message", "_usage", "_block_reason", "_partial")  # fmt: skip

    def __init__(self, new_id: Any, *, provider: str = GeminiProvider.provider_name, api: str = GeminiProvider.api, model: str = "") -> None:
        self._sse = SSEDecoder(raw_lines=True)
        self._raw = JsonLineBuffer()
        self._new_id = new_id
        self._provider, self._api, self._model = provider, api, model
        self._started = False
        self._index = 0  # next content_index
        self._open: str | None = None  # "text" | "thinking" | None
        self._open_sig: str | None = None
        self._has_calls = False
        self._finish: str | None = None
        self._finish_message: str | None = None
        self._usage: Usage | None = None
        self._block_reason: str | None = None
        self._partial: _PartialCall | None = None  # a Vertex call whose arguments are streaming

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for ev in self._sse.feed(chunk):
            out += self._event(ev)
        return out

    def _event(self, ev: Any) -> list[StreamEvent]:
        if ev.event != RAW_LINE:
            return self.handle(json_or_wire_error(ev.data, "gemini stream event"))
        text = self._raw.add(ev.data)  # bare JSON lines, as google-genai also accepts (errors)
        if text is None:
            return []
        data = json_or_wire_error(text, "gemini stream (bare JSON)")
        out: list[StreamEvent] = []
        for item in data if isinstance(data, list) else [data]:
            out += self.handle(item)
        return out

    def handle(self, data: Any) -> list[StreamEvent]:
        """Apply one ``GenerateContentResponse`` (or an ``{"error": ...}`` object)."""
        if not isinstance(data, Mapping):
            raise WireError(f"gemini: a response chunk must be a JSON object, got {type(data).__name__}: {str(data)[:200]}")
        if "error" in data:
            raise stream_error(data)
        out: list[StreamEvent] = []
        if not self._started:
            self._started = True
            out.append(StartEvent(api=self._api, provider=self._provider, model=data.get("modelVersion") or self._model,
                                  response_id=data.get("responseId")))  # fmt: skip
        usage = data.get("usageMetadata")
        if isinstance(usage, Mapping):
            self._usage = decode_usage(usage)
        feedback = data.get("promptFeedback")
        if isinstance(feedback, Mapping) and feedback.get("blockReason"):
            self._block_reason = str(feedback["blockReason"])
        candidates = data.get("candidates") or []
        if not candidates:
            return out
        cand = candidates[0]
        content = cand.get("content") or {}
        for part in content.get("parts") or ():
            if isinstance(part, Mapping):
                out += self._part(part)
        if cand.get("finishReason"):
            self._finish = str(cand["finishReason"])
        if cand.get("finishMessage"):
            self._finish_message = str(cand["finishMessage"])
        return out

    def _part(self, part: Mapping[str, Any]) -> list[StreamEvent]:
        sig = part.get("thoughtSignature")
        fc = part.get("functionCall")
        if self._partial is not None or (isinstance(fc, Mapping) and ("partialArgs" in fc or fc.get("willContinue"))):
            return self._streamed_call(fc, sig)
        if isinstance(fc, Mapping):
            out = self._close_open()
            call_id = fc.get("id") or self._new_id()
            name = str(fc.get("name", ""))
            args = fc.get("args")
            if args is None:
                args = {}
            i = self._index
            self._index += 1
            self._has_calls = True
            call = ToolCall(id=str(call_id), name=name, arguments=args, thought_signature=sig)
            return out + [
                ToolCallStartEvent(content_index=i, id=call.id, name=name),
                ToolCallDeltaEvent(content_index=i, delta=json.dumps(args, ensure_ascii=False, separators=(",", ":"))),
                ToolCallEndEvent(content_index=i, tool_call=call, thought_signature=sig),
            ]
        if "text" not in part:
            return []  # inlineData, executableCode ... are not part of loopkit's vocabulary
        text = part.get("text") or ""
        kind = "thinking" if part.get("thought") else "text"
        out = []
        if self._open != kind:
            if not text and sig is None:
                return []  # the empty text part of the final chunk
            out += self._close_open()
            self._open = kind
            out.append(TextStartEvent(content_index=self._index) if kind == "text" else ThinkingStartEvent(content_index=self._index))
        if text:
            ctor = TextDeltaEvent if kind == "text" else ThinkingDeltaEvent
            out.append(ctor(content_index=self._index, delta=text))
        if sig is not None:
            self._open_sig = sig
        return out

    def _streamed_call(self, fc: Any, sig: str | None) -> list[StreamEvent]:
        """One part of a Vertex call whose arguments stream as ``partialArgs``."""
        call, out = self._partial, []
        if not isinstance(fc, Mapping):
            raise WireError(f"gemini: a {'text' if call else 'non-functionCall'} part arrived inside a streamed function call (willContinue was true): {fc!r:.200}")
        if call is None:
            if not fc.get("name"):
                raise WireError(f"gemini: a functionCall fragment (partialArgs/willContinue) arrived with no open call and no name: {dict(fc)!r:.200}")
            out = self._close_open()
            call = self._partial = _PartialCall(self._index, str(fc.get("id") or self._new_id()), str(fc["name"]))
            self._index += 1
            self._has_calls = True
            out.append(ToolCallStartEvent(content_index=call.index, id=call.id, name=call.name))
        elif fc.get("name") and fc["name"] != call.name:
            raise WireError(f"gemini: functionCall {fc['name']!r} started while the streamed call {call.name!r} was still open (willContinue)")
        for arg in fc.get("partialArgs") or ():  # whole args never come beside them (recorded streams; ADK ignores them)
            _apply_partial_arg(call.args, arg)
        if sig is not None:  # Vertex signs the opening part only
            call.signature = sig
        if fc.get("willContinue"):
            return out
        self._partial = None
        done = ToolCall(id=call.id, name=call.name, arguments=call.args, thought_signature=call.signature)
        return out + [
            ToolCallDeltaEvent(content_index=call.index, delta=json.dumps(call.args, ensure_ascii=False, separators=(",", ":"))),
            ToolCallEndEvent(content_index=call.index, tool_call=done, thought_signature=call.signature),
        ]

    def _close_open(self) -> list[StreamEvent]:
        if self._open is None:
            return []
        i, sig = self._index, self._open_sig
        event: StreamEvent = TextEndEvent(content_index=i, text_signature=sig) if self._open == "text" else ThinkingEndEvent(content_index=i, thinking_signature=sig)
        self._open, self._open_sig = None, None
        self._index += 1
        return [event]

    def close(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for ev in self._sse.close():  # a last event whose blank line never came
            out += self._event(ev)
        if self._raw.pending:
            raise ConnectionClosedError("gemini: the stream ended inside a bare JSON object", provider=self._provider)
        if self._partial is not None:
            raise ConnectionClosedError(
                f"gemini: the stream ended inside the streamed function call {self._partial.name!r} (its last part said willContinue)", provider=self._provider
            )
        if self._finish is None and self._block_reason is None:
            raise ConnectionClosedError(
                "gemini: the stream ended before a chunk with finishReason arrived", provider=self._provider
            )
        out += self._close_open()  # a finishReason or blockReason came in a chunk, so StartEvent is out
        reason = self._finish or ""
        if self._block_reason is not None and not self._finish:
            return out + [ErrorEvent(error_message=f"gemini: prompt blocked (promptFeedback.blockReason {self._block_reason})",
                                     error_type=self._block_reason, usage=self._usage)]  # fmt: skip
        if reason in _STOP_REASONS:
            return out + [DoneEvent(reason="toolUse" if self._has_calls else "stop", usage=self._usage)]
        if reason in _LENGTH_REASONS:
            return out + [DoneEvent(reason="length", usage=self._usage)]
        message = f"gemini: finishReason {reason}"
        if self._finish_message:
            message += f": {self._finish_message}"
        return out + [ErrorEvent(error_message=message, error_type=reason, usage=self._usage)]


class _PartialCall:
    __slots__ = ("args", "id", "index", "name", "signature")

    def __init__(self, index: int, call_id: str, name: str) -> None:
        self.index, self.id, self.name = index, call_id, name
        self.signature: str | None = None
        self.args: dict[str, Any] = {}


_PATH_STEP = re.compile(r"""\.([A-Za-z_][A-Za-z0-9_\-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]""")  # names quoted as in a normalized path
_VALUE_KEYS = ("stringValue", "numberValue", "boolValue", "nullValue")


def _path_steps(path: Any) -> list[str | int]:
    """``$.a.b[0]['c d']`` -> ``["a", "b", 0, "c d"]`` (the RFC 9535 subset Gemini sends: dotted
    names, indexes, and names in single quotes, as normalized paths write them)."""
    if not isinstance(path, str) or not path.startswith("$"):
        raise WireError(f"gemini: partialArgs jsonPath must be a JSON path starting with '$', got {path!r}")
    steps: list[str | int] = []
    at = 1
    while at < len(path):
        m = _PATH_STEP.match(path, at)
        if m is None:
            raise WireError(f"gemini: partialArgs jsonPath {path!r} has a form this decoder does not follow (at {path[at:]!r})")
        name, index, quoted = m.groups()
        steps.append(int(index) if index is not None else name if name is not None else quoted.replace("\\", ""))
        at = m.end()
    if not steps:
        raise WireError(f"gemini: partialArgs jsonPath {path!r} names no argument")
    return steps


def _apply_partial_arg(args: dict[str, Any], arg: Any) -> None:
    """Apply one ``PartialArg``: strings append to a string already at the path (a value streamed
    in pieces); other values are set."""
    if not isinstance(arg, Mapping):
        raise WireError(f"gemini: a partialArgs entry must be an object, got {arg!r:.200}")
    kinds = [k for k in _VALUE_KEYS if k in arg]
    if len(kinds) != 1:
        raise WireError(f"gemini: partialArgs entry at {arg.get('jsonPath')!r} must carry exactly one of {', '.join(_VALUE_KEYS)}; got {sorted(arg)}")
    kind = kinds[0]
    value = None if kind == "nullValue" else arg[kind]
    steps = _path_steps(arg.get("jsonPath"))
    node: Any = args
    for step, nxt in itertools.pairwise(steps):
        node = _child(node, step, [] if isinstance(nxt, int) else {})
    last = steps[-1]
    if isinstance(last, int):
        if not isinstance(node, list):
            raise WireError(f"gemini: partialArgs jsonPath {arg.get('jsonPath')!r} indexes something that is not a list")
        while len(node) <= last:
            node.append(None)
        current = node[last]
    else:
        if not isinstance(node, dict):
            raise WireError(f"gemini: partialArgs jsonPath {arg.get('jsonPath')!r} names a key of something that is not an object")
        current = node.get(last)
    if kind == "stringValue" and isinstance(current, str):
        value = current + str(value)
    node[last] = value


def _child(node: Any, step: str | int, empty: Any) -> Any:
    if isinstance(step, int):
        if not isinstance(node, list):
            raise WireError(f"gemini: partialArgs jsonPath indexes [{step}] into something that is not a list")
        while len(node) <= step:
            node.append(None)
        if node[step] is None:
            node[step] = empty
        return node[step]
    if not isinstance(node, dict):
        raise WireError(f"gemini: partialArgs jsonPath names .{step} in something that is not an object")
    if node.get(step) is None:
        node[step] = empty
    return node[step]


class JsonLineBuffer:
    """Joins bare lines until the braces and brackets of one JSON value balance (outside strings)."""

    __slots__ = ("_lines", "_depth", "_in_string", "_escape")

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._depth = 0
        self._in_string = False
        self._escape = False

    @property
    def pending(self) -> bool:
        return bool(self._lines)

    def add(self, line: str) -> str | None:
        """Add one line; return the whole JSON text once it is complete, else None."""
        if not self._lines and not line.strip():
            return None
        self._lines.append(line)
        depth, in_string, escape = self._depth, self._in_string, self._escape
        for ch in line:
            if escape:
                escape = False
            elif in_string:
                if ch == "\\":
                    escape = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
        self._depth, self._in_string, self._escape = depth, in_string, escape
        if depth > 0 or in_string:
            return None
        text = "\n".join(self._lines)
        self._lines.clear()
        self._depth, self._in_string, self._escape = 0, False, False
        return text


def decode_usage(u: Mapping[str, Any]) -> Usage:
    """``usageMetadata`` -> Usage: input excludes cached tokens; output includes thoughts."""
    prompt = int(u.get("promptTokenCount") or 0)
    cached = int(u.get("cachedContentTokenCount") or 0)
    output = int(u.get("candidatesTokenCount") or 0) + int(u.get("thoughtsTokenCount") or 0)
    total = int(u.get("totalTokenCount") or 0) or prompt + output
    return Usage(input=prompt - cached, output=output, cache_read=cached, total_tokens=total)


# --- errors ---------------------------------------------------------------------------------------


def retry_delay(details: Any) -> float | None:
    """Seconds from a ``google.rpc.RetryInfo`` detail (``"retryDelay": "34.4s"``), else None."""
    if not isinstance(details, list):
        return None
    for d in details:
        if isinstance(d, Mapping) and str(d.get("@type", "")).endswith("google.rpc.RetryInfo"):
            value = d.get("retryDelay")
            if isinstance(value, str) and value.endswith("s"):  # proto3 JSON writes a Duration so, always
                try:
                    return float(value[:-1])
                except ValueError:
                    return None
    return None


def google_error(status: int, data: Any, body: bytes, *, retry_after: float | None, provider: str) -> ProviderError:
    """An HTTP error body in Google's shape -> the ProviderError for ``status``, naming
    ``provider`` (the name the adapter's messages carry)."""
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    err = data.get("error") if isinstance(data, Mapping) else None
    if isinstance(err, Mapping):
        message = str(err.get("message") or f"HTTP {status}")
        error_type = err.get("status")
        if retry_after is None:
            retry_after = retry_delay(err.get("details"))
    else:
        message = body.decode("utf-8", "replace")[:500] or f"HTTP {status}"
        error_type = None
    return error_class_for_status(status)(
        message, status=status, error_type=None if error_type is None else str(error_type),
        retry_after=retry_after, provider=provider, body=data,
    )  # fmt: skip


def stream_error(data: Mapping[str, Any]) -> StreamError:
    """A ``{"error": {...}}`` event inside a stream -> :class:`StreamError` (status None; the
    body's code is kept in ``body``; retryable when the code is 429 or 5xx)."""
    err = data.get("error")
    err = err if isinstance(err, Mapping) else {"message": str(err)}
    code = err.get("code")
    retryable = isinstance(code, int) and (code == 429 or code >= 500)
    return StreamError(
        str(err.get("message") or "error event in stream"), error_type=None if err.get("status") is None else str(err["status"]),
        retry_after=retry_delay(err.get("details")), provider="google", body=dict(data), retryable=retryable,
    )  # fmt: skip


__all__ = ["GeminiProvider", "GeminiStreamDecoder", "encode_request", "google_error"]
