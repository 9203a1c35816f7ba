"""Tools: :class:`Tool`, the :func:`tool` decorator, :class:`ToolRegistry`, tool policy
(toolsets, allow, deny, source) and how a tool's return value becomes a :class:`ToolResult`.

A :class:`Tool` is immutable. It carries its JSON Schema and a precompiled argument validator
(:mod:`loopkit._validation`), so :meth:`Tool.prepare` is cheap enough for the loop's hot path.
Schemas of decorated functions come from type hints and docstrings (:mod:`loopkit._schema`).

Tool names are unique within one resolved list: with duplicates, the first tool of a name wins
and later ones are dropped (docs/loop-contract.md looks up the first match).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import inspect
import json
import re
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, overload

from ._schema import INJECTED, Converter, function_schema, parse_docstring
from ._validation import ArgumentValidator, check_schema
from .errors import ToolDefinitionError, UsageError
from .events import ToolResult
from .messages import ImageContent, TextContent
from .provider import AbortSignal, ToolSpec

_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}

_SIGNAL_ALIASES = frozenset({"cancel", "cancel_event"})  # OpenProgram's names, for adapted executors
# How an executor takes its arguments: _KWARGS, fn(**args, <injected>); _DICT, fn(args,
# <injected>) for one positional-only parameter; a str, fn(<that name>=args, <injected>).
_KWARGS = 0
_DICT = 1


class Tool:
    """One tool: what the model sees (name, description, parameters) and the code that runs.

    Build one with :func:`tool` (from a function's signature), :func:`adapt_tool` (from any
    accepted form) or directly: ``Tool(name="add", execute=fn, parameters={...})``.

    Args:
        name: what the model calls; ``^[a-zA-Z0-9_-]{1,64}$``, which every provider accepts.
        execute: the function to run. It is called as ``execute(**args)``, or as
            ``execute(args)`` when it takes exactly one positional parameter that is not a
            property of the schema. Parameters named ``signal``, ``on_update`` and
            ``tool_call_id`` are filled in by the loop.
        description: shown to the model; defaults to the first paragraph of the docstring.
        parameters: the JSON Schema (type object) of the arguments; None means no arguments.
        source: where the tool came from, matched by ``tools_source=`` filtering.
    """

    __slots__ = (
        "name",
        "description",
        "parameters",
        "source",
        "is_async",
        "spec",
        "_fn",
        "_validator",
        "_style",
        "_injected",
        "_converters",
        "_plain",
        "_unbound",
    )

    name: str
    description: str
    parameters: dict[str, Any]
    source: str
    is_async: bool
    spec: ToolSpec

    def __init__(
        self,
        *,
        name: str,
        execute: Callable[..., Any],
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        source: str = "user",
    ) -> None:
        if not callable(execute):
            raise ToolDefinitionError(f"Tool '{name}': execute must be callable, got {type(execute).__name__}")
        if parameters is None:
            parameters = _EMPTY_OBJECT
        schema = copy.deepcopy(dict(parameters) if isinstance(parameters, Mapping) else parameters)
        if description is None:
            description = parse_docstring(inspect.getdoc(execute)).description
        style, injected = _executor_convention(execute, schema)
        self._setup(name, description, schema, source, execute, style, injected, (), False)

    def _setup(
        self,
        name: Any,
        description: Any,
        parameters: dict[str, Any],
        source: Any,
        fn: Callable[..., Any],
        style: int | str,
        injected: tuple[str, ...],
        converters: tuple[tuple[str, Converter], ...],
        unbound: bool,
        validator: ArgumentValidator | None = None,
    ) -> None:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ToolDefinitionError(
                f"Tool name {name!r} is not accepted by providers: use 1-64 letters, digits, '_' or '-'"
            )
        if not isinstance(description, str):
            raise ToolDefinitionError(f"Tool '{name}': description must be a str, got {type(description).__name__}")
        if not isinstance(source, str) or not source:
            raise ToolDefinitionError(f"Tool '{name}': source must be a non-empty str, got {source!r}")
        if validator is None:
            check_schema(name, parameters)
            validator = ArgumentValidator(name, parameters)
        init = object.__setattr__
        init(self, "name", name)
        init(self, "description", description)
        init(self, "parameters", parameters)
        init(self, "source", source)
        init(self, "is_async", _is_async(fn))
        init(self, "spec", ToolSpec(name=name, description=description, parameters=parameters))
        init(self, "_fn", fn)
        init(self, "_validator", validator)
        init(self, "_style", style)
        init(self, "_injected", injected)
        init(self, "_converters", converters)
        init(self, "_unbound", unbound)
        init(self, "_plain", style == _KWARGS and not injected and not converters and not unbound)

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        source: str = "user",
    ) -> Tool:
        """A tool from a typed function (what :func:`tool` does). A first parameter named
        ``self`` makes it a method: reach it through an instance to get a bound tool."""
        if isinstance(fn, Tool):
            raise ToolDefinitionError(f"{fn!r} is already a Tool; build a new one from the function itself")
        if isinstance(fn, staticmethod):
            fn = fn.__func__
        if isinstance(fn, classmethod):
            raise ToolDefinitionError(
                f"@tool cannot wrap a classmethod ({fn.__func__.__qualname__}); use a function or a method"
            )
        if not callable(fn) or isinstance(fn, type):
            raise ToolDefinitionError(f"@tool needs a function, got {type(fn).__name__} {fn!r}")
        if name is None:
            name = getattr(fn, "__name__", None)
            if name is None or name == "<lambda>":
                raise ToolDefinitionError(f"Cannot name a tool after {fn!r}; use tool(fn, name=...)")
        given = copy.deepcopy(dict(parameters)) if parameters is not None else None
        info = function_schema(fn, tool_name=name, parameters=given)
        self = cls.__new__(cls)
        self._setup(
            name,
            info.description if description is None else description,
            info.parameters,
            source,
            fn,
            _KWARGS,
            info.injected,
            info.converters,
            info.takes_self,
        )
        return self

    # --- what the loop calls ------------------------------------------------------------------

    def prepare(self, raw_args: Any) -> tuple[dict[str, Any] | None, str | None]:
        """Coerce and validate the model's arguments (docs/loop-contract.md).

        Returns ``(args, None)``, where ``args`` may be ``raw_args`` itself when nothing needed
        coercing (containers that change are copied; ``raw_args`` is never mutated), or
        ``(None, error_text)`` with the text of spec §4.3::

            Validation failed for tool "<name>":
              - <dotted.path | root>: <jsonschema message>

            Received arguments:
            <the original arguments as 2-space-indented JSON>

        Non-object arguments give ``Tool arguments must be an object, got <JSON type>``.
        Coercion is spec §4.3's, except that a boolean given for a string becomes ``"true"`` /
        ``"false"`` (JSON's spelling; OpenProgram writes ``"True"``) and that type lists and
        ``anyOf`` branches (``Optional[int]``) are coerced too; see :mod:`loopkit._validation`.
        """
        return self._validator.prepare(raw_args)

    def invoke(
        self,
        args: dict[str, Any],
        *,
        tool_call_id: str,
        signal: AbortSignal | None = None,
        on_update: Callable[[Any], None] | None = None,
    ) -> Any:
        """Call the tool with prepared ``args``; injects ``signal``, ``on_update`` and
        ``tool_call_id`` where the function declares them (a never-set signal and a no-op
        ``on_update`` when None is given, so a tool can always use them). Returns the function's
        value, or an awaitable when the function is async (check ``inspect.isawaitable``: a sync
        executor may return one too)."""
        if self._plain:
            return self._fn(**args)
        if self._unbound:
            raise UsageError(f"Tool '{self.name}' is a method: use it through an instance (obj.{self.name})")
        style = self._style
        if style == _DICT:
            positional: tuple[Any, ...] = (dict(args),)
            kwargs: dict[str, Any] = {}
        elif type(style) is str:
            positional = ()
            kwargs = {style: dict(args)}
        else:
            positional = ()
            kwargs = dict(args)
            for key, convert in self._converters:
                if key in kwargs:
                    kwargs[key] = convert(kwargs[key])
        for key in self._injected:
            if key == "signal" or key in _SIGNAL_ALIASES:
                kwargs[key] = signal if signal is not None else AbortSignal()
            elif key == "on_update":
                kwargs[key] = on_update if on_update is not None else _ignore_update
            else:
                kwargs[key] = tool_call_id
        return self._fn(*positional, **kwargs)

    # --- Python protocol ----------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly, as if it were not a tool."""
        return self._fn(*args, **kwargs)

    def __get__(self, instance: Any, owner: type | None = None) -> Tool:
        if instance is None or not self._unbound:
            return self
        bound = Tool.__new__(Tool)
        bound._setup(
            self.name,
            self.description,
            self.parameters,
            self.source,
            types.MethodType(self._fn, instance),
            self._style,
            self._injected,
            self._converters,
            False,
            self._validator,
        )
        return bound

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"Tool is immutable; build a new one with tool(..., {key}=...)")

    def __delattr__(self, key: str) -> None:
        raise AttributeError("Tool is immutable")

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, source={self.source!r})"


