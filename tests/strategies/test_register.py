"""The hypothesis entry-point hook makes st.from_type work for loopkit's message types."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategy_schemas import few

from loopkit.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from loopkit.script import ScriptedCall, Turn
from loopkit.strategies._register import _hypothesis_setup_hook, message_strategies

_hypothesis_setup_hook()


@pytest.mark.parametrize("cls", sorted(message_strategies(), key=lambda c: c.__name__))
def test_from_type_builds_instances(cls):
    @few()
    @given(st.from_type(cls))
    def check(value):
        assert type(value) is cls

    check()


@given(st.from_type(AssistantMessage))
def test_assistant_messages_hold_well_formed_calls(message):
    for call in message.tool_calls:
        assert call.arguments_ok and call.id and call.name


@given(st.from_type(ToolResultMessage), st.from_type(UserMessage), st.from_type(ToolCall), st.from_type(ScriptedCall), st.from_type(Turn))
def test_registered_strategies_compose(result, user, call, scripted, turn):
    assert result.role == "toolResult" and user.role == "user" and call.type == "toolCall"


def test_entry_point_is_declared():
    import pathlib
    import tomllib

    root = pathlib.Path(__file__).resolve().parents[2]
    data = tomllib.loads((root / "pyproject.toml").read_text())
    assert data["project"]["entry-points"]["hypothesis"]["loopkit"] == "loopkit.strategies._register:_hypothesis_setup_hook"
