"""Record what any HTTP client sends through a local reverse proxy into a cassette.

Point the client (in any language) at the printed http://127.0.0.1:PORT base URL. Each request is
forwarded to --upstream, the response streams back chunk by chunk, and the exchange is scrubbed
of secrets and saved to the cassette after every request (atomically: stopping at any moment
leaves a whole file). Stop with Ctrl-C or SIGTERM (either prints what was saved).
The exit status is 0 when at least one interaction was saved, 1 when nothing was recorded or a
save failed, 2 on bad arguments.

Record modes mean what they mean for a cassette: all (the default here: record everything anew),
new_episodes (replay what the file holds, record the rest), once (record only into a new file),
none (replay only).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit


# loopkit.recording.RECORD_MODES, spelled out: importing loopkit.recording (httpx, the cassette
# format) to build the parser would make every `loopkit` command, --help included, pay for it
# (tests/cli/test_startup.py checks that the two agree)
RECORD_MODES: tuple[str, ...] = ("none", "once", "new_episodes", "all", "rewrite")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``record`` to an argparse ``subparsers`` object."""
    p = subparsers.add_parser(
        "record", help="a recording reverse proxy on 127.0.0.1", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--upstream", required=True, help="base URL of the real service or a simulator (http:// or https://)")
    p.add_argument("--cassette", required=True, help="the cassette file to write (its folder must exist)")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--record-mode", choices=RECORD_MODES, default="all", help="default: all (record everything anew)")
    p.set_defaults(handler=run)
    return p


def check_upstream(url: str) -> str | None:
    """What is wrong with an upstream URL, or None."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"--upstream must be an http:// or https:// URL with a host, like https://api.openai.com; got {url!r}"
    if parts.query or parts.fragment:
        return f"--upstream is a base URL without query or fragment; got {url!r}"
    return None


def run(args: argparse.Namespace, *, out: IO[str] | None = None) -> int:
    """Serve until interrupted; returns the exit status."""
    from ..errors import LoopkitError
    from ..recording import Cassette
    from ..recording._proxy import RecordingProxy

    out = out or sys.stdout
    problem = check_upstream(args.upstream)
    folder = Path(args.cassette).resolve().parent
    if problem is None and not folder.is_dir():
        problem = f"--cassette {args.cassette}: folder {folder} does not exist (create it first)"
    if problem is not None:
        print(f"error: {problem}", file=out)
        return 2
    try:
        cassette = Cassette(args.cassette, record_mode=args.record_mode)
        proxy = RecordingProxy(args.upstream, cassette, port=args.port, log=lambda line: print(line, file=out, flush=True))
    except (LoopkitError, OSError) as exc:
        print(f"error: {exc}", file=out)
        return 2
    print(f"recording {args.upstream} into {args.cassette} on {proxy.base_url} (Ctrl-C to stop)", file=out, flush=True)
    previous = _stop_on_signals()
    try:
        proxy.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return report(proxy, args.cassette, out)


def _stop_on_signals() -> dict[int, Any]:
    """Make Ctrl-C (SIGINT) and SIGTERM both stop the proxy the same way, so the closing line is
    printed and the cassette saved. SIGINT is taken even where it arrived ignored (a shell starts
    background jobs so), since the banner promises Ctrl-C. Returns the handlers to put back."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    return {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}


def report(proxy: Any, path: str, out: IO[str]) -> int:
    """The closing line: what was saved, or why nothing was; returns the exit status."""
    if proxy.save_error is not None:
        print(f"error: the cassette was not saved: {proxy.save_error}", file=out)
        return 1
    n = len(proxy.cassette.recorded)
    if n == 0:
        print(f"nothing was recorded; {path} was not written", file=out)
        return 1
    print(f"saved {n} interaction(s) to {path}", file=out)
    return 0
