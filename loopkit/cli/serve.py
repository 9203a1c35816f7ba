"""``loopkit serve``: a protocol simulator on 127.0.0.1 for clients in any language.

The script file is read and checked before the server starts (a wrong type anywhere is an error
naming the file and the path of the value); each request is logged to stderr as it is answered.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
import threading
import time
import typing
from pathlib import Path
from typing import Any

from ..errors import ScriptError, UsageError

DESCRIPTION = """\
Serve a protocol simulator on 127.0.0.1, answering each request with the next turn of a
script file, so that a client in any language (or an official SDK) can be tested against it.

The server prints its base URL, logs one line per request to stderr (method, path, status and
the turn served) and runs until interrupted, or with --exit-when-done until every turn is used.
It then reports unused turns and requests that found the script exhausted (exit status 1).

The script file (JSON, or YAML for .yaml/.yml) is a list of turns: a string is a text answer;
a mapping may have text, thinking, tool_calls ({name, arguments, id}), stop_reason, usage,
error, chunk_size and faults ({http: {status, retry_after, ...}}, {mid_stream_error: {after,
message}}, {truncate: {after}}, {delay: {seconds}})."""

EXAMPLES = """\
example:
  loopkit serve anthropic --script turns.yaml --port 8080
  # turns.yaml:
  #   - tool_calls: [{name: add, arguments: {a: 1, b: 2}}]
  #   - faults: [{http: {status: 429, retry_after: 1}}]
  #   - The sum is 3."""

FAULT_KEYS = {"HttpFault": "http", "MidStreamError": "mid_stream_error", "Truncate": "truncate", "Delay": "delay"}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="serve a protocol simulator on 127.0.0.1 from a script file",
        description=DESCRIPTION,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("protocol", metavar="PROTOCOL", help="openai_chat, openai_responses, anthropic, gemini or bedrock")
    p.add_argument("--script", required=True, type=Path, metavar="FILE", help="the turns to answer with (JSON or YAML)")
    p.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    p.add_argument("--model", default="sim-model", help="model name the answers report (default: sim-model)")
    p.add_argument("--exit-when-done", action="store_true", help="stop once every turn has been used")
    p.add_argument("--quiet", "-q", action="store_true", help="do not log each request")
    p.set_defaults(handler=main)


def load_script_file(path: Path) -> Any:
    """Read a script file (JSON, or YAML by extension) into a Script whose every value has the
    type it must have; errors name the file and the path of the value."""
    from ..script import Script

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read script file {path}: {exc.strerror}") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except ValueError as exc:  # json.JSONDecodeError and yaml.YAMLError's parse errors
        raise UsageError(f"{path}: not valid {'YAML' if path.suffix in ('.yaml', '.yml') else 'JSON'}: {exc}") from None
    except Exception as exc:  # yaml.YAMLError is not a ValueError
        raise UsageError(f"{path}: not valid YAML: {exc}") from None
    try:
        script = Script.from_data(data, source=str(path))
    except ScriptError as exc:
        raise UsageError(str(exc)) from None
    except (TypeError, ValueError) as exc:  # a check inside a turn met a value of the wrong type
        where = next((f" [{i}]" for i, turn in enumerate(data) if _fails(Script, turn)), "") if isinstance(data, list) else ""
        raise UsageError(f"{path}:{where} a value of the wrong type ({exc})") from None
    problems = [p for i, turn in enumerate(script) for p in type_problems(turn, f"[{i}]")]
    if problems:
        raise UsageError(f"{path}: {len(problems)} value(s) of the wrong type:\n" + "\n".join(f"  {p}" for p in problems))
    return script


def _fails(script_class: Any, turn: Any) -> bool:
    try:
        script_class.from_data([turn])
    except Exception:  # noqa: BLE001 - only which turn fails matters here
        return True
    return False


def type_problems(obj: Any, path: str) -> list[str]:
    """Every field of the dataclass ``obj`` (recursively) whose value does not have its declared
    type, as ``path.field: expected ..., got ...`` in the file's own key names."""
    from pydantic import ValidationError

    out: list[str] = []
    hints = _hints(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        where = f"{path}.{f.name}"
        if dataclasses.is_dataclass(value):
            out += type_problems(value, where)
            continue
        if isinstance(value, (tuple, list)) and value and all(dataclasses.is_dataclass(v) for v in value):
            for i, v in enumerate(value):
                key = FAULT_KEYS.get(type(v).__name__)
                out += type_problems(v, f"{where}[{i}].{key}" if key else f"{where}[{i}]")
            continue
        try:
            _adapter(hints[f.name]).validate_python(value, strict=True)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            inner = "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in err["loc"] if not str(s).startswith(("function-", "union")))
            out.append(f"{where}{inner}: {err['msg'].lower()}, got {err.get('input', value)!r}")
    return out


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


@functools.cache
def _adapter(hint: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(hint)


class RequestLog:
    """Wraps a simulator's ``handle`` to print one line per request: method, path, status and
    the turn it was answered with (``turn 2/3``), or why no turn was used."""

    def __init__(self, simulator: Any, stream: Any) -> None:
        self.simulator = simulator
        self.stream = stream
        self.turns = len(simulator.script)
        self._inner = simulator.handle
        self._lock = threading.Lock()
        simulator.handle = self

    def __call__(self, request: Any) -> Any:
        before = self.simulator.used
        response = self._inner(request)
        used = self.simulator.used
        if used > before:
            what = f"turn {used}/{self.turns}"
        elif self.simulator.overruns and self.simulator.overruns[-1] == request.number:
            what = f"script exhausted ({self.turns} turn(s))"
        else:
            what = "no turn used"
        with self._lock:
            print(f"{request.method} {request.path} {response.status} {what}", file=self.stream, flush=True)
        return response


def main(args: argparse.Namespace) -> int:
    import loopkit.simulators as simulators

    from ._choices import check_choice

    check_choice(args.protocol, list(simulators.PROTOCOLS), what="protocol")
    script = load_script_file(args.script)
    sim = simulators.create(args.protocol, script, model=args.model)
    if not args.quiet:
        RequestLog(sim, sys.stderr)
    # started and stopped by hand, not ``with``: leaving serve()'s block raises the first
    # overrun, and here overruns are reported below with the unused turns
    try:
        served = simulators.serve(sim, port=args.port).start()
    except OSError as exc:
        raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}") from None
    try:
        print(f"loopkit {args.protocol} simulator listening on {served.base_url}", flush=True)
        try:
            while not (args.exit_when_done and sim.used >= len(script)):
                time.sleep(0.05)
        except KeyboardInterrupt:
            pass
    finally:
        served.stop()
    print(f"served {len(sim.requests)} request(s); used {sim.used} of {len(script)} turn(s)", flush=True)
    try:
        sim.assert_complete()
    except AssertionError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    return 0
