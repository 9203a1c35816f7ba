"""``loopkit demo``: the main job on an embedded default, nothing to configure.

A handful of scripted sessions (a plain answer, a tool round trip, an unknown tool fed back as an
error, invalid arguments, steering that skips the remaining calls, a run that hits its cap) run
through the in-process ScriptedProvider and through every wire protocol's adapter against its
simulator over real HTTP on 127.0.0.1. Each session prints as a transcript; a matrix shows the end
reason per session and protocol, and whether every protocol agreed with the scripted run (where a
wire format cannot express a script as written, the session names the expected difference and why).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import LoopkitError


DESCRIPTION = """\
Run six built-in scripted sessions (a plain answer, a tool round trip, an unknown tool fed back
as an error, invalid and broken arguments, steering that skips the remaining calls, a run that
hits its cap) through the in-process scripted provider and through every wire protocol's
adapter against its simulator over HTTP on 127.0.0.1. Nothing to configure, nothing leaves
the machine.

Each session prints as a transcript; a table then shows the end reason per session and
protocol, and whether every protocol agreed with the scripted run. Where a wire format cannot
express a session as written, a footnote says what differs and why.

exit status: 0 when every protocol agrees, 1 otherwise, 2 for an unknown protocol."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="run the built-in demo sessions through every provider",
        description=DESCRIPTION,
        epilog="example:\n  loopkit demo --protocol scripted --protocol anthropic",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--protocol",
        action="append",
        dest="protocols",
        metavar="NAME",
        help="run only through this protocol (repeatable): scripted, openai_chat, openai_responses, anthropic, gemini, bedrock",
    )
    p.add_argument("--quiet", action="store_true", help="print only the table, no transcripts")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(handler=main)


def known_protocols() -> list[str]:
    """Every name ``--protocol`` accepts: "scripted" and each wire protocol."""
    from ..providers import ADAPTERS

    return ["scripted", *ADAPTERS]


@dataclass
class Session:
    """One demo session: what the model says, which tools exist, what the user queues."""

    name: str
    turns: list[Any]
    expect: str
    max_iterations: int | None = None
    steer_after_poll: int | None = None  # the steering poll (1-based) that returns a message
    steer_text: str = "Stop — use 10 instead of 3 for everything."
    # protocol -> (end reason, why): where a wire format cannot express the script as written
    differs: dict[str, tuple[str, str]] = field(default_factory=dict)


