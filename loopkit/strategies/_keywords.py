"""Small, dependency-free readings of JSON Schema keywords shared by the generator and the mutator.

These are loopkit's own interpretations (types, numeric bounds, ``multipleOf``, uniqueness and a
check of the scalar keywords), kept independent of :mod:`jsonschema` so that the tests, which use
jsonschema as the referee, can catch a mistake here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..errors import UsageError

JSON_TYPES: tuple[str, ...] = ("null", "boolean", "integer", "number", "string", "array", "object")

OBJECT_KEYWORDS = frozenset(
    {"properties", "required", "additionalProperties", "patternProperties", "minProperties",
     "maxProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies",
     "unevaluatedProperties"}
)  # fmt: skip
ARRAY_KEYWORDS = frozenset(
    {"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains",
     "minContains", "maxContains", "unevaluatedItems"}
)  # fmt: skip
STRING_KEYWORDS = frozenset({"minLength", "maxLength", "pattern", "format"})
NUMBER_KEYWORDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
COMBINATORS = frozenset({"anyOf", "oneOf", "allOf", "not", "if", "then", "else"})
KEYWORDS_OF_TYPE: dict[str, frozenset[str]] = {
    "null": frozenset(),
    "boolean": frozenset(),
    "integer": NUMBER_KEYWORDS,
    "number": NUMBER_KEYWORDS,
    "string": STRING_KEYWORDS,
    "array": ARRAY_KEYWORDS,
    "object": OBJECT_KEYWORDS,
}


def json_type(value: Any) -> str:
    """The JSON type name of a Python value (``integer`` for ints and integral floats' int form)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise UsageError(f"{value!r} is not a JSON value")


def is_type(value: Any, name: str) -> bool:
    """Whether ``value`` has JSON type ``name`` (an integral float counts as an integer, as in draft 6+)."""
    t = json_type(value)
    if name == t:
        return True
    if name == "number":
        return t == "integer"
    if name == "integer":
        return t == "number" and math.isfinite(value) and float(value).is_integer()
    return False


def declared_types(schema: Mapping[str, Any]) -> list[str] | None:
    """The ``type`` keyword as a list, or None.

    A nullable type is a type list with ``"null"``. OpenAPI's ``nullable: true`` is not JSON Schema
    and validators ignore it, so it adds nothing here either (generating ``null`` for it would
    produce "valid" values that the loop's validator rejects).
    """
    t = schema.get("type")
    if t is None:
        return None
    types = [t] if isinstance(t, str) else list(t)
    for name in types:
        if name not in JSON_TYPES:
            raise UsageError(f"unknown JSON Schema type {name!r}; expected one of {', '.join(JSON_TYPES)}")
    return types


def is_multiple(value: float, divisor: float) -> bool:
    """``multipleOf`` as the common validators decide it (float quotient for a float divisor)."""
    if isinstance(divisor, float):
        try:
            quotient = value / divisor
            return int(quotient) == quotient
        except (OverflowError, ValueError):
            return False
    if isinstance(value, float):
        return value % divisor == 0
    return value % divisor == 0


def numeric_bounds(schema: Mapping[str, Any]) -> tuple[float | None, bool, float | None, bool]:
    """``(low, low_exclusive, high, high_exclusive)`` from minimum/maximum and their exclusive forms
    (draft 4's boolean ``exclusiveMinimum`` included)."""
    lo, hi = schema.get("minimum"), schema.get("maximum")
    lo_ex = hi_ex = False
    emin, emax = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if emin is True:
        lo_ex = lo is not None
    elif isinstance(emin, (int, float)) and not isinstance(emin, bool) and (lo is None or emin >= lo):
        lo, lo_ex = emin, True
    if emax is True:
        hi_ex = hi is not None
    elif isinstance(emax, (int, float)) and not isinstance(emax, bool) and (hi is None or emax <= hi):
        hi, hi_ex = emax, True
    return lo, lo_ex, hi, hi_ex


def canonical(value: Any) -> Any:
    """A hashable key under which two JSON values are equal exactly when JSON Schema says they are
    (``1 == 1.0``, ``true != 1``, objects compare without order)."""
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("a", tuple(canonical(v) for v in value))
    return ("o", frozenset((k, canonical(v)) for k, v in value.items()))


@lru_cache(maxsize=512)
def compiled_pattern(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled with Python's ``re`` (searched, not anchored, as JSON Schema says)."""
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(
            f"pattern {pattern!r} is not a regular expression Python's re understands ({exc}); "
            "rewrite it without ECMA-only syntax such as \\p{...} or named groups (?<name>...)"
        ) from None


def scalar_failures(schema: Mapping[str, Any], value: Any) -> set[str]:
    """The scalar keywords of ``schema`` that ``value`` breaks.

    Covers type, enum, const, the numeric bounds, multipleOf, minLength, maxLength and pattern;
    array and object keywords are the caller's business. ``format`` is an annotation here, as in
    validators that are not given a format checker.
    """
    failed: set[str] = set()
    types = declared_types(schema)
    if types is not None and not any(is_type(value, t) for t in types):
        failed.add("type")
    if "enum" in schema and canonical(value) not in {canonical(v) for v in schema["enum"]}:
        failed.add("enum")
    if "const" in schema and canonical(value) != canonical(schema["const"]):
        failed.add("const")
    if json_type(value) in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            failed.add("minimum")
        if "maximum" in schema and value > schema["maximum"]:
            failed.add("maximum")
        emin, emax = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        if emin is True and "minimum" in schema and value <= schema["minimum"]:
            failed.add("minimum")
        elif _is_num(emin) and value <= emin:
            failed.add("exclusiveMinimum")
        if emax is True and "maximum" in schema and value >= schema["maximum"]:
            failed.add("maximum")
        elif _is_num(emax) and value >= emax:
            failed.add("exclusiveMaximum")
        if "multipleOf" in schema and not is_multiple(value, schema["multipleOf"]):
            failed.add("multipleOf")
    elif isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            failed.add("minLength")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            failed.add("maxLength")
        if "pattern" in schema and not compiled_pattern(schema["pattern"]).search(value):
            failed.add("pattern")
    return failed


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def infer_types(schema: Mapping[str, Any]) -> list[str]:
    """The types a schema without ``type`` evidently describes (from its keywords), else all."""
    declared = declared_types(schema)
    if declared is not None:
        return declared
    found = [t for t in ("object", "array", "string", "number") if KEYWORDS_OF_TYPE[t] & schema.keys()]
    return found or list(JSON_TYPES)