def _ignore_update(partial_result: Any) -> None:
    return None


def _is_async(fn: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(type(fn), "__call__", None)
    return call is not None and not inspect.isfunction(fn) and inspect.iscoroutinefunction(call)


def _executor_convention(execute: Callable[..., Any], schema: Mapping[str, Any]) -> tuple[int | str, tuple[str, ...]]:
    """How to call an adapted executor (docs/loop-contract.md): ``execute(**args)``, or
    ``execute(args)`` when it takes one positional parameter that is not a schema property.
    OpenProgram's ``cancel`` / ``cancel_event`` receive the signal too, unless they are schema
    properties."""
    try:
        params = list(inspect.signature(execute).parameters.values())
    except (TypeError, ValueError):
        return _KWARGS, ()
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    props = props if isinstance(props, Mapping) else {}
    names = INJECTED | {n for n in _SIGNAL_ALIASES if n not in props}
    injected = tuple(p.name for p in params if p.name in names and p.kind is not p.POSITIONAL_ONLY)
    rest = [p for p in params if p.name not in injected]
    if len(rest) == 1 and rest[0].name not in props:
        if rest[0].kind is rest[0].POSITIONAL_ONLY:
            return _DICT, injected
        if rest[0].kind is rest[0].POSITIONAL_OR_KEYWORD:
            # by name, so that injected extras declared before it do not collide
            return rest[0].name, injected
    return _KWARGS, injected


# --- the decorator and adaptation -------------------------------------------------------------


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    source: str = "user",
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    source: str = "user",
) -> Any:
    """Make a function (sync or async) or a method into a :class:`Tool`; with or without parens.

    The schema comes from the type hints, the description and the property descriptions from
    the docstring (first paragraph; Google-style ``Args:``). A decorated method becomes a bound
    tool when reached through an instance (``obj.search``). The result is still callable as the
    plain function.

    Args:
        name: the tool's name; defaults to the function's ``__name__``.
        description: overrides the docstring's first paragraph.
        parameters: a JSON Schema to use instead of the one built from type hints.
        source: a label for ``tools_source=`` filtering.
    """

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool.from_function(f, name=name, description=description, parameters=parameters, source=source)

    return wrap if fn is None else wrap(fn)


