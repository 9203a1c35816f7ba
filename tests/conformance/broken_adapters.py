"""Deliberately broken adapters: each plants one bug the conformance suite must catch.

Each is a subclass of a real adapter with one hook bent. Stream bugs wrap the adapter's own
stream decoder (so they work over any built-in adapter); request bugs edit the body the adapter
built. ``BROKEN`` maps a factory name to (factory, protocol, the case ids that must fail).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from loopkit.events import (
    DoneEvent,
    ErrorEvent,
    StreamEvent,
    TextEndEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from loopkit.messages import ToolCall
from loopkit.providers import adapter_class


class _FilteringDecoder:
    """Wraps a stream decoder, passing every batch of events through ``bend``."""

    def __init__(self, inner: Any, bend: Callable[[list[StreamEvent]], list[StreamEvent]]) -> None:
        self.inner, self.bend = inner, bend

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        return self.bend(self.inner.feed(chunk))

    def close(self) -> list[StreamEvent]:
        return self.bend(self.inner.close())


def _stream_bug(base: type, bend_factory: Callable[[], Callable[[list[StreamEvent]], list[StreamEvent]]], name: str) -> type:
    def stream_decoder(self: Any) -> Any:
        return _FilteringDecoder(base.stream_decoder(self), bend_factory())

    return type(name, (base,), {"stream_decoder": stream_decoder})


def drops_second_call() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Keeps only the first tool call of an answer."""
    calls: list[int] = []  # content indexes of the calls, in order

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        out = []
        for e in events:
            if isinstance(e, (ToolCallStartEvent, ToolCallEndEvent)) and e.content_index not in calls:
                calls.append(e.content_index)
            if len(calls) > 1 and getattr(e, "content_index", None) == calls[1]:
                continue
            out.append(e)
        return out

    return bend


def repeats_call_id() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Gives every tool call the id of the first."""
    state: dict[str, Any] = {"first": None}

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        for e in events:
            if isinstance(e, ToolCallStartEvent):
                state["first"] = state["first"] or e.id
                e.id = state["first"]
            elif isinstance(e, ToolCallEndEvent) and e.tool_call is not None:
                state["first"] = state["first"] or e.tool_call.id
                e.tool_call.id = state["first"]
        return events

    return bend


def ids_by_position() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Names a call the wire sent without an id ``call_<index>_<name>`` (so ids repeat across a
    run's model calls: OpenProgram's Gemini adapter, docs/loop-contract.md §7.4). Gemini's adapter marks
    the ids it makes up with ``gcall_``."""

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        for e in events:
            if isinstance(e, ToolCallStartEvent) and e.id.startswith("gcall_"):
                e.id = f"call_{e.content_index}_{e.name}"
            elif isinstance(e, ToolCallEndEvent) and e.tool_call is not None and e.tool_call.id.startswith("gcall_"):
                e.tool_call.id = f"call_{e.content_index}_{e.tool_call.name}"
        return events

    return bend


def malformed_to_empty() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Turns argument text that is not JSON into ``{}`` (the classic ``parse(...) or {}``)."""
    starts: dict[int, ToolCallStartEvent] = {}
    fragments: dict[int, list[str]] = {}

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for e in events:
            if isinstance(e, ToolCallStartEvent):
                starts[e.content_index], fragments[e.content_index] = e, []
            elif isinstance(e, ToolCallDeltaEvent):
                fragments[e.content_index].append(e.delta)
            elif isinstance(e, ToolCallEndEvent) and e.tool_call is None and e.content_index in starts:
                text = "".join(fragments.pop(e.content_index))
                try:
                    json.loads(text or "{}")
                except ValueError:
                    start = starts[e.content_index]
                    e = ToolCallEndEvent(content_index=e.content_index, tool_call=ToolCall(id=start.id, name=start.name, arguments={}))
            out.append(e)
        return out

    return bend


def stops_at_first_text() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Ignores every block after the first text block ends (keeps the terminal event)."""
    state = {"done": False}

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        out = []
        for e in events:
            if state["done"] and not isinstance(e, (DoneEvent, ErrorEvent)):
                continue
            out.append(e)
            if isinstance(e, TextEndEvent):
                state["done"] = True
        return out

    return bend


