"""``loopkit record --upstream URL --cassette FILE [--port N]``: a recording reverse proxy.

Point any client (in any language) at the printed ``http://127.0.0.1:PORT`` base URL; every
exchange is forwarded to the upstream, streamed back chunk by chunk, scrubbed, and saved to the
cassette atomically after each request. Stop it with Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``record`` to an argparse ``subparsers`` object."""
    from ..recording import RECORD_MODES

    p = subparsers.add_parser("record", help="a recording reverse proxy on 127.0.0.1")
    p.add_argument("--upstream", required=True, help="base URL of the real service or a simulator")
    p.add_argument("--cassette", required=True, help="the cassette file to write")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--record-mode", choices=RECORD_MODES, default="all", help="default: all (record everything anew)")
    p.set_defaults(handler=run)
    return p


def run(args: argparse.Namespace, *, out: IO[str] | None = None) -> int:
    """Serve until interrupted; returns the exit status."""
    from ..errors import LoopkitError
    from ..recording import Cassette
    from ..recording._proxy import RecordingProxy

    out = out or sys.stdout
    try:
        cassette = Cassette(args.cassette, record_mode=args.record_mode)
        proxy = RecordingProxy(args.upstream, cassette, port=args.port, log=lambda line: print(line, file=out, flush=True))
    except (LoopkitError, OSError) as exc:
        print(f"error: {exc}", file=out)
        return 2
    print(f"recording {args.upstream} into {args.cassette} on {proxy.base_url} (Ctrl-C to stop)", file=out, flush=True)
    try:
        proxy.serve_forever()
    except KeyboardInterrupt:
        pass
    print(f"saved {len(cassette.interactions)} interaction(s) to {args.cassette}", file=out)
    return 0
