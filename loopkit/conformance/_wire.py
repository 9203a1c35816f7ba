"""The suite's own reading of each wire protocol (docs/wire.md §0.2, §0.3 and §1-§5).

Nothing here comes from ``loopkit.providers``: the expectations are written from the spec, so an
adapter's misreading of a protocol cannot hide on both sides of a check. Each :class:`Wire` says
where a request body carries tools, tool_choice, the parallel flag, the system prompt, echoed
calls, tool results (with the error flag in the protocol's convention) and reasoning, and which
wire stop reasons the protocol has and what they mean.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<absent>"})()
"""What a reader returns for a key the body does not carry."""


@dataclass(slots=True, frozen=True)
class Declared:
    """A tool declaration as read from a request body."""

    name: Any
    description: Any
    parameters: Any
    strict: Any = MISSING


@dataclass(slots=True, frozen=True)
class EchoedCall:
    """An assistant tool call echoed in a request's history: ``arguments`` decoded, ``sent`` as
    the body carries them (a JSON string on OpenAI, an object elsewhere)."""

    id: Any
    name: Any
    arguments: Any
    sent: Any = MISSING


@dataclass(slots=True, frozen=True)
class SentResult:
    """A tool result as a request carries it. ``error`` is the protocol's own flag (None when
    the protocol has none)."""

    id: Any
    name: Any
    text: str
    error: bool | None


@dataclass(slots=True, frozen=True)
class StopCase:
    """One wire stop reason: how to make the simulator send it, and what it must become.

    The simulator writes the reason itself (``Turn.wire_stop_reason`` for the values no Turn kind
    names), so the streamed and the non-streamed answer both carry it.

    Args:
        wire: the reason as the protocol spells it.
        expected: the loopkit stop reasons it may map to (``error`` also accepts a raised error).
        turn: Turn fields for the scripted answer.
        sim_options: options for the simulator.
        message: the provider's own text about an error stop, which the error must carry.
        error_type: the ``error_type`` an ``error`` stop must carry (None: the suite does not say).
    """

    wire: str
    expected: frozenset[str]
    turn: Mapping[str, Any] = field(default_factory=dict)
    sim_options: Mapping[str, Any] = field(default_factory=dict)
    message: str | None = None
    error_type: str | None = None


@dataclass(slots=True, frozen=True)
class ErrorForm:
    """One real form of a protocol's HTTP error answer, and what an adapter must make of it.

    Args:
        what: the form, in a few words.
        fault: :class:`~loopkit.script.HttpFault` fields that make the simulator send it.
        error: the name of the :mod:`loopkit.errors` class the call must fail with.
        error_type: the provider's error type the error must carry.
        message: the provider's message, as the body carries it once decoded.
        sim_options: options for the simulator (how it writes its error answers).
    """

    what: str
    fault: Mapping[str, Any]
    error: str
    error_type: str
    message: str
    sim_options: Mapping[str, Any] = field(default_factory=dict)


_TEXT = {"text": "Done."}
_CALL = {"tool_calls": ({"name": "get_weather", "arguments": {"city": "Paris"}},)}


def _wire_stop(reason: str, expected: set[str], turn: Mapping[str, Any] = _TEXT) -> StopCase:
    """The simulator sends ``reason`` in the protocol's stop field, exactly as written."""
    return StopCase(reason, frozenset(expected), {**turn, "wire_stop_reason": reason})