def keys_calls_by_name() -> Callable[[list[StreamEvent]], list[StreamEvent]]:
    """Keeps one call per tool name (calls collected in a dict keyed by name): a second call of
    the same tool in one answer is lost."""
    first_by_name: dict[str, int] = {}
    dropped: set[int] = set()

    def bend(events: list[StreamEvent]) -> list[StreamEvent]:
        out = []
        for e in events:
            name = e.name if isinstance(e, ToolCallStartEvent) else (e.tool_call.name if isinstance(e, ToolCallEndEvent) and e.tool_call is not None else None)
            if name is not None and first_by_name.setdefault(name, e.content_index) != e.content_index:
                dropped.add(e.content_index)
            if getattr(e, "content_index", None) in dropped:
                continue
            out.append(e)
        return out

    return bend


class _EndsEarlyAsStop:
    """Wraps a stream decoder: a body that ends before the terminal event ends as a normal stop
    (the classic ``for line in body: ...`` loop that never asks whether the end came)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.open: dict[int, Any] = {}

    def _track(self, events: list[StreamEvent]) -> list[StreamEvent]:
        for e in events:
            index = getattr(e, "content_index", None)
            if e.type.endswith("_start"):
                self.open[index] = e
            elif e.type.endswith("_end"):
                self.open.pop(index, None)
        return events

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        return self._track(self.inner.feed(chunk))

    def close(self) -> list[StreamEvent]:
        from loopkit.errors import ConnectionClosedError
        from loopkit.events import ThinkingEndEvent

        try:
            return self._track(self.inner.close())
        except ConnectionClosedError:
            out: list[StreamEvent] = []
            for index, start in sorted(self.open.items()):
                if isinstance(start, ToolCallStartEvent):
                    out.append(ToolCallEndEvent(content_index=index))
                elif start.type == "thinking_start":
                    out.append(ThinkingEndEvent(content_index=index))
                else:
                    out.append(TextEndEvent(content_index=index))
            return out + [DoneEvent(reason="stop")]


def _ends_early_as_stop(base: type) -> type:
    def stream_decoder(self: Any) -> Any:
        return _EndsEarlyAsStop(base.stream_decoder(self))

    return type(f"EndsEarlyAsStop{base.__name__}", (base,), {"stream_decoder": stream_decoder})


def _request_bug(base: type, edit: Callable[[dict[str, Any]], None], name: str) -> type:
    def build_request(self: Any, request: Any) -> Any:
        call = base.build_request(self, request)
        edit(call.json)
        return call

    return type(name, (base,), {"build_request": build_request})


def _required_to_auto(protocol: str) -> Callable[[dict[str, Any]], None]:
    """Sends ``required`` as the protocol's ``auto``."""

    def edit(body: dict[str, Any]) -> None:
        if protocol in ("openai_chat", "openai_responses") and body.get("tool_choice") == "required":
            body["tool_choice"] = "auto"
        elif protocol == "anthropic" and (body.get("tool_choice") or {}).get("type") == "any":
            body["tool_choice"]["type"] = "auto"
        elif protocol == "gemini":
            fcc = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
            if fcc.get("mode") == "ANY" and len(fcc.get("allowedFunctionNames") or [None, None]) > 1:
                fcc["mode"] = "AUTO"
                fcc.pop("allowedFunctionNames", None)
        elif protocol == "bedrock" and (body.get("toolConfig") or {}).get("toolChoice") == {"any": {}}:
            body["toolConfig"]["toolChoice"] = {"auto": {}}

    return edit


