"""The loader parses with libyaml when PyYAML has it, and still words a YAML error the way the
pure-Python parser does (it names what it found), at the same line and column."""

from __future__ import annotations

import pytest

from loopkit.errors import ScenarioError
from loopkit.scenario.loader import load_text


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("name: x\nscript: [Done.]\nexpect: *nowhere\n", "3:9", "found undefined alias 'nowhere'"),
        ("name: x\nscript:\n\t- Done.\n", "3:1", "found character '\\t' that cannot start any token"),
        ("name: x\nscript: [Done.\nexpect: {}\n", "3:7", "expected ',' or ']', but got ':'"),
    ],
)
def test_yaml_errors_say_what_was_found(text: str, where: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_text(text, source="s.yaml", default_name="s")
    assert f"s.yaml:{where}" in str(info.value) and message in str(info.value), str(info.value)


def test_the_same_data_either_way() -> None:
    import yaml

    from loopkit.scenario import loader

    text = "name: x\nscript:\n  - {text: 'Hi', tool_calls: [{name: add, arguments: {a: 1, b: 2.5}}]}\n  - Done.\nexpect: {end: {reason: stop}}\n"
    fast, _ = loader.compose(text, "s.yaml")
    assert fast == yaml.safe_load(text)
