"""``loopkit fuzz`` for a whole MCP server: every listed tool (or the ones named) gets generated
valid and invalid arguments through ``tools/call``; problems are shrunk to minimal examples.

The generation, the shrinking and the report are those of :mod:`loopkit.fuzz` (its
:class:`~loopkit.fuzz.Example`, :class:`~loopkit.fuzz.Finding` and
:class:`~loopkit.fuzz.FuzzReport`, one report per tool). Arguments go to the server as they are,
with no client-side validation: the server's own validation is what is fuzzed. One call is in
flight at a time, so a crash is always the current example's; hypothesis draws the next example
while the server answers. Findings:

``invalid_accepted``
    arguments that break the ``inputSchema`` (and that loopkit's own coercion would not repair)
    got a result without ``isError``.
``valid_rejected``
    arguments the schema allows got ``isError``, or a JSON-RPC error.
``unhelpful_error``
    an error text that does not say what was wrong (empty, a bare class name, or not naming the
    property at fault).
``server_crash``
    the server process exited (the connection closed) during the call: the finding holds the
    arguments that killed it, and the server is started again for the next example.
``server_hang``
    no answer within the per-call time limit; when the server does not answer a ``tools/list``
    either, it is restarted.
``protocol_error``
    invalid arguments got a JSON-RPC error where the MCP specification (revision 2026-07-28,
    server/tools, "Error Handling") lists input validation errors as tool execution errors,
    reported in a result with ``isError: true``; or a result that is not a valid
    ``CallToolResult``.
``output_mismatch``
    a result whose ``structuredContent`` is missing or breaks the tool's ``outputSchema``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._validation import ArgumentValidator
from ..errors import UsageError

# Everything this module takes from the Python-tool fuzzer, in one place.
from ..fuzz import MAX_FINDINGS, Example, Finding, FuzzReport
from ..fuzz._run import _clip, _unhelpful
from ..fuzz._search import _Stop
from ..fuzz._run import where as _where
from ._results import output_problem, result_text
from ._server import MCPConnectError, MCPProtocolError, MCPServerClosed, MCPTimeout
from ._session import MCPSession

MCP_KINDS: tuple[str, ...] = ("server_crash", "server_hang", "protocol_error", "output_mismatch")
KINDS: tuple[str, ...] = ("server_crash", "server_hang", "protocol_error", "invalid_accepted", "valid_rejected", "unhelpful_error", "output_mismatch")
SPEC_RULE = "MCP specification, revision 2026-07-28, server/tools, Error Handling: input validation errors are tool execution errors, reported with isError: true"
SHRINK_RESTARTS = 3
"""Server restarts a crash or hang may cost while it is shrunk (each one restarts the server)."""


@dataclass(slots=True)
class ServerFuzzReport:
    """What fuzzing one MCP server found: one :class:`~loopkit.fuzz.FuzzReport` per tool.

    Attributes:
        server: the command line or URL.
        seed: the seed that reproduces the run.
        reports: one per fuzzed tool, in the server's order.
        not_fuzzed: tools the server lists that were not chosen.
        restarts: how many times the server was started again (after crashes and hangs).
        errors: what stopped a tool's fuzzing early (a server that could not be restarted).
    """

    server: str
    seed: int
    reports: list[FuzzReport] = field(default_factory=list)
    not_fuzzed: list[str] = field(default_factory=list)
    restarts: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def findings(self) -> list[tuple[str, Finding]]:
        """Every finding, as ``(tool name, finding)``."""
        return [(r.target, f) for r in self.reports for f in r.findings]

    @property
    def ok(self) -> bool:
        return not self.errors and all(r.ok for r in self.reports)

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "seed": self.seed,
            "ok": self.ok,
            "restarts": self.restarts,
            "not_fuzzed": self.not_fuzzed,
            "errors": self.errors,
            "tools": [r.to_json() for r in self.reports],
        }

    def raise_for_findings(self) -> None:
        """Raise AssertionError listing every finding of every tool (for use in a test)."""
        if self.ok:
            return
        lines = [f"loopkit fuzz found {len(self.findings)} problem(s) in MCP server `{self.server}` (seed {self.seed}):"]
        for tool, f in self.findings:
            lines.append(f"- {tool}: {f.kind}: {f.message}\n    arguments: {_json(f.example.arguments)}")
        lines.extend(f"- error: {e}" for e in self.errors)
        raise AssertionError("\n".join(lines))


def fuzz_server(
    server: Any,
    *,
    tools: Sequence[str] | None = None,
    examples: int = 200,
    seed: int | None = None,
    shrink: bool = True,
    timeout: float = 10.0,
    on_progress: Callable[[str, int, int], None] | None = None,
    until: Callable[[Finding], bool] | None = None,
) -> ServerFuzzReport:
    """Fuzz the tools of one MCP server; returns a :class:`ServerFuzzReport`.

    Tool calls have side effects: pass ``tools`` to choose the ones that may be called.

    Args:
        server: an open :class:`~loopkit.mcp.MCPSession` (kept open; tests share one), or what
            :class:`~loopkit.mcp.MCPSession` takes (an :class:`~loopkit.mcp.MCPServer`, a URL, a
            command list), opened and closed here.
        tools: names of the tools to fuzz; None fuzzes every tool the server lists.
        examples: argument sets per tool in the exploring pass (about half valid, half invalid).
        seed: makes the run reproducible; None picks one (reported in the result).
        shrink: search again for each problem found and shrink it to a minimal example.
        timeout: seconds a call may take before it counts as a hang.
        on_progress: called as ``on_progress(tool, done, total)`` after each exploring example.
        until: ends each tool's search at the first finding this accepts (``lambda f: True``: at
            the first finding at all), as pytest's ``-x`` does; the examples before it are the
            ones a whole run sends, and the report counts only those that ran. None: the whole
            budget.

    Example::

        def test_my_server_validates_its_arguments():
            fuzz_server(MCPServer.stdio("python", "server.py"), tools=["search"], seed=1).raise_for_findings()
    """
    if not isinstance(examples, int) or isinstance(examples, bool) or examples < 1:
        raise UsageError(f"fuzz_server(examples={examples!r}): give a positive number of examples")
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise UsageError(f"fuzz_server(timeout={timeout!r}): give a positive number of seconds")
    if isinstance(tools, str):
        tools = [t for t in tools.split(",") if t]
    seed = random.SystemRandom().randrange(2**32) if seed is None else seed
    if isinstance(server, MCPSession):
        return _fuzz_open(server, tools, examples, seed, shrink, float(timeout), on_progress, until)
    with MCPSession(server, timeout=timeout) as session:
        return _fuzz_open(session, tools, examples, seed, shrink, float(timeout), on_progress, until)


def _fuzz_open(session: MCPSession, tools: Sequence[str] | None, examples: int, seed: int, shrink: bool, timeout: float, on_progress: Any, until: Any) -> ServerFuzzReport:
    listed = session.list_tools()
    if tools is None:
        chosen = listed
    else:
        chosen = [session.tool_spec(name) for name in dict.fromkeys(tools)]
    names = {s.name for s in chosen}
    report = ServerFuzzReport(server=session.server.label, seed=seed, not_fuzzed=[s.name for s in listed if s.name not in names])
    restarts_before = session.restarts
    for spec in chosen:
        target = _Target(session, spec, timeout)
        try:
            report.reports.append(_fuzz_tool(target, examples, seed, shrink, on_progress, until))
        except MCPConnectError as exc:
            report.reports.append(target.partial)
            report.errors.append(f"{spec.name}: stopped: the server could not be started again: {exc}")
            break
    report.restarts = session.restarts - restarts_before
    return report


class _Target:
    """One tool of an open session, and how to run one example against it."""

    def __init__(self, session: MCPSession, spec: Any, timeout: float) -> None:
        self.session = session
        self.spec = spec
        self.timeout = timeout
        self.coercion = ArgumentValidator(_safe_name(spec.name), spec.input_schema)
        self.partial = FuzzReport(target=spec.name, seed=0)
        self.broken: MCPConnectError | None = None  # set when the server could not be started again

    def restart(self) -> None:
        try:
            self.session.restart()
        except MCPConnectError as exc:
            self.broken = exc

    def run(self, example: Example) -> dict[tuple[str, str], tuple[str, str | None]]:
        """``(kind, bucket) -> (message, result text)`` for one example; the bucket tells apart
        distinct problems of one kind."""
        return self.settle(example, self.submit(example))

    def submit(self, example: Example) -> Any:
        """Send the call; the future of its result."""
        return self.session.submit(self.spec.name, example.arguments, timeout=self.timeout)

    def settle(self, example: Example, future: Any) -> dict[tuple[str, str], tuple[str, str | None]]:
        """Wait for the call's outcome and classify it (restarting a dead or stuck server)."""
        try:
            result = future.result()
        except MCPServerClosed as exc:
            self.restart()
            tail = f"; its standard error ends with: {_clip(exc.stderr, 300)}" if exc.stderr else ""
            what = "the server process exited" if self.session.server.command else "the connection to the server closed"
            after = "restarted for the next example" if self.broken is None else "it could not be started again"
            return {("server_crash", "closed"): (f"{what} during the call ({after}){tail}", None)}
        except MCPTimeout:
            if self.session.responsive(self.timeout):
                after = "the server still answers other requests"
            else:
                self.restart()
                after = "the server stopped answering and was restarted"
            return {("server_hang", "timeout"): (f"no answer within the time limit of {self.timeout:g} s ({after})", None)}
        except MCPProtocolError as exc:
            if exc.code is None:
                return {("protocol_error", "malformed result"): (str(exc), None)}
            if example.valid:
                return {("valid_rejected", f"JSON-RPC {exc.code}"): (f"valid arguments got JSON-RPC error {exc.code}: {_clip(str(exc))}", None)}
            return {
                ("protocol_error", str(exc.code)): (
                    f"arguments breaking '{example.rule}' at {_where(example.path)} got JSON-RPC error {exc.code} "
                    f"({_clip(str(exc))}) instead of a result with isError: true ({SPEC_RULE})",
                    None,
                )
            }
        text = result_text(result)
        kinds: dict[tuple[str, str], tuple[str, str | None]] = {}
        if result.is_error:
            if example.valid:
                kinds[("valid_rejected", "isError")] = (f"valid arguments got an error result: {_clip(text)}", text)
            problem = _unhelpful(text, example)
            if problem:
                kinds[("unhelpful_error", problem[0])] = (f"error result {problem[1]}", text)
            return kinds
        if not example.valid and self.coercion.prepare(example.arguments)[1] is not None:
            kinds[("invalid_accepted", str(example.rule))] = (
                f"arguments breaking '{example.rule}' at {_where(example.path)} got a result without isError ({example.detail}): {_clip(text)}",
                text,
            )
        if self.spec.output_schema is not None:
            problem = output_problem(result, self.spec.output_schema)
            if problem is not None:
                bucket = problem.rsplit("(rule ", 1)[-1].rstrip(")") if "(rule " in problem else "missing"
                kinds[("output_mismatch", bucket)] = (f"the result does not match the tool's outputSchema: {problem}", text)
        return kinds


