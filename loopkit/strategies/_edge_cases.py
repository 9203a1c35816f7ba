"""``edge_cases()``: a short, ordered list of argument sets that each put one value at an edge.

Random generation reaches a leap day or an integer-valued float now and then; a fuzzer with 200
examples needs them on purpose. This enumerator builds one plain valid value for the schema, then
one variant per edge value of each place in it (bounds and their neighbours, signed zero,
integer-valued floats, tricky unicode, every ``format``'s edge values and near-misses, unicode
keys in free-form objects, the longest allowed strings and arrays, deep nesting), interleaved so
that every place gets its most telling edges first.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from . import _edges as edges
from . import _keywords as kw
from ._schema import JSONSchema, SchemaCompiler, merge
from ._violations import _set

Path = tuple[str | int, ...]
DEEP = 64  # nesting depth of the deep values (a "maxDepth"-like limit tools and parsers trip on)


@dataclass(frozen=True, slots=True)
class EdgeCase:
    """One argument set with one value at an edge.

    Args:
        value: the whole argument set (valid against the schema, ``format`` aside).
        path: where the edge value sits.
        what: the edge, in words (``"date edge '2000-02-29'"``).
        near_miss: True when the value is a near-miss of a ``format`` (``2023-02-29`` for a
            date): the schema allows it, since ``format`` is not enforced, and a tool should
            answer it with a clear error.
    """

    value: Any
    path: Path
    what: str
    near_miss: bool = False


def edge_cases(schema: JSONSchema | Any, *, limit: int | None = None) -> list[EdgeCase]:
    """Argument sets that each differ from a plain valid one in one place, at an edge.

    Deterministic (no randomness). Every value validates against ``schema``; for a ``format``,
    the near-misses (flagged ``near_miss``) validate too, because validators, like the loop, do
    not enforce ``format``.

    Args:
        schema: the JSON Schema, or a tool whose parameters to use.
        limit: at most this many (the first ones: each place's most telling edges come first).

    Example::

        >>> [c.value for c in edge_cases({"type": "integer", "minimum": 1, "maximum": 9})][:4]
        [1, 9, 2, 8]
    """
    if limit is not None and (not isinstance(limit, int) or limit < 0):
        raise UsageError(f"edge_cases(limit={limit!r}): give None or a number >= 0")
    from ._arguments import schema_of

    enum = _Enumerator(SchemaCompiler(schema_of(schema)))
    return enum.cases(limit)


class _Enumerator:
    def __init__(self, compiler: SchemaCompiler) -> None:
        self.c = compiler
        self.check = compiler.check(compiler.root)
        self._bases: dict[int, Any] = {}

    # --- a plain valid value -------------------------------------------------------------------

    def base(self, schema: JSONSchema, depth: int = 0) -> Any:
        key = id(schema)
        if key not in self._bases:
            value = self._build(schema, depth)
            if value is _NONE or not self.c.check(schema)(value):
                value = self._drawn(schema)
            self._bases[key] = value
        return self._bases[key]

    def _drawn(self, schema: JSONSchema) -> Any:
        from hypothesis import HealthCheck, Phase, find, settings

        quiet = settings(database=None, deadline=None, phases=[Phase.generate], max_examples=50, suppress_health_check=list(HealthCheck))
        try:  # the first value hypothesis generates is its simplest one; seeded, so always the same
            return find(self.c.strategy(schema), lambda v: True, settings=quiet, random=random.Random(0))
        except Exception:  # noqa: BLE001 - unsatisfiable: no base, no edges here
            return _NONE

    def _build(self, schema: JSONSchema, depth: int) -> Any:
        if depth > 8 or not isinstance(schema, Mapping):
            return _NONE if schema is False else None if depth <= 8 else _NONE
        node = self.c.deref(schema)
        if not isinstance(node, Mapping) or node.keys() & {"anyOf", "oneOf", "allOf", "not", "if", "pattern"}:
            return _NONE
        if node.get("format") in edges.FORMAT_EDGES:
            found = edges.format_edges(node["format"], node)
            return found[0] if found else _NONE
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return node["enum"][0] if node["enum"] else _NONE
        types = kw.infer_types(node)
        t = types[0]
        if t == "object":
            props = node.get("properties", {})
            out = {}
            for name in node.get("required", []):
                v = self.base(props.get(name, node.get("additionalProperties", True)), depth + 1)
                if v is _NONE:
                    return _NONE
                out[name] = v
            extra = node.get("additionalProperties", True)
            for i in range(node.get("minProperties", 0) - len(out)):
                v = "v" if extra is True else self.base(extra, depth + 1)
                if v is _NONE or f"p{i}" in props:
                    return _NONE
                out[f"p{i}"] = v
            return out
        if t == "array":
            n = node.get("minItems", 0)
            if not n:
                return []
            items = node.get("items", True)
            if isinstance(items, list) or "prefixItems" in node or node.get("uniqueItems"):
                return _NONE
            v = self.base(items, depth + 1)
            return _NONE if v is _NONE else [v] * n
        if t == "string":
            return "a" * node.get("minLength", 0)
        if t in ("integer", "number"):
            found = edges.integer_edges(node)
            ints = [v for v in found if isinstance(v, int)]
            return min(ints, key=abs) if ints else _NONE
        return {"boolean": False, "null": None}.get(t, None)

    # --- edges of each place -------------------------------------------------------------------

    def leaves(self, schema: JSONSchema, value: Any, path: Path, depth: int) -> Iterator[list[tuple[Path, Any, str, bool]]]:
        """One list per place: ``(path, replacement, what, near_miss)``, most telling first."""
        if depth > 6 or isinstance(schema, bool):
            return
        node = self.c.deref(schema)
        if not isinstance(node, Mapping):
            return
        for key in ("anyOf", "oneOf"):
            if key in node:
                base = {k: v for k, v in node.items() if k != key}
                for i, sub in enumerate(node[key]):
                    merged, _ = merge(base, self.c.deref(sub))
                    b = self.base(merged, depth)
                    if b is not _NONE:
                        yield [(path, b, f"{key} branch {i}", False)]
                        yield from self.leaves(merged, b, path, depth + 1)
                return
        if "allOf" in node:
            merged = {k: v for k, v in node.items() if k != "allOf"}
            for sub in node["allOf"]:
                merged, _ = merge(merged, self.c.deref(sub))
            node = merged if isinstance(merged, Mapping) else node
        if "enum" in node or "const" in node:
            members = list(node.get("enum", [])) + ([node["const"]] if "const" in node else [])
            yield [(path, m, f"enum member {m!r}", False) for m in members]
            return
        types = kw.infer_types(node)
        scalars: list[tuple[Path, Any, str, bool]] = []
        if "null" in types and value is not None:
            scalars.append((path, None, "null", False))
        if "boolean" in types:
            scalars += [(path, b, f"boolean {b}", False) for b in (True, False)]
        if "number" in types:
            scalars += [(path, v, _number_what(v), False) for v in edges.number_edges(node)]
        elif "integer" in types:
            scalars += [(path, v, _number_what(v), False) for v in edges.integer_edges(node)]
        if "string" in types:
            fmt = node.get("format")
            if fmt in edges.FORMAT_EDGES:
                near = edges.FORMAT_NEAR_MISSES.get(fmt, ())
                good = edges.format_edges(fmt, node)
                # edges and near-misses alternate: both matter as much
                for i in range(max(len(good), len(near))):
                    if i < len(good):
                        scalars.append((path, good[i], f"{fmt} edge {good[i]!r}", False))
                    if i < len(near):
                        scalars.append((path, near[i], f"{fmt} near-miss {near[i]!r}", True))
            elif "pattern" not in node:
                scalars += [(path, s, f"text {_short(s)}", False) for s in edges.text_edges(node)]
        if scalars:
            yield scalars
        if isinstance(value, dict) and "object" in types:
            yield from self._object_leaves(node, value, path, depth)
        if isinstance(value, list) and "array" in types:
            yield from self._array_leaves(node, value, path, depth)

    def _object_leaves(self, node: Mapping[str, Any], value: dict[str, Any], path: Path, depth: int) -> Iterator[list[tuple[Path, Any, str, bool]]]:
        props: Mapping[str, Any] = node.get("properties", {})
        extra = node.get("additionalProperties", True)
        for name, sub in props.items():
            child = value.get(name, _NONE)
            if child is _NONE:
                child = self.base(sub, depth + 1)
                if child is _NONE:
                    continue
                yield [((*path, name), child, f"optional {name!r} given", False)]
            yield from self.leaves(sub, child, (*path, name), depth + 1)
            if depth == 0 and self._recursive(sub):
                deep = self._deep(sub, DEEP)
                if deep is not _NONE:
                    yield [((*path, name), deep, f"nested {DEEP} levels deep", False)]
        if extra is not False and not node.get("patternProperties") and node.get("maxProperties") is None:
            filler = self.base(extra, depth + 1) if extra is not True else "v"
            if filler is not _NONE:
                keys = [k for k in edges.TRICKY_KEYS if k not in props]
                group = [((*path, k), filler, f"extra key {k!r}", False) for k in keys]
                if extra is True or extra == {}:
                    group.insert(1, ((*path, "deep"), _nested(DEEP), f"free-form value nested {DEEP} levels deep", False))
                yield group

    def _array_leaves(self, node: Mapping[str, Any], value: list[Any], path: Path, depth: int) -> Iterator[list[tuple[Path, Any, str, bool]]]:
        items = node.get("items", True)
        if isinstance(items, list) or "prefixItems" in node:
            return
        lo, hi = node.get("minItems", 0), node.get("maxItems")
        item = value[0] if value else self.base(items, depth + 1)
        if item is _NONE:
            return
        group: list[tuple[Path, Any, str, bool]] = []
        if lo == 0 and value:
            group.append((path, [], "empty array", False))
        if not node.get("uniqueItems"):
            n = hi if hi is not None else 1000
            group.append((path, [item] * max(n, lo), f"{max(n, lo)} items", False))
        yield group
        inner = [*self.leaves(items, item, (*path, 0), depth + 1)]
        rest = [item] * max(lo - 1, 0)
        for g in inner:
            # one item at the edge, the others plain: the whole array is the replacement
            yield [(path, [_set(item, p[len(path) + 1 :], v), *rest], what, near) for p, v, what, near in g]

    def _recursive(self, schema: JSONSchema) -> bool:
        return isinstance(schema, Mapping) and ("$ref" in schema or (isinstance(schema.get("items"), Mapping) and "$ref" in schema["items"]))

    def _deep(self, schema: JSONSchema, depth: int) -> Any:
        """A value of a recursive schema nested ``depth`` levels, through its first recursive property."""
        node = self.c.deref(schema)
        base = self.base(schema, 1)
        if depth <= 0 or not isinstance(node, Mapping) or base is _NONE:
            return base
        if "items" in node and isinstance(node["items"], Mapping) and "$ref" in node["items"]:
            inner = self._deep(node["items"], depth - 1)
            return _NONE if inner is _NONE else [inner]
        if isinstance(base, dict):
            for name, sub in node.get("properties", {}).items():
                if self._recursive(sub):
                    inner = self._deep(sub, depth - 1)
                    if inner is not _NONE:
                        return {**base, name: inner}
        return base

    # --- all together --------------------------------------------------------------------------

    def cases(self, limit: int | None) -> list[EdgeCase]:
        root = self.c.root
        base = self.base(root)
        if base is _NONE:
            return []
        groups = [[((), base, "a plain valid value", False)], *self.leaves(root, base, (), 0)]
        out: list[EdgeCase] = []
        seen: set[str] = set()
        longest = max((len(g) for g in groups), default=0)
        for i in range(longest):
            for g in groups:
                if i >= len(g):
                    continue
                path, new, what, near = g[i]
                value = _set(base, path, new)
                key = _key(value)
                if key in seen or not self.check(value):
                    continue
                seen.add(key)
                out.append(EdgeCase(value, path, what, near))
                if limit is not None and len(out) >= limit:
                    return out
        return out


class _Missing:
    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return "<none>"


_NONE: Any = _Missing()


def _nested(depth: int) -> Any:
    value: Any = []
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


def _key(value: Any) -> str:
    # repr keeps 6 and 6.0 and -0.0 apart, which JSON equality does not
    return repr(value) if not isinstance(value, (dict, list)) else json.dumps(value, default=repr) + repr(_floats(value))


def _floats(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [f for v in value.values() for f in _floats(v)]
    if isinstance(value, list):
        return [f for v in value for f in _floats(v)]
    return [repr(value)] if isinstance(value, float) else []


def _number_what(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return f"integer-valued float {v!r}"
    return f"{'integer' if isinstance(v, int) else 'number'} {v!r}"


def _short(s: str) -> str:
    r = repr(s)
    return r if len(r) <= 24 else r[:20] + "…'"


__all__ = ["DEEP", "EdgeCase", "edge_cases"]