def adapt_tool(obj: Any) -> Tool:
    """Turn any accepted tool form into a :class:`Tool` (docs/loop-contract.md).

    Accepted: a :class:`Tool` (a ``@tool`` function, or a ``@tool`` method through an instance);
    ``{"spec": {...}, "execute": fn}`` where the spec is ``{"name", "description", "parameters"}``,
    OpenAI's ``{"type": "function", "function": {...}}`` or a :class:`ToolSpec`; any object with
    ``.spec`` and ``.execute``; a plain typed function or bound method.
    """
    if isinstance(obj, Tool):
        if obj._unbound:
            raise ToolDefinitionError(
                f"Tool '{obj.name}' is a method reached through its class; pass it from an instance (obj.{obj.name})"
            )
        return obj
    if isinstance(obj, (str, bytes)):
        raise ToolDefinitionError(
            f"tools= takes tool objects, not names: got the string {obj!r}. Pass the Tool itself (a function "
            f"decorated with @tool), or leave tools= unset and select registry tools by name with tools_allow=[{obj!r}]"
        )
    if isinstance(obj, Mapping):
        if "execute" not in obj:
            name = _spec_fields(obj.get("spec", obj), None)[0]
            raise ToolDefinitionError(
                f"Tool '{name}' has no executor: a spec alone only describes a tool. Pass "
                "{'spec': ..., 'execute': fn}, an object with .spec and .execute, or a function decorated with @tool"
            )
        if "spec" not in obj:
            raise ToolDefinitionError(f"A tool dict needs 'spec' and 'execute' keys, got keys {sorted(obj)}")
        return _from_spec(obj["spec"], obj["execute"], obj.get("source", "user"))
    if hasattr(obj, "spec") and hasattr(obj, "execute"):
        return _from_spec(obj.spec, obj.execute, getattr(obj, "source", "user") or "user")
    if callable(obj) and not isinstance(obj, type):
        return Tool.from_function(obj)
    raise ToolDefinitionError(
        f"Cannot use a {type(obj).__name__} as a tool: expected a Tool, a @tool function, "
        "{'spec': ..., 'execute': fn}, an object with .spec and .execute, or a typed function"
    )


