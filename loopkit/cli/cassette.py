"""Read, compare, clean and check cassette files.

  show FILE        the session as a conversation (prompt, tool calls, tool results, answers),
                   the stream as events, timings
  diff A B         which interaction, which message, which field differs (exit 1 if any)
  scrub FILE...    remove secrets in place (headers, URLs, bodies, every chunk, transcripts,
                   meta), atomically, then check the result
  verify FILE...   check the format, decode every stream as replay would, and scan for secrets
                   over the reassembled streams; exit 1 on any finding, naming the interaction,
                   the place and the kind of secret (never the secret)

verify fits a pre-commit hook:

  - repo: local
    hooks:
      - id: loopkit-cassettes
        name: loopkit cassette verify
        entry: loopkit cassette verify
        language: system
        files: ^cassettes/.*\\.json$
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO, Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``cassette`` and its sub-commands to an argparse ``subparsers`` object."""
    raw = argparse.RawDescriptionHelpFormatter
    p = subparsers.add_parser("cassette", help="show, diff, scrub or verify cassette files", description=__doc__, formatter_class=raw)
    sub = p.add_subparsers(dest="cassette_command", required=True, metavar="{show,diff,scrub,verify}")
    show = sub.add_parser(
        "show", help="the session as a conversation: turns, tool calls, the stream, timings",
        description="Print a cassette as a conversation: for each interaction the request, the new messages (prompt, tool results), the answer (tool calls, text), the stream as events and its timing.",
    )  # fmt: skip
    show.add_argument("file")
    show.add_argument("--no-events", action="store_true", help="leave out the stream events")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    diff = sub.add_parser(
        "diff", help="semantic diff: which turn, which message, which field",
        description="Compare two cassettes interaction by interaction: which turn, which message, which field, and both values around where they differ. Exit 1 when they differ.",
    )  # fmt: skip
    diff.add_argument("a")
    diff.add_argument("b")
    diff.add_argument("--json", action="store_true", help="machine-readable output")
    scrub = sub.add_parser(
        "scrub", help="re-scrub in place (atomically), then scan for secrets",
        description="Remove secrets from cassette files in place (by name, shape and value, everywhere, including meta and streams split across chunks), then check that none is left.",
    )  # fmt: skip
    scrub.add_argument("files", nargs="+", metavar="FILE")
    scrub.add_argument("--json", action="store_true", help="machine-readable output")
    verify = sub.add_parser(
        "verify", help="format, decoding and secret scan; exit 1 on any finding",
        description="Check cassette files: the format, every stream decoded as replay would decode it, and a secret scan over the reassembled streams. Exit 1 on any finding.",
    )  # fmt: skip
    verify.add_argument("files", nargs="+", metavar="FILE")
    verify.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run)
    return p


def run(args: argparse.Namespace, *, out: IO[str] | None = None) -> int:
    """Run a ``cassette`` sub-command; returns the exit status."""
    from ..errors import CassetteError
    from ..recording import load_cassette_file

    out = out or sys.stdout
    command = args.cassette_command
    from ..recording import Scrubber
    from ..recording._scrub import scrub_text

    def load(path: str) -> Any:
        # Scrubbed before anything is printed: a file written past the guard (a hand edit) may
        # still hold a secret, and show and diff print none.
        return Scrubber().cassette(load_cassette_file(path))

    try:
        if command == "show":
            return _show(args, load(args.file), out)
        if command == "diff":
            return _diff(args, load(args.a), load(args.b), out)
    except CassetteError as exc:
        print(f"error: {scrub_text(str(exc))}", file=out)
        return 2
    if command == "scrub":
        return _scrub(args, out)
    return _verify(args, out)


def _console(out: IO[str], width: int | None = None) -> Any:
    from rich.console import Console

    tty = out is sys.stdout
    return Console(file=out, width=width or (None if tty else 120), color_system="auto" if tty else None)


def _decoder_for(path: str) -> Any:
    """The stream decoder of loopkit's adapter for a request path, or None."""
    if path.endswith("/v1/messages"):
        from ..providers.anthropic import MessagesStreamDecoder

        return MessagesStreamDecoder()
    if path.endswith(":streamGenerateContent"):
        from ..providers.gemini import GeminiStreamDecoder

        ids = iter(range(1, 1_000_000))
        return GeminiStreamDecoder(lambda: f"call_{next(ids)}")
    if path.endswith("/chat/completions"):
        from ..providers.openai_chat import ChatStreamDecoder

        return ChatStreamDecoder()
    if path.endswith("/responses"):
        from ..providers.openai_responses import ResponsesStreamDecoder

        return ResponsesStreamDecoder()
    if path.endswith("/converse-stream"):
        from urllib.parse import unquote

        from ..providers.bedrock import ConverseStreamDecoder

        return ConverseStreamDecoder(model=unquote(path.rsplit("/", 2)[-2]))  # /model/{modelId}/converse-stream: the answer names none
    return None


