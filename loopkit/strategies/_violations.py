"""Values that break a JSON Schema in exactly one named rule.

A :class:`Violation` starts from a valid value and applies one mutation operator at one place:
drop a required key, give a value of the wrong type, step just outside a bound, add a key the
schema forbids, miss the enum or the pattern, shorten or lengthen a string or an array, repeat an
item of a unique array. Each candidate is checked with loopkit's own reading of the keywords
(:mod:`._keywords`) so that it breaks only the rule it names; places under ``anyOf``/``oneOf``/
``not`` and other keywords whose failures would spread are left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from . import _keywords as kw
from ._schema import JSONSchema, SchemaCompiler, merge

Path = tuple[str | int, ...]

RULES: tuple[str, ...] = (
    "type", "required", "additionalProperties", "enum", "const", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern",
    "minItems", "maxItems", "uniqueItems",
)  # fmt: skip
"""The rules a violation can name: JSON Schema keywords, as validators report them."""

_PLAIN = frozenset(
    {"type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
     "multipleOf", "minLength", "maxLength", "pattern", "format", "items", "prefixItems",
     "additionalItems", "minItems", "maxItems", "uniqueItems", "properties", "required",
     "additionalProperties", "patternProperties", "minProperties", "maxProperties", "nullable",
     "title", "description", "default", "examples", "$comment", "$schema", "$id", "$defs",
     "definitions", "deprecated", "readOnly", "writeOnly"}
)  # fmt: skip
"""Keywords whose failures stay where they happen; a node with any other keyword is not mutated."""


@dataclass(frozen=True, slots=True)
class Violation:
    """A value that fails one rule of a schema.

    Args:
        value: the whole invalid value.
        rule: the keyword it breaks (``required``, ``type``, ``maximum`` ...).
        path: where, as a validator reports it: the keys and indexes from the root down to the
            object or value that holds the broken keyword.
        detail: what the mutation did, in words.
    """

    value: Any
    rule: str
    path: Path
    detail: str


Guards = dict[Path, Mapping[str, Any]]  # path -> the combinators that must still pass there
_Change = tuple[Any, str, Any]  # (new value at the site, detail, (inner path, rule) of an insertion or ())
Op = Callable[[Any], "_Change | None"]  # draw -> change


def _set(value: Any, path: Path, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _set(value[head], rest, new) if head in value else new}
    out = list(value)
    out[head] = _set(out[head], rest, new)  # type: ignore[index]
    return out


class Mutator:
    """Finds mutation sites in a valid value and the operators that apply at each."""

    def __init__(self, compiler: SchemaCompiler, rules: frozenset[str], *, root_type: bool = True) -> None:
        self.c = compiler
        self.rules = rules
        self.root_type = root_type  # False: leave the root's own scalar rules alone (keep an object an object)
        self._plain: dict[int, tuple[JSONSchema, Mapping[str, Any] | None, Mapping[str, Any] | None]] = {}

    def plain(self, schema: JSONSchema, guards: Guards | None = None, path: Path = ()) -> Mapping[str, Any] | None:
        """The dereferenced schema without its combinators if every other keyword keeps failures
        local, else None. ``allOf`` is merged in where that is exact; what remains of ``anyOf``,
        ``oneOf``, ``not``, ``if``... becomes a guard at ``path``: a mutation below must keep it passing.
        """
        found = self._plain.get(id(schema))
        if found is None:
            found = self._plain[id(schema)] = (schema, *self._split(schema))
        _, node, guard = found
        if guard:
            if guards is None:
                return None
            guards[path] = guard
        return node

    def _split(self, schema: JSONSchema) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
        node = self.c.deref(schema)
        if not isinstance(node, Mapping):
            return None, None
        if "allOf" in node:
            merged: JSONSchema = {k: v for k, v in node.items() if k != "allOf"}
            exact = True
            for sub in node["allOf"]:
                merged, ok = merge(merged, self.c.deref(sub))
                exact = exact and ok
            if exact and isinstance(merged, Mapping):
                node = merged
        guard = {k: node[k] for k in kw.COMBINATORS if k in node} or None
        if guard:
            node = {k: v for k, v in node.items() if k not in guard}
        if node.keys() - _PLAIN:
            return None, None
        return node, guard

    def sites(
        self, schema: JSONSchema, value: Any, path: Path = (), unique_ancestor: bool = False, guards: Guards | None = None
    ) -> Iterator[tuple[Path, str, Op]]:
        """Every ``(path, rule, op)`` that breaks ``value`` in one rule; guards met on the way go to ``guards``."""
        node = self.plain(schema, guards, path)
        if node is None:
            return
        if path or self.root_type:
            yield from self._scalar_ops(node, value, path, unique_ancestor)
        if isinstance(value, dict) and "object" in kw.infer_types(node):
            yield from self._object_ops(node, value, path, unique_ancestor, guards)
        if isinstance(value, list) and "array" in kw.infer_types(node):
            yield from self._array_ops(node, value, path, unique_ancestor, guards)

    def guards_hold(self, guards: Guards, value: Any, changed_at: Path) -> bool:
        """Whether every guard on the way to ``changed_at`` still passes for the changed ``value``."""
        for at, guard in guards.items():
            if changed_at[: len(at)] == at and not self.c.check(guard)(_get(value, at)):
                return False
        return True

    # --- scalar keywords, and the wrong type ---------------------------------------------------

    def _scalar_ops(self, node: Mapping[str, Any], value: Any, path: Path, unique_ancestor: bool) -> Iterator[tuple[Path, str, Op]]:
        # a scalar mutation inside a unique array could make two items equal: leave those alone
        if unique_ancestor:
            return
        for rule, candidates in self._scalar_candidates(node, value):
            if rule not in self.rules:
                continue
            for cand in candidates:
                if kw.scalar_failures(node, cand) == {rule} and self._container_ok(node, cand):
                    yield path, rule, _const_op(cand, f"{rule}: {value!r} -> {cand!r}")
                    break

    def _container_ok(self, node: Mapping[str, Any], cand: Any) -> bool:
        # a replacement that is itself an array/object must not trip the node's own array/object keywords
        if isinstance(cand, dict):
            return not (node.keys() & kw.OBJECT_KEYWORDS)
        if isinstance(cand, list):
            return not (node.keys() & kw.ARRAY_KEYWORDS)
        return True

    def _scalar_candidates(self, node: Mapping[str, Any], value: Any) -> Iterator[tuple[str, list[Any]]]:
        types = kw.declared_types(node)
        if types is not None:
            yield "type", [None, False, 1.5, 0, "", [], {}]
        if "enum" in node or "const" in node:
            members = list(node.get("enum", [])) + ([node["const"]] if "const" in node else [])
            near = []
            for m in members:
                if isinstance(m, str):
                    near += [m + "_", m[:-1], m.upper(), "x" + m]
                elif isinstance(m, bool) or m is None:
                    near += [not m if isinstance(m, bool) else False]
                elif isinstance(m, (int, float)):
                    near += [m + 1, m - 1]
            near += [value + "_"] if isinstance(value, str) else []
            yield ("enum" if "enum" in node else "const"), near
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            step = node.get("multipleOf", 1)
            for rule, sign in (("minimum", -1), ("exclusiveMinimum", -1), ("maximum", 1), ("exclusiveMaximum", 1)):
                bound = node.get(rule)
                if isinstance(bound, (int, float)) and not isinstance(bound, bool):
                    yield rule, _beyond(bound, sign, step)
            if "multipleOf" in node:
                d = node["multipleOf"]
                yield "multipleOf", [value + d / 2, value - d / 2, value + 1, value - 1, value + 0.5]
        if isinstance(value, str):
            lo, hi = node.get("minLength"), node.get("maxLength")
            if lo:
                yield "minLength", [value[: lo - 1], value[-(lo - 1) :] if lo > 1 else "", "a" * (lo - 1)]
            if hi is not None:
                grow = hi + 1 - len(value)
                yield "maxLength", [value + (value[-1:] or "a") * grow, value + "a" * grow, value * (hi + 1), "a" * (hi + 1)]
            if "pattern" in node:
                n = lo or 0
                yield "pattern", [v * max(n, 1) for v in ("~", "!", " ", "0", "a", "Z", "-", "\u00e9")] + ["", value[::-1]]

    # --- objects -----------------------------------------------------------------------------

    def _object_ops(
        self, node: Mapping[str, Any], value: dict[str, Any], path: Path, unique_ancestor: bool, guards: Guards | None
    ) -> Iterator[tuple[Path, str, Op]]:
        props: Mapping[str, Any] = node.get("properties", {})
        patterns: Mapping[str, Any] = node.get("patternProperties", {})
        lo, hi = node.get("minProperties", 0), node.get("maxProperties")
        if "required" in self.rules and not unique_ancestor and len(value) - 1 >= lo:
            for name in node.get("required", []):
                if name in value:
                    yield path, "required", _const_op({k: v for k, v in value.items() if k != name}, f"required: dropped {name!r}")
        extra = node.get("additionalProperties", True)
        if extra is False and "additionalProperties" in self.rules and not unique_ancestor and (hi is None or len(value) < hi):
            key = next(k for k in ("unexpected", "extra", "other_field", "x_unexpected_1") if k not in props and k not in value)
            if not any(kw.compiled_pattern(p).search(key) for p in patterns):
                yield path, "additionalProperties", _const_op({**value, key: None}, f"additionalProperties: added {key!r}")
        for name, child in value.items():
            if any(kw.compiled_pattern(p).search(name) for p in patterns):
                continue  # two schemas apply to this key
            sub = props.get(name, extra if name not in props else None)
            if sub is None or isinstance(sub, bool):
                continue
            yield from self.sites(sub, child, (*path, name), unique_ancestor, guards)
        # an optional property that is absent: insert a valid value, then break it there
        if not unique_ancestor and (hi is None or len(value) < hi):
            for name, sub in props.items():
                if name not in value and not any(kw.compiled_pattern(p).search(name) for p in patterns):
                    if self.plain(sub, {}) is not None:
                        yield (*path, name), "", _insert_op(self, sub)

    # --- arrays ------------------------------------------------------------------------------

    def _array_ops(
        self, node: Mapping[str, Any], value: list[Any], path: Path, unique_ancestor: bool, guards: Guards | None
    ) -> Iterator[tuple[Path, str, Op]]:
        items = node.get("items", True)
        prefix = node.get("prefixItems") or []
        rest: JSONSchema = items
        if isinstance(items, list):
            prefix, rest = items, node.get("additionalItems", True)
        lo, hi = node.get("minItems", 0), node.get("maxItems")
        unique = node.get("uniqueItems") is True
        if lo and "minItems" in self.rules and not unique_ancestor and len(value) >= lo:
            yield path, "minItems", _const_op(value[: lo - 1], f"minItems: kept {lo - 1} of {len(value)} items")
        if hi is not None and "maxItems" in self.rules and not unique_ancestor and rest is not False:
            yield path, "maxItems", _grow_op(self, rest, value, hi + 1 - len(value), unique)
        if unique and "uniqueItems" in self.rules and not unique_ancestor and (hi is None or len(value) < hi):
            same = [i for i in range(len(prefix), len(value))]
            if same and rest is not False:
                yield path, "uniqueItems", _const_op(value + [value[same[0]]], f"uniqueItems: repeated item {same[0]}")
        for i, child in enumerate(value):
            sub = prefix[i] if i < len(prefix) else rest
            if isinstance(sub, bool):
                continue
            yield from self.sites(sub, child, (*path, i), unique_ancestor or unique, guards)


def _beyond(bound: float, sign: int, step: float) -> list[Any]:
    """Values just past ``bound`` (below it for sign -1), preferring multiples of ``step``."""
    out: list[Any] = [bound, bound + sign * step, bound + sign, bound + sign * 0.5]
    if isinstance(step, int) or float(step).is_integer():
        k = int(bound // step)
        out += [(k + sign * i) * int(step) for i in range(0, 3)]
    else:
        k = bound / step
        out += [round((int(k) + sign * i) * step, 12) for i in range(0, 3)]
    return out


def _const_op(new: Any, detail: str) -> Op:
    return lambda draw: (new, detail, ())


def _insert_op(mutator: Mutator, sub: JSONSchema) -> Op:
    """Give an absent optional property a valid value, then break that value in one rule."""

    def op(draw: Any) -> _Change | None:
        child = draw(mutator.c.strategy(sub))
        guards: Guards = {}
        inner = [s for s in mutator.sites(sub, child, guards=guards) if s[1]]  # no nested insertions: keep it shallow
        if not inner:
            return None
        ipath, rule, iop = draw(st.sampled_from(inner))
        got = iop(draw)
        if got is None:
            return None
        new, detail, _ = got
        changed = _set(child, ipath, new)
        if not mutator.guards_hold(guards, changed, ipath):
            return None
        return changed, detail, (ipath, rule)

    return op


def _grow_op(mutator: Mutator, rest: JSONSchema, value: list[Any], n: int, unique: bool) -> Op:
    def op(draw: Any) -> _Change | None:
        extra = draw(st.lists(mutator.c.strategy(rest), min_size=n, max_size=n, unique_by=kw.canonical if unique else None))
        out = value + extra
        if unique and len({kw.canonical(x) for x in out}) != len(out):
            return None
        return out, f"maxItems: {len(value)} -> {len(out)} items", ()

    return op


def violations_strategy(compiler: SchemaCompiler, rules: frozenset[str], *, root_type: bool = True) -> st.SearchStrategy[Violation]:
    """The strategy behind :func:`loopkit.strategies.violations`."""
    return _violation(Mutator(compiler, rules, root_type=root_type), compiler.strategy(compiler.root))


@st.composite
def _violation(draw: Any, mutator: Mutator, valid: st.SearchStrategy[Any]) -> Violation:
    """A valid value from ``valid`` with one of the mutator's rules broken at one place."""
    value = draw(valid)
    guards: Guards = {}
    sites = list(mutator.sites(mutator.c.root, value, guards=guards))
    assume(bool(sites))  # this valid value offers nothing to break: draw another
    # pick a rule first, then a place: otherwise the many "type" sites crowd out the rest
    by_rule: dict[str, list[tuple[Path, str, Op]]] = {}
    for site in sites:
        by_rule.setdefault(site[1], []).append(site)
    names = sorted(by_rule)
    group = by_rule[names[draw(st.integers(min_value=0, max_value=len(names) - 1))]]
    path, rule, op = group[draw(st.integers(min_value=0, max_value=len(group) - 1))]
    got = op(draw)
    assume(got is not None)
    new, detail, inner = got  # type: ignore[misc]
    changed = _set(value, path, new)
    assume(mutator.guards_hold(guards, changed, path))
    if inner:  # an insertion: the error is reported inside the inserted value
        ipath, rule = inner
        return Violation(changed, rule, (*path, *ipath), f"added {path[-1]!r}; {detail}")
    return Violation(changed, rule, path, detail)


def _get(value: Any, path: Path) -> Any:
    for p in path:
        value = value[p]
    return value