def _spec_fields(spec: Any, execute: Any) -> tuple[Any, Any, Any]:
    if isinstance(spec, ToolSpec):
        return spec.name, spec.description, spec.parameters
    if isinstance(spec, Mapping):
        if spec.get("type") == "function" and isinstance(spec.get("function"), Mapping):
            spec = spec["function"]
        parameters = spec.get("parameters", spec.get("input_schema"))
        return spec.get("name"), spec.get("description"), parameters
    if all(hasattr(spec, a) for a in ("name", "parameters")):
        return spec.name, getattr(spec, "description", None), spec.parameters
    name = getattr(execute, "__name__", "?")
    raise ToolDefinitionError(f"Tool '{name}': spec must be a dict or a ToolSpec, got {type(spec).__name__}")


def _from_spec(spec: Any, execute: Any, source: Any) -> Tool:
    name, description, parameters = _spec_fields(spec, execute)
    if not callable(execute):
        raise ToolDefinitionError(f"Tool '{name}': execute must be callable, got {type(execute).__name__}")
    return Tool(name=name, execute=execute, description=description or "", parameters=parameters, source=source)


# --- registry and policy ----------------------------------------------------------------------


class ToolRegistry:
    """Named tools and toolsets to resolve when a run is given no ``tools=`` list.

    The toolset ``"full"`` is every registered tool, ``"none"`` is no tool; others are defined
    with :meth:`define_toolset`.
    """

    def __init__(self, tools: Iterable[Any] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._toolsets: dict[str, tuple[str, ...]] = {}
        for t in tools:
            self.register(t)

    def register(self, obj: Any, *, replace: bool = False) -> Tool:
        """Add a tool (any form :func:`adapt_tool` accepts); a second tool with a taken name
        raises :class:`UsageError` unless ``replace=True``."""
        t = adapt_tool(obj)
        old = self._tools.get(t.name)
        if old is not None and old is not t and not replace:
            raise UsageError(f"A tool named '{t.name}' is already registered; pass replace=True to replace it")
        self._tools[t.name] = t
        return t

    @overload
    def tool(self, fn: Callable[..., Any], /) -> Tool: ...

    @overload
    def tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        source: str = "user",
    ) -> Callable[[Callable[..., Any]], Tool]: ...

    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        source: str = "user",
    ) -> Any:
        """Like :func:`tool`, and register the result."""

        def wrap(f: Callable[..., Any]) -> Tool:
            return self.register(tool(f, name=name, description=description, parameters=parameters, source=source))

        return wrap if fn is None else wrap(fn)

    def get(self, name: str) -> Tool:
        """The tool called ``name``; :class:`UsageError` listing the known names if none is."""
        try:
            return self._tools[name]
        except KeyError:
            raise UsageError(f"No tool named {name!r} is registered; known tools: {_listing(self._tools)}") from None

    def names(self) -> list[str]:
        """Tool names in registration order."""
        return list(self._tools)

    def toolsets(self) -> list[str]:
        """Toolset names, the built-in ``full`` and ``none`` first."""
        return ["full", "none", *self._toolsets]

    def define_toolset(self, name: str, names: Iterable[str]) -> None:
        """Name a selection of registered tools, in the given order."""
        if name in ("full", "none"):
            raise UsageError(f"The toolset name {name!r} is built in and cannot be redefined")
        if not isinstance(name, str) or not name:
            raise UsageError(f"A toolset name must be a non-empty str, got {name!r}")
        selected = _names_arg(names, "define_toolset")
        assert selected is not None
        _check_known(selected, self._tools, f"toolset {name!r}")
        self._toolsets[name] = tuple(dict.fromkeys(selected))

    def resolve(
        self,
        *,
        toolset: str | None = None,
        source: str | Iterable[str] | None = None,
        allow: Iterable[str] | None = None,
        deny: Iterable[str] | None = None,
    ) -> list[Tool]:
        """The tools of ``toolset`` (default ``full``), filtered by source, deny, then allow."""
        toolset = "full" if toolset is None else toolset
        if toolset == "none":
            return []
        if toolset == "full":
            candidates = list(self._tools.values())
        elif toolset in self._toolsets:
            candidates = [self._tools[n] for n in self._toolsets[toolset]]
        else:
            raise UsageError(f"Unknown toolset {toolset!r}; known toolsets: {', '.join(self.toolsets())}")
        return _apply_policy(candidates, self._tools, source=source, allow=allow, deny=deny)

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __repr__(self) -> str:
        return f"ToolRegistry({self.names()!r})"