def _loses_is_error(protocol: str) -> Callable[[dict[str, Any]], None]:
    """Drops the error flag of tool results (the protocols that have one)."""

    def edit(body: dict[str, Any]) -> None:
        for m in body.get("messages", body.get("contents", [])):
            for b in m.get("content", m.get("parts", [])) if isinstance(m.get("content", m.get("parts")), list) else []:
                if protocol == "anthropic" and b.get("type") == "tool_result":
                    b.pop("is_error", None)
                elif protocol == "bedrock":
                    b.get("toolResult", {}).pop("status", None)
                elif protocol == "gemini" and "functionResponse" in b:
                    response = b["functionResponse"].get("response", {})
                    if "error" in response:
                        response["output"] = response.pop("error")

    return edit


# where each protocol keeps (call id, tool name) of echoed calls, and the call id of a result
_CALLS: dict[str, Callable[[dict[str, Any]], list[dict[str, Any]]]] = {
    "openai_chat": lambda body: [c for m in body.get("messages", []) if m.get("role") == "assistant" for c in m.get("tool_calls") or []],
    "openai_responses": lambda body: [i for i in body.get("input", []) if i.get("type") == "function_call"],
    "anthropic": lambda body: [b for m in body.get("messages", []) if isinstance(m.get("content"), list) for b in m["content"] if b.get("type") == "tool_use"],
    "gemini": lambda body: [p["functionCall"] for c in body.get("contents", []) for p in c.get("parts", []) if "functionCall" in p],
    "bedrock": lambda body: [b["toolUse"] for m in body.get("messages", []) for b in m.get("content", []) if "toolUse" in b],
}
_RESULTS: dict[str, Callable[[dict[str, Any]], list[dict[str, Any]]]] = {
    "openai_chat": lambda body: [m for m in body.get("messages", []) if m.get("role") == "tool"],
    "openai_responses": lambda body: [i for i in body.get("input", []) if i.get("type") == "function_call_output"],
    "anthropic": lambda body: [b for m in body.get("messages", []) if isinstance(m.get("content"), list) for b in m["content"] if b.get("type") == "tool_result"],
    "gemini": lambda body: [p["functionResponse"] for c in body.get("contents", []) for p in c.get("parts", []) if "functionResponse" in p],
    "bedrock": lambda body: [b["toolResult"] for m in body.get("messages", []) for b in m.get("content", []) if "toolResult" in b],
}
_ID_KEY = {"openai_chat": ("id", "tool_call_id"), "openai_responses": ("call_id", "call_id"), "anthropic": ("id", "tool_use_id"), "gemini": ("id", "id"), "bedrock": ("toolUseId", "toolUseId")}


def _pairs_results_by_name(protocol: str) -> Callable[[dict[str, Any]], None]:
    """Looks up the call a result answers by the tool's name: the first call of that name wins."""
    call_key, result_key = _ID_KEY[protocol]

    def name_of(c: dict[str, Any]) -> str:
        return c.get("name") or c.get("function", {}).get("name")

    def edit(body: dict[str, Any]) -> None:
        calls = _CALLS[protocol](body)
        name_by_id = {c.get(call_key): name_of(c) for c in calls}
        first_id: dict[str, Any] = {}
        for c in calls:
            first_id.setdefault(name_of(c), c.get(call_key))
        for r in _RESULTS[protocol](body):
            name = r.get("name") or name_by_id.get(r.get(result_key))
            if name in first_id and first_id[name] is not None:
                r[result_key] = first_id[name]

    return edit


def _wrong_arguments_type(protocol: str) -> Callable[[dict[str, Any]], None]:
    """Echoes arguments in the other JSON type: an object on OpenAI, a string of JSON elsewhere."""

    def edit(body: dict[str, Any]) -> None:
        for c in _CALLS[protocol](body):
            holder, key = (c["function"], "arguments") if protocol == "openai_chat" else (c, "arguments" if protocol == "openai_responses" else "args" if protocol == "gemini" else "input")
            value = holder.get(key)
            holder[key] = json.loads(value or "{}") if isinstance(value, str) else json.dumps(value)

    return edit


def _ignores_max_tokens(protocol: str) -> Callable[[dict[str, Any]], None]:
    """Sends no answer-length cap (or, on Anthropic where one is required, always its default)."""

    def edit(body: dict[str, Any]) -> None:
        if protocol == "anthropic":
            body["max_tokens"] = 4096
        for key in ("max_completion_tokens", "max_output_tokens", "generationConfig", "inferenceConfig"):
            body.pop(key, None)

    return edit


