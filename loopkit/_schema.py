"""JSON Schemas from Python signatures: type hints give the types, the docstring the descriptions.

Supported annotations: ``int``, ``float``, ``str``, ``bool``, ``None``, ``Any``, ``list[X]``,
``set[X]``, ``tuple[X, Y]`` / ``tuple[X, ...]``, ``dict[str, X]``, ``Literal[...]``, ``Enum``
subclasses, ``Optional``/unions, ``Annotated[X, "description"]`` (constraints such as
``annotated_types.Ge`` or ``pydantic.Field(ge=1)`` become ``minimum`` ...), ``TypedDict``,
dataclasses and pydantic models. Every object schema built here has ``additionalProperties: false``; a parameter
or field with a default is not required. Values that arrive as JSON are turned back into the
annotated Python type before the function is called (an ``Enum`` member, a dataclass or model
instance, a tuple or set) by a converter built next to the schema.

Docstrings are read in Google style (``Args:``, ``Attributes:``) or reST (``:param x:``); the first
paragraph is the tool's description.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._validation import json_type_name
from .errors import ToolDefinitionError

INJECTED = frozenset({"signal", "on_update", "tool_call_id"})
"""Parameter names the loop fills in itself; they are never part of a tool's schema."""

Converter = Callable[[Any], Any]

_SECTION = re.compile(r"^(\w[\w ]*):\s*$")
_ARG_SECTIONS = frozenset({"args", "arguments", "parameters", "params", "attributes", "fields", "keyword args"})
_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


@dataclass(slots=True, frozen=True)
class Docstring:
    """A parsed docstring: its first paragraph and the descriptions of named arguments."""

    description: str
    params: Mapping[str, str]


def parse_docstring(doc: str | None) -> Docstring:
    """Read the first paragraph and the ``Args:`` (or ``:param:``) descriptions of a docstring."""
    if not doc:
        return Docstring("", {})
    lines = inspect.cleandoc(doc).splitlines()
    first: list[str] = []
    for line in lines:
        stripped = line.strip()
        if not stripped or _SECTION.match(stripped) or stripped.startswith(":"):
            break
        first.append(stripped)
    params: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        rest = _REST_PARAM.match(stripped)
        if rest:
            params[rest.group(1)] = rest.group(2).strip()
            i += 1
            continue
        header = _SECTION.match(stripped)
        if not header or header.group(1).lower() not in _ARG_SECTIONS:
            i += 1
            continue
        section_indent = _indent(line)
        i += 1
        name: str | None = None
        entry_indent: int | None = None
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            indent = _indent(line)
            if indent <= section_indent:
                break
            if entry_indent is None:
                entry_indent = indent
            entry = _ENTRY.match(line.strip()) if indent == entry_indent else None
            if entry:
                name = entry.group(1)
                params[name] = entry.group(2).strip()
            elif name is not None:
                params[name] = f"{params[name]} {line.strip()}".strip()
            i += 1
    return Docstring(" ".join(first), params)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


@dataclass(slots=True, frozen=True)
class FunctionSchema:
    """What a function declares: its schema, description, injected extras and converters."""

    description: str
    parameters: dict[str, Any]
    injected: tuple[str, ...]
    converters: tuple[tuple[str, Converter], ...]
    takes_self: bool