class Wire:
    """A protocol's request-body layout and response vocabulary (subclasses fill it in)."""

    name: str = ""
    parallel_knob: bool = True
    """The protocol can forbid parallel calls."""
    fragments_arguments: bool = True
    """Tool-call arguments stream as JSON text fragments (Gemini sends calls whole)."""
    raw_arguments: bool = True
    """Argument text that is not JSON can travel on this wire (Gemini's ``args`` is a Struct)."""
    reasoning: bool = True
    """The wire carries reasoning (thinking) and its signature."""
    overloaded_529: bool = False
    error_flag: str = "none"
    """How an error result is marked: ``none`` (plain text), or the protocol's own field."""
    error_in_text: bool = False
    """The model takes no error flag, so an error result says so in its text (a :attr:`variant`)."""
    variant: str | None = None
    """The model family this reading is of, where the protocol's models differ (None: the usual)."""
    sim_options: Mapping[str, Any] = {}
    """Options every simulator is built with, to answer as that model family does."""
    call_id_prefix: str = "call_"
    arguments_sent_as: type = dict
    """The JSON type echoed tool-call arguments travel as (``str``: a string of JSON)."""
    error_types: tuple[str, str] = ("invalid_request_error", "server_error")
    """The provider's error type of an HTTP 400, and of an in-stream server error (§6.3)."""
    strict: str | None = None
    """Where a tool declaration carries ``strict`` (None: the protocol has no such field)."""
    strict_by_default: bool = False
    """A declaration without ``strict`` is strict (so the adapter must send ``false``)."""
    terminal_event: bytes = b""
    """What marks the wire event that ends a complete stream (each simulator chunk is one event)."""
    model_id: str = "conformance-model-2"
    """A model id in the protocol's own form (a request for it must reach the wire and the message)."""
    cache_write: bool = True
    """Usage reports prompt-cache writes apart (Gemini reports cache reads only)."""
    stream_exceptions: tuple[tuple[str, str], ...] = ()
    """Typed in-stream exceptions, as the wire names them, each with the :mod:`loopkit.errors` class
    of its modelled HTTP status (empty: the protocol has no typed in-stream exceptions)."""

    unsigned_reasoning: bool = False
    """Some model answers with reasoning that has no signature (Bedrock: DeepSeek-R1)."""
    throttling_shape: str | None = None
    """The error shape that means a throttle whatever the HTTP status it comes with (None: the
    protocol's status alone says so)."""

    def error_forms(self) -> list[ErrorForm]:
        """Real HTTP error answers in forms beyond the simulator's plain one (none by default)."""
        return []

    def generic_error_event(self, code: str, message: str) -> bytes | None:
        """One wire event carrying an untyped stream error (None: the protocol has no such event)."""
        return None

    def bare_exception_event(self, member: str) -> bytes | None:
        """One typed in-stream exception whose payload names no message, where the protocol's
        model makes the message optional (None: the protocol has no such form)."""
        return None

    def server_tool_events(self, first_index: int) -> list[bytes]:
        """Wire events of a tool the server runs itself (its call and its result), as blocks from
        ``first_index`` on; empty when the protocol's stream has no such blocks."""
        return []

    def with_server_tool_body(self, body: Any) -> Any:
        """A non-streamed answer's JSON with the same server-side tool's blocks before its content."""
        raise NotImplementedError
    streaming_switch: str = ""
    """How a request asks for a non-streamed answer, in words (for a case's not-applicable reason)."""

    def is_terminal(self, event: bytes) -> bool:
        """Whether one wire event is the protocol's terminal event."""
        return self.terminal_event in event

    streamed_calls: str | None = None
    """Another wire form in which the protocol streams a tool call's arguments, one
    :meth:`stream_calls` writes (None: the protocol has no other form)."""

    def stream_calls(self, chunks: list[bytes]) -> list[bytes]:
        """An answer's wire events with each whole tool call rewritten into the
        :attr:`streamed_calls` form."""
        raise NotImplementedError

    reports_model: bool = True
    """An answer names the model that wrote it."""
    model_prefix: str = ""
    """A resource prefix the API also accepts on model names (Gemini's ``models/``)."""
    response_id: str | None = None
    """Where an answer carries the API's id for it (None: the protocol sends none)."""

    retried_stream_errors: tuple[tuple[str, bool], ...] = ()
    """In-stream error types the protocol says are transient (True: retried when nothing was
    yielded yet) or not (False); empty when the suite does not check it for this protocol."""

    blocked_prompts: str | None = None
    """Where the protocol says the prompt itself was blocked, with no answer at all (None: it has
    no such form apart from its stop reasons)."""

    def block_prompt(self, chunks: list[bytes], reason: str) -> list[bytes]:
        """An answer's wire events replaced by the protocol's blocked-prompt answer for ``reason``
        (keeping the usage the answer reported)."""
        raise NotImplementedError

    wrapped_error_body: str | None = None
    """Another shape an HTTP error body can take (None: only the protocol's usual one)."""

    def wrap_error_body(self, error: Mapping[str, Any]) -> Any:
        """The protocol's error body for ``error`` (its usual ``{"error": ...}`` fields) in the
        :attr:`wrapped_error_body` shape."""
        raise NotImplementedError

    unframed_errors: str | None = None
    """How an error event can also arrive without the protocol's framing (None: it cannot)."""

    def unframe_errors(self, chunks: list[bytes], *, in_array: bool = False) -> list[bytes]:
        """An answer's wire events with each error event written without its framing (in a
        one-element array with ``in_array``)."""
        raise NotImplementedError

    calls_without_ids: bool = False
    """The wire may send a tool call without an id (Gemini), so the adapter makes one up."""

    plain_body_error_type: str | None = None
    """The error type of an HTTP 400 whose body is plain text: None (the body names none), or
    what the protocol says outside the body (Bedrock's ``x-amzn-errortype`` header)."""

    part_signatures: str | None = None
    """Where the protocol puts reasoning signatures on text and call parts too, not only on
    reasoning (None: only on reasoning, if at all)."""

    def sign_text(self, chunks: list[bytes], signature: str) -> list[bytes]:
        """An answer's wire events (or JSON body) with ``signature`` on its last text part."""
        raise NotImplementedError

    total_beyond_counts: str | None = None
    """A token count the API's own total includes beyond input, output and cache (None: none)."""

    def add_to_total(self, chunks: list[bytes], tokens: int) -> list[bytes]:
        """An answer whose final usage counts ``tokens`` more in :attr:`total_beyond_counts`."""
        raise NotImplementedError

    stream_error_retry_info: str | None = None
    """How an in-stream error event can say how long to wait before a retry (None: it cannot)."""

    def with_retry_info(self, chunks: list[bytes], seconds: float) -> list[bytes]:
        """An answer's wire events with each error event asking for a wait of ``seconds``."""
        raise NotImplementedError

    # --- request side ---------------------------------------------------------------------

    def tools(self, body: Mapping[str, Any]) -> list[Declared] | None:
        raise NotImplementedError

    def max_tokens(self, body: Mapping[str, Any]) -> Any:
        """The answer-length cap as sent (MISSING when absent)."""
        raise NotImplementedError

    def tool_choice(self, body: Mapping[str, Any]) -> Any:
        """The tool_choice as sent, in the protocol's own form (MISSING when absent)."""
        raise NotImplementedError

    def expected_choice(self, form: Any, names: list[str]) -> list[Any]:
        """The acceptable wire forms of loopkit's ``tool_choice`` value ``form``."""
        raise NotImplementedError

    def parallel_disabled(self, body: Mapping[str, Any]) -> bool:
        raise NotImplementedError

    tool_keys: tuple[str, ...] = ()
    """Top-level body keys that are about tools."""

    def echoed_calls(self, body: Mapping[str, Any]) -> list[EchoedCall]:
        raise NotImplementedError

    def results(self, body: Mapping[str, Any]) -> list[SentResult]:
        raise NotImplementedError

    def assistant_text(self, body: Mapping[str, Any]) -> str:
        """The text of the assistant turns echoed in the history, joined."""
        raise NotImplementedError

    def system(self, body: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def user_images(self, body: Mapping[str, Any]) -> list[tuple[Any, Any]]:
        """(media type, base64 data) of each image in the user's messages, in order."""
        raise NotImplementedError

    def reasoning_passed_back(self, body: Mapping[str, Any]) -> list[tuple[Any, Any]]:
        """(text, signature) of each reasoning item echoed in the history."""
        raise NotImplementedError

    # --- response side --------------------------------------------------------------------

    def stop_cases(self) -> list[StopCase]:
        raise NotImplementedError


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text_of(p) for p in content)
    if isinstance(content, Mapping):
        for key in ("text", "output_text", "content"):
            if isinstance(content.get(key), (str, list)):
                return _text_of(content[key])
        if "json" in content:
            return json.dumps(content["json"])
    return ""


