"""Tool-argument validation: schema checks, coercion and the error text of docs/loop-contract.md.

:class:`ArgumentValidator` is built once per tool and sits on the loop's hot path. Valid
arguments take the fast path: a precompiled coercion plan (which copies only the containers it
changes, and does nothing at all for a schema where no value can be coerced), then a
``fastjsonschema`` validator. ``jsonschema``'s ``Draft7Validator`` is built only when arguments
fail, to write one error line per problem in OpenProgram's format.

Coercion follows docs/loop-contract.md, with two deliberate differences:

- A boolean given for a string becomes JSON's ``"true"``/``"false"``, not Python's
  ``"True"``/``"False"`` (OpenProgram's spelling, spec §11 Q12).
- Coercion also reaches through type lists (``["integer", "null"]``) and ``anyOf``/``oneOf``
  branches, which is how ``Optional[int]`` parameters are declared; a value whose type already
  fits is never touched. ``$ref`` is still not followed, and defaults are never filled in.

Like OpenProgram, ``format`` keywords are not enforced (no format checker, on either path).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from .errors import ToolDefinitionError

_JSON_TYPE_NAMES: dict[type, str] = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}

# A coercer is (trigger types, fn): the caller calls fn(v) only when type(v) is in the triggers
# (None: always), and fn returns v itself when it changes nothing.
Coercer = tuple["frozenset[type] | None", Callable[[Any], Any]]

_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})


def json_type_name(value: Any) -> str:
    """The JSON name of a Python value's type (``object``, ``array`` ...), else its class name."""
    name = _JSON_TYPE_NAMES.get(type(value))
    if name is not None:
        return name
    for cls, name in _JSON_TYPE_NAMES.items():
        if isinstance(value, cls):
            return name
    return type(value).__name__


def _to_integer(v: str) -> Any:
    try:
        return int(v.strip())
    except ValueError:
        return v


def _to_number(v: str) -> Any:
    try:
        f = float(v.strip())
    except ValueError:
        return v
    # "nan" and "inf" parse, but no JSON number can carry them.
    return f if math.isfinite(f) else v


def _to_boolean(v: str) -> Any:
    s = v.strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    return v


def _to_string(v: Any) -> Any:
    if v is True:
        return "true"
    if v is False:
        return "false"
    return str(v)


_SCALARS: dict[str, Coercer] = {
    "integer": (frozenset({str}), _to_integer),
    "number": (frozenset({str}), _to_number),
    "boolean": (frozenset({str}), _to_boolean),
    "string": (frozenset({int, float, bool}), _to_string),
}


def _matches(value: Any, types: tuple[str, ...]) -> bool:
    """Whether the value's JSON type is one of ``types`` (so coercion must leave it alone)."""
    name = json_type_name(value)
    if name in types:
        return True
    if name == "integer":
        return "number" in types
    if name == "number":
        return "integer" in types and value.is_integer()
    return False


def compile_coercer(schema: Any) -> Coercer | None:
    """The coercion plan for ``schema``, or None when no value can ever be changed by it."""
    if not isinstance(schema, dict):
        return None
    raw_types = schema.get("type")
    types: tuple[str, ...] | None
    if isinstance(raw_types, str):
        types = (raw_types,)
    elif isinstance(raw_types, list):
        types = tuple(t for t in raw_types if isinstance(t, str))
    else:
        types = None
    obj = _object_coercer(schema) if types is None or "object" in types else None
    arr = _array_coercer(schema) if types is None or "array" in types else None
    scalars = [_SCALARS[t] for t in types or () if t in _SCALARS]
    branches = []
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or ():
            c = compile_coercer(sub)
            sub_types = sub.get("type") if isinstance(sub, dict) else None
            if isinstance(sub_types, str):
                sub_types = (sub_types,)
            branches.append((tuple(sub_types) if isinstance(sub_types, (list, tuple)) else None, c))
    if not branches or all(c is None for _, c in branches):
        branches = []
    # The common single-type cases need no dispatch.
    if not branches and types is not None and len(types) == 1:
        if types[0] in _SCALARS:
            return _SCALARS[types[0]]
        if types[0] == "object":
            return obj
        if types[0] == "array":
            return arr
    if obj is None and arr is None and not scalars and not branches:
        return None
    return None, _general(types, obj, arr, scalars, branches)


