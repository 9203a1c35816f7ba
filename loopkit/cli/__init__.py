"""The ``loopkit`` command. Each subcommand is a module here with ``add_parser(subparsers)``
(which sets ``handler``) and imports its heavy dependencies only when it runs.

Like ``python -m`` and pytest's rootdir, the command puts the current directory first on the
import path, so ``loopkit fuzz mytools:search`` finds ``./mytools.py`` without ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from ..errors import LoopkitError

COMMANDS: tuple[str, ...] = ("demo", "run", "conformance", "serve", "record", "cassette", "fuzz", "probe")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; ``only`` registers just that subcommand (so that running one
    command does not import what the others need: start-up time counts for a CLI)."""
    parser = argparse.ArgumentParser(prog="loopkit", description="Test and simulate LLM tool-call loops, offline.")
    parser.add_argument("--version", action="version", version=f"loopkit {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"{__name__}.{name}").add_parser(sub)
    return parser


def _version() -> str:
    from .. import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    _import_from_cwd()
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
    args = parser.parse_args(words)
    try:
        return int(args.handler(args) or 0)
    except LoopkitError as exc:
        print(f"loopkit {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _import_from_cwd() -> None:
    """Put the current directory first on ``sys.path``, as ``python -m`` does (the console script
    starts with the script's own folder there instead)."""
    cwd = os.getcwd()
    if not any(p in ("", cwd) or (p and os.path.abspath(p) == cwd) for p in sys.path):
        sys.path.insert(0, cwd)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