def _data_url(url: Any) -> tuple[Any, Any]:
    """(media type, base64 data) of a ``data:`` URL (MISSING parts when it is not one)."""
    if not isinstance(url, str) or not url.startswith("data:") or ";base64," not in url:
        return (MISSING, url if url is not None else MISSING)
    media, data = url[5:].split(";base64,", 1)
    return (media, data)


def _loads(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


# --- OpenAI Chat Completions (§1) -----------------------------------------------------------


class OpenAIChatWire(Wire):
    name = "openai_chat"
    response_id = "chunk id"
    reasoning = False
    arguments_sent_as = str
    strict = "tools[].function.strict"
    terminal_event = b"data: [DONE]"  # §1.4: the stream ends with data: [DONE]
    streaming_switch = 'does not set "stream": true'
    tool_keys = ("tools", "tool_choice", "parallel_tool_calls")

    def tools(self, body):
        tools = body.get("tools")
        if not isinstance(tools, list):
            return None
        out = []
        for t in tools:
            fn = t.get("function", {}) if isinstance(t, Mapping) else {}
            out.append(Declared(fn.get("name", MISSING), fn.get("description", ""), fn.get("parameters", MISSING), fn.get("strict", MISSING)))
        return out

    def max_tokens(self, body):
        return body.get("max_completion_tokens", body.get("max_tokens", MISSING))  # max_tokens: the deprecated name

    def tool_choice(self, body):
        return body.get("tool_choice", MISSING)

    def expected_choice(self, form, names):
        if form == "auto":
            return ["auto", MISSING]
        if form in ("required", "none"):
            return [form]
        return [{"type": "function", "function": {"name": form["name"]}}]

    def parallel_disabled(self, body):
        return body.get("parallel_tool_calls") is False

    def echoed_calls(self, body):
        out = []
        for m in body.get("messages") or []:
            if isinstance(m, Mapping) and m.get("role") == "assistant":
                for c in m.get("tool_calls") or []:
                    fn = c.get("function", {})
                    sent = fn.get("arguments", MISSING)
                    out.append(EchoedCall(c.get("id", MISSING), fn.get("name", MISSING), _loads(sent), sent))
        return out

    def results(self, body):
        return [
            SentResult(m.get("tool_call_id", MISSING), None, _text_of(m.get("content")), None)
            for m in body.get("messages") or []
            if isinstance(m, Mapping) and m.get("role") == "tool"
        ]

    def assistant_text(self, body):
        return "".join(_text_of(m.get("content")) for m in body.get("messages") or [] if isinstance(m, Mapping) and m.get("role") == "assistant")

    def system(self, body):
        for m in body.get("messages") or []:
            if isinstance(m, Mapping) and m.get("role") in ("system", "developer"):
                return _text_of(m.get("content"))
        return MISSING

    def user_images(self, body):
        return [
            _data_url(p.get("image_url", {}).get("url") if isinstance(p.get("image_url"), Mapping) else None)
            for m in body.get("messages") or [] if isinstance(m, Mapping) and m.get("role") == "user" and isinstance(m.get("content"), list)
            for p in m["content"] if isinstance(p, Mapping) and p.get("type") == "image_url"
        ]  # fmt: skip

    def reasoning_passed_back(self, body):
        return []

    def stop_cases(self):
        return [
            StopCase("stop", frozenset({"stop"}), _TEXT),
            StopCase("tool_calls", frozenset({"toolUse"}), _CALL),
            StopCase("length", frozenset({"length"}), {"text": "Cut", "stop_reason": "length"}),
            _wire_stop("content_filter", {"error"}),
            # §1.7: a call forced by tool_choice ends with finish_reason "stop"; the answer holds calls
            _wire_stop("stop", {"toolUse"}, _CALL),
        ]


# --- OpenAI Responses (§2) ------------------------------------------------------------------


class OpenAIResponsesWire(Wire):
    name = "openai_responses"
    response_id = "response.id"
    arguments_sent_as = str
    strict = "tools[].strict"
    strict_by_default = True
    terminal_event = b"event: response.completed"  # §2.4: the stream ends after response.completed
    streaming_switch = 'does not set "stream": true'
    tool_keys = ("tools", "tool_choice", "parallel_tool_calls", "max_tool_calls")

    def tools(self, body):
        tools = body.get("tools")
        if not isinstance(tools, list):
            return None
        return [
            Declared(t.get("name", MISSING), t.get("description", ""), t.get("parameters", MISSING), t.get("strict", MISSING))
            for t in tools
            if isinstance(t, Mapping)
        ]

    def max_tokens(self, body):
        return body.get("max_output_tokens", MISSING)

    def tool_choice(self, body):
        return body.get("tool_choice", MISSING)

    def expected_choice(self, form, names):
        if form == "auto":
            return ["auto", MISSING]
        if form in ("required", "none"):
            return [form]
        return [{"type": "function", "name": form["name"]}]

    def parallel_disabled(self, body):
        return body.get("parallel_tool_calls") is False

    def _items(self, body):
        items = body.get("input")
        return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []

    def echoed_calls(self, body):
        return [
            EchoedCall(i.get("call_id", MISSING), i.get("name", MISSING), _loads(i.get("arguments", MISSING)), i.get("arguments", MISSING))
            for i in self._items(body)
            if i.get("type") == "function_call"
        ]

    def results(self, body):
        return [
            SentResult(i.get("call_id", MISSING), None, _text_of(i.get("output")), None)
            for i in self._items(body)
            if i.get("type") == "function_call_output"
        ]

    def assistant_text(self, body):
        return "".join(_text_of(i.get("content")) for i in self._items(body) if i.get("role") == "assistant" and i.get("type", "message") == "message")

    def system(self, body):
        if isinstance(body.get("instructions"), str) and body["instructions"]:
            return body["instructions"]
        for i in self._items(body):
            if i.get("role") in ("system", "developer"):
                return _text_of(i.get("content"))
        return MISSING

    def user_images(self, body):
        return [
            _data_url(p.get("image_url"))
            for i in self._items(body) if i.get("role") == "user" and isinstance(i.get("content"), list)
            for p in i["content"] if isinstance(p, Mapping) and p.get("type") == "input_image"
        ]  # fmt: skip

    def reasoning_passed_back(self, body):
        return [
            (_text_of(i.get("summary")), i.get("encrypted_content", MISSING))
            for i in self._items(body)
            if i.get("type") == "reasoning"
        ]

    def stop_cases(self):
        return [
            StopCase("completed", frozenset({"stop"}), _TEXT),
            StopCase("completed+function_call", frozenset({"toolUse"}), _CALL),
            StopCase("incomplete:max_output_tokens", frozenset({"length"}), {"text": "Cut", "stop_reason": "length"}),
            StopCase("incomplete:content_filter", frozenset({"error"}), {"text": "Cut", "wire_stop_reason": "content_filter"}),
            StopCase("failed", frozenset({"error"}), {"text": "Par", "error": "The model failed"}),
        ]


# --- Anthropic Messages (§3) ----------------------------------------------------------------


class AnthropicWire(Wire):
    name = "anthropic"
    response_id = "message.id"
    overloaded_529 = True
    error_flag = "tool_result.is_error"
    call_id_prefix = "toolu_"
    error_types = ("invalid_request_error", "api_error")
    tool_keys = ("tools", "tool_choice")
    strict = "tools[].strict"
    terminal_event = b"event: message_stop"  # §3.4: the stream ends after message_stop
    streaming_switch = 'does not set "stream": true'

    def tools(self, body):
        tools = body.get("tools")
        if not isinstance(tools, list):
            return None
        return [
            Declared(t.get("name", MISSING), t.get("description", ""), t.get("input_schema", MISSING), t.get("strict", MISSING))
            for t in tools
            if isinstance(t, Mapping)
        ]

    def max_tokens(self, body):
        return body.get("max_tokens", MISSING)

    def tool_choice(self, body):
        choice = body.get("tool_choice", MISSING)
        if isinstance(choice, Mapping):
            return {k: v for k, v in choice.items() if k != "disable_parallel_tool_use"}
        return choice

    def expected_choice(self, form, names):
        if form == "auto":
            return [{"type": "auto"}, MISSING]
        if form == "required":
            return [{"type": "any"}]
        if form == "none":
            return [{"type": "none"}]
        return [{"type": "tool", "name": form["name"]}]

    def parallel_disabled(self, body):
        choice = body.get("tool_choice")
        return isinstance(choice, Mapping) and choice.get("disable_parallel_tool_use") is True

    def _blocks(self, body, role):
        for m in body.get("messages") or []:
            if isinstance(m, Mapping) and m.get("role") == role and isinstance(m.get("content"), list):
                yield from (b for b in m["content"] if isinstance(b, Mapping))

    def echoed_calls(self, body):
        return [
            EchoedCall(b.get("id", MISSING), b.get("name", MISSING), b.get("input", MISSING), b.get("input", MISSING))
            for b in self._blocks(body, "assistant")
            if b.get("type") == "tool_use"
        ]

    def results(self, body):
        return [
            SentResult(b.get("tool_use_id", MISSING), None, _text_of(b.get("content")), b.get("is_error", False) is True)
            for b in self._blocks(body, "user")
            if b.get("type") == "tool_result"
        ]

    def assistant_text(self, body):
        return "".join(b.get("text", "") for b in self._blocks(body, "assistant") if b.get("type") == "text")

    def system(self, body):
        system = body.get("system", MISSING)
        return system if system is MISSING else _text_of(system)

    def user_images(self, body):
        out = []
        for m in body.get("messages") or []:
            if isinstance(m, Mapping) and m.get("role") == "user" and isinstance(m.get("content"), list):
                for b in m["content"]:
                    if isinstance(b, Mapping) and b.get("type") == "image" and isinstance(b.get("source"), Mapping):
                        out.append((b["source"].get("media_type", MISSING), b["source"].get("data", MISSING)))
        return out

    def reasoning_passed_back(self, body):
        return [(b.get("thinking", MISSING), b.get("signature", MISSING)) for b in self._blocks(body, "assistant") if b.get("type") == "thinking"]

    def stop_cases(self):
        return [
            StopCase("end_turn", frozenset({"stop"}), _TEXT),
            _wire_stop("stop_sequence", {"stop"}),
            StopCase("tool_use", frozenset({"toolUse"}), _CALL),
            StopCase("max_tokens", frozenset({"length"}), {"text": "Cut", "stop_reason": "length"}),
            _wire_stop("pause_turn", {"stop"}),
            _wire_stop("refusal", {"error"}),
            _wire_stop("model_context_window_exceeded", {"length", "error"}),
        ]


# --- Gemini (§4) ----------------------------------------------------------------------------


class GeminiWire(Wire):
    name = "gemini"
    model_prefix = "models/"
    response_id = "responseId"
    cache_write = False
    parallel_knob = False
    fragments_arguments = False
    raw_arguments = False
    error_flag = "functionResponse.response.error"
    error_types = ("INVALID_ARGUMENT", "INTERNAL")
    tool_keys = ("tools", "toolConfig", "tool_config")
    terminal_event = b'"finishReason"'  # §4.4: no terminator; the last chunk carries finishReason
    streaming_switch = 'calls :generateContent, not :streamGenerateContent'

    def tools(self, body):
        tools = body.get("tools")
        if not isinstance(tools, list):
            return None
        out = []
        for t in tools:
            decls = t.get("functionDeclarations", t.get("function_declarations", [])) if isinstance(t, Mapping) else []
            for d in decls:
                params = MISSING
                for key in ("parametersJsonSchema", "parameters_json_schema", "parameters"):
                    if key in d:
                        params = d[key]
                        break
                out.append(Declared(d.get("name", MISSING), d.get("description", ""), params))
        return out

    def max_tokens(self, body):
        config = body.get("generationConfig", body.get("generation_config"))
        if not isinstance(config, Mapping):
            return MISSING
        return config.get("maxOutputTokens", config.get("max_output_tokens", MISSING))

    def tool_choice(self, body):
        config = body.get("toolConfig", body.get("tool_config", MISSING))
        if not isinstance(config, Mapping):
            return MISSING
        fcc = config.get("functionCallingConfig", config.get("function_calling_config", MISSING))
        if not isinstance(fcc, Mapping):
            return MISSING
        out = {"mode": fcc.get("mode", MISSING)}
        allowed = fcc.get("allowedFunctionNames", fcc.get("allowed_function_names"))
        if allowed is not None:
            out["allowedFunctionNames"] = allowed
        return out

    def expected_choice(self, form, names):
        if form == "auto":
            return [{"mode": "AUTO"}, MISSING]
        if form == "required":
            return [{"mode": "ANY"}, {"mode": "ANY", "allowedFunctionNames": list(names)}]
        if form == "none":
            return [{"mode": "NONE"}]
        return [{"mode": "ANY", "allowedFunctionNames": [form["name"]]}]

    def parallel_disabled(self, body):
        return False

    def _parts(self, body, role):
        for c in body.get("contents") or []:
            if isinstance(c, Mapping) and c.get("role") == role:
                yield from (p for p in c.get("parts") or [] if isinstance(p, Mapping))

    def echoed_calls(self, body):
        out = []
        for p in self._parts(body, "model"):
            fc = p.get("functionCall", p.get("function_call"))
            if isinstance(fc, Mapping):
                out.append(EchoedCall(fc.get("id"), fc.get("name", MISSING), fc.get("args", {}), fc.get("args", MISSING)))
        return out

    def results(self, body):
        out = []
        for p in self._parts(body, "user"):
            fr = p.get("functionResponse", p.get("function_response"))
            if isinstance(fr, Mapping):
                response = fr.get("response")
                text = json.dumps(response, ensure_ascii=False) if not isinstance(response, str) else response
                error = isinstance(response, Mapping) and "error" in response
                out.append(SentResult(fr.get("id"), fr.get("name", MISSING), text, error))
        return out

    def assistant_text(self, body):
        return "".join(p["text"] for p in self._parts(body, "model") if isinstance(p.get("text"), str) and not p.get("thought"))

    def system(self, body):
        si = body.get("systemInstruction", body.get("system_instruction", MISSING))
        if si is MISSING:
            return MISSING
        return _text_of(si.get("parts") if isinstance(si, Mapping) else si)

    def user_images(self, body):
        out = []
        for c in body.get("contents") or []:
            if isinstance(c, Mapping) and c.get("role", "user") == "user" and isinstance(c.get("parts"), list):
                for part in c["parts"]:
                    inline = part.get("inlineData", part.get("inline_data")) if isinstance(part, Mapping) else None
                    if isinstance(inline, Mapping):
                        out.append((inline.get("mimeType", inline.get("mime_type", MISSING)), inline.get("data", MISSING)))
        return out

    def reasoning_passed_back(self, body):
        out = []
        for p in self._parts(body, "model"):
            if "thoughtSignature" in p or "thought_signature" in p:
                out.append((p.get("text", MISSING), p.get("thoughtSignature", p.get("thought_signature"))))
        return out

    def stop_cases(self):
        cases = [
            StopCase("STOP", frozenset({"stop"}), _TEXT),
            StopCase("STOP+functionCall", frozenset({"toolUse"}), _CALL),
            StopCase("MAX_TOKENS", frozenset({"length"}), {"text": "Cut", "stop_reason": "length"}),
        ]
        for wire in ("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"):
            cases.append(_wire_stop(wire, {"error"}))
        why = "The answer was blocked (conformance)"  # finishMessage: the API's own words on the stop
        cases.append(StopCase("SAFETY+finishMessage", frozenset({"error"}), {"text": "Par", "stop_reason": "error", "error": f"SAFETY: {why}"}, message=why))
        return cases

    streamed_calls = "Vertex AI's streamFunctionCallArguments: willContinue functionCall parts carrying partialArgs (§4.4)"

    def stream_calls(self, chunks):
        out = []
        for chunk in chunks:
            data = _sse_json(chunk)
            parts = _candidate_parts(data)
            if not any(isinstance(p, Mapping) and isinstance(p.get("functionCall"), Mapping) for p in parts):
                out.append(chunk)
                continue
            pieces: list[list[dict[str, Any]]] = []
            for p in parts:
                pieces += _vertex_call(p) if isinstance(p.get("functionCall"), Mapping) else [[p]]
            for k, piece in enumerate(pieces):  # one chunk per part; the original's finishReason on the last
                copy = json.loads(json.dumps(data))
                cand = copy["candidates"][0]
                cand["content"]["parts"] = piece
                if k < len(pieces) - 1:
                    for key in ("finishReason", "finishMessage", "safetyRatings"):
                        cand.pop(key, None)
                out.append(b"data: " + json.dumps(copy, ensure_ascii=False).encode("utf-8") + b"\r\n\r\n")
        return out

    retried_stream_errors = (("INTERNAL", True), ("RESOURCE_EXHAUSTED", True), ("INVALID_ARGUMENT", False))  # code 500, 429, 400 (§4.5)
    blocked_prompts = "promptFeedback.blockReason in a chunk without candidates (§4.3)"

    def block_prompt(self, chunks, reason):
        first, last = _sse_json(chunks[0]), _sse_json(chunks[-1])
        prompt = (last.get("usageMetadata") or {}).get("promptTokenCount", 0)  # no answer: prompt tokens only
        usage = {"promptTokenCount": prompt, "totalTokenCount": prompt}
        data = {"promptFeedback": {"blockReason": reason}, "usageMetadata": usage, "modelVersion": first.get("modelVersion"), "responseId": first.get("responseId")}
        return [b"data: " + json.dumps(data, ensure_ascii=False).encode("utf-8") + b"\r\n\r\n"]

    unframed_errors = "google-genai joins bare JSON lines (no data: prefix) until the braces balance: how errors can arrive (§4.4)"

    def unframe_errors(self, chunks, *, in_array=False):
        out = []
        for chunk in chunks:
            data = _sse_json(chunk)
            if isinstance(data, Mapping) and "error" in data:  # alone, or in a one-element array as REST errors may be
                chunk = (json.dumps([data] if in_array else data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
            out.append(chunk)
        return out

    wrapped_error_body = "a one-element JSON array around the error object (§4.5)"

    def wrap_error_body(self, error):
        return [{"error": dict(error)}]

    calls_without_ids = True  # §4.7 #3
    part_signatures = "thoughtSignature on a thought, text or functionCall part, echoed on the same part (§4.3, §4.6)"

    def sign_text(self, chunks, signature):
        def edit(payloads: list[dict[str, Any]]) -> None:
            texts = [p for d in payloads for p in _candidate_parts(d) if isinstance(p, dict) and p.get("text") and not p.get("thought")]
            texts[-1]["thoughtSignature"] = signature

        return _rewrite(chunks, edit)

    total_beyond_counts = "usageMetadata.toolUsePromptTokenCount (the prompt of the model's built-in tools), which totalTokenCount includes"

    def add_to_total(self, chunks, tokens):
        def edit(payloads: list[dict[str, Any]]) -> None:
            usage = payloads[-1]["usageMetadata"]
            usage["toolUsePromptTokenCount"] = tokens
            usage["totalTokenCount"] += tokens

        return _rewrite(chunks, edit)

    stream_error_retry_info = "a google.rpc.RetryInfo detail (retryDelay) on the error object, as on an HTTP error (§4.5)"

    def with_retry_info(self, chunks, seconds):
        def edit(payloads: list[dict[str, Any]]) -> None:
            for d in payloads:
                if isinstance(d.get("error"), dict):
                    d["error"]["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{seconds}s"}]

        return _rewrite(chunks, edit)


def _sse_json(chunk: bytes) -> Any:
    """The JSON payload of one ``data:`` event (None when it has none)."""
    text = chunk.decode("utf-8").strip()
    if not text.startswith("data:"):
        return None
    try:
        return json.loads(text[5:])
    except ValueError:
        return None


def _rewrite(chunks: list[bytes], edit: Any) -> list[bytes]:
    """``edit`` (given the JSON objects, in order) applied to every ``data:`` event of a stream, or
    to a non-streamed answer's JSON body; the events are written back as Google writes them."""
    if not any(c.startswith(b"data:") for c in chunks):
        data = json.loads(b"".join(chunks))
        edit([data])
        return [json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")]
    payloads = [_sse_json(c) for c in chunks]
    edit([p for p in payloads if isinstance(p, dict)])
    return [c if p is None else b"data: " + json.dumps(p, ensure_ascii=False).encode("utf-8") + b"\r\n\r\n" for c, p in zip(chunks, payloads)]


def _candidate_parts(data: Any) -> list[Any]:
    try:
        parts = data["candidates"][0]["content"]["parts"]
    except (KeyError, IndexError, TypeError):
        return []
    return parts if isinstance(parts, list) else []


def _vertex_call(part: Mapping[str, Any]) -> list[list[dict[str, Any]]]:
    """One whole ``functionCall`` part as the parts Vertex streams it in: an opening part
    (name, id, signature, ``willContinue``), argument parts (strings in pieces of three characters,
    every value at its RFC 9535 path; two entries share a part where they can), and a closing
    empty ``functionCall``; a call with at most two entries in one part, and a call without
    arguments whole, with no ``args``."""
    fc = part["functionCall"]
    opening: dict[str, Any] = {"name": fc["name"], "willContinue": True}
    if "id" in fc:
        opening["id"] = fc["id"]
    first: dict[str, Any] = {"functionCall": opening}
    if "thoughtSignature" in part:
        first["thoughtSignature"] = part["thoughtSignature"]
    entries = [entry for path, value in _leaves("$", fc.get("args") or {}) for entry in _partial_args(path, value)]
    if not entries:  # a call without arguments comes whole, without args (a recorded Vertex stream)
        del opening["willContinue"]
        return [[first]]
    if len(entries) <= 2:  # a short call fits in one part, which does not continue
        del opening["willContinue"]
        opening["partialArgs"] = entries
        return [[first]]
    parts = [[first]]
    for i in range(0, len(entries), 2):
        parts.append([{"functionCall": {"partialArgs": entries[i : i + 2], "willContinue": True}}])
    return [*parts, [{"functionCall": {}}]]


def _leaves(path: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, Mapping):
        out = []
        for key, item in value.items():
            step = f".{key}" if key.isascii() and key.isidentifier() else "['" + key.replace("\\", "\\\\").replace("'", "\\'") + "']"
            out += _leaves(path + step, item)
        return out
    if isinstance(value, list):
        return [leaf for i, item in enumerate(value) for leaf in _leaves(f"{path}[{i}]", item)]
    return [(path, value)]


def _partial_args(path: str, value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        pieces = [value[i : i + 3] for i in range(0, len(value), 3)] or [""]
        return [{"jsonPath": path, "stringValue": p, **({"willContinue": True} if k < len(pieces) - 1 else {})} for k, p in enumerate(pieces)]
    if isinstance(value, bool):
        return [{"jsonPath": path, "boolValue": value}]
    if value is None:
        return [{"jsonPath": path, "nullValue": None}]
    return [{"jsonPath": path, "numberValue": value}]


# --- Bedrock Converse (§5) ------------------------------------------------------------------


class BedrockWire(Wire):
    name = "bedrock"
    reports_model = False  # a Converse answer does not name its model
    parallel_knob = False
    error_flag = 'toolResult.status="error"'
    call_id_prefix = "tooluse_"
    error_types = ("ValidationException", "internalServerException")
    unsigned_reasoning = True  # DeepSeek-R1's reasoningText has no signature (§5.8 #6)
    throttling_shape = "ThrottlingException"  # AWS's common errors: HTTP 400 as well as 429 (§5.5)
    plain_body_error_type = "ValidationException"  # x-amzn-errortype comes with every error (§5.5)
    tool_keys = ("toolConfig",)
    strict = "toolConfig.tools[].toolSpec.strict"
    terminal_event = b"\x0bmessageStop"  # §5.4: the :event-type header value of messageStop
    model_id = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.amazon.nova-micro-v1:0"  # §5.1: encoded with no safe characters
    # ConverseStreamOutput's exception members and their modelled status (service-2.json, §5.5)
    stream_exceptions = (
        ("throttlingException", "RateLimitError"),  # 429
        ("serviceUnavailableException", "ServerError"),  # 503
        ("internalServerException", "ServerError"),  # 500
        ("modelStreamErrorException", "ProviderError"),  # 424, as ModelErrorException
        ("validationException", "BadRequestError"),  # 400
    )

    def error_forms(self):
        quoted = '"sim-model"'
        return [
            ErrorForm(
                "x-amzn-errortype as a shape id with its namespace and a URI (§5.5)",
                {"status": 400, "error_type": "com.amazonaws.bedrockruntime#ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/",
                 "message": f"The provided model identifier {quoted} is invalid."},
                "BadRequestError", "ValidationException", f"The provided model identifier {quoted} is invalid.",
            ),
            ErrorForm(
                "an AWS front end's body with a capitalised Message",
                {"status": 403, "error_type": "AccessDeniedException",
                 "body": {"Message": f"User: arn:aws:iam::123456789012:user/conformance is not authorized to perform: bedrock:InvokeModelWithResponseStream on resource: {quoted}"}},
                "PermissionDeniedError", "AccessDeniedException",
                f"User: arn:aws:iam::123456789012:user/conformance is not authorized to perform: bedrock:InvokeModelWithResponseStream on resource: {quoted}",
            ),
            ErrorForm(
                "ResourceNotFoundException",
                {"status": 404, "error_type": "ResourceNotFoundException", "message": f"Model {quoted} was not found."},
                "NotFoundError", "ResourceNotFoundException", f"Model {quoted} was not found.",
            ),
            # no x-amzn-errortype: restJson1 clients read the shape from the body (botocore:
            # code, then Code, then __type, namespaced like the header)
            ErrorForm(
                "no x-amzn-errortype header, the shape in the body's namespaced __type",
                {"status": 400, "error_type": "com.amazonaws.bedrockruntime#ValidationException",
                 "message": f"The provided model identifier {quoted} is invalid."},
                "BadRequestError", "ValidationException", f"The provided model identifier {quoted} is invalid.",
                {"errortype_header": False},
            ),
            ErrorForm(
                "no x-amzn-errortype header, the shape in the body's code",
                {"status": 403, "body": {"code": "AccessDeniedException", "message": f"You don't have access to the model {quoted}."}},
                "PermissionDeniedError", "AccessDeniedException", f"You don't have access to the model {quoted}.",
                {"errortype_header": False},
            ),
            ErrorForm(
                "no x-amzn-errortype header, the shape in the body's capitalised Code",
                {"status": 404, "body": {"Code": "ResourceNotFoundException", "Message": f"Model {quoted} was not found."}},
                "NotFoundError", "ResourceNotFoundException", f"Model {quoted} was not found.",
                {"errortype_header": False},
            ),
        ]  # fmt: skip

    def server_tool_events(self, first_index):
        # a server-side tool: toolUse start with type server_tool_use, then a toolResult block (§5.8 #7)
        from loopkit.simulators import _eventstream

        use, result = first_index, first_index + 1
        payloads = [
            ("contentBlockStart", {"contentBlockIndex": use, "start": {"toolUse": {"toolUseId": "srvtoolu_cnf01", "name": "web_search", "type": "server_tool_use"}}}),
            ("contentBlockDelta", {"contentBlockIndex": use, "delta": {"toolUse": {"input": '{"query": "weather Paris"}'}}}),
            ("contentBlockStop", {"contentBlockIndex": use}),
            ("contentBlockStart", {"contentBlockIndex": result, "start": {"toolResult": {"toolUseId": "srvtoolu_cnf01", "type": "web_search_result", "status": "success"}}}),
            ("contentBlockDelta", {"contentBlockIndex": result, "delta": {"toolResult": [{"text": "Paris: 18 C, clear"}]}}),
            ("contentBlockStop", {"contentBlockIndex": result}),
        ]  # fmt: skip
        return [_eventstream.event(name, _eventstream.json_bytes(payload)) for name, payload in payloads]

    def with_server_tool_body(self, body):
        blocks = [
            {"toolUse": {"toolUseId": "srvtoolu_cnf01", "name": "web_search", "input": {"query": "weather Paris"}, "type": "server_tool_use"}},
            {"toolResult": {"toolUseId": "srvtoolu_cnf01", "content": [{"text": "Paris: 18 C, clear"}], "status": "success", "type": "web_search_result"}},
        ]
        body["output"]["message"]["content"][:0] = blocks  # the server searched before it answered
        return body

    def bare_exception_event(self, member):
        # every member of ConverseStreamOutput's exceptions has an optional message (service-2.json, §5.6)
        from loopkit.simulators import _eventstream

        return _eventstream.exception(member, b"{}")

    def generic_error_event(self, code, message):
        # an event-stream message of type error: :error-code and :error-message headers, no payload (§5.6)
        from loopkit.simulators import _eventstream

        return _eventstream.frame(((":message-type", "error"), (":error-code", code), (":error-message", message)), b"")
    streaming_switch = 'calls /converse, not /converse-stream'

    def tools(self, body):
        config = body.get("toolConfig")
        if not isinstance(config, Mapping) or not isinstance(config.get("tools"), list):
            return None
        out = []
        for t in config["tools"]:
            spec = t.get("toolSpec", {}) if isinstance(t, Mapping) else {}
            schema = spec.get("inputSchema", {})
            params = schema.get("json", MISSING) if isinstance(schema, Mapping) else MISSING
            out.append(Declared(spec.get("name", MISSING), spec.get("description", ""), params, spec.get("strict", MISSING)))
        return out

    def max_tokens(self, body):
        config = body.get("inferenceConfig")
        return config.get("maxTokens", MISSING) if isinstance(config, Mapping) else MISSING

    def tool_choice(self, body):
        config = body.get("toolConfig")
        if not isinstance(config, Mapping):
            return "<no toolConfig>"
        return config.get("toolChoice", MISSING)

    def expected_choice(self, form, names):
        if form == "auto":
            return [{"auto": {}}, MISSING]
        if form == "required":
            return [{"any": {}}]
        if form == "none":
            return ["<no toolConfig>"]  # Converse has no `none` member: omit toolConfig (§5.2)
        return [{"tool": {"name": form["name"]}}]

    def parallel_disabled(self, body):
        return False

    def _blocks(self, body, role):
        for m in body.get("messages") or []:
            if isinstance(m, Mapping) and m.get("role") == role and isinstance(m.get("content"), list):
                yield from (b for b in m["content"] if isinstance(b, Mapping))

    def echoed_calls(self, body):
        out = []
        for b in self._blocks(body, "assistant"):
            tu = b.get("toolUse")
            if isinstance(tu, Mapping):
                out.append(EchoedCall(tu.get("toolUseId", MISSING), tu.get("name", MISSING), tu.get("input", MISSING), tu.get("input", MISSING)))
        return out

    def results(self, body):
        out = []
        for b in self._blocks(body, "user"):
            tr = b.get("toolResult")
            if isinstance(tr, Mapping):
                out.append(SentResult(tr.get("toolUseId", MISSING), None, _text_of(tr.get("content")), tr.get("status") == "error"))
        return out

    def assistant_text(self, body):
        return "".join(b["text"] for b in self._blocks(body, "assistant") if isinstance(b.get("text"), str))

    def system(self, body):
        system = body.get("system", MISSING)
        return system if system is MISSING else _text_of(system)

    def user_images(self, body):
        out = []
        for b in self._blocks(body, "user"):
            image = b.get("image")
            if isinstance(image, Mapping):
                fmt, source = image.get("format", MISSING), image.get("source")
                out.append((f"image/{fmt}" if isinstance(fmt, str) else fmt, source.get("bytes", MISSING) if isinstance(source, Mapping) else MISSING))
        return out

    def reasoning_passed_back(self, body):
        out = []
        for b in self._blocks(body, "assistant"):
            rt = (b.get("reasoningContent") or {}).get("reasoningText") if isinstance(b.get("reasoningContent"), Mapping) else None
            if isinstance(rt, Mapping):
                out.append((rt.get("text", MISSING), rt.get("signature", MISSING)))
        return out

    def stop_cases(self):
        def wire(reason: str, expected: set[str], turn: Mapping[str, Any] = _TEXT) -> StopCase:
            # an error stop's error_type is the wire reason (§0.2): the only place that says which
            return replace(_wire_stop(reason, expected, turn), error_type=reason if "error" in expected else None)

        return [
            wire("end_turn", {"stop"}),
            wire("stop_sequence", {"stop"}),
            wire("tool_use", {"toolUse"}, _CALL),
            wire("max_tokens", {"length"}),
            wire("model_context_window_exceeded", {"length", "error"}),
            wire("guardrail_intervened", {"error"}),
            wire("content_filtered", {"error"}),
            wire("malformed_tool_use", {"error"}),
            wire("malformed_model_output", {"error"}),
        ]


class BedrockNoResultStatusWire(BedrockWire):
    """Bedrock with a model family that does not take ``toolResult.status`` (§5.7: the API
    reference lists it for Claude and Nova; a Writer Palmyra model refuses it): the simulator
    refuses the field, and an error result travels as its text, which says it is an error."""

    variant = "no-tool-result-status"
    error_flag = "the result's text says 'error' (no toolResult.status)"
    error_in_text = True
    sim_options: Mapping[str, Any] = {"tool_result_status": False}

    def results(self, body):
        return [replace(r, error=says_error(r.text)) for r in super().results(body)]


def says_error(text: str) -> bool:
    """Whether a result's text says it is an error: the word ``error``, in any case."""
    return re.search(r"\berror\b", text, re.IGNORECASE) is not None


WIRES: dict[str, Wire] = {w.name: w for w in (OpenAIChatWire(), OpenAIResponsesWire(), AnthropicWire(), GeminiWire(), BedrockWire())}
PROTOCOLS: tuple[str, ...] = tuple(WIRES)
VARIANTS: dict[str, dict[str, Wire]] = {"bedrock": {"no-tool-result-status": BedrockNoResultStatusWire()}}
"""protocol -> variant name -> the wire of that model family (``Suite(variant=...)``)."""
