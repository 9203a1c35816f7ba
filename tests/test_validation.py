"""Argument coercion and validation (docs/loop-contract.md): exact error texts, coercion rules,
no mutation of the model's arguments, and agreement of the fast and reference validators."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from loopkit._validation import ArgumentValidator, compile_coercer
from loopkit.tools import Tool, tool


def make(properties: dict[str, Any], *, required: list[str] | None = None, extra: Any = False, name: str = "t") -> Tool:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": extra}
    if required:
        schema["required"] = required
    return Tool(name=name, execute=lambda **kw: kw, parameters=schema)


def failure(t: Tool, raw: Any) -> str:
    args, error = t.prepare(raw)
    assert args is None and error is not None
    return error


def ok(t: Tool, raw: Any) -> Any:
    args, error = t.prepare(raw)
    assert error is None, error
    return args


# --- error texts ----------------------------------------------------------------------------------


def test_missing_required_is_reported_at_root() -> None:
    t = make({"value": {"type": "string"}}, required=["value"], name="setter")
    assert failure(t, {}) == (
        'Validation failed for tool "setter":\n'
        "  - root: 'value' is a required property\n"
        "\n"
        "Received arguments:\n"
        "{}"
    )


def test_additional_property_text() -> None:
    t = make({"value": {"type": "string"}})
    assert failure(t, {"value": "v", "extra": 1}) == (
        'Validation failed for tool "t":\n'
        "  - root: Additional properties are not allowed ('extra' was unexpected)\n"
        "\n"
        "Received arguments:\n"
        '{\n  "value": "v",\n  "extra": 1\n}'
    )


def test_float_string_for_integer_stays_a_string_and_fails() -> None:
    t = make({"n": {"type": "integer"}}, required=["n"])
    assert failure(t, {"n": "3.0"}) == (
        'Validation failed for tool "t":\n'
        "  - n: '3.0' is not of type 'integer'\n"
        "\n"
        "Received arguments:\n"
        '{\n  "n": "3.0"\n}'
    )


def test_one_line_per_error_sorted_by_path_with_dotted_nested_paths() -> None:
    t = make(
        {
            "user": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                "required": ["name"],
            },
            "items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}},
            "qty": {"type": "integer", "minimum": 1},
        },
        required=["user", "qty"],
        name="order",
    )
    raw = {"qty": 0, "items": [{"sku": "a"}, {"sku": None}], "user": {"age": "old"}, "note": "x"}
    assert failure(t, raw) == (
        'Validation failed for tool "order":\n'
        "  - root: Additional properties are not allowed ('note' was unexpected)\n"
        "  - items.1.sku: None is not of type 'string'\n"
        "  - qty: 0 is less than the minimum of 1\n"
        "  - user: 'name' is a required property\n"
        "  - user.age: 'old' is not of type 'integer'\n"
        "\n"
        "Received arguments:\n" + json.dumps(raw, indent=2, ensure_ascii=False)
    )


def test_received_arguments_are_the_uncoerced_original() -> None:
    t = make({"n": {"type": "integer"}, "s": {"type": "string"}}, required=["n", "s"])
    text = failure(t, {"n": "2", "extra": "é"})
    assert text.endswith('Received arguments:\n{\n  "n": "2",\n  "extra": "é"\n}')
    assert "  - root: 's' is a required property" in text


@pytest.mark.parametrize(
    ("raw", "kind"),
    [([1, 2], "array"), ("s", "string"), (None, "null"), (3, "integer"), (2.5, "number"), (True, "boolean")],
)
def test_non_object_arguments(raw: Any, kind: str) -> None:
    t = make({})
    assert failure(t, raw) == f"Tool arguments must be an object, got {kind}"


def test_format_is_not_enforced() -> None:
    t = make({"when": {"type": "string", "format": "date-time"}, "mail": {"type": "string", "format": "email"}})
    assert ok(t, {"when": "yesterday", "mail": "nobody"}) == {"when": "yesterday", "mail": "nobody"}


# --- coercion -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "raw", "expected"),
    [
        ({"type": "integer"}, " 42 ", 42),
        ({"type": "integer"}, "-7", -7),
        ({"type": "number"}, "2.5", 2.5),
        ({"type": "number"}, " 3 ", 3.0),
        ({"type": "boolean"}, "true", True),
        ({"type": "boolean"}, " YES ", True),
        ({"type": "boolean"}, "1", True),
        ({"type": "boolean"}, "False", False),
        ({"type": "boolean"}, "no", False),
        ({"type": "boolean"}, "0", False),
        ({"type": "string"}, 5, "5"),
        ({"type": "string"}, 2.5, "2.5"),
        ({"type": "string"}, True, "true"),
        ({"type": "string"}, False, "false"),
        ({"type": ["integer", "null"]}, "4", 4),
        ({"type": ["integer", "null"]}, None, None),
        ({"type": ["string", "integer"]}, "4", "4"),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "4", 4),
        ({"type": "array", "items": {"type": "integer"}}, ["1", 2, " 3"], [1, 2, 3]),
        ({"type": "array", "items": [{"type": "integer"}, {"type": "boolean"}]}, ["1", "yes"], [1, True]),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, {"a": "1"}, {"a": 1}),
    ],
)
def test_coercions(schema: dict[str, Any], raw: Any, expected: Any) -> None:
    t = make({"x": schema})
    got = ok(t, {"x": raw})["x"]
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(
    ("schema", "raw"),
    [
        ({"type": "integer"}, "3.0"),
        ({"type": "integer"}, "three"),
        ({"type": "integer"}, 2.5),
        ({"type": "number"}, "nan"),
        ({"type": "number"}, "inf"),
        ({"type": "boolean"}, "maybe"),
        ({"type": "boolean"}, 1),
        ({"type": "string"}, None),
        ({"type": "string"}, ["a"]),
    ],
)
def test_values_that_are_not_coerced_fail(schema: dict[str, Any], raw: Any) -> None:
    t = make({"x": schema})
    text = failure(t, {"x": raw})
    assert f"  - x: {raw!r} is not of type" in text


def test_nested_object_properties_are_coerced_and_other_keys_kept() -> None:
    t = make(
        {"o": {"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": True}},
    )
    assert ok(t, {"o": {"n": "5", "free": "7"}}) == {"o": {"n": 5, "free": "7"}}


def test_optional_nested_object_is_coerced_through_anyof() -> None:
    @tool
    def f(limits: dict[str, int] | None = None) -> None: ...

    assert ok(f, {"limits": {"a": "2"}}) == {"limits": {"a": 2}}
    assert ok(f, {"limits": None}) == {"limits": None}


def test_typed_function_coerces_its_parameters() -> None:
    @tool
    def add(a: int, b: int, loud: bool = False, label: str = "") -> int:
        return a + b

    args = ok(add, {"a": "1", "b": 2, "loud": "yes", "label": 7})
    assert args == {"a": 1, "b": 2, "loud": True, "label": "7"}
    assert add.invoke(args, tool_call_id="c") == 3


# --- copying and mutation -------------------------------------------------------------------------


def test_valid_arguments_are_returned_without_copying() -> None:
    @tool
    def add(a: int, b: int) -> int:
        return a + b

    raw = {"a": 1, "b": 2}
    assert add.prepare(raw)[0] is raw


def test_only_changed_containers_are_copied_and_raw_is_untouched() -> None:
    t = make(
        {
            "changed": {"type": "object", "properties": {"n": {"type": "integer"}}},
            "same": {"type": "object", "properties": {"n": {"type": "integer"}}},
            "list": {"type": "array", "items": {"type": "integer"}},
        }
    )
    raw = {"changed": {"n": "1"}, "same": {"n": 1}, "list": [1, 2]}
    before = copy.deepcopy(raw)
    args = ok(t, raw)
    assert raw == before
    assert args == {"changed": {"n": 1}, "same": {"n": 1}, "list": [1, 2]}
    assert args is not raw and args["changed"] is not raw["changed"]
    assert args["same"] is raw["same"] and args["list"] is raw["list"]


def test_failed_validation_does_not_mutate_either() -> None:
    t = make({"n": {"type": "integer"}, "m": {"type": "integer"}}, required=["n", "m"])
    raw = {"n": "1"}
    failure(t, raw)
    assert raw == {"n": "1"}


def test_schemas_without_coercible_values_have_no_plan() -> None:
    assert compile_coercer({"type": "object", "properties": {"e": {"enum": [1, 2]}, "a": {}}}) is None
    assert compile_coercer({"type": "object"}) is None
    assert compile_coercer({"type": "array", "items": {"$ref": "#/definitions/x"}}) is None


# --- the fast path agrees with the reference ------------------------------------------------------

AGREEMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "i": {"type": "integer", "minimum": 0},
        "f": {"type": "number", "exclusiveMaximum": 10},
        "s": {"type": "string", "minLength": 1, "pattern": "^[a-z]+$"},
        "e": {"enum": ["x", "y"]},
        "l": {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
        "t": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": False},
        "o": {"type": "object", "properties": {"k": {"type": "boolean"}}, "required": ["k"]},
        "u": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "one": {"oneOf": [{"type": "integer"}, {"type": "number", "multipleOf": 0.5}]},
    },
    "required": ["i"],
    "additionalProperties": False,
}

AGREEMENT_CASES: list[Any] = [
    {"i": 0},
    {"i": -1},
    {"i": 3.0},
    {"i": True},
    {"i": 1, "f": 10},
    {"i": 1, "f": 9.5},
    {"i": 1, "s": ""},
    {"i": 1, "s": "ABC"},
    {"i": 1, "s": "abc"},
    {"i": 1, "e": "z"},
    {"i": 1, "l": [1, 2, 3]},
    {"i": 1, "l": [1, "x"]},
    {"i": 1, "t": ["a", 1]},
    {"i": 1, "t": ["a", 1, 2]},
    {"i": 1, "o": {}},
    {"i": 1, "o": {"k": "maybe"}},
    {"i": 1, "u": None},
    {"i": 1, "u": "q"},
    {"i": 1, "one": 2},
    {"i": 1, "one": 2.5},
    {"i": 1, "one": 2.25},
    {"i": 1, "zz": 0},
    {},
]


@pytest.mark.parametrize("raw", AGREEMENT_CASES, ids=[json.dumps(c) for c in AGREEMENT_CASES])
def test_fast_and_reference_validators_agree(raw: Any) -> None:
    fast = ArgumentValidator("a", AGREEMENT_SCHEMA)
    reference = ArgumentValidator("a", AGREEMENT_SCHEMA)
    reference._check = reference.reference_check
    assert fast.prepare(raw) == reference.prepare(raw)
    assert fast._check != fast.reference_check  # the fast path really was compiled


def test_schema_fastjsonschema_cannot_compile_falls_back_to_jsonschema() -> None:
    # fastjsonschema has no draft 2020-12; jsonschema validates it.
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"p": {"type": "array", "prefixItems": [{"type": "integer"}], "items": False}},
    }
    v = ArgumentValidator("new", schema)
    assert v.prepare({"p": [1]}) == ({"p": [1]}, None)
    error = v.prepare({"p": [1, 2]})[1]
    assert error is not None and error.startswith('Validation failed for tool "new":\n  - p: ')


def test_identical_schemas_share_one_compiled_validator() -> None:
    a = make({"n": {"type": "integer"}}, name="a")
    b = make({"n": {"type": "integer"}}, name="b")
    a.prepare({"n": 1})
    b.prepare({"n": 1})
    assert a._validator._check is b._validator._check


def test_defaults_are_never_filled_in() -> None:
    t = make({"n": {"type": "integer", "default": 5}, "o": {"type": "object", "default": {}}})
    raw: dict[str, Any] = {}
    assert t.prepare(raw) == ({}, None)
    assert raw == {}


# --- any JSON the model sends: never a crash, never a mutation, fast path == reference ------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6)
    | st.sampled_from(["1", " 2 ", "3.0", "true", "NO", "nan", "-0", "1e3", "x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["i", "f", "s", "l", "o", "u", "one", "t", "e", "k", "zz"]), inner, max_size=4),
    max_leaves=12,
)


@settings(derandomize=True)
@given(raw=json_values)
def test_prepare_is_total_pure_and_agrees_with_the_reference(raw: Any) -> None:
    fast = ArgumentValidator("a", AGREEMENT_SCHEMA)
    reference = ArgumentValidator("a", AGREEMENT_SCHEMA)
    reference._check = reference.reference_check
    before = copy.deepcopy(raw)
    got = fast.prepare(raw)
    assert raw == before
    assert got == reference.prepare(raw)
    args, error = got
    assert (args is None) != (error is None)
    if args is not None:
        # what passed is valid for jsonschema itself, and preparing it again changes nothing
        assert reference.prepare(args) == (args, None)