def _strict_always_false(protocol: str) -> Callable[[dict[str, Any]], None]:
    """Declares every tool non-strict, whatever ToolSpec.strict says."""

    def edit(body: dict[str, Any]) -> None:
        tools = body.get("toolConfig", {}).get("tools", []) if protocol == "bedrock" else body.get("tools", [])
        for t in tools:
            holder = t["function"] if protocol == "openai_chat" else t["toolSpec"] if protocol == "bedrock" else t
            holder["strict"] = False

    return edit


def _json_only_errors(base: type) -> type:
    """Reads every error body as JSON, so a plain-text one becomes a decoding error."""

    def map_error(self: Any, status: int, headers: Any, body: bytes) -> Any:
        json.loads(body)
        return base.map_error(self, status, headers, body)

    return type(f"JsonOnlyErrors{base.__name__}", (base,), {"map_error": map_error})


def _ignores_retry_after(base: type) -> type:
    def map_error(self: Any, status: int, headers: Any, body: bytes) -> Any:
        err = base.map_error(self, status, headers, body)
        err.retry_after = None
        return err

    return type(f"IgnoresRetryAfter{base.__name__}", (base,), {"map_error": map_error})


def _factory_for(cls: type) -> Callable[..., Any]:
    def factory(*, transport: Any = None, base_url: str | None = None, retry: Any = None) -> Any:
        kwargs: dict[str, Any] = {"model": "sim-model", "api_key": "sim-key", "transport": transport, "retry": retry}
        if base_url is not None:
            kwargs["base_url"] = base_url
        return cls(**kwargs)

    return factory


def broken(bug: str, protocol: str) -> Callable[..., Any]:
    """A factory for the adapter of ``protocol`` with ``bug`` planted."""
    base = adapter_class(protocol)
    stream_bugs = {
        "drops_second_call": drops_second_call,
        "repeats_call_id": repeats_call_id,
        "malformed_to_empty": malformed_to_empty,
        "stops_at_first_text": stops_at_first_text,
        "ids_by_position": ids_by_position,
        "keys_calls_by_name": keys_calls_by_name,
    }
    request_bugs = {
        "required_to_auto": _required_to_auto,
        "loses_is_error": _loses_is_error,
        "pairs_results_by_name": _pairs_results_by_name,
        "wrong_arguments_type": _wrong_arguments_type,
        "ignores_max_tokens": _ignores_max_tokens,
        "strict_always_false": _strict_always_false,
    }
    if bug in stream_bugs:
        cls = _stream_bug(base, stream_bugs[bug], f"{bug}_{protocol}")
    elif bug in request_bugs:
        cls = _request_bug(base, request_bugs[bug](protocol), f"{bug}_{protocol}")
    elif bug == "ignores_retry_after":
        cls = _ignores_retry_after(base)
    elif bug == "json_only_errors":
        cls = _json_only_errors(base)
    elif bug == "ends_early_as_stop":
        cls = _ends_early_as_stop(base)
    else:
        raise ValueError(f"no planted bug {bug!r}")
    return _factory_for(cls)


ALL = ("openai_chat", "openai_responses", "anthropic", "gemini", "bedrock")
TEXT_THEN_CALL = {"stream.text_then_tool_call", "stream.text_then_parallel_calls", "stream.unicode", "stream.utf8_split", "stream.ends_at_terminal"}  # every case with text before a call

