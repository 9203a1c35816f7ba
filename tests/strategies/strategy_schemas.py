"""A catalogue of JSON Schemas, one per feature arguments() claims to cover."""

from __future__ import annotations

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1, "maxLength": 40},
        "units": {"enum": ["metric", "imperial"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
        "coords": {
            "type": "object",
            "properties": {
                "lat": {"type": "number", "minimum": -90, "maximum": 90},
                "lon": {"type": "number", "exclusiveMinimum": -180, "exclusiveMaximum": 180},
            },
            "required": ["lat", "lon"],
            "additionalProperties": False,
        },
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 10}, "minItems": 1, "maxItems": 5, "uniqueItems": True},
        "note": {"type": ["string", "null"]},
        "step": {"type": "number", "multipleOf": 0.5, "minimum": 0},
        "kind": {"$ref": "#/$defs/kind"},
        "mode": {"const": "fast"},
    },
    "required": ["city", "days"],
    "additionalProperties": False,
    "$defs": {"kind": {"type": "string", "enum": ["a", "b"]}},
}

CATALOGUE: dict[str, dict] = {
    "weather": WEATHER,
    "type_list": {"type": ["integer", "string", "null"]},
    "nullable": {"type": ["string", "null"], "maxLength": 3},
    "openapi_nullable_ignored": {"type": "string", "nullable": True},
    "enum_mixed": {"enum": [1, "one", None, [1], {"a": 1}]},
    "const": {"type": "object", "properties": {"v": {"const": 3}}, "required": ["v"]},
    "required_extra": {"type": "object", "required": ["a", "b"], "additionalProperties": {"type": "integer"}},
    "additional_false": {"type": "object", "properties": {"a": {"type": "boolean"}}, "additionalProperties": False},
    "pattern_props": {"type": "object", "patternProperties": {"^x_": {"type": "integer"}}, "properties": {"x_a": {"minimum": 0}}},
    "min_max_props": {"type": "object", "minProperties": 2, "maxProperties": 3},
    "items": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}, "minItems": 2, "maxItems": 4},
    "prefix_items": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False, "minItems": 1},
    "tuple_items_draft7": {"type": "array", "items": [{"type": "string"}, {"type": "boolean"}], "additionalItems": {"type": "null"}},
    "unique": {"type": "array", "items": {"enum": [1, 2, 3, 1.0, True]}, "uniqueItems": True, "maxItems": 3},
    "string_len": {"type": "string", "minLength": 2, "maxLength": 5},
    "pattern": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"},
    "formats": {
        "type": "object",
        "properties": {f: {"type": "string", "format": f} for f in ("date", "date-time", "email", "uuid", "uri", "ipv4", "ipv6")},
        "required": ["date", "email", "uuid"],
    },
    "int_bounds": {"type": "integer", "exclusiveMinimum": -3, "maximum": 40, "multipleOf": 4},
    "num_bounds": {"type": "number", "minimum": -1.5, "exclusiveMaximum": 2.5},
    "num_multiple": {"type": "number", "multipleOf": 0.25, "minimum": -2, "maximum": 2},
    "any_of": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer", "minimum": 10}]},
    "one_of": {"oneOf": [{"type": "integer", "multipleOf": 2}, {"type": "integer", "multipleOf": 3}]},
    "all_of": {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"properties": {"a": {"minimum": 5}}}]},
    "not": {"type": "integer", "not": {"enum": [0, 1]}, "minimum": 0, "maximum": 5},
    "defs_recursive": {
        "$ref": "#/$defs/node",
        "$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}}, "required": ["v"]}},
    },
    "definitions_draft7": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"p": {"$ref": "#/definitions/point"}},
        "definitions": {"point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"], "additionalProperties": False}},
        "required": ["p"],
    },
    "if_then": {"type": "object", "properties": {"k": {"enum": ["a", "b"]}, "n": {"type": "integer"}}, "required": ["k"], "if": {"properties": {"k": {"const": "a"}}}, "then": {"required": ["n"]}},
    "nested_arrays": {"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "array", "items": {"type": "number", "maximum": 1}, "maxItems": 3}}}, "required": ["rows"]},
    "true": True,
}

UNBREAKABLE = ["true", "any_of", "one_of"]  # no rule outside a combinator at the root
BREAKABLE = [name for name in CATALOGUE if name not in UNBREAKABLE]


class _Found(Exception):
    pass


def first_match(strategy, predicate, *, examples: int = 300):
    """The first generated value satisfying ``predicate`` (generation only, stops there), or fail."""
    from hypothesis import HealthCheck, Phase, given, settings

    @settings(
        max_examples=examples,
        phases=[Phase.generate],
        database=None,
        derandomize=True,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def search(value):
        if predicate(value):
            raise _Found(value)

    try:
        search()
    except _Found as found:
        return found.args[0]
    raise AssertionError(f"no example out of {examples} satisfied {predicate}")


def few():
    """Settings for the many parametrized cases: a quarter of the profile's examples (>= 30)."""
    from hypothesis import settings

    return settings(max_examples=max(30, settings.default.max_examples // 4))
