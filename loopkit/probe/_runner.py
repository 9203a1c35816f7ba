"""Running a probe: one served simulator, re-scripted per case; the agent run once per case."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..errors import UsageError
from ._arguments import ArgumentDrawer, normalize_schema
from ._cases import CASES, PROBE_LIMIT, CaseContext, DeclaredTool, NotApplicable, ProbeCase
from ._checks import ALWAYS, CHECKS, RULES
from ._model import CaseResult, ProbeReport
from ._observe import Observed, Switchboard, json_body
from ._subjects import AgentFn, Subject, as_subject

ALL = "all"


class Probe:
    """Checks one agent on one protocol against the loop contract, case by case.

    The agent runs for real, once per case, against a simulator on 127.0.0.1. The first case
    (``text_answer``) learns the agent's tools from its first request; the others script the
    model from them.

    Args:
        agent: ``agent(base_url, prompt) -> str`` (sync or async), a command (a list of
            arguments), or a :class:`Subject`.
        protocol: the wire protocol the agent speaks.
        tools: the declared tools the probe's model may call (they run for real): names, or
            ``"all"``. None of them by default: cases that need one are not applicable.
        cases: the built-in case names to run (default: all of them).
        extra_cases: cases of your own (see :func:`scripted_case`).
        timeout: the wall-clock limit of one case, in seconds.
        limit: how many model calls a never-ending model allows before the probe gives up.
        max_calls: the cap your agent states; ``never_stops`` fails above it.
        seed: the seed of the generated arguments.
        retry_after: the seconds the rate-limit case asks the agent to wait.
    """

    def __init__(
        self,
        agent: Subject | AgentFn | Sequence[str],
        protocol: str,
        *,
        tools: Iterable[str] | str = (),
        cases: Iterable[str] | None = None,
        extra_cases: Iterable[ProbeCase] = (),
        timeout: float = 30.0,
        limit: int = PROBE_LIMIT,
        max_calls: int | None = None,
        seed: int = 0,
        retry_after: float = 0.3,
        name: str | None = None,
    ) -> None:
        from loopkit.simulators import PROTOCOLS

        if protocol not in PROTOCOLS:
            raise UsageError(f"probe: unknown protocol {protocol!r}; expected one of {', '.join(PROTOCOLS)}")
        if timeout <= 0 or limit < 2:
            raise UsageError(f"probe: timeout must be positive and limit at least 2 (got timeout={timeout!r}, limit={limit!r})")
        self.subject = as_subject(agent)
        self.name = name or self.subject.name
        self.protocol = protocol
        self.allow = ALL if tools == ALL else tuple([tools] if isinstance(tools, str) else tools)
        self.timeout = float(timeout)
        self.limit = limit
        self.max_calls = max_calls
        self.retry_after = retry_after
        self.drawer = ArgumentDrawer(seed)
        every = {c.name: c for c in CASES}
        extra_cases = list(extra_cases)
        cases = None if cases is None else list(cases)
        for c in extra_cases:
            if c.name in every:
                raise UsageError(f"probe: a case named {c.name!r} already exists; give yours another name")
            every[c.name] = c
        for c in every.values():
            unknown = set(c.checks) - set(CHECKS)
            if unknown:
                raise UsageError(f"probe case {c.name!r}: unknown check(s) {sorted(unknown)}; choose from {', '.join(CHECKS)}")
        # your own cases always run; ``cases`` picks among the built-in ones
        names = list(every) if cases is None else list(cases) + [c.name for c in extra_cases if c.name not in cases]
        missing = [n for n in names if n not in every]
        if missing:
            raise UsageError(f"probe: unknown case(s) {missing}; choose from {', '.join(every)}")
        if "text_answer" in names:
            names.remove("text_answer")
        self.cases = [every["text_answer"]] + [every[n] for n in names]
        self._board: Switchboard | None = None
        self._server: Any = None
        self._context: CaseContext | None = None
        self._discovery: CaseResult | None = None

    # --- the simulator ----------------------------------------------------------------------

    def __enter__(self) -> Probe:
        self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> Any:
        if self._server is None:
            from loopkit.simulators import ServedSimulator

            self._board = Switchboard(self.protocol)
            # the switchboard quacks like a Simulator (protocol, base_path, handle, requests)
            self._server = ServedSimulator(self._board).start()  # type: ignore[arg-type]
        return self._server

    def close(self) -> None:
        """Stop the simulator (a hung agent's requests then fail)."""
        if self._server is not None:
            self._server.stop()
            self._server = None

    # --- cases --------------------------------------------------------------------------------

    @property
    def case_names(self) -> list[str]:
        return [c.name for c in self.cases]

    def run(self, on_result: Callable[[CaseResult], None] | None = None) -> ProbeReport:
        """Run every case; ``on_result`` is called after each."""
        try:
            results = []
            for case in self.cases:
                r = self.run_case(case.name)
                results.append(r)
                if on_result is not None:
                    on_result(r)
            ctx = self._context
            return ProbeReport(
                agent=self.name, protocol=self.protocol, results=results,
                tools=[t.name for t in ctx.tools] if ctx else [], allowed=[t.name for t in ctx.allowed] if ctx else [],
            )  # fmt: skip
        finally:
            self.close()

    def run_case(self, name: str) -> CaseResult:
        """Run one case (the discovery case first, once, when needed)."""
        case = next((c for c in self.cases if c.name == name), None)
        if case is None:
            raise UsageError(f"probe: no case {name!r}; this probe has {', '.join(self.case_names)}")
        if self._discovery is None:
            self._discovery = self._run(self.cases[0], None)
        if case is self.cases[0]:
            return self._discovery
        if self._context is None:
            return CaseResult(case=case.name, description=case.description, status="not-applicable",
                reason="the agent sent no model request in text_answer, so its tools are unknown")  # fmt: skip
        return self._run(case, self._context)

    def _run(self, case: ProbeCase, ctx: CaseContext | None) -> CaseResult:
        server = self._start()
        board = self._board
        assert board is not None
        plan = case.build(ctx if ctx is not None else CaseContext(protocol=self.protocol, tools=[], allowed=[]))
        if isinstance(plan, NotApplicable):
            return CaseResult(case=case.name, description=case.description, status="not-applicable", reason=plan.reason)
        board.load(plan.script)
        prompt = f"loopkit probe case {case.name}: {case.description}."
        url = server.url + board.prefix()
        run = self.subject.run(protocol=self.protocol, url=url, base_url=url + board.sdk_path, prompt=prompt, timeout=self.timeout)
        obs = Observed(protocol=self.protocol, plan=plan, exchanges=list(board.exchanges), run=run, max_calls=self.max_calls)
        if ctx is None:
            self._learn(board, obs)
        failures = []
        checks = (*ALWAYS, *case.checks)
        for check in checks:
            failures.extend(CHECKS[check](obs))
        status = "fail" if failures else "pass"
        calls = len(obs.posts)
        if failures:
            reason = failures[0].message
        elif plan.limit is not None:
            reason = f"stopped after {calls} model call(s)"
        else:
            reason = f"{calls} model call(s)"
        if not failures and plan.extra.get("note"):
            reason += f"; the call: {plan.extra['note']}"
        return CaseResult(
            case=case.name, description=case.description, status=status, reason=reason, failures=failures,
            checks=checks, rules=tuple(dict.fromkeys(RULES[c] for c in checks)), model_calls=calls,
            output=run.output, agent_error=run.error, seconds=run.seconds,
        )  # fmt: skip

    def _learn(self, board: Switchboard, obs: Observed) -> None:
        """Read the declared tools and the streaming mode from the agent's first model call."""
        first = obs.posts[0] if obs.posts else None
        if first is None:
            return
        declared = obs.wire.tools(json_body(first.body)) or []
        tools = [DeclaredTool(name=str(d.name), description=str(d.description or ""), schema=normalize_schema(d.parameters)) for d in declared]
        names = [t.name for t in tools]
        if self.allow == ALL:
            allowed = tools
        else:
            unknown = [n for n in self.allow if n not in names]
            if unknown:
                raise UsageError(
                    f"probe: tools={unknown} are not among the tools the agent declared in its first request ({', '.join(names) or 'none'})"
                )
            allowed = [t for t in tools if t.name in self.allow]
        self._context = CaseContext(
            protocol=self.protocol, tools=tools, allowed=allowed, streaming=board.streams(first.request),
            drawer=self.drawer, limit=self.limit, retry_after=self.retry_after,
        )  # fmt: skip


def probe(
    agent: Subject | AgentFn | Sequence[str],
    protocol: str,
    **options: Any,
) -> ProbeReport:
    """Probe ``agent`` on ``protocol`` with every case and return the report (see :class:`Probe`
    for the options).

    Example::

        report = probe(my_agent, "anthropic", tools=["get_weather"])
        report.raise_for_failures()
    """
    return Probe(agent, protocol, **options).run()