def function_schema(fn: Callable[..., Any], *, tool_name: str, parameters: dict[str, Any] | None = None) -> FunctionSchema:
    """Build the parameters schema of ``fn`` from its signature, type hints and docstring.

    With ``parameters`` given, that schema is used as it is and only the description, the injected
    extras and ``self`` are read from the function.
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f'Tool "{tool_name}": cannot read the signature of {fn!r}: {exc}') from None
    doc = parse_docstring(inspect.getdoc(fn))
    params = list(sig.parameters.values())
    takes_self = bool(params) and params[0].name == "self"
    if takes_self:
        params = params[1:]
    injected = tuple(p.name for p in params if p.name in INJECTED)
    if parameters is not None:
        return FunctionSchema(doc.description, parameters, injected, (), takes_self)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - NameError, TypeError ... from unresolvable annotations
        raise ToolDefinitionError(
            f'Tool "{tool_name}": cannot resolve the type hints of {getattr(fn, "__qualname__", fn)!r}: {exc} '
            "(define the types at module level, or pass parameters=)"
        ) from None
    builder = _Builder(tool_name)
    properties: dict[str, Any] = {}
    required: list[str] = []
    converters: list[tuple[str, Converter]] = []
    additional: Any = False
    for p in params:
        if p.name in INJECTED:
            continue
        where = f"parameter '{p.name}'"
        if p.kind is p.VAR_POSITIONAL:
            raise ToolDefinitionError(
                f'Tool "{tool_name}": {where}: *args cannot be filled from JSON arguments; use named parameters'
            )
        if p.kind is p.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f'Tool "{tool_name}": {where} is positional-only; tools are called with keyword arguments'
            )
        hint = hints.get(p.name, Any)
        if p.kind is p.VAR_KEYWORD:
            additional, _ = builder.schema(hint, f"parameter '**{p.name}'")
            additional = additional or True
            continue
        schema, conv = builder.schema(hint, where)
        schema = dict(schema)
        if p.name in doc.params and "description" not in schema:
            schema["description"] = doc.params[p.name]
        if p.default is p.empty:
            required.append(p.name)
        else:
            default = _json_default(p.default)
            if default is not _NO_DEFAULT:
                schema["default"] = default
        properties[p.name] = schema
        if conv is not None:
            converters.append((p.name, conv))
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    out["additionalProperties"] = additional
    return FunctionSchema(doc.description, out, injected, tuple(converters), takes_self)


_NO_DEFAULT = object()


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, tuple):
        value = list(value)
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return _NO_DEFAULT
    return value


_PRIMITIVES: dict[Any, dict[str, Any]] = {
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    None: {"type": "null"},
}


def _to_float(v: Any) -> Any:
    return float(v) if type(v) is int else v


class _Builder:
    """Turns one annotation into ``(schema, converter or None)``; tracks classes to stop recursion."""

    def __init__(self, tool_name: str) -> None:
        self.tool_name = tool_name
        self.stack: list[Any] = []

    def fail(self, where: str, message: str) -> ToolDefinitionError:
        return ToolDefinitionError(f'Tool "{self.tool_name}": {where}: {message}')

    def schema(self, tp: Any, where: str) -> tuple[dict[str, Any], Converter | None]:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is None:
            if tp is Any or tp is object:
                return {}, None
            if tp in _PRIMITIVES:
                return dict(_PRIMITIVES[tp]), (_to_float if tp is float else None)
        if origin is typing.Annotated:
            schema, conv = self.schema(args[0], where)
            extra = _annotated_constraints(args[1:], schema)
            description = _annotated_description(args[1:])
            if description:
                extra["description"] = description
            return ({**schema, **extra} if extra else schema), conv
        if origin is typing.Literal:
            return _literal(args), None
        if origin is typing.Union or origin is types.UnionType:
            return self._union(args, where)
        if tp in (list, set, frozenset, tuple) or origin in (list, set, frozenset, tuple, Sequence):
            return self._array(tp, origin, args, where)
        if tp is dict or origin in (dict, Mapping):
            return self._mapping(args, where)
        if isinstance(tp, type):
            if issubclass(tp, enum.Enum):
                return _enum(tp), tp
            if _is_typeddict(tp):
                return self._guarded(tp, where, self._typeddict)
            if dataclasses.is_dataclass(tp):
                return self._guarded(tp, where, self._dataclass)
            if _is_pydantic_model(tp):
                return self._pydantic(tp, where)
        raise self.fail(where, f"type {tp!r} has no JSON Schema form here; pass parameters= to the tool explicitly")

    def _guarded(self, tp: type, where: str, build: Callable[[type, str], tuple[dict[str, Any], Converter | None]]) -> Any:
        if tp in self.stack:
            raise self.fail(where, f"{tp.__name__} refers to itself; recursive types need parameters= given explicitly")
        self.stack.append(tp)
        try:
            return build(tp, where)
        finally:
            self.stack.pop()

    def _union(self, args: tuple[Any, ...], where: str) -> tuple[dict[str, Any], Converter | None]:
        branches = [self.schema(a, where) for a in args]
        schemas = [s for s, _ in branches]
        if all(set(s) == {"type"} and isinstance(s["type"], str) for s in schemas):
            union: dict[str, Any] = {"type": [s["type"] for s in schemas]}
        else:
            union = {"anyOf": schemas}
        if all(c is None for _, c in branches):
            return union, None
        return union, _union_converter(branches)

    def _array(self, tp: Any, origin: Any, args: tuple[Any, ...], where: str) -> tuple[dict[str, Any], Converter | None]:
        container = origin or tp
        if container is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if args == ((),):  # tuple[()]
                return {"type": "array", "maxItems": 0}, tuple
            parts = [self.schema(a, where) for a in args]
            convs = [c for _, c in parts]
            schema = {
                "type": "array",
                "items": [s for s, _ in parts],
                "minItems": len(args),
                "maxItems": len(args),
                "additionalItems": False,
            }
            if all(c is None for c in convs):
                return schema, tuple
            return schema, lambda v: tuple(v[i] if c is None else c(v[i]) for i, c in enumerate(convs))
        item_tp = args[0] if args else Any
        item, item_conv = self.schema(item_tp, where)
        schema = {"type": "array"}
        if item:
            schema["items"] = item
        make: Any = {set: set, frozenset: frozenset, tuple: tuple}.get(container)
        if item_conv is None:
            return schema, make
        if make is None:
            return schema, lambda v: [item_conv(x) for x in v]
        return schema, lambda v: make(item_conv(x) for x in v)

    def _mapping(self, args: tuple[Any, ...], where: str) -> tuple[dict[str, Any], Converter | None]:
        if not args:
            return {"type": "object"}, None
        if args[0] is not str:
            raise self.fail(where, f"dict keys must be str (JSON object keys are strings), got {args[0]!r}")
        value, conv = self.schema(args[1], where)
        schema: dict[str, Any] = {"type": "object", "additionalProperties": value or True}
        if conv is None:
            return schema, None
        return schema, lambda v: {k: conv(x) for k, x in v.items()}

    def _fields(
        self, owner: type, fields: list[tuple[str, Any, bool]], where: str
    ) -> tuple[dict[str, Any], tuple[tuple[str, Converter], ...]]:
        doc = parse_docstring(_own_doc(owner))
        properties: dict[str, Any] = {}
        required: list[str] = []
        converters: list[tuple[str, Converter]] = []
        for name, hint, is_required in fields:
            schema, conv = self.schema(hint, f"{where}, field {owner.__name__}.{name}")
            if name in doc.params and "description" not in schema:
                schema = {**schema, "description": doc.params[name]}
            properties[name] = schema
            if is_required:
                required.append(name)
            if conv is not None:
                converters.append((name, conv))
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        if doc.description:
            schema["description"] = doc.description
        return schema, tuple(converters)

    def _hints(self, tp: type, where: str) -> dict[str, Any]:
        try:
            return typing.get_type_hints(tp, include_extras=True)
        except Exception as exc:  # noqa: BLE001
            raise self.fail(where, f"cannot resolve the type hints of {tp.__name__}: {exc}") from None

    def _typeddict(self, tp: type, where: str) -> tuple[dict[str, Any], Converter | None]:
        hints = self._hints(tp, where)
        required_keys = getattr(tp, "__required_keys__", frozenset(hints))
        # __required_keys__ misses NotRequired[...] written as a string annotation, so the
        # wrappers (kept by include_extras) decide first.
        fields = [(name, _strip_required(hint), _is_required(name, hint, required_keys)) for name, hint in hints.items()]
        schema, converters = self._fields(tp, fields, where)
        if not converters:
            return schema, None

        def convert(v: dict[str, Any]) -> dict[str, Any]:
            out = dict(v)
            for name, conv in converters:
                if name in out:
                    out[name] = conv(out[name])
            return out

        return schema, convert

    def _dataclass(self, tp: type, where: str) -> tuple[dict[str, Any], Converter | None]:
        hints = self._hints(tp, where)
        fields = [
            (
                f.name,
                hints.get(f.name, Any),
                f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
            )
            for f in dataclasses.fields(tp)
            if f.init
        ]
        schema, converters = self._fields(tp, fields, where)
        conv_map = dict(converters)

        def convert(v: Any) -> Any:
            if not isinstance(v, dict):
                return v
            return tp(**{k: (conv_map[k](x) if k in conv_map else x) for k, x in v.items()})

        return schema, convert

    def _pydantic(self, tp: type, where: str) -> tuple[dict[str, Any], Converter | None]:
        try:
            raw = tp.model_json_schema()  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - pydantic's own errors say what is wrong
            raise self.fail(where, f"pydantic could not build a schema for {tp.__name__}: {exc}") from None
        defs = raw.pop("$defs", {})
        schema = _inline_refs(raw, defs, (), lambda msg: self.fail(where, msg))
        return schema, tp.model_validate  # type: ignore[attr-defined]


def _union_converter(branches: list[tuple[dict[str, Any], Converter | None]]) -> Converter:
    # Give a value to the first branch whose JSON type fits it, if that branch converts.
    table = []
    for schema, conv in branches:
        t = schema.get("type")
        kinds = {t} if isinstance(t, str) else set(t) if isinstance(t, list) else None
        if kinds is not None and "number" in kinds:
            kinds.add("integer")
        table.append((kinds, conv))

    def convert(v: Any) -> Any:
        name = json_type_name(v)
        for kinds, conv in table:
            if kinds is None or name in kinds:
                return v if conv is None else conv(v)
        return v

    return convert


def _inline_refs(node: Any, defs: dict[str, Any], seen: tuple[str, ...], fail: Callable[[str], Exception]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            key = ref[len("#/$defs/") :]
            if key in seen:
                raise fail(f"model {key} refers to itself; recursive models need parameters= given explicitly")
            target = _inline_refs(defs[key], defs, (*seen, key), fail)
            extra = {k: _inline_refs(v, defs, seen, fail) for k, v in node.items() if k != "$ref"}
            return {**target, **extra}
        return {k: _inline_refs(v, defs, seen, fail) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline_refs(v, defs, seen, fail) for v in node]
    return node


def _literal(values: tuple[Any, ...]) -> dict[str, Any]:
    enum_values = [v.value if isinstance(v, enum.Enum) else v for v in values]
    schema: dict[str, Any] = {}
    kinds = {_PRIMITIVES[type(v)]["type"] for v in enum_values if type(v) in _PRIMITIVES}
    if len(kinds) == 1 and all(type(v) in _PRIMITIVES for v in enum_values):
        schema["type"] = kinds.pop()
    schema["enum"] = enum_values
    return schema


def _enum(tp: type[enum.Enum]) -> dict[str, Any]:
    schema = _literal(tuple(m.value for m in tp))
    doc = _own_doc(tp)
    if doc:
        schema["description"] = parse_docstring(doc).description
    return schema


_BOUNDS = (("ge", "minimum"), ("gt", "exclusiveMinimum"), ("le", "maximum"), ("lt", "exclusiveMaximum"), ("multiple_of", "multipleOf"))


def _annotated_constraints(metadata: Sequence[Any], schema: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema keywords from ``annotated_types`` constraints (``Ge``, ``MaxLen`` ...) and
    ``pydantic.Field(ge=..., max_length=..., pattern=...)``, read by attribute name so that
    neither package is imported."""
    out: dict[str, Any] = {}
    kind = schema.get("type")
    for m in metadata:
        if isinstance(m, str):
            continue
        nested = getattr(m, "metadata", None)  # pydantic's FieldInfo keeps its constraints here
        if isinstance(nested, list):
            out.update(_annotated_constraints(nested, schema))
        for attr, key in _BOUNDS:
            value = getattr(m, attr, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[key] = value
        for attr, suffix in (("min_length", "min"), ("max_length", "max")):
            value = getattr(m, attr, None)
            if isinstance(value, int) and not isinstance(value, bool):
                if kind == "string":
                    out[f"{suffix}Length"] = value
                elif kind == "array":
                    out[f"{suffix}Items"] = value
                elif kind == "object":
                    out[f"{suffix}Properties"] = value
        pattern = getattr(m, "pattern", None)
        if isinstance(pattern, str) and kind == "string":
            out["pattern"] = pattern
    return out


def _annotated_description(metadata: tuple[Any, ...]) -> str | None:
    for m in metadata:
        if isinstance(m, str):
            return m
        description = getattr(m, "description", None)  # pydantic.Field(description=...)
        if isinstance(description, str):
            return description
    return None


def _own_doc(tp: type) -> str | None:
    doc = tp.__dict__.get("__doc__")
    if not doc:
        return None
    # dataclasses and Enum write a docstring of their own when the class has none.
    if doc.startswith(f"{tp.__name__}(") or doc in ("An enumeration.", enum.Enum.__doc__):
        return None
    return doc


def _is_required(name: str, hint: Any, required_keys: frozenset[str]) -> bool:
    origin = typing.get_origin(hint)
    if origin is typing.NotRequired:
        return False
    return origin is typing.Required or name in required_keys


def _strip_required(hint: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Required, typing.NotRequired):
        return typing.get_args(hint)[0]
    return hint


def _is_typeddict(tp: type) -> bool:
    return typing.is_typeddict(tp)


def _is_pydantic_model(tp: type) -> bool:
    # pydantic is imported only when a class could be one of its models.
    if not hasattr(tp, "model_json_schema"):
        return False
    from pydantic import BaseModel

    return issubclass(tp, BaseModel)
