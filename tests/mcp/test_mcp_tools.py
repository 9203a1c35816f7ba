"""MCP tools as loopkit tools: used by loopkit.run, loopkit.arun and Runtime.exec over both
transports; results mapped as the specification describes; sessions open and close cleanly."""

from __future__ import annotations

import asyncio
import json

import mcp_types as types
import pytest
from mcp_servers import START_TIMEOUT, stdio_server

import loopkit
from loopkit.fakes import ScriptedProvider
from loopkit.mcp import AsyncMCPSession, MCPConnectError, MCPServer, MCPSession
from loopkit.mcp._results import to_tool_result
from loopkit.messages import ImageContent, TextContent
from loopkit.script import ScriptedCall, Turn


def _script(*calls: tuple[str, dict]) -> ScriptedProvider:
    return ScriptedProvider([Turn(tool_calls=tuple(ScriptedCall(name=n, arguments=a) for n, a in calls)), Turn(text="done")])


def test_loopkit_run_calls_stdio_tools(correct: MCPSession) -> None:
    tools = correct.tools()
    assert [t.name for t in tools] == ["add", "repeat", "paint"]
    assert tools[0].parameters["required"] == ["a", "b"] and tools[0].source == "mcp"
    result = loopkit.run(_script(("add", {"a": 2, "b": 3}), ("repeat", {"text": "ab", "times": 2})), "Go.", tools=tools)
    add, rep = result.tool_results
    assert (add.text, add.is_error, add.details) == ("5", False, {"structured_content": {"result": 5}})
    assert (rep.text, rep.is_error) == ("abab", False)


def test_arguments_are_checked_before_the_call_and_server_errors_become_error_results(correct: MCPSession) -> None:
    result = loopkit.run(_script(("add", {"a": "x", "b": 1}), ("paint", {"color": "red", "shade": 5})), "Go.", tools=correct.tools(["add", "paint"]))
    bad, paint = result.tool_results
    assert bad.is_error and "a" in bad.text  # loopkit's own validation of the inputSchema
    assert json.loads(paint.text) == {"color": "red", "shade": 5}


def test_arun_and_runtime_exec_over_streamable_http(correct_url: str) -> None:
    async def main() -> list[str]:
        async with AsyncMCPSession(correct_url, connect_timeout=START_TIMEOUT) as session:
            result = await loopkit.arun(_script(("add", {"a": 40, "b": 2})), "Go.", tools=session.tools())
            return [m.text for m in result.tool_results]

    assert asyncio.run(main()) == ["42"]
    with MCPSession(MCPServer.http(correct_url), connect_timeout=START_TIMEOUT) as session:
        runtime = loopkit.Runtime(provider=_script(("repeat", {"text": "hi", "times": 3})))
        assert runtime.exec("Go.", tools=session.tools(["repeat"])) == "done"
        result = loopkit.run(_script(("echo3", {"text": "hi", "times": 3})), "Go.", tools=[session.tool("repeat", rename="echo3")])
        assert [(m.tool_name, m.text) for m in result.tool_results] == [("echo3", "hihihi")]


def test_sync_tools_work_under_arun_too(correct: MCPSession) -> None:
    result = asyncio.run(loopkit.arun(_script(("add", {"a": 1, "b": 1})), "Go.", tools=correct.tools(["add"])))
    assert [m.text for m in result.tool_results] == ["2"]


def test_a_dead_stdio_server_gives_an_error_result_then_is_restarted(planted: MCPSession) -> None:
    before = planted.restarts
    tools = planted.tools(["crash", "ok"])
    result = loopkit.run(_script(("crash", {"text": "x" * 30}), ("ok", {"n": 1})), "Go.", tools=tools)
    crashed, ok = result.tool_results
    assert crashed.is_error and "closed the connection" in crashed.text and "cannot handle" in crashed.text
    assert (ok.is_error, ok.text) == (False, '{"n": 1}') and planted.restarts == before + 1


def test_output_schema_mismatch_becomes_an_error_result(planted: MCPSession) -> None:
    result = loopkit.run(_script(("square", {"n": -2}), ("square", {"n": 3})), "Go.", tools=planted.tools(["square"]))
    bad, good = result.tool_results
    assert bad.is_error and "does not match its outputSchema" in bad.text and "'4' is not of type 'integer'" in bad.text
    assert (good.is_error, good.details) == (False, {"structured_content": {"square": 9}})


def test_content_blocks_map_as_the_specification_describes() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="t"),
            types.ImageContent(type="image", data="aW1n", mime_type="image/png"),
            types.AudioContent(type="audio", data="YXVk", mime_type="audio/wav"),
            types.ResourceLink(type="resource_link", uri="file:///a.txt", name="a.txt"),
            types.EmbeddedResource(type="resource", resource=types.TextResourceContents(uri="file:///b", text="inline")),
        ]
    )
    mapped = to_tool_result(result)
    assert mapped.content == [
        TextContent("t"),
        ImageContent(data="aW1n", mime_type="image/png"),
        TextContent("[audio: audio/wav, 4 base64 characters]"),
        TextContent("[resource link: a.txt <file:///a.txt>]"),
        TextContent("inline"),
    ]
    only_structured = to_tool_result(types.CallToolResult(content=[], structured_content={"k": [1]}))
    assert only_structured.text == '{"k": [1]}' and only_structured.details == {"structured_content": {"k": [1]}}
    assert to_tool_result(types.CallToolResult(content=[types.TextContent(type="text", text="no")], is_error=True)).is_error


def test_connect_errors_say_what_went_wrong() -> None:
    with pytest.raises(MCPConnectError, match="No such file"):
        with MCPSession(["loopkit-no-such-command-xyz"]):
            pass
    with pytest.raises(MCPConnectError, match="(?s)Connection closed.*bye"):
        with MCPSession(MCPServer.stdio("python", "-c", "import sys; print('bye', file=sys.stderr); sys.exit(3)")):
            pass


def test_server_descriptions_are_checked() -> None:
    from loopkit.errors import UsageError

    with pytest.raises(UsageError, match="http"):
        MCPServer.http("ftp://x")
    with pytest.raises(UsageError, match="not both"):
        MCPServer(command=("a",), url="http://x")
    assert MCPServer.stdio("python server.py --flag").command == ("python", "server.py", "--flag")
    assert stdio_server("correct").transport == "stdio" and MCPServer.http("http://h/mcp").label == "http://h/mcp"


def test_importing_loopkit_or_loopkit_mcp_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = "import sys, loopkit, loopkit.mcp; print(','.join(m for m in ('mcp', 'mcp_types', 'anyio', 'hypothesis') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_mcp_tests_share_one_worker(request: pytest.FixtureRequest) -> None:
    """Under ``--dist loadgroup`` the MCP tests form one xdist group (tests/mcp/conftest.py), so
    each test server starts once; xdist marks a grouped test's id with its group."""
    if not getattr(request.config, "workerinput", None) or not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not a pytest-xdist worker of a --dist loadgroup run")
    assert request.node.nodeid.endswith("@mcp"), f"{request.node.nodeid}: the mcp group was not applied"
