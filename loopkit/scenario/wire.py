"""Read a request body as a simulator received it, in each protocol's own convention.

One small extractor per protocol finds the tool results a request carries (and whether each is
marked as an error, where the protocol can say so) and the tool_choice / parallel-calls knobs,
normalised to loopkit's vocabulary. Written from the wire formats (docs/wire.md), independently
of the adapters, so a scenario checks what really went over the wire.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True, frozen=True)
class WireResult:
    """A tool result in a request body. ``is_error`` is None where the protocol has no flag."""

    call_id: str | None
    name: str | None
    text: str
    is_error: bool | None


ABSENT: Any = type("ABSENT", (), {"__repr__": lambda self: "<absent>"})()
"""A knob the body does not carry."""


def _text(content: Any, sep: str = "") -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return sep.join(parts)
    return json.dumps(content, ensure_ascii=False)


# --- tool results ------------------------------------------------------------------------------


def _anthropic_results(body: dict[str, Any]) -> list[WireResult]:
    out = []
    for m in body.get("messages") or []:
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                out.append(WireResult(b.get("tool_use_id"), None, _text(b.get("content")), bool(b.get("is_error", False))))
    return out


def _bedrock_results(body: dict[str, Any]) -> list[WireResult]:
    out = []
    for m in body.get("messages") or []:
        for b in m.get("content") or []:
            r = b.get("toolResult") if isinstance(b, dict) else None
            if isinstance(r, dict):
                text = "".join(c["text"] if "text" in c else json.dumps(c.get("json"), ensure_ascii=False) for c in r.get("content") or [])
                out.append(WireResult(r.get("toolUseId"), None, text, r.get("status") == "error"))
    return out


def _openai_chat_results(body: dict[str, Any]) -> list[WireResult]:
    return [
        WireResult(m.get("tool_call_id"), m.get("name"), _text(m.get("content")), None)
        for m in body.get("messages") or []
        if m.get("role") == "tool"
    ]


def _openai_responses_results(body: dict[str, Any]) -> list[WireResult]:
    items = body.get("input")
    if not isinstance(items, list):
        return []
    return [
        WireResult(i.get("call_id"), None, _text(i.get("output")), None)
        for i in items
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]


def _gemini_results(body: dict[str, Any]) -> list[WireResult]:
    out = []
    for c in body.get("contents") or []:
        for p in c.get("parts") or []:
            fr = p.get("functionResponse") if isinstance(p, dict) else None
            if isinstance(fr, dict):
                response = fr.get("response") or {}
                is_error = "error" in response and "output" not in response
                value = response.get("error" if is_error else "output", response)
                out.append(WireResult(fr.get("id"), fr.get("name"), value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), is_error))
    return out


RESULTS: dict[str, Callable[[dict[str, Any]], list[WireResult]]] = {
    "anthropic": _anthropic_results,
    "bedrock": _bedrock_results,
    "openai_chat": _openai_chat_results,
    "openai_responses": _openai_responses_results,
    "gemini": _gemini_results,
}

ERROR_CONVENTION: dict[str, str] = {
    "anthropic": "tool_result.is_error",
    "bedrock": 'toolResult.status "error"',
    "openai_chat": 'role "tool" message (no error flag: text only)',
    "openai_responses": "function_call_output (no error flag: text only)",
    "gemini": 'functionResponse.response "error" (vs "output")',
}


def tool_results(protocol: str, body: Any) -> list[WireResult]:
    """The tool results in one request body of ``protocol``."""
    return RESULTS[protocol](body) if isinstance(body, dict) else []


# --- knobs -------------------------------------------------------------------------------------


def tool_choice(protocol: str, body: dict[str, Any]) -> Any:
    """The body's tool_choice in loopkit's form (None: not sent)."""
    if protocol in ("openai_chat", "openai_responses"):
        tc = body.get("tool_choice")
        if isinstance(tc, dict):
            name = tc.get("name") or (tc.get("function") or {}).get("name")
            return {"type": "function", "name": name}
        return tc
    if protocol == "anthropic":
        tc = body.get("tool_choice")
        if not isinstance(tc, dict):
            return None
        kind = tc.get("type")
        if kind == "tool":
            return {"type": "function", "name": tc.get("name")}
        return {"auto": "auto", "any": "required", "none": "none"}.get(kind, kind)
    if protocol == "gemini":
        cfg = (body.get("toolConfig") or body.get("tool_config") or {}).get("functionCallingConfig") or {}
        mode = cfg.get("mode")
        if mode == "ANY" and cfg.get("allowedFunctionNames"):
            names = cfg["allowedFunctionNames"]
            return {"type": "function", "name": names[0]} if len(names) == 1 else "required"
        return {"AUTO": "auto", "ANY": "required", "NONE": "none", None: None}.get(mode, mode)
    if protocol == "bedrock":
        cfg = body.get("toolConfig")
        if cfg is None:
            # Converse has no "none": the request leaves toolConfig out while tools exist
            return "none"
        choice = cfg.get("toolChoice")
        if not isinstance(choice, dict):
            return None
        if "tool" in choice:
            return {"type": "function", "name": choice["tool"].get("name")}
        return "required" if "any" in choice else "auto" if "auto" in choice else choice
    raise KeyError(protocol)


def parallel_tool_calls(protocol: str, body: dict[str, Any]) -> Any:
    """The body's parallel-calls flag: False when it forbids parallel calls, else None
    (not sent); :data:`ABSENT` for protocols that have no such knob."""
    if protocol in ("openai_chat", "openai_responses"):
        return body.get("parallel_tool_calls")
    if protocol == "anthropic":
        tc = body.get("tool_choice")
        return False if isinstance(tc, dict) and tc.get("disable_parallel_tool_use") else None
    return ABSENT


def tool_names(protocol: str, body: dict[str, Any]) -> list[str]:
    """The names of the tools a request declares."""
    if protocol == "openai_chat":
        return [t.get("function", {}).get("name") for t in body.get("tools") or []]
    if protocol in ("openai_responses", "anthropic"):
        return [t.get("name") for t in body.get("tools") or []]
    if protocol == "gemini":
        return [f.get("name") for t in body.get("tools") or [] for f in t.get("functionDeclarations") or t.get("function_declarations") or []]
    if protocol == "bedrock":
        return [t["toolSpec"]["name"] for t in (body.get("toolConfig") or {}).get("tools") or [] if "toolSpec" in t]
    raise KeyError(protocol)
