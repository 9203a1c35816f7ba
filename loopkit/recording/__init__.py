"""Cassettes: record live sessions and replay them offline, chunk for chunk, with secrets scrubbed.

Typical use::

    with use_cassette("cassettes/test_agent.json", record_mode="once") as cassette:
        client = httpx.Client(transport=CassetteTransport(cassette))
        ...  # replayed from the file, or recorded into it the first time

The file format is in :mod:`loopkit.recording._format`; secrets handling in ``_scrub``; matching
in ``_match``; vcrpy glue (for the official SDKs) in ``_vcr``; the network guard in ``_netguard``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._cassette import RECORD_MODES, Cassette, RecordMode, save_cassette
from ._codecs import EventStreamFrameCodec, FrameCodec, codec_for, register_frame_codec, unregister_frame_codec
from ._format import (
    FORMAT_VERSION,
    CassetteFile,
    Chunk,
    Interaction,
    RecordedRequest,
    RecordedResponse,
    Transcript,
    dump_cassette,
    load_cassette_file,
    parse_cassette,
    write_atomic,
)
from ._match import VOLATILE_BODY_FIELDS
from ._netguard import block_network
from ._provider import RecordingProvider, ReplayProvider, events_for_message
from ._scrub import Finding, Scrubber, find_secrets, scrub_text
from ._transport import CassetteTransport, RecordingTransport, ReplayTransport


@contextmanager
def use_cassette(
    path: str | os.PathLike[str],
    *,
    record_mode: RecordMode = "none",
    fail_unplayed: bool = True,
    **kwargs: Any,
) -> Iterator[Cassette]:
    """Open a cassette for the duration of a block; save it if anything was recorded.

    Args:
        path: the cassette file.
        record_mode: ``none`` (default), ``once``, ``new_episodes`` or ``all``.
        fail_unplayed: at the end of a block that replayed, raise
            :class:`~loopkit.errors.UnplayedInteractions` if recorded interactions were never asked for.
        **kwargs: passed to :class:`Cassette` (scrubber, volatile_body_fields, allow_playback_repeats).
    """
    cassette = Cassette(path, record_mode=record_mode, **kwargs)
    yield cassette
    if cassette.recorded:
        cassette.save()
    if fail_unplayed and cassette.replays:
        cassette.assert_all_played()


__all__ = [
    "FORMAT_VERSION",
    "RECORD_MODES",
    "VOLATILE_BODY_FIELDS",
    "Cassette",
    "CassetteFile",
    "CassetteTransport",
    "Chunk",
    "EventStreamFrameCodec",
    "Finding",
    "FrameCodec",
    "Interaction",
    "RecordMode",
    "RecordedRequest",
    "RecordedResponse",
    "RecordingProvider",
    "RecordingTransport",
    "ReplayProvider",
    "ReplayTransport",
    "Scrubber",
    "Transcript",
    "block_network",
    "codec_for",
    "dump_cassette",
    "events_for_message",
    "find_secrets",
    "load_cassette_file",
    "parse_cassette",
    "register_frame_codec",
    "save_cassette",
    "scrub_text",
    "unregister_frame_codec",
    "use_cassette",
    "write_atomic",
]
