"""JSON Schema to hypothesis strategy: loopkit's own generator of values that validate.

The compiler turns each keyword it understands into a direct construction (bounds into
``st.integers(min_value=...)``, ``required`` into ``st.fixed_dictionaries``...), so most schemas
generate without a single rejected example. What it cannot build directly (``oneOf``'s "exactly
one", ``not``, ``if``/``then``, keywords it does not know, ``allOf`` members that do not merge)
it generates from the closest schema it can build and filters with a validator of the real one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st

from ..errors import UsageError
from . import _edges as edges
from . import _keywords as kw

JSONSchema = Mapping[str, Any] | bool

_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "$schema", "$id", "$anchor",
     "$defs", "definitions", "deprecated", "readOnly", "writeOnly", "format", "nullable",
     "contentMediaType", "contentEncoding", "$vocabulary", "discriminator", "x-order"}
)  # fmt: skip
_BUILT = frozenset(
    {"type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
     "multipleOf", "minLength", "maxLength", "pattern", "items", "prefixItems", "additionalItems",
     "minItems", "maxItems", "uniqueItems", "properties", "required", "additionalProperties",
     "patternProperties", "minProperties", "maxProperties", "anyOf", "oneOf", "allOf", "$ref"}
)  # fmt: skip
_EXTRA_KEYS = st.one_of(
    st.text(st.characters(codec="ascii", categories=("Ll", "Lu", "Nd", "Pc")), min_size=1, max_size=8),
    st.sampled_from(edges.TRICKY_KEYS),
    st.text(max_size=8),
)  # free-form keys: plain names, names that break handlers (unicode, empty, NUL), any text


def any_json(max_leaves: int = 6) -> st.SearchStrategy[Any]:
    """Any JSON value (finite numbers, text without surrogates)."""
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
    return st.recursive(
        scalars,
        lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
        max_leaves=max_leaves,
    )


_CHECKED: dict[str, Any] = {}
"""Schemas already checked against their metaschema (by canonical JSON): their validator class.
Checking costs a millisecond or more and the same few schemas are checked by every strategy made
for them (``arguments``, ``violations``, ``tool_calls``, ``scripts``...)."""


def validator_for(schema: JSONSchema) -> Any:
    """A jsonschema validator of the schema's dialect (2020-12 unless it says or shows otherwise)."""
    try:
        key: str | None = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):  # not JSON (a set, a non-string key...): checked every time
        key = None
    cls = _CHECKED.get(key) if key is not None else None
    if cls is None:
        import jsonschema

        default = jsonschema.Draft202012Validator
        if isinstance(schema, Mapping) and "$schema" not in schema and _uses_tuple_items(schema):
            default = jsonschema.Draft7Validator
        cls = jsonschema.validators.validator_for(schema, default=default)
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "the root"
            raise UsageError(f"not a valid JSON Schema at {where}: {exc.message}") from None
        if key is not None:
            if len(_CHECKED) >= 1024:
                _CHECKED.clear()
            _CHECKED[key] = cls
    return cls(schema)


