"""A YAML scenario whose tools come from MCP servers, over stdio and streamable HTTP, with both
drivers and a wire-protocol provider."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from mcp_servers import SERVERS

from loopkit.mcp import close_shared_sessions
from loopkit.scenario import Scenario

YAML = """
name: mcp_tools
prompt: Add, then paint.
tools:
  add: {{kind: mcp, command: {command}}}
  paint: {{kind: mcp, url: "{url}", description: Paint over HTTP.}}
  double: {{kind: mcp, command: {command}, tool: repeat}}
script:
  - tool_calls:
      - {{name: add, arguments: {{a: 2, b: 40}}}}
      - {{name: paint, arguments: {{color: blue, shade: 7}}}}
      - {{name: double, arguments: {{text: ab, times: 2}}}}
      - {{name: add, arguments: {{a: 1, b: "x"}}}}
  - Done.
expect:
  end: {{reason: stop, model_calls: 2}}
  calls:
    - {{round: 1, call: 1, executed: true, is_error: false, text: "42"}}
    - {{round: 1, call: 2, executed: true, is_error: false, text: {{contains: '"shade": 7'}}}}
    - {{round: 1, call: 3, executed: true, is_error: false, text: abab}}
    - {{round: 1, call: 4, executed: false, is_error: true}}
"""


@pytest.fixture(scope="module")
def scenario(correct_url: str) -> Iterator[Scenario]:
    command = json.dumps([sys.executable, str(SERVERS / "correct.py")])
    yield Scenario.parse(YAML.format(command=command, url=correct_url))
    close_shared_sessions()  # before the HTTP server stops


@pytest.mark.parametrize("driver", ["sync", "async"])
@pytest.mark.parametrize("provider", ["scripted", "anthropic"])
def test_scenario_uses_mcp_tools_through_both_transports(scenario: Scenario, provider: str, driver: str) -> None:
    result = scenario.run(provider, driver=driver)
    assert result.passed, result.report()
    assert scenario._toolbox is not None
    assert [t.description for t in scenario._toolbox.tools][1] == "Paint over HTTP."


def test_an_mcp_tool_needs_a_command_or_a_url() -> None:
    from loopkit.scenario import ScenarioFileError

    bad = "name: x\ntools:\n  add: {kind: mcp}\nscript: [Hi.]\nexpect: {end: {reason: stop}}\n"
    with pytest.raises(ScenarioFileError, match="either 'command'"):
        Scenario.parse(bad)
    wrong = "name: x\ntools:\n  add: {kind: echo, url: 'http://x'}\nscript: [Hi.]\nexpect: {end: {reason: stop}}\n"
    with pytest.raises(ScenarioFileError, match="do not apply"):
        Scenario.parse(wrong)
