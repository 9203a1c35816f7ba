"""arguments() and violations() against an independent validator (jsonschema)."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopkit.errors import UsageError
from loopkit.strategies import RULES, arguments, violations

from strategy_schemas import BREAKABLE, CATALOGUE, UNBREAKABLE, WEATHER, few


def referee(schema):
    """jsonschema's validator for the schema's dialect, format assertions off (as the loop runs it)."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    if isinstance(schema, dict) and "$schema" not in schema and any(isinstance(v, list) for v in [schema.get("items")]):
        cls = jsonschema.Draft7Validator
    return cls(schema)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_valid_values_validate(name):
    schema = CATALOGUE[name]
    v = referee(schema)

    @few()
    @given(arguments(schema))
    def check(value):
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in v.iter_errors(value)]
        assert not errors, f"{value!r} is invalid: {errors}"

    check()


@pytest.mark.parametrize("name", BREAKABLE)
def test_violations_fail_exactly_the_named_rule(name):
    schema = CATALOGUE[name]
    v = referee(schema)

    @few()
    @given(violations(schema))
    def check(violation):
        errors = list(v.iter_errors(violation.value))
        got = [(e.validator, tuple(e.absolute_path)) for e in errors]
        assert got == [(violation.rule, violation.path)], f"{violation} -> {got}"

    check()


@pytest.mark.parametrize("name", UNBREAKABLE)
def test_schemas_with_nothing_to_break_say_so(name):
    with pytest.raises(UsageError, match="no rule loopkit can break"):
        violations(CATALOGUE[name])


def test_invalid_arguments_are_the_violations_values():
    v = referee(WEATHER)

    @given(arguments(WEATHER, valid=False))
    def check(value):
        assert not v.is_valid(value)

    check()


def test_every_rule_is_reachable():
    """Each mutation operator fires on a schema that offers it (weather + unique + bounds)."""
    schemas = [WEATHER, CATALOGUE["unique"], CATALOGUE["int_bounds"], CATALOGUE["items"], CATALOGUE["num_bounds"]]
    seen: set[str] = set()

    for schema in schemas:

        @settings(max_examples=150)
        @given(violations(schema))
        def collect(violation):
            seen.add(violation.rule)

        collect()
    assert seen == set(RULES)


@pytest.mark.parametrize("rule", ["required", "type", "maximum", "additionalProperties", "enum", "pattern"])
def test_rules_filter(rule):
    @few()
    @given(violations(WEATHER, rules={rule}))
    def check(violation):
        assert violation.rule == rule

    check()


def test_a_failure_shrinks_to_a_minimal_example():
    """The minimal violation of a required key is the smallest object missing it."""
    from hypothesis import Phase, find

    found = find(violations(WEATHER, rules={"required"}), lambda v: True, settings=settings(phases=[Phase.generate, Phase.shrink]))
    assert found.rule == "required"
    assert found.path == ()
    assert set(found.value) in ({"city"}, {"days"})


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: arguments({"type": "strin"}), "unknown JSON Schema type|not a valid JSON Schema"),
        (lambda: arguments({"minLength": -1}), "not a valid JSON Schema"),
        (lambda: arguments(42), "mapping or a boolean"),
        (lambda: arguments({"type": "integer"}, valid="no"), "True or False"),
        (lambda: violations({}), "no rule"),
        (lambda: violations({"anyOf": [{"type": "string"}, {"type": "null"}]}), "anyOf"),
        (lambda: violations(WEATHER, rules={"minimun"}), "unknown rule"),
        (lambda: violations(WEATHER, rules=set()), "empty"),
        (lambda: arguments({"$ref": "https://example.com/s.json"}), "not local"),
        (lambda: arguments({"$ref": "#/$defs/missing"}), "points nowhere"),
    ],
)
def test_bad_input_raises_eagerly(call, message):
    with pytest.raises(UsageError, match=message):
        strategy = call()
        strategy.validate()


def test_pattern_python_cannot_compile_is_reported():
    with pytest.raises(UsageError, match="not a valid JSON Schema at pattern"):
        arguments({"type": "string", "pattern": "(?<name>a)"}).example()


@settings(max_examples=20)
@given(st.data())
def test_recursive_refs_terminate(data):
    value = data.draw(arguments(CATALOGUE["defs_recursive"]))
    assert isinstance(value["v"], int) or float(value["v"]).is_integer()  # 6.0 is an integer too
