"""What models really send, generated on purpose: each generator addition proven by a property."""

from __future__ import annotations

import json
import math
import unicodedata

import jsonschema
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from strategy_schemas import CATALOGUE

from loopkit.strategies import arguments, edge_cases
from loopkit.strategies._edge_cases import DEEP
from loopkit.strategies._edges import FORMAT_EDGES, FORMAT_NEAR_MISSES, TRICKY_KEYS


def draws(strategy, n: int = 600) -> list:
    """``n`` generated values (seeded: the same every run)."""
    out: list = []

    @settings(max_examples=n, database=None, derandomize=True, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value):
        out.append(value)

    collect()
    return out


def referee(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    if isinstance(schema, dict) and "$schema" not in schema and isinstance(schema.get("items"), list):
        cls = jsonschema.Draft7Validator
    return cls(schema)


# --- numbers ------------------------------------------------------------------------------------


def test_integer_valued_floats_are_at_least_five_percent_of_integers():
    values = draws(arguments({"type": "integer"}), 400)
    floats = [v for v in values if isinstance(v, float)]
    assert len(floats) >= 0.05 * len(values), f"{len(floats)} of {len(values)}"
    assert len(floats) <= 0.5 * len(values)  # still mostly ints
    assert all(v.is_integer() for v in floats)


def test_integer_bounds_and_their_neighbours_come_up():
    schema = {"type": "integer", "minimum": -3, "maximum": 17}
    seen = set(draws(arguments(schema), 300))
    assert {-3, -2, 16, 17} <= seen
    assert all(-3 <= v <= 17 for v in seen)


def test_exclusive_bounds_are_approached_but_never_reached():
    schema = {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}
    values = draws(arguments(schema), 300)
    assert all(0 < v < 1 for v in values)
    assert math.nextafter(0.0, 1) in values and math.nextafter(1.0, 0) in values


def test_signed_zero_huge_and_tiny_numbers_come_up():
    values = draws(arguments({"type": "number"}), 400)
    texts = {repr(v) for v in values}
    assert "-0.0" in texts and "5e-324" in texts and "1.7976931348623157e+308" in texts
    assert any(isinstance(v, int) and abs(v) >= 2**53 for v in values)


def test_multiple_of_edges_stay_multiples():
    schema = {"type": "number", "multipleOf": 0.25, "minimum": -1, "maximum": 1}
    v = referee(schema)
    values = draws(arguments(schema), 300)
    assert all(v.is_valid(x) for x in values)
    assert {-1, 1, -0.75, 0.75} <= set(values)


def test_numbers_as_strings_are_coerced_by_the_loop_and_plain_numbers_left_alone():
    from loopkit.tools import Tool

    t = Tool(name="n", execute=lambda n: n, parameters={"type": "object", "properties": {"n": {"type": "integer"}}})
    assert t.prepare({"n": "6"}) == ({"n": 6}, None)
    assert t.prepare({"n": 6.0}) == ({"n": 6.0}, None)  # an integer-valued float is an integer already
    assert t.prepare({"n": "6.5"})[0] is None


# --- text and keys ------------------------------------------------------------------------------


def test_text_includes_combining_marks_rtl_emoji_and_nul():
    values = draws(arguments({"type": "string"}), 300)
    assert any(unicodedata.combining(c) for s in values for c in s)
    assert any(unicodedata.bidirectional(c) in ("R", "AL") for s in values for c in s)
    assert any(ord(c) > 0xFFFF for s in values for c in s)
    assert any("\x00" in s for s in values)


def test_free_form_objects_get_unicode_keys():
    values = draws(arguments({"type": "object"}), 150)
    keys = [k for v in values for k in v]
    assert keys
    non_ascii = [k for k in keys if not k.isascii()]
    assert len(non_ascii) >= 0.1 * len(keys), f"{len(non_ascii)} of {len(keys)}"
    assert {"café", "🔑", ""} & set(keys)


def test_lone_surrogates_travel_escaped_in_json():
    from loopkit.fuzz._search import _raw_variants
    from loopkit.strategies._schema import validator_for

    schema = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}
    (lone,) = [v for v in _raw_variants({"s": "a"}, validator_for(schema), {("s",)}) if v.note.startswith("lone")]
    assert lone.raw.isascii() and "\\ud83d" in lone.raw
    assert json.loads(lone.raw) == lone.arguments


# --- formats ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(FORMAT_EDGES))
def test_every_format_yields_its_edge_values(fmt):
    schema = {"type": "string", "format": fmt}
    seen = set(draws(arguments(schema), 200))
    assert set(FORMAT_EDGES[fmt]) <= seen, set(FORMAT_EDGES[fmt]) - seen
    cases = edge_cases({"type": "object", "properties": {"v": schema}, "required": ["v"]})
    assert {c.value["v"] for c in cases if not c.near_miss} >= set(FORMAT_EDGES[fmt])
    assert {c.value["v"] for c in cases if c.near_miss} == set(FORMAT_NEAR_MISSES[fmt])


def test_format_edges_are_valid_and_near_misses_are_not():
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    for fmt in ("date", "time", "date-time", "email", "uuid", "ipv4", "ipv6"):
        if fmt not in checker.checkers:
            continue
        for value in FORMAT_EDGES[fmt]:
            assert checker.conforms(value, fmt), (fmt, value)
    for fmt, value in [("date", "2023-02-29"), ("ipv4", "256.0.0.1"), ("uuid", "00000000-0000-0000-0000-00000000000")]:
        if fmt in checker.checkers:
            assert not checker.conforms(value, fmt), (fmt, value)


# --- edge cases ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_edge_cases_validate_and_are_deterministic(name):
    schema = CATALOGUE[name]
    cases = edge_cases(schema)
    assert cases, "at least the plain valid value"
    v = referee(schema)
    for c in cases:
        assert v.is_valid(c.value), (c.what, c.value)
    assert [c.value for c in edge_cases(schema)] == [c.value for c in cases]


def _depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def test_recursive_and_free_form_values_are_nested_deep():
    deep = [c for c in edge_cases(CATALOGUE["defs_recursive"]) if "deep" in c.what]
    assert deep and _depth(deep[0].value) >= DEEP
    free = [c for c in edge_cases({"type": "object"}) if "deep" in c.what]
    assert free and _depth(free[0].value) > DEEP


def test_every_place_gets_its_first_edges_early():
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 9}, "day": {"type": "string", "format": "date"}, "tags": {"type": "object"}},
        "required": ["n", "day"],
    }
    first = edge_cases(schema, limit=12)
    paths = {c.path[:1] for c in first}
    assert {("n",), ("day",), ("tags",)} <= paths
    assert any(c.value["day"] == "2000-02-29" for c in first)
    assert any(c.value["n"] == 9 for c in first)


def test_tricky_keys_are_property_names_json_can_carry():
    for key in TRICKY_KEYS:
        assert json.loads(json.dumps({key: 1})) == {key: 1}
