"""Every ``--help`` of demo, run and serve reads as plain text written for a user: no reST or
Markdown markup, no internal names, a description and an example."""

from __future__ import annotations

import re

import pytest

from loopkit.cli import build_parser, main

COMMANDS = ("demo", "run", "serve")
MARKUP = re.compile(r"``|:class:|:func:|:meth:|:data:|\*\*|loopkit\.\w+\.\w+|see loopkit\.")


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", COMMANDS)
def test_help_is_plain_text_with_a_description_and_an_example(capsys, command: str) -> None:
    text = _help(capsys, command)
    assert not MARKUP.search(text), MARKUP.search(text)
    description = text.split("\n\n")[1]
    assert len(description.split()) >= 15, description
    assert re.search(r"^examples?:\n  loopkit " + command, text, re.M)


def test_top_level_help_lists_every_command_with_a_summary(capsys) -> None:
    text = _help(capsys)
    for action in build_parser()._subparsers._group_actions[0].choices:  # every registered command
        assert re.search(rf"^\s+{action}\b", text, re.M), action
    assert not MARKUP.search(text)