def _general(
    types: tuple[str, ...] | None,
    obj: Coercer | None,
    arr: Coercer | None,
    scalars: list[Coercer],
    branches: list[tuple[tuple[str, ...] | None, Coercer | None]],
) -> Callable[[Any], Any]:
    obj_fn = obj[1] if obj else None
    arr_fn = arr[1] if arr else None

    def coerce(v: Any) -> Any:
        if types is None or _matches(v, types):
            t = type(v)
            if obj_fn is not None and t is dict:
                v = obj_fn(v)
            elif arr_fn is not None and t is list:
                v = arr_fn(v)
        else:
            for triggers, fn in scalars:
                if type(v) in triggers:
                    new = fn(v)
                    if new is not v:
                        v = new
                        break
        if branches:
            v = _through_branches(v, branches)
        return v

    return coerce


def _through_branches(v: Any, branches: list[tuple[tuple[str, ...] | None, Coercer | None]]) -> Any:
    # A branch whose type fits the value gets it (for its nested properties); only when none fits
    # is each branch's scalar coercion tried, in order.
    for sub_types, c in branches:
        if sub_types is None or _matches(v, sub_types):
            if c is None:
                return v
            triggers, fn = c
            return fn(v) if triggers is None or type(v) in triggers else v
    for _, c in branches:
        if c is not None:
            triggers, fn = c
            if triggers is None or type(v) in triggers:
                new = fn(v)
                if new is not v:
                    return new
    return v


def _object_coercer(schema: dict[str, Any]) -> Coercer | None:
    props = schema.get("properties")
    plan = []
    if isinstance(props, dict):
        for key, sub in props.items():
            c = compile_coercer(sub)
            if c is not None:
                plan.append((key, c[0], c[1]))
    extra = schema.get("additionalProperties")
    extra_c = compile_coercer(extra) if isinstance(extra, dict) else None
    if not plan and extra_c is None:
        return None
    listed = frozenset(props) if isinstance(props, dict) else frozenset()
    missing = _MISSING

    def coerce_object(v: dict[str, Any]) -> dict[str, Any]:
        out = None
        for key, triggers, fn in plan:
            old = v.get(key, missing)
            if old is not missing and (triggers is None or type(old) in triggers):
                new = fn(old)
                if new is not old:
                    if out is None:
                        out = dict(v)
                    out[key] = new
        if extra_c is not None:
            triggers, fn = extra_c
            for key, old in v.items():
                if key not in listed and (triggers is None or type(old) in triggers):
                    new = fn(old)
                    if new is not old:
                        if out is None:
                            out = dict(v)
                        out[key] = new
        return v if out is None else out

    return frozenset({dict}), coerce_object


def _array_coercer(schema: dict[str, Any]) -> Coercer | None:
    items = schema.get("items")
    if isinstance(items, list):
        positional = [compile_coercer(s) for s in items]
        if all(c is None for c in positional):
            return None
        plans = list(enumerate(positional))

        def coerce_tuple(v: list[Any]) -> list[Any]:
            out = None
            for i, c in plans:
                if c is None or i >= len(v):
                    continue
                old = v[i]
                triggers, fn = c
                if triggers is None or type(old) in triggers:
                    new = fn(old)
                    if new is not old:
                        if out is None:
                            out = list(v)
                        out[i] = new
            return v if out is None else out

        return frozenset({list}), coerce_tuple
    c = compile_coercer(items)
    if c is None:
        return None
    triggers, fn = c

    def coerce_items(v: list[Any]) -> list[Any]:
        out = None
        for i, old in enumerate(v):
            if triggers is None or type(old) in triggers:
                new = fn(old)
                if new is not old:
                    if out is None:
                        out = list(v)
                    out[i] = new
        return v if out is None else out

    return frozenset({list}), coerce_items


class _Missing:
    __slots__ = ()


_MISSING = _Missing()


class _Invalid(Exception):
    """Raised by the fallback checker; the failure path then asks jsonschema for the details."""


def _validator_class(schema: dict[str, Any]) -> Any:
    import jsonschema.validators

    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)


# Tools are often rebuilt with the same schema (a @tool inside a test, a bound method per
# instance); checking a schema against the metaschema and compiling it cost about a millisecond
# each, so both are remembered, keyed by the schema's canonical JSON, for a bounded number.
_CACHE_SIZE = 512
_CHECKED: dict[str, bool] = {}
_COMPILED: dict[str, Callable[[Any], Any]] = {}


def _schema_key(schema: Any) -> str | None:
    try:
        return json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return None


def _remember(cache: dict[str, Any], key: str, value: Any) -> None:
    if len(cache) >= _CACHE_SIZE:
        try:
            cache.pop(next(iter(cache)))
        except (RuntimeError, StopIteration, KeyError):  # another thread got there first
            cache.clear()
    cache[key] = value


