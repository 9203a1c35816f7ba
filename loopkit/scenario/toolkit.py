"""The tools a scenario can name: built-in kinds and ``module:function`` references.

Built-in kinds: ``echo`` (returns its ``text``), ``add`` (``a + b``; no extra keys allowed),
``raises`` (raises ``exception`` with ``message``, which may be empty), ``slow`` (waits ``seconds``
through the run's injected sleep, so nothing really waits, then returns ``result``), ``counter``
(returns how many times it has run), ``abort`` (sets the run's abort signal) and ``nested``
(a nested ``Runtime.exec(prompt)`` that inherits the run's provider and tools) and ``mcp`` (the
tool of that name, or ``tool``, of the MCP server at ``command`` or ``url``; see
:func:`loopkit.mcp.shared_session`).

Every tool is wrapped so the run records which call positions actually executed a tool body:
that is how "never executed" is checked, whatever the tool does.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._targets import import_target
from ..errors import ScenarioError, UsageError
from ..provider import AbortSignal
from ..tools import Tool, adapt_tool
from .model import ToolDef

_OPEN: dict[str, Any] = {"type": "object", "properties": {}}
_ADD: dict[str, Any] = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
_ECHO: dict[str, Any] = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


@dataclass(slots=True)
class ToolState:
    """What the tools of one run share: the injected sleep, the abort signal, counters, and the
    record of executions (``position`` is ``(round, call)`` of the outer run, None when nested).

    Tools are built once per scenario (checking a schema and compiling its validator is the
    costly part) and read this state, which :meth:`reset` renews for every run.
    """

    sleep: Callable[[float], None] = lambda seconds: None
    abort_signal: AbortSignal = field(default_factory=AbortSignal)
    where: Callable[[], tuple[int, int] | None] = lambda: None
    clock: Callable[[], int] = lambda: 0
    executions: list[tuple[tuple[int, int] | None, str]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def reset(self, *, sleep: Callable[[float], None], abort_signal: AbortSignal, where: Callable[[], tuple[int, int] | None], clock: Callable[[], int]) -> None:
        self.sleep, self.abort_signal, self.where, self.clock = sleep, abort_signal, where, clock
        self.executions = []
        self.counts = {}

    def executed(self, name: str) -> None:
        pos = self.where()
        if pos is not None and any(p == pos for p, _ in self.executions):
            pos = None  # a second body at the same outer position runs inside a nested exec
        self.executions.append((pos, name))


def build_tools(defs: dict[str, ToolDef], state: ToolState) -> list[Tool]:
    """The scenario's tools, reading ``state`` (reset it before each run)."""
    return [_recorded(_inner(name, d, state), state) for name, d in defs.items()]


def _recorded(inner: Tool, state: ToolState) -> Tool:
    def execute(args: dict[str, Any], /, *, tool_call_id: str, signal: Any, on_update: Any) -> Any:
        state.executed(inner.name)
        return inner.invoke(args, tool_call_id=tool_call_id, signal=signal, on_update=on_update)

    return Tool(name=inner.name, execute=execute, description=inner.description, parameters=inner.parameters)


def _inner(name: str, d: ToolDef, state: ToolState) -> Tool:
    kind = d.kind
    if kind == "echo":

        def echo(text: str) -> str:
            return text

        return Tool(name=name, execute=echo, description=d.description or "Return the text unchanged.", parameters=_ECHO)
    if kind == "add":

        def add(a: float, b: float) -> float:
            return a + b

        return Tool(name=name, execute=add, description=d.description or "Add two numbers.", parameters=_ADD)
    if kind == "raises":
        exc_type = getattr(builtins, d.exception or "RuntimeError")
        message = "tool failed" if d.message is None else d.message

        def fail(args: dict[str, Any]) -> Any:
            raise exc_type(message) if message else exc_type()

        return Tool(name=name, execute=fail, description=d.description or "A tool that always fails.", parameters=_OPEN)
    if kind == "slow":
        seconds = 1.0 if d.seconds is None else d.seconds
        result = "done" if d.result is None else d.result

        def slow(args: dict[str, Any]) -> Any:
            state.sleep(seconds)
            return result

        return Tool(name=name, execute=slow, description=d.description or "A slow tool.", parameters=_OPEN)
    if kind == "counter":

        def count(args: dict[str, Any]) -> str:
            state.counts[name] = state.counts.get(name, 0) + 1
            return str(state.counts[name])

        return Tool(name=name, execute=count, description=d.description or "Count a side effect.", parameters=_OPEN)
    if kind == "abort":
        result = "aborting" if d.result is None else d.result

        def abort(args: dict[str, Any]) -> Any:
            state.abort_signal.abort("a scenario tool aborted the run")
            return result

        return Tool(name=name, execute=abort, description=d.description or "Abort the run.", parameters=_OPEN)
    if kind == "nested":
        from ..runtime import Runtime

        prompt = d.prompt or ""
        cap = 20 if d.max_iterations is None else d.max_iterations

        def nested(args: dict[str, Any]) -> str:
            return Runtime(clock=state.clock).exec(prompt, max_iterations=cap)

        return Tool(name=name, execute=nested, description=d.description or "Ask a nested exec.", parameters=_OPEN)
    if kind == "mcp":
        from ..mcp import MCPServer, shared_session

        server = MCPServer.stdio(d.command) if d.command else MCPServer.http(str(d.url))
        return shared_session(server).tool(d.tool or name, rename=name, description=d.description)
    return _from_reference(name, d)


def _from_reference(name: str, d: ToolDef) -> Tool:
    try:
        obj = import_target(d.kind, what=f"tool {name!r}:")
    except UsageError as exc:
        raise ScenarioError(str(exc)) from None
    if isinstance(obj, Tool):
        if obj.name != name:
            raise ScenarioError(f"tool {name!r}: {d.kind!r} is a tool named {obj.name!r}; use that name as the key")
        return adapt_tool(obj)
    if not callable(obj):
        raise ScenarioError(f"tool {name!r}: {d.kind!r} is not callable")
    return Tool.from_function(obj, name=name, description=d.description, parameters=d.parameters)