def _fuzz_tool(target: _Target, examples: int, seed: int, shrink: bool, on_progress: Any, until: Any) -> FuzzReport:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st
    from hypothesis.errors import Unsatisfiable

    from ..strategies import arguments
    from ..strategies._arguments import object_violations

    schema = target.spec.input_schema
    valid = arguments(schema).map(lambda v: Example(arguments=v, valid=True))

    def invalid(rules: Any = None) -> Any:
        from ..strategies import violations

        # object_violations keep the arguments an object; a rule of the root may not, and a
        # non-object is no tools/call argument at all
        source = object_violations(schema) if rules is None else violations(schema, rules=rules).filter(lambda v: isinstance(v.value, dict))
        return source.map(
            lambda v: Example(arguments=v.value, valid=False, rule=v.rule, path=v.path, detail=v.detail)
        )

    try:
        strategy = st.one_of(valid, invalid())
    except UsageError:
        strategy = valid  # the schema accepts nearly anything: nothing to break
    report = FuzzReport(target=target.spec.name, seed=seed)
    target.partial = report
    first: dict[tuple[str, str], tuple[Example, str, str | None]] = {}
    quiet = settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))

    pending: list[tuple[Example, Any]] = []
    stopped: list[bool] = []  # a finding satisfied ``until``

    def settle() -> None:
        if not pending:
            return
        example, future = pending.pop()
        kinds = target.settle(example, future)
        report.examples += 1
        if example.valid:
            report.valid_examples += 1
        else:
            report.invalid_examples += 1
        for key, (message, text) in kinds.items():
            if key not in first:
                first[key] = (example, message, text)
                if until is not None and not stopped and until(Finding(kind=key[0], example=example, message=message, result_text=text)):
                    stopped.append(True)
        if on_progress is not None:
            on_progress(target.spec.name, report.examples, examples)

    @settings(quiet, max_examples=examples, phases=[Phase.generate])
    @hypothesis_seed(seed)
    @given(strategy)
    def explore(example: Example) -> None:
        # one call in flight at a time, so a crash is always this example's; hypothesis draws the
        # next example while the server answers this one
        settle()
        if stopped:  # (also hypothesis's replay of the example that stopped the search)
            raise _Stop
        if target.broken is None:  # a server that cannot be started again ends the tool's run
            pending.append((example, target.submit(example)))  # (raising would make hypothesis replay it)

    try:
        explore()
    except (Unsatisfiable, _Stop):
        pass  # fewer examples than asked: the report says how many ran
    settle()
    for key in sorted(first, key=lambda k: (KINDS.index(k[0]), k[1]))[:MAX_FINDINGS]:
        example, message, text = first[key]
        if shrink and target.broken is None:
            example, message, text = _shrink(target, key, example, message, text, valid, invalid, strategy, examples, seed, quiet)
        report.findings.append(Finding(kind=key[0], example=example, message=message, result_text=text))
    if target.broken is not None:
        raise target.broken  # the caller keeps this report (target.partial) and records the error
    return report