default_registry = ToolRegistry()
"""The registry a ``Runtime()`` resolves from when it is given none."""


def resolve_tools(
    tools: Iterable[Any] | None,
    *,
    registry: ToolRegistry,
    toolset: str | None = None,
    source: str | Iterable[str] | None = None,
    allow: Iterable[str] | None = None,
    deny: Iterable[str] | None = None,
) -> list[Tool]:
    """The tools of one run (docs/loop-contract.md).

    - ``tools`` None: no tools for toolset ``"none"``, else ``registry.resolve(toolset or "full", ...)``.
    - ``tools`` empty: no tools.
    - ``tools`` a list: each entry adapted (:func:`adapt_tool`), then filtered by ``source``,
      ``deny`` and ``allow``; ``toolset`` is ignored. With duplicate names the first wins.

    ``allow`` keeps only the named tools (a hard intersection), ``deny`` removes them, ``source``
    (a str or a list) keeps the tools with that source. A name in ``allow``/``deny`` that is
    neither in the list nor in the registry raises :class:`UsageError` listing the known names.
    """
    if tools is None:
        if toolset == "none":
            return []
        return registry.resolve(toolset=toolset or "full", source=source, allow=allow, deny=deny)
    if isinstance(tools, (str, bytes, Mapping, Tool)) or callable(tools) or not isinstance(tools, Iterable):
        raise UsageError(f"tools= takes a list of tools, got {type(tools).__name__}; wrap a single tool: tools=[t]")
    adapted: dict[str, Tool] = {}
    for entry in tools:
        t = adapt_tool(entry)
        adapted.setdefault(t.name, t)
    if not adapted:
        return []
    known = {**registry._tools, **adapted}
    return _apply_policy(list(adapted.values()), known, source=source, allow=allow, deny=deny)


def _apply_policy(
    candidates: list[Tool],
    known: Mapping[str, Tool],
    *,
    source: str | Iterable[str] | None,
    allow: Iterable[str] | None,
    deny: Iterable[str] | None,
) -> list[Tool]:
    sources = _names_arg(source, "source")
    denied = _names_arg(deny, "deny")
    allowed = _names_arg(allow, "allow")
    if denied:
        _check_known(denied, known, "deny=")
    if allowed is not None:
        _check_known(allowed, known, "allow=")
    out = candidates
    if sources is not None:
        out = [t for t in out if t.source in sources]
    if denied:
        out = [t for t in out if t.name not in denied]
    if allowed is not None:
        out = [t for t in out if t.name in allowed]
    return out


def _names_arg(value: Any, what: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, (bytes, Mapping)) or not isinstance(value, Iterable):
        raise UsageError(f"{what} takes a name or a list of names, got {type(value).__name__}")
    names = list(value)
    for n in names:
        if not isinstance(n, str):
            raise UsageError(f"{what} takes names (str), got {type(n).__name__} {n!r}")
    return names


def _check_known(names: list[str], known: Mapping[str, Any], what: str) -> None:
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(
            f"{what} names unknown tool{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"known tools: {_listing(known)}"
        )


