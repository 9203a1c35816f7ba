"""``loopkit conformance TARGET --protocol P [--json]``: run the adapter conformance suite.

TARGET is a built-in adapter name (openai_chat, openai_responses, anthropic, gemini, bedrock) or
``module:factory``: a callable taking ``transport=`` and/or ``base_url=`` (and optionally
``retry=``) that returns a Provider. Each case runs against the protocol's simulator. The table
lists the cases that failed, and counts the rest; -v lists every case (with why a case does not
apply). --no-stream builds a built-in adapter that asks for non-streamed answers (JSON bodies).
--variant runs the simulators as one model family of the protocol (no-tool-result-status: a Bedrock
model that refuses toolResult.status). Exit status: 0 when every case passed or was not
applicable, 1 when any failed, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("conformance", help="run the adapter conformance suite against a provider", description=__doc__)
    p.add_argument("target", help="a built-in adapter name or module:factory")
    p.add_argument("--protocol", help="the wire protocol the provider speaks (default: TARGET when it is a built-in name)")
    p.add_argument("--case", action="append", dest="cases", metavar="ID", help="run only this case, or the cases under this id prefix (repeatable)")
    p.add_argument("--served", action="store_true", help="serve simulators on 127.0.0.1 even when the factory takes transport=")
    p.add_argument(
        "--no-stream",
        dest="stream",
        action="store_const",
        const=False,
        default=None,
        help="build the built-in adapter TARGET to ask for non-streamed answers (single JSON bodies); streamed-only cases are then not applicable",
    )
    p.add_argument(
        "--variant",
        metavar="NAME",
        help="answer as this model family of the protocol (no-tool-result-status: a bedrock model that refuses toolResult.status, "
        "so error results must say so in their text); a built-in TARGET is built for it",
    )
    p.add_argument("--json", action="store_true", help="print machine-readable results")
    p.add_argument("-v", "--verbose", action="store_true", help="list every case, not only the failures")
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    from ..conformance import CASES, Suite
    from ..conformance._suite import select_cases

    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # let module:factory name a module in the working directory
    cases = select_cases(args.cases) if args.cases else CASES
    report = Suite(args.target, args.protocol, served=args.served, cases=cases, stream=args.stream, variant=args.variant).run()
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        from rich.console import Console

        from ..conformance._render import report_table

        Console().print(report_table(report, verbose=args.verbose))
    return 0 if report.ok else 1
