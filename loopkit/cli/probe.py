"""``loopkit probe --protocol P [options] -- COMMAND ...``: check any agent's tool-call loop.

COMMAND runs once per case, in any language, with the simulator's address in the variables the
official SDKs read (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL,
AWS_ENDPOINT_URL_BEDROCK_RUNTIME, and LOOPKIT_PROBE_BASE_URL), a dummy key, and the prompt on stdin,
in LOOPKIT_PROBE_PROMPT and in place of a {prompt} argument. Its stdout is its answer; a
non-zero exit is a failed run. Instead of a command, --agent module:function probes a Python
function agent(base_url, prompt) -> str (sync or async). Exit status: 0 when no case failed, 1
when one did, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("probe", help="check any agent's tool-call loop against the loop contract", description=__doc__)
    p.add_argument("--protocol", required=True, help="the wire protocol the agent speaks (openai_chat, openai_responses, anthropic, gemini, bedrock)")
    p.add_argument("--agent", metavar="MODULE:FUNCTION", help="probe a Python function agent(base_url, prompt) -> str instead of a command")
    p.add_argument("--tools", action="append", metavar="NAME", default=[],
                   help="a declared tool the probe's model may call, for real (repeatable, or comma-separated; 'all' for every one); none by default")  # fmt: skip
    p.add_argument("--case", action="append", dest="cases", metavar="NAME", help="run only this case (repeatable)")
    p.add_argument("--script", action="append", default=[], metavar="FILE", help="add a case of your own: a YAML or JSON script (repeatable)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds one case may take before the agent counts as hung (default 30)")
    p.add_argument("--limit", type=int, default=60, help="model calls a never-ending model allows before the probe gives up (default 60)")
    p.add_argument("--max-calls", type=int, help="the cap on model calls your agent states; never_stops fails above it")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated tool arguments (default 0)")
    p.add_argument("--json", action="store_true", help="print machine-readable results")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the program to run, after --")
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    from ..probe import Probe

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if args.agent and command:
        raise UsageError("give either --agent MODULE:FUNCTION or a command after --, not both")
    if args.agent:
        agent = _load_agent(args.agent)
    elif command:
        agent = command
    else:
        raise UsageError("nothing to probe: give a command after -- (loopkit probe --protocol anthropic -- python agent.py) or --agent MODULE:FUNCTION")
    tools: list[str] = [t.strip() for spec in args.tools for t in spec.split(",") if t.strip()]
    allow = "all" if "all" in tools else tools
    extra = [_script_case(path) for path in args.script]
    probe = Probe(agent, args.protocol, tools=allow, cases=args.cases, extra_cases=extra, timeout=args.timeout,
                  limit=args.limit, max_calls=args.max_calls, seed=args.seed)  # fmt: skip
    if args.json:
        report = probe.run()
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        from rich.console import Console

        from ..probe._render import report_table

        console = Console(stderr=False)
        with console.status(f"probing {probe.name} ({args.protocol}) ...") if console.is_terminal else _Null():
            report = probe.run()
        console.print(report_table(report))
    return report.exit_code


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _load_agent(spec: str):  # type: ignore[no-untyped-def]
    from .._targets import import_target

    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # let MODULE name a module in the working directory
    return import_target(spec, what="--agent", form="module:function")


def _script_case(path: str):  # type: ignore[no-untyped-def]
    from pathlib import Path

    import yaml

    from ..errors import UsageError
    from ..probe import scripted_case
    from ..script import Script

    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"--script {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"--script {path}: not YAML or JSON: {exc}") from None
    return scripted_case(p.stem, Script.from_data(data, source=path))