def _listing(names: Iterable[str]) -> str:
    return ", ".join(sorted(names)) or "(none)"


# --- results ----------------------------------------------------------------------------------


def to_tool_result(value: Any) -> ToolResult:
    """Turn whatever a tool returned into a :class:`ToolResult`.

    - a :class:`ToolResult` passes through (a legacy ``details["is_error"]`` is lifted into
      ``is_error`` when that is False, docs/loop-contract.md); so do objects shaped like one
      (``.content`` plus ``.details`` or ``.is_error``, such as OpenProgram's AgentToolResult);
    - a ``str`` becomes one text block; ``None`` an empty text; a text or image block, or a list
      of them, becomes the content;
    - ``bytes`` give an ``is_error`` result that says what to return instead;
    - anything else is JSON: ``json.dumps(value, ensure_ascii=False)``, with pydantic models,
      dataclasses, enums and sets as their JSON form and other objects as ``str(obj)``.
    """
    kind = type(value)
    if kind is str:
        return ToolResult([TextContent(value)])
    if kind is int:
        return ToolResult([TextContent(int.__repr__(value))])
    if kind is dict:
        return ToolResult([TextContent(_to_json(value))])
    if isinstance(value, ToolResult):
        if not value.is_error and _legacy_error(value.details):
            return dataclasses.replace(value, is_error=True)
        return value
    if isinstance(value, str):
        return ToolResult(content=[TextContent(text=value)])
    if value is None:
        return ToolResult(content=[TextContent(text="")])
    if isinstance(value, (TextContent, ImageContent)):
        return ToolResult(content=[value])
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ToolResult(
            content=[
                TextContent(
                    text=f"Tool returned {len(value)} bytes, which cannot be sent to a model; return str, a JSON "
                    "value, or a ToolResult (images as ImageContent with base64 data)"
                )
            ],
            is_error=True,
        )
    if isinstance(value, list) and value and all(isinstance(b, (TextContent, ImageContent)) for b in value):
        return ToolResult(content=list(value))
    content = getattr(value, "content", None)
    if isinstance(content, (list, tuple)) and (hasattr(value, "details") or hasattr(value, "is_error")):
        details = getattr(value, "details", None)
        is_error = getattr(value, "is_error", None)
        if is_error is None:
            is_error = _legacy_error(details)
        return ToolResult(content=[_block(b) for b in content], details=details, is_error=bool(is_error))
    return ToolResult(content=[TextContent(text=_to_json(value))])


def _to_json(value: Any) -> str:
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError):  # a circular structure
        return str(value)


def _legacy_error(details: Any) -> bool:
    return isinstance(details, Mapping) and details.get("is_error") is True


def _block(block: Any) -> TextContent | ImageContent:
    if isinstance(block, (TextContent, ImageContent)):
        return block
    if isinstance(block, str):
        return TextContent(text=block)
    get = block.get if isinstance(block, Mapping) else lambda k, d=None: getattr(block, k, d)
    kind = get("type")
    if kind == "text":
        return TextContent(text=str(get("text", "")))
    if kind == "image":
        return ImageContent(data=get("data"), mime_type=get("mime_type") or get("mimeType"))
    return TextContent(text=_ENCODER.encode(block))


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "model_dump") and not isinstance(obj, type):
        try:
            return obj.model_dump(mode="json")
        except Exception:  # noqa: BLE001 - not a pydantic model after all
            return str(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (set, frozenset)):
        try:
            return sorted(obj)
        except TypeError:
            return sorted(obj, key=repr)
    if isinstance(obj, tuple):
        return list(obj)
    return str(obj)


# One encoder for every result: json.dumps with options builds a new encoder on each call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_json_default)


def error_text(exc: BaseException) -> str:
    """The text of an error result for a tool that raised: ``str(exc)``, or the class name when
    that is empty or blank (``TimeoutError()`` gives ``"TimeoutError"``; providers reject empty
    tool results). ``KeyError('x')`` keeps Python's ``"'x'"``."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a broken __str__ must not hide the error itself
        text = ""
    return text if text.strip() else type(exc).__name__


__all__ = [
    "Tool",
    "ToolRegistry",
    "adapt_tool",
    "default_registry",
    "error_text",
    "resolve_tools",
    "to_tool_result",
    "tool",
]