def reassemble(inter: Any) -> dict[str, Any] | None:
    """Decode a recorded streamed response with loopkit's adapter for its protocol into
    assistant-message data; None when no adapter knows the path or the stream does not decode."""
    from urllib.parse import urlsplit

    from ..accumulate import accumulate
    from ..errors import LoopkitError
    from ..recording._bodies import chunk_bytes
    from ..serde import dump_message

    if inter.request is None or inter.response is None or inter.response.status != 200:
        return None
    decoder = _decoder_for(urlsplit(inter.request.url).path)
    if decoder is None:
        return None
    try:
        events = [e for chunk in chunk_bytes(inter.response) for e in decoder.feed(chunk)] + decoder.close()
        return dump_message(accumulate(events))
    except LoopkitError:
        return None


def _show(args: argparse.Namespace, file: Any, out: IO[str]) -> int:
    from ..recording._inspect import summarise

    summaries = summarise(file, reassemble=reassemble)
    if args.json:
        json.dump([s.as_json() for s in summaries], out, indent=2, ensure_ascii=False)
        out.write("\n")
        return 0
    from ..recording._render import render_show

    _console(out).print(render_show(args.file, summaries, events=not args.no_events))
    return 0


def _diff(args: argparse.Namespace, a: Any, b: Any, out: IO[str]) -> int:
    from ..recording._inspect import diff_cassettes

    differences = diff_cassettes(a, b)
    if args.json:
        json.dump([d.as_json() for d in differences], out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        from ..recording._render import render_diff

        _console(out).print(render_diff(args.a, args.b, differences))
    return 1 if differences else 0


def _scrub(args: argparse.Namespace, out: IO[str]) -> int:
    from ..errors import CassetteError
    from ..recording import Scrubber, load_cassette_file, save_cassette

    status, report = 0, []
    for path in args.files:
        try:
            file = Scrubber().cassette(load_cassette_file(path))
            save_cassette(file, path)
            report.append({"file": path, "ok": True, "error": None})
        except CassetteError as exc:
            status = 1
            report.append({"file": path, "ok": False, "error": str(exc)})
    _report(args, report, out, verb="scrubbed")
    return status


def decode_problems(inter: Any, n: int) -> list[str]:
    """What would fail when this interaction replays: its stream run through loopkit's decoder
    for its protocol (SSE events, event-stream frames); [] when it decodes or no decoder knows it."""
    from urllib.parse import urlsplit

    from ..errors import LoopkitError
    from ..recording._bodies import chunk_bytes

    if inter.request is None or inter.response is None:
        return []
    try:
        chunks = chunk_bytes(inter.response, where=f"interactions[{n}].response")
    except LoopkitError as exc:
        return [f"interactions[{n}].response: {exc}"]
    if inter.response.status != 200:
        return []
    decoder = _decoder_for(urlsplit(inter.request.url).path)
    if decoder is None:
        return []
    try:
        for i, chunk in enumerate(chunks):
            try:
                decoder.feed(chunk)
            except LoopkitError as exc:
                return [f"interactions[{n}].response.chunks[{i}]: does not decode: {type(exc).__name__}: {exc}"]
        decoder.close()
    except LoopkitError as exc:
        return [f"interactions[{n}].response (end of stream): does not decode: {type(exc).__name__}: {exc}"]
    return []


def _verify(args: argparse.Namespace, out: IO[str]) -> int:
    from ..errors import CassetteError
    from ..recording import find_secrets, load_cassette_file
    from ..recording._scrub import scrub_text

    status, report = 0, []
    for path in args.files:
        try:
            file = load_cassette_file(path)
            findings = [str(f) for f in find_secrets(file)]
            for n, inter in enumerate(file.interactions):
                findings += [scrub_text(p) for p in decode_problems(inter, n)]
        except CassetteError as exc:
            findings = [scrub_text(str(exc))]
        if findings:
            status = 1
        report.append({"file": path, "ok": not findings, "error": "\n".join(findings) or None})
    _report(args, report, out, verb="ok")
    return status


def _report(args: argparse.Namespace, report: list[dict[str, Any]], out: IO[str], *, verb: str) -> None:
    if args.json:
        json.dump(report, out, indent=2, ensure_ascii=False)
        out.write("\n")
        return
    for r in report:
        if r["ok"]:
            print(f"{r['file']}: {verb}", file=out)
        else:
            print(f"{r['file']}: FAILED", file=out)
            for line in r["error"].splitlines():
                print(f"  {line}", file=out)
