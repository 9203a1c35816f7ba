"""The ``loopkit`` command. Each subcommand is a module here with ``add_parser(subparsers)``
(which sets ``handler``) and imports its heavy dependencies only when it runs."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ..errors import LoopkitError

COMMANDS: tuple[str, ...] = ("demo", "run", "conformance", "serve", "record", "cassette", "fuzz", "probe")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="loopkit", description="Test and simulate LLM tool-call loops, offline.")
    parser.add_argument("--version", action="version", version=f"loopkit {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").add_parser(sub)
    return parser


def _version() -> str:
    from .. import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except LoopkitError as exc:
        print(f"loopkit {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
