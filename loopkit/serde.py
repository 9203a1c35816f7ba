"""Plain-data dump and load for messages, tool specs and model requests.

``dump_*`` turns loopkit's dataclasses into JSON data (dicts, lists, strings, numbers); fields
that hold their default value are left out so that cassettes and snapshots stay short. ``load_*``
is the exact inverse and is strict: an unknown key, a missing field or a value of the wrong type
raises :class:`~loopkit.errors.SerdeError` naming the path (``messages[2].content[0].text``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from .errors import SerdeError
from .messages import (
    STOP_REASONS,
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UsageCost,
    UserMessage,
)
from .provider import ModelRequest, ToolSpec

_BLOCKS: dict[str, type] = {"text": TextContent, "thinking": ThinkingContent, "image": ImageContent, "toolCall": ToolCall}
_MESSAGES: dict[str, type] = {"user": UserMessage, "assistant": AssistantMessage, "toolResult": ToolResultMessage}
_USER_BLOCKS = ("text", "image")
_ASSISTANT_BLOCKS = ("text", "thinking", "toolCall")
_TAGS = ("type", "role")


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return f.default_factory()  # type: ignore[misc]
    return dataclasses.MISSING


def _dump_value(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dump_dataclass(value)
    if isinstance(value, list):
        return [_dump_value(v) for v in value]
    return value


def _dump_dataclass(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tag in _TAGS:  # the tag first, so that a dump reads "role: assistant, content: ..."
        if hasattr(obj, tag):
            out[tag] = getattr(obj, tag)
    for f in dataclasses.fields(obj):
        if f.name in _TAGS:
            continue
        value = getattr(obj, f.name)
        if value != _default(f):
            out[f.name] = _dump_value(value)
    return out


def dump_message(message: Message) -> dict[str, Any]:
    """A message as JSON data (tag first, default-valued fields left out)."""
    if type(message) not in _MESSAGES.values():
        raise SerdeError(f"not a message: {message!r}")
    return _dump_dataclass(message)


def dump_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """A list of messages as JSON data."""
    return [dump_message(m) for m in messages]


def dump_tool_spec(spec: ToolSpec) -> dict[str, Any]:
    """A tool spec as JSON data."""
    out = {"name": spec.name, "description": spec.description, "parameters": _plain(spec.parameters)}
    if spec.strict is not None:
        out["strict"] = spec.strict
    return out


def dump_request(request: ModelRequest) -> dict[str, Any]:
    """A model request as JSON data (the abort signal is not data and is left out)."""
    out: dict[str, Any] = {"messages": dump_messages(request.messages)}
    if request.tools:
        out["tools"] = [dump_tool_spec(t) for t in request.tools]
    if request.tool_choice is not None:
        out["tool_choice"] = _plain(request.tool_choice)
    for name in ("parallel_tool_calls", "model", "system", "max_tokens"):
        value = getattr(request, name)
        if value is not None:
            out[name] = value
    if request.call_number != 1:
        out["call_number"] = request.call_number
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# --- loading ----------------------------------------------------------------------------------


def _expect(value: Any, kind: type | tuple[type, ...], path: str, what: str) -> Any:
    # bool is an int subclass; an int field must not accept True.
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise SerdeError(f"{path}: expected {what}, got bool")
    if not isinstance(value, kind):
        raise SerdeError(f"{path}: expected {what}, got {type(value).__name__}")
    return value


def _str(v: Any, p: str) -> str:
    return _expect(v, str, p, "a string")


def _opt_str(v: Any, p: str) -> str | None:
    return None if v is None else _str(v, p)


def _int(v: Any, p: str) -> int:
    return _expect(v, int, p, "an integer")


def _bool(v: Any, p: str) -> bool:
    return _expect(v, bool, p, "a boolean")


def _float(v: Any, p: str) -> float:
    return float(_expect(v, (int, float), p, "a number"))


def _any(v: Any, p: str) -> Any:
    return v


def _usage_cost(v: Any, p: str) -> UsageCost:
    return _load_fields(UsageCost, v, p, {k: _float for k in ("input", "output", "cache_read", "cache_write", "total")})


def _usage(v: Any, p: str) -> Usage:
    spec: dict[str, Callable[[Any, str], Any]] = {k: _int for k in ("input", "output", "cache_read", "cache_write", "total_tokens")}
    spec["cost"] = _usage_cost
    return _load_fields(Usage, v, p, spec)


def _stop_reason(v: Any, p: str) -> str:
    if v not in STOP_REASONS:
        raise SerdeError(f"{p}: expected one of {', '.join(STOP_REASONS)}, got {v!r}")
    return v


def _blocks(allowed: tuple[str, ...]) -> Callable[[Any, str], list]:
    def load(v: Any, p: str) -> list:
        _expect(v, list, p, "a list of content blocks")
        return [_load_block(b, f"{p}[{i}]", allowed) for i, b in enumerate(v)]

    return load


def _user_content(v: Any, p: str) -> str | list:
    return v if isinstance(v, str) else _blocks(_USER_BLOCKS)(v, p)


_FIELDS: dict[type, dict[str, Callable[[Any, str], Any]]] = {
    TextContent: {"text": _str, "text_signature": _opt_str},
    ThinkingContent: {"thinking": _str, "thinking_signature": _opt_str, "redacted": _bool},
    ImageContent: {"data": _str, "mime_type": _str},
    ToolCall: {"id": _str, "name": _str, "arguments": _any, "raw_arguments": _opt_str, "thought_signature": _opt_str},
    UserMessage: {"content": _user_content, "timestamp": _int},
    AssistantMessage: {
        "content": _blocks(_ASSISTANT_BLOCKS), "stop_reason": _stop_reason, "api": _str, "provider": _str,
        "model": _str, "usage": _usage, "error_message": _opt_str, "error_type": _opt_str,
        "response_id": _opt_str, "timestamp": _int,
    },  # fmt: skip
    ToolResultMessage: {
        "tool_call_id": _str, "tool_name": _str, "content": _blocks(_USER_BLOCKS), "details": _any,
        "is_error": _bool, "timestamp": _int,
    },  # fmt: skip
}


def _load_fields(cls: type, data: Any, path: str, spec: Mapping[str, Callable[[Any, str], Any]], tag: str | None = None) -> Any:
    _expect(data, Mapping, path, f"an object ({cls.__name__})")
    allowed = set(spec) | ({tag} if tag else set())
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise SerdeError(f"{path}: unknown field(s) {unknown} for {cls.__name__}; expected some of {sorted(allowed)}")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name == tag:
            continue
        if f.name in data:
            kwargs[f.name] = spec[f.name](data[f.name], f"{path}.{f.name}")
        elif _default(f) is dataclasses.MISSING:
            raise SerdeError(f"{path}: missing required field {f.name!r} of {cls.__name__}")
    return cls(**kwargs)


def _load_block(data: Any, path: str, allowed: tuple[str, ...]) -> Any:
    _expect(data, Mapping, path, "an object (content block)")
    tag = data.get("type")
    if tag not in allowed:
        raise SerdeError(f"{path}.type: expected one of {', '.join(allowed)}, got {tag!r}")
    cls = _BLOCKS[tag]
    return _load_fields(cls, data, path, _FIELDS[cls], tag="type")


def load_message(data: Any, *, path: str = "message") -> Message:
    """Build a message from :func:`dump_message` data; errors name the path."""
    _expect(data, Mapping, path, "an object (message)")
    role = data.get("role")
    if role not in _MESSAGES:
        raise SerdeError(f"{path}.role: expected one of {', '.join(_MESSAGES)}, got {role!r}")
    cls = _MESSAGES[role]
    return _load_fields(cls, data, path, _FIELDS[cls], tag="role")


def load_messages(data: Any, *, path: str = "messages") -> list[Message]:
    """Build a list of messages; errors name the path."""
    _expect(data, list, path, "a list of messages")
    return [load_message(m, path=f"{path}[{i}]") for i, m in enumerate(data)]


def load_tool_spec(data: Any, *, path: str = "tool") -> ToolSpec:
    """Build a :class:`ToolSpec`; errors name the path."""
    spec = {"name": _str, "description": _str, "parameters": lambda v, p: _expect(v, Mapping, p, "an object (JSON Schema)"), "strict": _bool}
    return _load_fields(ToolSpec, data, path, spec)


def _tool_choice(v: Any, p: str) -> Any:
    if v in ("auto", "required", "none") or isinstance(v, Mapping):
        return v
    raise SerdeError(f"{p}: expected 'auto', 'required', 'none' or an object, got {v!r}")


_REQUEST_FIELDS: dict[str, Callable[[Any, str], Any]] = {
    "tool_choice": _tool_choice,
    "parallel_tool_calls": _bool,
    "model": _str,
    "system": _str,
    "max_tokens": _int,
    "call_number": _int,
}


def load_request(data: Any, *, path: str = "request") -> ModelRequest:
    """Build a :class:`ModelRequest` from :func:`dump_request` data; errors name the path."""
    _expect(data, Mapping, path, "an object (model request)")
    unknown = sorted(set(data) - set(_REQUEST_FIELDS) - {"messages", "tools"})
    if unknown:
        raise SerdeError(f"{path}: unknown field(s) {unknown} for ModelRequest")
    if "messages" not in data:
        raise SerdeError(f"{path}: missing required field 'messages' of ModelRequest")
    messages = load_messages(data["messages"], path=f"{path}.messages")
    tools_data = data.get("tools", [])
    _expect(tools_data, list, f"{path}.tools", "a list of tools")
    tools = [load_tool_spec(t, path=f"{path}.tools[{i}]") for i, t in enumerate(tools_data)]
    kwargs = {k: _REQUEST_FIELDS[k](data[k], f"{path}.{k}") for k in _REQUEST_FIELDS if k in data}
    return ModelRequest(messages, tools=tools, **kwargs)


__all__ = [
    "dump_message",
    "dump_messages",
    "dump_request",
    "dump_tool_spec",
    "load_message",
    "load_messages",
    "load_request",
    "load_tool_spec",
]
