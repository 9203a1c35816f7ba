"""What to fuzz: one tool, or every tool of a module, a registry or a list."""

from __future__ import annotations

import importlib
import types
from collections.abc import Iterable, Mapping
from typing import Any

from .._targets import import_target
from ..errors import ToolDefinitionError, UsageError
from ..tools import Tool, ToolRegistry, adapt_tool

_FORM = "module:function (a tool, a typed function, or a spec/execute dict)"


def load_target(target: Any) -> Tool:
    """A :class:`Tool` from ``module:attribute`` text, or from anything :func:`adapt_tool` takes."""
    what = repr(target)
    if isinstance(target, str):
        what = repr(target)
        target = import_target(target, what="fuzz target", form=_FORM)
    if isinstance(target, Mapping) and "execute" not in target:
        keys = ", ".join(repr(k) for k in target) or "none"
        raise UsageError(
            f"fuzz target {_clip(what)} is a dict without 'execute' (keys: {keys}): a spec only describes a tool, "
            "and fuzzing needs code to call. Pass {'spec': {...}, 'execute': fn}, a function decorated with @tool, "
            "or a typed function"
        )
    try:
        return adapt_tool(target)
    except ToolDefinitionError as exc:
        raise UsageError(f"fuzz target {_clip(what)}: {exc}") from None


def reference_of(tool: Tool, given: Any) -> str | None:
    """``module:attribute`` that imports the tool, when it can be told."""
    if isinstance(given, str) and ":" in given:
        return given
    fn = getattr(tool, "_fn", None)
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", "")
    if not module or not qualname or "<" in qualname or module == "__main__":
        return None
    try:
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    # a @tool function is the tool itself; Tool(execute=fn) or a subclass is not found under fn's name
    return f"{module}:{qualname}" if obj is tool else None


def load_toolset(target: Any) -> list[tuple[Tool, str | None]]:
    """``(tool, reference)`` for each tool of ``target``.

    ``target`` is a module (or its dotted name), a :class:`~loopkit.tools.ToolRegistry`, a list
    of tools, ``module:attribute`` naming any of these, or one tool. A module contributes the
    tools it names in ``__all__``, else every :class:`~loopkit.tools.Tool` and
    :class:`~loopkit.tools.ToolRegistry` defined at its top level.
    """
    if isinstance(target, str):
        if ":" in target:
            obj = import_target(target, what="fuzz target", form=_FORM + ", or a module, a ToolRegistry or a list")
            if isinstance(obj, (types.ModuleType, ToolRegistry)) or _is_list(obj):
                return load_toolset(obj) if not isinstance(obj, types.ModuleType) else _module_tools(obj)
            tool = load_target(obj)
            return [(tool, target)]
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise UsageError(f"fuzz target {target!r}: cannot import {target!r} ({exc}); name a module, or module:function") from None
        return _module_tools(module)
    if isinstance(target, types.ModuleType):
        return _module_tools(target)
    if isinstance(target, ToolRegistry):
        return [(t, reference_of(t, None)) for t in target]
    if _is_list(target):
        out = []
        for i, item in enumerate(target):
            try:
                tool = load_target(item)
            except UsageError as exc:
                raise UsageError(f"tools[{i}]: {exc}") from None
            out.append((tool, reference_of(tool, item)))
        return _unique(out)
    tool = load_target(target)
    return [(tool, reference_of(tool, target))]


def _is_list(obj: Any) -> bool:
    return isinstance(obj, Iterable) and not isinstance(obj, (str, bytes, Mapping, Tool)) and not callable(obj)


def _module_tools(module: types.ModuleType) -> list[tuple[Tool, str | None]]:
    names = getattr(module, "__all__", None)
    out: list[tuple[Tool, str | None]] = []
    for name in names if names is not None else sorted(vars(module)):
        if name.startswith("_") and names is None:
            continue
        obj = getattr(module, name, None)
        if isinstance(obj, Tool) and not obj._unbound:
            if names is None and getattr(getattr(obj, "_fn", None), "__module__", module.__name__) != module.__name__:
                continue  # imported from elsewhere: that module's tool
            out.append((obj, f"{module.__name__}:{name}"))
        elif isinstance(obj, ToolRegistry):
            out += [(t, reference_of(t, None)) for t in obj]
        elif names is not None and obj is not None and not isinstance(obj, types.ModuleType):
            try:
                tool = load_target(obj)
            except UsageError:
                continue
            out.append((tool, f"{module.__name__}:{name}"))
    if not out:
        raise UsageError(
            f"module {module.__name__!r} exports no tools: define them with @tool (or list them in __all__), "
            "or name one with module:function"
        )
    return _unique(out)


def _unique(found: list[tuple[Tool, str | None]]) -> list[tuple[Tool, str | None]]:
    seen: set[str] = set()
    out = []
    for tool, ref in found:
        if tool.name not in seen:
            seen.add(tool.name)
            out.append((tool, ref))
    return out


def _clip(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


__all__ = ["load_target", "load_toolset", "reference_of"]