def _uses_tuple_items(schema: Any) -> bool:
    if isinstance(schema, Mapping):
        if isinstance(schema.get("items"), list):
            return True
        return any(_uses_tuple_items(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_uses_tuple_items(v) for v in schema)
    return False


def merge(a: JSONSchema, b: JSONSchema) -> tuple[JSONSchema, bool]:
    """A schema for values valid under both ``a`` and ``b``; the flag is False where the merge
    could only over-approximate (the result then needs a check against both)."""
    if a is True or a == {}:
        return b, True
    if b is True or b == {}:
        return a, True
    if a is False or b is False:
        return False, True
    out = dict(a)
    exact = True
    for key, bv in b.items():
        if key not in out or key in _ANNOTATIONS:
            out.setdefault(key, bv)
            continue
        av = out[key]
        if av == bv:
            continue
        if key == "type":
            ta, tb = kw.declared_types({"type": av}) or [], kw.declared_types({"type": bv}) or []
            both = [t for t in ta if t in tb or (t == "integer" and "number" in tb)]
            both += [t for t in tb if t == "integer" and "number" in ta and t not in both]
            if not both:
                return False, True
            out[key] = both
        elif key in ("minimum", "minLength", "minItems", "minProperties", "exclusiveMinimum"):
            out[key] = max(av, bv)
        elif key in ("maximum", "maxLength", "maxItems", "maxProperties", "exclusiveMaximum"):
            out[key] = min(av, bv)
        elif key == "required":
            out[key] = list(dict.fromkeys([*av, *bv]))
        elif key == "enum":
            keep = {kw.canonical(v) for v in bv}
            out[key] = [v for v in av if kw.canonical(v) in keep]
        elif key == "properties":
            props = dict(av)
            for name, sub in bv.items():
                if name in props:
                    props[name], ok = merge(props[name], sub)
                    exact = exact and ok
                else:
                    props[name] = sub
            out[key] = props
            if a.get("additionalProperties", True) is not True or b.get("additionalProperties", True) is not True:
                exact = False
        elif key in ("items", "additionalProperties") and isinstance(av, (Mapping, bool)) and isinstance(bv, (Mapping, bool)):
            out[key], ok = merge(av, bv)
            exact = exact and ok
        elif key == "uniqueItems":
            out[key] = bool(av or bv)
        elif key == "allOf":
            out[key] = [*av, *bv]
        else:
            exact = False  # two patterns, two multipleOfs, two anyOfs...: keep a's, check b's
    return out, exact


class SchemaCompiler:
    """Compiles one root schema (and every subschema reached from it) into strategies.

    Args:
        root: the JSON Schema; local ``$ref`` (``#/$defs/x``, ``#/definitions/x``, ``#``) resolve
            against it.
    """

    def __init__(self, root: JSONSchema) -> None:
        if not isinstance(root, (Mapping, bool)):
            raise UsageError(f"a JSON Schema is a mapping or a boolean, got {type(root).__name__}")
        self.root = root
        self.validator = validator_for(root)
        self._cache: dict[int, st.SearchStrategy[Any]] = {}
        self._keep: list[Any] = []  # keep cached schemas alive so their ids stay unique
        self._refs: dict[str, st.SearchStrategy[Any]] = {}
        self._checks: dict[int, Callable[[Any], bool]] = {}

    # --- references and checks -------------------------------------------------------------

    def resolve(self, ref: str) -> JSONSchema:
        """The subschema a local ``$ref`` points to."""
        if not ref.startswith("#"):
            raise UsageError(f"$ref {ref!r} is not local; only references into the schema itself (#/$defs/...) are supported")
        node: Any = self.root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise UsageError(f"$ref {ref!r} points nowhere: no {part!r} in the schema")
        return node

    def deref(self, schema: JSONSchema, _seen: frozenset[str] = frozenset()) -> JSONSchema:
        """``schema`` with a top-level ``$ref`` replaced by (merged with) its target."""
        while isinstance(schema, Mapping) and "$ref" in schema:
            ref = schema["$ref"]
            if ref in _seen:
                raise UsageError(f"$ref {ref!r} refers to itself without any keyword in between")
            _seen = _seen | {ref}
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema, _ = merge(self.resolve(ref), rest)
        return schema

    def check(self, schema: JSONSchema) -> Callable[[Any], bool]:
        """A predicate: does a value validate against ``schema`` (a subschema of the root)?"""
        key = id(schema)
        found = self._checks.get(key)
        if found is None:
            self._keep.append(schema)
            found = self._checks[key] = self.validator.evolve(schema=schema).is_valid
        return found

    # --- compilation -------------------------------------------------------------------------

    def strategy(self, schema: JSONSchema) -> st.SearchStrategy[Any]:
        """Values that validate against ``schema``."""
        key = id(schema)
        found = self._cache.get(key)
        if found is None:
            self._keep.append(schema)
            found = self._cache[key] = self._compile(schema)
        return found

    def _compile(self, schema: JSONSchema) -> st.SearchStrategy[Any]:
        if schema is True:
            return any_json()
        if schema is False:
            return st.nothing()
        if not isinstance(schema, Mapping):
            raise UsageError(f"a JSON Schema is a mapping or a boolean, got {schema!r}")
        if "$ref" in schema:
            if len(schema.keys() - _ANNOTATIONS) == 1:
                return self._ref(schema["$ref"])
            return self.strategy(self.deref(schema))
        if "allOf" in schema:
            merged: JSONSchema = {k: v for k, v in schema.items() if k != "allOf"}
            exact = True
            for sub in schema["allOf"]:
                merged, ok = merge(merged, self.deref(sub))
                exact = exact and ok
            built = self.strategy(merged)
            return built if exact else built.filter(self.check(schema))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                base = {k: v for k, v in schema.items() if k != key}
                branches = []
                exact = key == "anyOf"
                for sub in schema[key]:
                    merged, ok = merge(base, self.deref(sub))
                    exact = exact and ok
                    branches.append(self.strategy(merged))
                built = st.one_of(branches)
                return built if exact else built.filter(self.check(schema))
        unknown = schema.keys() - _BUILT - _ANNOTATIONS
        if unknown:  # not, if/then/else, contains, dependentRequired, propertyNames...
            return self._typed(schema).filter(self.check(schema))
        return self._typed(schema)

    def _ref(self, ref: str) -> st.SearchStrategy[Any]:
        found = self._refs.get(ref)
        if found is None:
            target = self.resolve(ref)
            # deferred: a recursive definition refers to itself while it is being compiled
            found = self._refs[ref] = st.deferred(lambda: self.strategy(target))
        return found

    def _typed(self, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        if "const" in schema:
            value = schema["const"]
            return st.just(value) if self._scalar_ok(schema, value) else st.nothing()
        if "enum" in schema:
            ok = [v for v in schema["enum"] if self._scalar_ok(schema, v)]
            return st.sampled_from(ok) if ok else st.nothing()
        types = kw.infer_types(schema)
        if "number" in types and "integer" in types:
            types = [t for t in types if t != "integer"]
        builders = {
            "null": lambda s: st.none(),
            "boolean": lambda s: st.booleans(),
            "integer": self._integers,
            "number": self._numbers,
            "string": self._strings,
            "array": self._arrays,
            "object": self._objects,
        }
        return st.one_of([builders[t](schema) for t in types])

    def _scalar_ok(self, schema: Mapping[str, Any], value: Any) -> bool:
        # enum/const members must also pass the schema's other keywords; checked once, here
        return self.check(schema)(value)

    def _integers(self, schema: Mapping[str, Any]) -> st.SearchStrategy[int | float]:
        """Integers in range, the range's edges first in line, and now and then the same integer
        as a float (``6.0``), which JSON Schema (and so the loop) accepts for ``integer``."""
        plain = self._plain_integers(schema)
        found = edges.integer_edges(schema)
        as_float = st.tuples(plain, st.integers(0, 15)).map(_sometimes_float)
        return st.one_of(as_float, st.sampled_from(found)) if found else as_float

    def _plain_integers(self, schema: Mapping[str, Any]) -> st.SearchStrategy[int]:
        lo, lo_ex, hi, hi_ex = kw.numeric_bounds(schema)
        imin = None if lo is None else (math.floor(lo) + 1 if lo_ex else math.ceil(lo))
        imax = None if hi is None else (math.ceil(hi) - 1 if hi_ex else math.floor(hi))
        if imin is not None and imax is not None and imin > imax:
            return st.nothing()
        step = schema.get("multipleOf")
        if step is None:
            return st.integers(min_value=imin, max_value=imax)
        if float(step).is_integer():
            d = int(step)
            kmin = None if imin is None else -((-imin) // d)
            kmax = None if imax is None else imax // d
            if kmin is not None and kmax is not None and kmin > kmax:
                return st.nothing()
            return st.integers(min_value=kmin, max_value=kmax).map(lambda k: k * d)
        return st.integers(min_value=imin, max_value=imax).filter(lambda v: kw.is_multiple(v, step))

    def _numbers(self, schema: Mapping[str, Any]) -> st.SearchStrategy[float | int]:
        lo, lo_ex, hi, hi_ex = kw.numeric_bounds(schema)
        step = schema.get("multipleOf")
        ints = self._integers(schema)
        found = edges.number_edges(schema)
        edge = [st.sampled_from(found)] if found else []
        if step is not None:
            kmin = None if lo is None else math.floor(lo / step)
            kmax = None if hi is None else math.ceil(hi / step)
            floats = st.integers(min_value=kmin, max_value=kmax).map(lambda k: k * step)
            floats = floats.filter(lambda v: not kw.scalar_failures(schema, v))
            return st.one_of(ints, floats, *edge)
        floats = st.floats(
            min_value=None if lo is None else float(lo),
            max_value=None if hi is None else float(hi),
            exclude_min=lo_ex and lo is not None,
            exclude_max=hi_ex and hi is not None,
            allow_nan=False,
            allow_infinity=False,
        )
        return st.one_of(ints, floats, *edge)

    def _strings(self, schema: Mapping[str, Any]) -> st.SearchStrategy[str]:
        lo = schema.get("minLength", 0)
        hi = schema.get("maxLength")
        if hi is not None and lo > hi:
            return st.nothing()
        pattern = schema.get("pattern")
        if pattern is not None:
            regex = kw.compiled_pattern(pattern)
            return st.from_regex(regex).filter(lambda s: lo <= len(s) and (hi is None or len(s) <= hi))
        fmt = _FORMATS.get(schema.get("format", ""))
        if fmt is not None:
            built = fmt.filter(lambda s: lo <= len(s) and (hi is None or len(s) <= hi))
            found = edges.format_edges(schema["format"], schema)
            return st.one_of(built, st.sampled_from(found)) if found else built
        found = edges.text_edges(schema)
        text = st.text(min_size=lo, max_size=hi)
        return st.one_of(text, st.sampled_from(found)) if found else text

    def _arrays(self, schema: Mapping[str, Any]) -> st.SearchStrategy[list[Any]]:
        items = schema.get("items", True)
        prefix = schema.get("prefixItems")
        rest: JSONSchema = items
        if isinstance(items, list):  # draft 7 tuple form
            prefix, rest = items, schema.get("additionalItems", True)
        lo, hi = schema.get("minItems", 0), schema.get("maxItems")
        unique = schema.get("uniqueItems", False) is True
        rest_s = self.strategy(rest)
        if not prefix:
            if rest is False:
                return st.just([]) if lo == 0 else st.nothing()
            if hi is None and isinstance(rest, Mapping) and "$ref" in rest:
                hi = max(lo, 3)  # a recursive tree: a few children per node keeps examples small and fast
            return st.lists(rest_s, min_size=lo, max_size=hi, unique_by=kw.canonical if unique else None)
        heads = [self.strategy(p) for p in prefix]
        cap = hi if hi is not None else len(prefix) + 3
        if rest is False:
            cap = min(cap, len(prefix))
        if lo > cap:
            return st.nothing()

        built = _prefixed_lists(lo, cap, heads, rest_s)
        if unique:
            built = built.filter(lambda xs: len({kw.canonical(x) for x in xs}) == len(xs))
        return built

    def _objects(self, schema: Mapping[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
        props: Mapping[str, Any] = schema.get("properties", {})
        required = list(dict.fromkeys(schema.get("required", [])))
        extra: JSONSchema = schema.get("additionalProperties", True)
        patterns: Mapping[str, Any] = schema.get("patternProperties", {})

        def schema_of(name: str) -> JSONSchema:
            out: JSONSchema = props[name] if name in props else None  # type: ignore[assignment]
            for p, sub in patterns.items():
                if kw.compiled_pattern(p).search(name):
                    out = sub if out is None else merge(out, sub)[0]
            return extra if out is None else out

        fixed = {name: self.strategy(schema_of(name)) for name in required}
        optional = {name: self.strategy(schema_of(name)) for name in props if name not in fixed}
        built: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(fixed, optional=optional)
        lo, hi = schema.get("minProperties", 0), schema.get("maxProperties")
        room = 2 if hi is None else max(0, hi - len(fixed))
        if extra is not False and room:
            known = set(props)
            keys = _EXTRA_KEYS.filter(lambda k: k not in known and not any(kw.compiled_pattern(p).search(k) for p in patterns))
            extras = st.dictionaries(keys, self.strategy(extra), max_size=min(room, 2))
            if lo > len(fixed) + len(optional):
                extras = st.dictionaries(keys, self.strategy(extra), min_size=lo - len(fixed) - len(optional), max_size=max(room, lo))
            built = st.tuples(built, extras).map(lambda pair: {**pair[1], **pair[0]})
        if lo or hi is not None:
            built = built.filter(lambda d: lo <= len(d) and (hi is None or len(d) <= hi))
        return built


@st.composite
def _prefixed_lists(draw: Any, lo: int, cap: int, heads: list[st.SearchStrategy[Any]], rest: st.SearchStrategy[Any]) -> list[Any]:
    """A list of ``lo`` to ``cap`` items: the first ones from ``heads`` (a tuple form's prefix),
    the others from ``rest``. (Composites are made at module level: ``st.composite`` reads the
    function's source each time it is applied, milliseconds per strategy made.)"""
    n = draw(st.integers(min_value=lo, max_value=cap))
    out = [draw(heads[i]) for i in range(min(n, len(heads)))]
    out += [draw(rest) for _ in range(n - len(out))]
    return out


def _sometimes_float(pair: tuple[int, int]) -> int | float:
    # one integer in eight arrives as an integer-valued float, as models send them; shrinks to the int
    value, dice = pair
    return float(value) if dice >= 14 and abs(value) <= 2**53 else value


def _format_strategies() -> dict[str, st.SearchStrategy[str]]:
    import datetime

    # built from integers rather than st.dates()/st.times(): several times cheaper per example
    lower = "abcdefghijklmnopqrstuvwxyz"
    label = st.tuples(st.sampled_from(lower), st.text(lower + "0123456789", max_size=10)).map("".join)
    ipv4 = st.tuples(*[st.integers(0, 255)] * 4).map(lambda t: ".".join(map(str, t)))
    first = datetime.date(2000, 1, 1).toordinal()
    date = st.integers(1, datetime.date.max.toordinal()).map(lambda n: datetime.date.fromordinal(n).isoformat())
    date = st.one_of(st.integers(first, first + 366 * 40).map(lambda n: datetime.date.fromordinal(n).isoformat()), date)
    time = st.integers(0, 86399).map(lambda s: f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z")
    return {
        "date": date,
        "time": time,
        "date-time": st.tuples(date, time).map(lambda p: f"{p[0]}T{p[1]}"),
        "email": st.tuples(label, label).map(lambda p: f"{p[0]}@{p[1]}.com"),
        "hostname": st.lists(label, min_size=1, max_size=3).map(".".join),
        "ipv4": ipv4,
        "ipv6": st.ip_addresses(v=6).map(str),
        "uuid": st.uuids().map(str),
        "uri": st.tuples(label, st.lists(label, max_size=3)).map(lambda p: f"https://{p[0]}.example/{'/'.join(p[1])}"),
    }


_FORMATS = _format_strategies()


def canonical_json(value: Any) -> str:
    """A stable text of a JSON value (sorted keys), used to label examples in reports."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
