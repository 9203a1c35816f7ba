"""What a probe sees of one case: the simulator's exchanges (request, time, turn) and the run."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from loopkit.simulators import SimRequest, SimResponse, Simulator, create, simulator_class

from ..conformance._wire import WIRES, Wire
from ..script import Script
from ._subjects import AgentRun


@dataclass(slots=True, kw_only=True)
class Exchange:
    """One request the agent sent: when, which script turn answered it (None: none did), status."""

    request: SimRequest
    at: float
    turn: int | None
    status: int

    @property
    def number(self) -> int:
        return self.request.number

    @property
    def body(self) -> Any:
        return self.request.json


@dataclass(slots=True, kw_only=True)
class Plan:
    """A case's script and what the checks expect of it.

    Args:
        script: what the model answers, turn by turn.
        final_text: what the agent must return (None: no answer is expected).
        bad_calls: ids (or, on Gemini, names) of calls that must get an error result.
        recovered_text: the answer of the turn after a fault (a retry's answer).
        limit: for a never-ending model, the number of turns scripted.
        signature: the reasoning signature that must come back.
        retry_after: seconds the rate-limit answer asked the agent to wait.
    """

    script: Script
    final_text: str | None = None
    bad_calls: frozenset[str] = frozenset()
    recovered_text: str | None = None
    limit: int | None = None
    signature: str | None = None
    retry_after: float | None = None
    refusal_text: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class Observed:
    """A finished case: the plan, every exchange, and what the agent returned."""

    protocol: str
    plan: Plan
    exchanges: list[Exchange]
    run: AgentRun
    max_calls: int | None = None

    @property
    def wire(self) -> Wire:
        return WIRES[self.protocol]

    @property
    def posts(self) -> list[Exchange]:
        """The model calls (every POST the agent made)."""
        return [e for e in self.exchanges if e.request.method == "POST"]

    def consumed(self, turn: int) -> Exchange | None:
        for e in self.exchanges:
            if e.turn == turn:
                return e
        return None

    def after(self, exchange: Exchange) -> Exchange | None:
        """The first model call after ``exchange``."""
        for e in self.posts:
            if e.number > exchange.number:
                return e
        return None

    @property
    def overruns(self) -> list[Exchange]:
        """Model calls that found the script exhausted."""
        used = max((e.turn for e in self.exchanges if e.turn is not None), default=-1)
        return [e for e in self.posts if e.turn is None and e.status == 500 and used == len(self.plan.script) - 1]


class Switchboard:
    """The one simulator a probe serves, re-scripted for each case.

    It stands in for a :class:`~simulators.Simulator` behind one
    :func:`~simulators.serve` server, so a probe binds one port and starts one thread however
    many cases it runs, and it logs when each request came and which turn answered it.
    """

    def __init__(self, protocol: str, clock: Any = time.monotonic) -> None:
        cls = simulator_class(protocol)
        self.protocol = protocol
        self.base_path = ""  # each case has its own prefix; see prefix()
        self.sdk_path = cls.base_path
        self._clock = clock
        self._lock = threading.Lock()
        self.current: Simulator = create(protocol, [])
        self.case = 0
        self.exchanges: list[Exchange] = []
        self.strays: list[tuple[int, SimRequest]] = []
        """(case number, request) of requests that arrived after their case ended."""

    def prefix(self) -> str:
        """The path every request of the current case starts with (``/case-3``)."""
        return f"/case-{self.case}"

    def load(self, script: Script, **options: Any) -> Simulator:
        """Answer from ``script`` from now on, under a new path prefix, with a fresh log.

        An agent that leaves work running after its run returned (a retry in a background
        thread) sends it to the old prefix: it is refused and kept in :attr:`strays`, never
        mistaken for a request of the new case.
        """
        with self._lock:
            self.current = create(self.protocol, script, **options)
            self.case += 1
            self.exchanges = []
            return self.current

    @property
    def requests(self) -> list[SimRequest]:
        return self.current.requests

    def handle(self, request: SimRequest) -> SimResponse:
        with self._lock:
            sim, log, case = self.current, self.exchanges, self.case
        at = self._clock()
        head, _, rest = request.path.lstrip("/").partition("/")
        number = head.removeprefix("case-")
        if not head.startswith("case-") or not number.isdigit() or int(number) != case:
            self.strays.append((int(number) if number.isdigit() else 0, request))
            return sim.error_response(410, f"loopkit probe: {request.path} belongs to no running case (the current one is {self.prefix()})")
        request.path = "/" + rest
        before = sim.used
        resp = sim.handle(request)
        turn = before if sim.used > before else None
        log.append(Exchange(request=request, at=at, turn=turn, status=resp.status))
        return resp

    def streams(self, request: SimRequest) -> bool:  # ``request.path`` is already without its prefix
        """Whether ``request`` asked for a stream."""
        sim = self.current
        route = sim.route(request)
        return route is not None and bool(sim.wants_stream(request, route))

    def assert_complete(self) -> None:
        self.current.assert_complete()


def json_body(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
