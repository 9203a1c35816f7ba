"""``loopkit serve PROTOCOL --script FILE [--port N]``: a simulator on 127.0.0.1 for clients in
any language. It prints the base URL, serves until interrupted (or until the script is used up,
with ``--exit-when-done``), then reports unused turns and overruns."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import ScriptError, UsageError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run a protocol simulator on 127.0.0.1", description=__doc__)
    p.add_argument("protocol", help="openai_chat, openai_responses, anthropic, gemini or bedrock")
    p.add_argument("--script", required=True, type=Path, help="a JSON or YAML file: a list of turns (see loopkit.script.Script.from_data)")
    p.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    p.add_argument("--model", default="sim-model", help="model name to report")
    p.add_argument("--exit-when-done", action="store_true", help="stop once every turn has been used")
    p.set_defaults(handler=main)


def load_script_file(path: Path) -> Any:
    """Read a script file (JSON, or YAML by extension) into a Script; errors name the file."""
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
        return Script.from_data(data, source=str(path))
    except ScriptError as exc:
        raise UsageError(str(exc)) from None


def main(args: argparse.Namespace) -> int:
    import simulators

    script = load_script_file(args.script)
    # started and stopped by hand, not ``with``: leaving serve()'s block raises the first
    # overrun, and here overruns are reported below with the unused turns
    sim = simulators.serve(args.protocol, script, port=args.port, model=args.model).start()
    try:
        print(f"loopkit {args.protocol} simulator listening on {sim.base_url}", flush=True)
        try:
            while not (args.exit_when_done and sim.simulator.used >= len(script)):
                time.sleep(0.05)
        except KeyboardInterrupt:
            pass
    finally:
        sim.stop()
    sim_ = sim.simulator
    print(f"served {len(sim_.requests)} request(s); used {sim_.used} of {len(script)} turn(s)", flush=True)
    try:
        sim_.assert_complete()
    except AssertionError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    return 0
