"""tool_calls() and scripted_calls(): every kind is what it claims to be."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategy_schemas import few

from loopkit.errors import UsageError
from loopkit.messages import ToolCall
from loopkit.provider import ToolSpec
from loopkit.script import ScriptedCall
from loopkit.strategies import CALL_KINDS, scripted_calls, tool_calls

WEATHER = ToolSpec(
    name="get_weather",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "minLength": 1}, "days": {"type": "integer", "minimum": 1, "maximum": 7}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
ADD = {"spec": {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}}, "execute": lambda a, b: a + b}
TOOLS = [WEATHER, ADD]
SCHEMAS = {"get_weather": WEATHER.parameters, "add": ADD["spec"]["parameters"]}


def classify(call: ToolCall) -> str:
    """The kind of one call, decided from the call alone."""
    if call.name == "":
        return "empty_name"
    if call.name not in SCHEMAS:
        return "unknown_name"
    if call.raw_arguments is not None:
        assert call.arguments is None
        return "broken_json"
    if not isinstance(call.arguments, dict):
        return "non_object"
    if not jsonschema.Draft202012Validator(SCHEMAS[call.name]).is_valid(call.arguments):
        return "schema_violation"
    return "valid"


@given(tool_calls(TOOLS, malformed=False, max_size=4))
def test_well_formed_calls_are_valid_with_unique_ids(calls):
    assert 1 <= len(calls) <= 4
    assert all(classify(c) == "valid" for c in calls)
    ids = [c.id for c in calls]
    assert len(set(ids)) == len(ids) and all(ids)


@pytest.mark.parametrize("kind", [k for k in CALL_KINDS if k not in ("duplicate_id", "missing_id", "huge_value", "valid")])
def test_each_malformed_kind_is_what_it_says(kind):
    @few()
    @given(tool_calls(TOOLS, kinds={kind}, max_size=2))
    def check(calls):
        assert {classify(c) for c in calls} == {kind}

    check()


@given(tool_calls(TOOLS, kinds={"broken_json"}))
def test_broken_json_never_parses(calls):
    for c in calls:
        assert c.raw_arguments and c.raw_arguments.strip()
        with pytest.raises(ValueError):
            json.loads(c.raw_arguments)


@given(tool_calls(TOOLS, kinds={"missing_id"}))
def test_missing_ids_are_empty(calls):
    assert all(c.id == "" for c in calls)


@given(tool_calls(TOOLS, kinds={"valid", "duplicate_id"}, min_size=2, max_size=3))
def test_duplicate_ids_repeat_an_earlier_id(calls):
    ids = [c.id for c in calls]
    assert all(classify(c) == "valid" for c in calls)
    if len(set(ids)) < len(ids):
        assert len(set(ids)) == len(ids) - 1


def test_duplicate_ids_do_occur():
    seen = []

    @given(tool_calls(TOOLS, kinds={"valid", "duplicate_id"}, min_size=2))
    def collect(calls):
        seen.append(len({c.id for c in calls}) < len(calls))

    collect()
    assert any(seen) and not all(seen)


@settings(max_examples=20)
@given(tool_calls(TOOLS, kinds={"huge_value"}, max_size=1))
def test_huge_values_are_huge_and_unicode_heavy(calls):
    (c,) = calls
    text = max((v for v in c.arguments.values() if isinstance(v, str)), key=len)
    assert len(text) >= 2000 and all(ord(ch) >= 0x80 for ch in text)


def test_every_kind_occurs_by_default():
    seen: set[str] = set()

    @settings(max_examples=200)
    @given(tool_calls(TOOLS, min_size=2, max_size=3))
    def collect(calls):
        seen.update(classify(c) for c in calls)

    collect()
    assert {"valid", "unknown_name", "empty_name", "broken_json", "non_object", "schema_violation"} <= seen


@given(scripted_calls(TOOLS, max_size=3))
def test_scripted_calls_send_raw_text_for_non_objects(calls):
    for c in calls:
        assert isinstance(c, ScriptedCall)
        if isinstance(c.arguments, str):
            try:
                value = json.loads(c.arguments)
            except ValueError:
                continue  # broken JSON, sent as written
            assert not isinstance(value, dict)


@few()
@given(st.data())
def test_tools_without_schema_rules_still_get_calls(data):
    calls = data.draw(tool_calls([{"name": "ping", "parameters": {}}]))
    assert all(isinstance(c, ToolCall) for c in calls)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: tool_calls(TOOLS, min_size=3, max_size=1), "min_size"),
        (lambda: tool_calls(TOOLS, kinds={"broken"}), "unknown kind"),
        (lambda: tool_calls([], malformed=False), "at least one tool"),
        (lambda: tool_calls([{"parameters": {}}]), "has no name"),
        (lambda: tool_calls(TOOLS, malformed="yes"), "True or False"),
        (lambda: tool_calls([{"name": "x", "parameters": {"type": 3}}]), "tool 'x'|not a valid JSON Schema"),
    ],
)
def test_bad_input_raises_eagerly(call, message):
    with pytest.raises(UsageError, match=message):
        call()