class _Enough(Exception):
    """Shrinking a crash or a hang has cost its restarts."""


def _shrink(target: _Target, key: tuple[str, str], example: Example, message: str, text: str | None, valid: Any, invalid: Any, strategy: Any, examples: int, seed: int, quiet: Any) -> tuple[Example, str, str | None]:
    from hypothesis import Phase, find, settings
    from hypothesis.errors import Flaky, NoSuchExample, Unsatisfiable

    # search again where this problem lives: valid sets, or sets breaking the same rule
    if example.valid:
        where = valid
    elif example.rule is not None:
        where = invalid({example.rule})
    else:
        where = strategy
    costly = key[0] in ("server_crash", "server_hang")
    left = [SHRINK_RESTARTS]
    best: list[tuple[Example, str, str | None]] = [(example, message, text)]

    def shows(ex: Example) -> bool:
        if costly and left[0] <= 0:
            raise _Enough
        if target.broken is not None:
            raise _Enough  # the server is gone: keep what was found
        kinds = target.run(ex)
        if any(k[0] in ("server_crash", "server_hang") for k in kinds):
            left[0] -= 1
        if key in kinds:
            best[0] = (ex, *kinds[key])
            return True
        return False

    try:
        find(where, shows, settings=settings(quiet, max_examples=max(examples, 50), phases=[Phase.generate, Phase.shrink]), random=random.Random(seed))
    except (NoSuchExample, Unsatisfiable, _Enough, Flaky):
        # keep the smallest example seen so far. Flaky: hypothesis replays the example it kept
        # once more before returning it, and that replay may be the call past the restarts
        # budget (or a server that fails only now and then)
        pass
    return best[0]


def _safe_name(name: str) -> str:
    from ._tools import loopkit_name

    return loopkit_name(name)


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


__all__ = ["KINDS", "MCP_KINDS", "ServerFuzzReport", "fuzz_server"]