def _tools() -> list[Any]:
    from ..tools import tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: the first addend.
            b: the second addend.
        """
        return a + b

    @tool
    def lookup_weather(city: str) -> dict:
        """Current weather for a city.

        Args:
            city: the city name.
        """
        return {"city": city, "temp_c": 18, "sky": "clear"}

    return [add, lookup_weather]


def sessions() -> list[Session]:
    from ..script import Turn, call

    return [
        Session("plain answer", [Turn(text="Paris is the capital of France.")], "stop"),
        Session(
            "tool round trip",
            [Turn(text="Let me add those.", tool_calls=[call("add", {"a": 2, "b": 3}, id="call_a1")]), Turn(text="2 + 3 = 5.")],
            "stop",
        ),
        Session(
            "unknown tool fed back",
            [Turn(tool_calls=[call("search_web", {"q": "weather"}, id="call_b1")]), Turn(tool_calls=[call("lookup_weather", {"city": "Oslo"}, id="call_b2")]), Turn(text="Oslo: 18 °C and clear.")],
            "stop",
        ),
        Session(
            "invalid and broken arguments",
            [Turn(tool_calls=[call("add", {"a": "two", "b": 3}, id="call_c1"), call("add", '{"a": 2, "b":', id="call_c2")]), Turn(text="Both calls failed; I will ask for numbers.")],
            "stop",
            differs={
                "gemini": (
                    "error",
                    "Gemini's functionCall args are always an object: the API answers broken JSON with "
                    "finishReason MALFORMED_FUNCTION_CALL, an error stop",
                )
            },
        ),
        Session(
            "steering skips the rest",
            [Turn(tool_calls=[call("add", {"a": 1, "b": 3}, id="call_d1"), call("add", {"a": 2, "b": 3}, id="call_d2"), call("add", {"a": 3, "b": 3}, id="call_d3")]), Turn(text="Understood, switching to 10.")],
            "stop",
            steer_after_poll=2,
        ),
        Session(
            "cap reached",
            [Turn(tool_calls=[call("add", {"a": i, "b": 1}, id=f"call_e{i}")]) for i in range(3)],
            "max_iterations",
            max_iterations=2,
        ),
    ]


def _steering(session: Session) -> Callable[[], list[str]] | None:
    if session.steer_after_poll is None:
        return None
    polls = 0

    def poll() -> list[str]:
        nonlocal polls
        polls += 1
        return [session.steer_text] if polls == session.steer_after_poll else []

    return poll


def _fingerprint(result: Any) -> list[tuple]:
    """What must agree across protocols: roles, tool names, result texts and error flags."""
    out = []
    for m in result.messages:
        if m.role == "toolResult":
            out.append(("toolResult", m.tool_name, m.is_error, m.text.split("\n")[0]))
        elif m.role == "assistant":
            out.append(("assistant", m.text, tuple(c.name for c in m.tool_calls), m.stop_reason))
        else:
            out.append((m.role, m.text))
    return out


def run_session(session: Session, protocol: str, tools: list[Any]) -> Any:
    """Run one session through ``protocol`` ("scripted" or a wire protocol over HTTP)."""
    from ..runtime import TickClock, run

    options = dict(tools=tools, max_iterations=session.max_iterations, steering=_steering(session), clock=TickClock())
    if protocol == "scripted":
        from ..fakes import ScriptedProvider

        return run(ScriptedProvider(session.turns), "Demo: " + session.name, **options)
    import loopkit.simulators as simulators

    from ..providers import adapter_class

    cls = adapter_class(protocol)
    with simulators.serve(protocol, session.turns, model="demo-model") as sim:
        provider = cls(model="demo-model", base_url=sim.base_url, api_key="demo-key")
        try:
            return run(provider, "Demo: " + session.name, **options)
        finally:
            getattr(provider, "close", lambda: None)()


def available_protocols() -> list[str]:
    """"scripted" plus every wire protocol whose adapter and simulator import."""
    import importlib

    from ..providers import ADAPTERS

    out = ["scripted"]
    for name, target in ADAPTERS.items():
        try:
            importlib.import_module(target.partition(":")[0])
            importlib.import_module(f"loopkit.simulators.{name}")
        except ImportError:
            continue
        out.append(name)
    return out


def _mark(row: dict[str, Any], protocol: str, session: Session) -> str:
    value = row.get(protocol, "")
    if protocol in session.differs and value == session.differs[protocol][0]:
        return f"✓ {value}*"
    return "✓" if value == row["expected"] else f"✗ {value}"


def main(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ..report import summary_table, transcript
    from ._choices import check_choice

    console = Console()
    for name in args.protocols or ():
        check_choice(name, known_protocols(), what="protocol")
    protocols = list(dict.fromkeys(args.protocols)) if args.protocols else available_protocols()
    tools = _tools()
    rows = []
    sessions_by_name = {s.name: s for s in sessions()}
    notes: list[str] = []
    failures = 0
    for session in sessions():
        row: dict[str, Any] = {"session": session.name, "expected": session.expect}
        reference = None
        for protocol in protocols:
            try:
                result = run_session(session, protocol, tools)
            except LoopkitError as exc:
                row[protocol] = f"failed: {exc}"
                failures += 1
                continue
            if protocol == protocols[0]:
                reference = _fingerprint(result)
                if not args.quiet and not args.json:
                    console.print(transcript(result, title=f"{session.name} · {protocol}"))
            if protocol in session.differs:
                expected, why = session.differs[protocol]
                agrees = result.reason == expected
                notes.append(f"{session.name} · {protocol}: {why}")
            else:
                agrees = result.reason == session.expect and _fingerprint(result) == reference
            failures += not agrees
            row[protocol] = result.reason if agrees else f"{result.reason} (differs)"
        rows.append(row)
    if args.json:
        print(json.dumps({"protocols": protocols, "sessions": rows, "notes": notes, "failures": failures}, indent=2))
    else:
        # one row per protocol, one numbered column per session: fits an 80-column terminal
        numbers = {r["session"]: str(i) for i, r in enumerate(rows, 1)}
        table_rows = [
            {"protocol": p, **{numbers[r["session"]]: _mark(r, p, sessions_by_name[r["session"]]) for r in rows}} for p in protocols
        ]
        console.print(summary_table(table_rows, columns=["protocol", *numbers.values()], title="end reason per protocol and session (✓ = as expected)"))
        for r in rows:
            console.print(f"  {numbers[r['session']]}  {r['session']} → {r['expected']}")
        for note in notes:
            console.print(f"[dim]* {note}[/dim]")
        console.print("all protocols agree with the scripted run" if not failures else f"[red]{failures} disagreement(s)[/red]")
    return 1 if failures else 0