# (bug, protocol) -> the case ids that must fail, and only those. A bug is planted only where the
# protocol can express it: OpenAI has no error flag to lose; Gemini never carries broken JSON.
EXPECTED: dict[tuple[str, str], set[str]] = {
    **{("drops_second_call", p): {"stream.parallel_calls", "stream.same_tool_twice", "stream.text_then_parallel_calls"} for p in ALL},
    **{("repeats_call_id", p): {"stream.parallel_calls", "stream.same_tool_twice", "stream.text_then_parallel_calls"} for p in ALL},
    **{("stops_at_first_text", p): TEXT_THEN_CALL for p in ALL},
    # Anthropic's wire-form cases also answer with text before a call
    ("stops_at_first_text", "anthropic"): TEXT_THEN_CALL | {"stream.block_start_content", "stream.server_tool_blocks"},
    **{("ignores_retry_after", p): {"failure.http_429_retry_after"} for p in ALL},
    **{("required_to_auto", p): {"request.tool_choice.required"} for p in ("gemini", "bedrock")},
    # where the protocol has a parallel knob, that case also sends `required` (with parallel calls off)
    **{("required_to_auto", p): {"request.tool_choice.required", "request.parallel.disabled"} for p in ("openai_chat", "openai_responses", "anthropic")},
    **{("loses_is_error", p): {"request.history.is_error"} for p in ("anthropic", "gemini", "bedrock")},
    ("ids_by_position", "gemini"): {"stream.ids_across_calls"},
    **{("malformed_to_empty", p): {"stream.arguments.malformed", "stream.length_mid_call"} for p in ("openai_chat", "openai_responses", "anthropic", "bedrock")},
    **{("keys_calls_by_name", p): {"stream.same_tool_twice"} for p in ALL},
    **{("ends_early_as_stop", p): {"failure.ends_early"} for p in ALL},
    **{("pairs_results_by_name", p): {"request.history.same_tool_twice"} for p in ALL},
    **{("wrong_arguments_type", p): {"request.history.argument_types"} for p in ALL},
    **{("ignores_max_tokens", p): {"request.max_tokens"} for p in ALL},
    **{("json_only_errors", p): {"failure.error_body_not_json", "failure.proxy_error_untyped"} for p in ALL},
    **{("strict_always_false", p): {"request.tools.strict"} for p in ALL if p != "gemini"},  # Gemini has no strict
}

# Cases that meet the same bug through another wire form or history shape: Vertex's streamed calls
# (text, then four calls, three of one tool, then a body cut inside one) and results given in reverse call order.
for _bug in ("drops_second_call", "repeats_call_id", "stops_at_first_text", "ends_early_as_stop", "keys_calls_by_name"):
    EXPECTED[_bug, "gemini"] = EXPECTED[_bug, "gemini"] | {"stream.streamed_call_form"}  # a new set: rows may share one
for _p in ALL:
    EXPECTED["repeats_call_id", _p] = EXPECTED["repeats_call_id", _p] | {"request.history.results_out_of_order"}
# The OpenAI forms: a loop against a Chat server that sends reasoning (text then two calls, their
# results echoed), Chat calls whose every fragment repeats the id (text then two calls), a
# Responses stream whose items are never closed (text then a call), and a stream cut off
# half-way, which must fail.
EXPECTED["stops_at_first_text", "openai_chat"] = EXPECTED["stops_at_first_text", "openai_chat"] | {"stream.thinking.reasoning_fields", "stream.tool_call_ids_repeated"}
EXPECTED["drops_second_call", "openai_chat"] = EXPECTED["drops_second_call", "openai_chat"] | {"stream.thinking.reasoning_fields", "stream.tool_call_ids_repeated"}
EXPECTED["repeats_call_id", "openai_chat"] = EXPECTED["repeats_call_id", "openai_chat"] | {"stream.tool_call_ids_repeated"}
EXPECTED["pairs_results_by_name", "openai_chat"] = EXPECTED["pairs_results_by_name", "openai_chat"] | {"stream.thinking.reasoning_fields"}  # two rounds call get_time
EXPECTED["stops_at_first_text", "openai_responses"] = EXPECTED["stops_at_first_text", "openai_responses"] | {"stream.items_left_open"}
# text before a call or before more reasoning, in an unterminated, spliced or interleaved stream
# (Anthropic's adapter drops a last event whose blank line never came, as the SDK does: that case then sees a closed stream)
for _p, _more in (("openai_chat", {"stream.thinking.after_text", "stream.last_event_unterminated"}), ("openai_responses", {"stream.reasoning.two_items", "stream.last_event_unterminated"}),
                  ("anthropic", {"stream.spliced_message_start"}), ("gemini", {"stream.last_event_unterminated"})):
    EXPECTED["stops_at_first_text", _p] = EXPECTED["stops_at_first_text", _p] | _more