def check_schema(tool_name: str, schema: Any) -> None:
    """Raise :class:`ToolDefinitionError` unless ``schema`` is a valid JSON Schema for an object."""
    if not isinstance(schema, dict):
        raise ToolDefinitionError(
            f'Tool "{tool_name}": parameters must be a JSON Schema object (a dict), got {type(schema).__name__}'
        )
    key = _schema_key(schema)
    if key is None or key not in _CHECKED:
        import jsonschema.exceptions

        try:
            _validator_class(schema).check_schema(schema)
        except jsonschema.exceptions.SchemaError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
            raise ToolDefinitionError(
                f'Tool "{tool_name}" has an invalid parameters schema at {where}: {exc.message}'
            ) from None
        if key is not None:
            _remember(_CHECKED, key, True)
    if schema.get("type") != "object":
        raise ToolDefinitionError(
            f'Tool "{tool_name}": the parameters schema must have "type": "object" (providers accept only '
            f"objects), got type {schema.get('type')!r}"
        )


_FAST_DRAFTS = (
    None,
    "http://json-schema.org/draft-04/schema",
    "http://json-schema.org/draft-06/schema",
    "http://json-schema.org/draft-07/schema",
)


class ArgumentValidator:
    """Coerces and validates one tool's arguments; build it once per tool (the schema is trusted
    to be valid, see :func:`check_schema`)."""

    __slots__ = ("tool_name", "schema", "_coerce", "_check", "_draft")

    def __init__(self, tool_name: str, schema: dict[str, Any]) -> None:
        self.tool_name = tool_name
        self.schema = schema
        c = compile_coercer(schema)
        # The top level is always a dict when the coercer runs, so its trigger needs no check.
        self._coerce = c[1] if c is not None else None
        self._check: Callable[[Any], Any] = self._compile_then_check
        self._draft: Any = None

    def prepare(self, raw_args: Any) -> tuple[dict[str, Any] | None, str | None]:
        """``(coerced_args, None)`` or ``(None, error_text)``; ``raw_args`` is never mutated."""
        if type(raw_args) is not dict and not isinstance(raw_args, dict):
            return None, f"Tool arguments must be an object, got {json_type_name(raw_args)}"
        coerce = self._coerce
        args = raw_args if coerce is None else coerce(raw_args)
        try:
            self._check(args)
        except Exception:
            return self._failure(raw_args, args)
        return args, None

    def _compile_then_check(self, args: Any) -> Any:
        # Compiled on first use: building a tool at import time stays cheap.
        self._check = self._compile()
        return self._check(args)

    def _compile(self) -> Callable[[Any], Any]:
        schema_uri = self.schema.get("$schema")
        if isinstance(schema_uri, str):
            schema_uri = schema_uri.rstrip("#")
        if schema_uri in _FAST_DRAFTS:
            key = _schema_key(self.schema)
            cached = _COMPILED.get(key) if key is not None else None
            if cached is not None:
                return cached
            import fastjsonschema

            try:
                compiled = fastjsonschema.compile(
                    self.schema, use_default=False, use_formats=False, detailed_exceptions=False
                )
            except Exception:  # noqa: BLE001 - any schema fastjsonschema cannot compile uses jsonschema
                return self.reference_check
            if key is not None:
                _remember(_COMPILED, key, compiled)
            return compiled
        return self.reference_check

    def reference_check(self, args: Any) -> None:
        """Raise unless ``jsonschema`` accepts ``args``: the check for schemas that
        fastjsonschema cannot compile, and the reference the fast path is tested against."""
        if not self._validator().is_valid(args):
            raise _Invalid

    def _validator(self) -> Any:
        if self._draft is None:
            self._draft = _validator_class(self.schema)(self.schema)
        return self._draft

    def _failure(self, raw_args: dict[str, Any], args: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        errors = sorted(self._validator().iter_errors(args), key=_path_key)
        if not errors:
            # fastjsonschema and jsonschema disagree; jsonschema is the reference.
            return args, None
        lines = [f"  - {'.'.join(str(p) for p in e.absolute_path) or 'root'}: {e.message}" for e in errors]
        try:
            shown = json.dumps(raw_args, indent=2, ensure_ascii=False)
        except (TypeError, ValueError):
            shown = json.dumps(raw_args, indent=2, ensure_ascii=False, default=str)
        return None, (
            f'Validation failed for tool "{self.tool_name}":\n' + "\n".join(lines) + "\n\nReceived arguments:\n" + shown
        )


def _path_key(error: Any) -> tuple[tuple[int, Any], ...]:
    return tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in error.absolute_path)