EXPECTED["wrong_arguments_type", "openai_chat"] = EXPECTED["wrong_arguments_type", "openai_chat"] | {"stream.thinking.reasoning_fields"}
for _p in ALL:
    EXPECTED["ends_early_as_stop", _p] = EXPECTED["ends_early_as_stop", _p] | {"stream.events.as_they_arrive"}
    EXPECTED["ignores_retry_after", _p] = EXPECTED["ignores_retry_after", _p] | {"failure.retry_after_header"}
    if _p != "openai_chat":  # thinking, text and a call: the text is the second block
        EXPECTED["stops_at_first_text", _p] = EXPECTED["stops_at_first_text", _p] | {"stream.events.tool_calls"}
    if _p != "gemini":  # without ids, Gemini pairs results by name and order, which this bug keeps
        EXPECTED["pairs_results_by_name", _p] = EXPECTED["pairs_results_by_name", _p] | {"request.history.results_out_of_order"}

# A request the real API rejects may also be refused by a simulator that checks what the API
# checks; then every case sending that request fails too, which is right, not a second bug.
EXPECTED["stops_at_first_text", "bedrock"] = TEXT_THEN_CALL | {"stream.server_tool_calls", "stream.events.tool_calls"}  # text, a call, then the server's tool

# stream.one_read answers with text then two calls; Gemini's round trips (part signatures, a
# resumed history) answer with two calls and echo them with their ids
for _p in ALL:
    for _bug in ("drops_second_call", "stops_at_first_text"):
        EXPECTED[_bug, _p] = EXPECTED[_bug, _p] | {"stream.one_read"}
for _bug, _cases in (("drops_second_call", {"request.history.part_signatures"}), ("repeats_call_id", {"request.history.part_signatures"}),
                     ("stops_at_first_text", {"request.history.part_signatures"}), ("ends_early_as_stop", {"failure.unframed_error"}),  # a body ending inside an unframed error
                     ("ids_by_position", {"request.history.part_signatures", "stream.ids_resumed"})):  # fmt: skip
    EXPECTED[_bug, "gemini"] = EXPECTED[_bug, "gemini"] | _cases
# Gemini answers a failed answer's unrun call with an error result of its own, which this bug sends as an output
EXPECTED["loses_is_error", "gemini"] = EXPECTED["loses_is_error", "gemini"] | {"request.history.failed_answer_result"}

MAY_ALSO_FAIL: dict[tuple[str, str], set[str]] = {
    **{
        ("wrong_arguments_type", p): {
            "request.history.tool_calls",
            "request.history.results",
            "request.history.is_error",
            "request.history.empty_error_result",
            "request.history.same_tool_twice",
            "request.history.unparsed_arguments",
            "request.tool_choice.none_after_tool_round",
            # requests whose history holds a call: the simulators reject the wrong type with a 400
            "request.reasoning.passback",
            "stream.ids_across_calls",
            "request.history.call_item_ids",
            "request.user_content",
            "request.history.result_parts",
            "request.history.results_out_of_order",
            "request.history.rounds",
            "request.history.failed_answer",  # where the failed answer's call is echoed (Gemini answers it itself)
            "request.history.opaque_ids",
            "request.history.empty_text_before_call",
            "request.history.empty_result",
        }
        for p in ALL
    },
}

MAY_ALSO_FAIL["wrong_arguments_type", "gemini"] = MAY_ALSO_FAIL["wrong_arguments_type", "gemini"] | {"request.history.part_signatures", "stream.ids_resumed"}

# named factories for the CLI and the pytest plugin (``broken_adapters:loses_is_error_factory``)
loses_is_error_factory = broken("loses_is_error", "bedrock")
required_to_auto_factory = broken("required_to_auto", "bedrock")
