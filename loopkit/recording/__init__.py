"""Cassettes: record live sessions and replay them offline, chunk for chunk, with secrets scrubbed.

Typical use::

    with use_cassette("cassettes/test_agent.json", record_mode="once") as cassette:
        client = httpx.Client(transport=CassetteTransport(cassette))
        ...  # replayed from the file, or recorded into it the first time

Pieces, each in its own module:

- ``_format``: the file (``format_version`` 1, pydantic schema, pretty JSON, atomic writes). A
  response body is the list of chunks that arrived, with time offsets; Bedrock event-stream
  messages are stored decoded (``frames``) and re-encoded byte for byte on replay.
- ``_codecs``: the frame-codec registry. The AWS event-stream codec lives at L1
  (``loopkit.eventstream``) and is registered by default; add others with
  :func:`register_frame_codec`.
- ``_secrets``: what a secret is (key shapes, secret field names, environment and signing
  values); ``_views``: the strings of a cassette, with response streams reassembled per content
  block; ``_scrub``: :class:`Scrubber` learns the secrets of a session (by name, shape and value)
  and removes them everywhere; :func:`find_secrets` scans the reassembled file; saving refuses a
  cassette with a finding.
- ``_match``: the canonical request (method, normalised path, sorted query, JSON body minus
  volatile fields) and a dict index; a miss explains itself (:class:`~loopkit.errors.NoMatchingInteraction`).
- ``_cassette``: :class:`Cassette` (record modes ``none``/``once``/``new_episodes``/``all`` as
  in vcrpy, plus ``rewrite``; playback in recorded order; unplayed interactions; saves merged
  under a file lock).
- ``_transport``: :class:`RecordingTransport`, :class:`ReplayTransport`, :class:`CassetteTransport`
  for httpx and httpx2 (the official SDKs' fork), sync and async.
- ``_provider``: :class:`ReplayProvider` (transcripts -> stream events or a Script, no HTTP) and
  :class:`RecordingProvider` (stores the transcripts).
- ``_vcr``: vcrpy glue for clients loopkit does not build (boto3 on urllib3, or SDKs under vcrpy).
  vcrpy records whole bodies, so its recordings are stored re-chunked per SSE event / per
  event-stream message at ``t`` = 0, and on replay loopkit hands httpx/httpx2 streams back one
  event at a time (urllib3 is not re-chunked: botocore reads fixed 1 KiB pieces anyway).
- ``_netguard``: :func:`block_network`, the socket-level guard used while replaying.
- ``_proxy``: the recording reverse proxy behind ``loopkit record``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import raise_first
from ._cassette import RECORD_MODES, Cassette, RecordMode, cassette_lock, save_cassette
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
from .._credentials import remember_credential
from ._secrets import MIN_VALUE_LENGTH
from ._proxy import RecordingProxy
from ._transport import CassetteTransport, RecordingTransport, ReplayTransport
from ._vcr import make_vcr


@contextmanager
def use_cassette(
    path: str | os.PathLike[str],
    *,
    record_mode: RecordMode = "none",
    fail_unplayed: bool = True,
    **kwargs: Any,
) -> Iterator[Cassette]:
    """Open a cassette for the duration of a block; save it if anything was recorded.

    Leaving the block:

    - with an exception: nothing is saved (the previous file stays byte for byte, in every
      record mode); if a request missed the cassette, that :class:`~loopkit.errors.NoMatchingInteraction`
      is raised instead (the exception it replaces chained), since it is why the block failed;
    - normally, after a miss that a client swallowed (an official SDK wraps a transport's error
      and retries): the first miss is raised, with its diff, and nothing is saved;
    - normally: what was recorded is saved (merged under the file's lock, see
      :meth:`Cassette.save`), then interactions never requested raise
      :class:`~loopkit.errors.UnplayedInteractions` (a miss never does).

    Args:
        path: the cassette file.
        record_mode: ``none`` (default), ``once``, ``new_episodes``, ``all`` or ``rewrite``
            (see :class:`Cassette`).
        fail_unplayed: at the end of a block that replayed, raise
            :class:`~loopkit.errors.UnplayedInteractions` if recorded interactions were never asked
            for (by a transport, or by a :class:`ReplayProvider` over this cassette).
        **kwargs: passed to :class:`Cassette` (scrubber, volatile_body_fields, allow_playback_repeats).
    """
    cassette = Cassette(path, record_mode=record_mode, **kwargs)
    try:
        yield cassette
    except GeneratorExit:
        raise
    except BaseException as exc:
        raise_first(cassette.harness_errors, exc)
        raise
    raise_first(cassette.harness_errors)
    if cassette.recorded:
        cassette.save()
    if fail_unplayed and cassette.replays:
        cassette.assert_all_played()


__all__ = [
    "Cassette",
    "CassetteFile",
    "CassetteTransport",
    "Chunk",
    "EventStreamFrameCodec",
    "FORMAT_VERSION",
    "Finding",
    "FrameCodec",
    "Interaction",
    "MIN_VALUE_LENGTH",
    "RECORD_MODES",
    "RecordMode",
    "RecordedRequest",
    "RecordedResponse",
    "RecordingProvider",
    "RecordingProxy",
    "RecordingTransport",
    "ReplayProvider",
    "ReplayTransport",
    "Scrubber",
    "Transcript",
    "VOLATILE_BODY_FIELDS",
    "block_network",
    "cassette_lock",
    "codec_for",
    "dump_cassette",
    "events_for_message",
    "find_secrets",
    "load_cassette_file",
    "make_vcr",
    "parse_cassette",
    "register_frame_codec",
    "remember_credential",
    "save_cassette",
    "scrub_text",
    "unregister_frame_codec",
    "use_cassette",
    "write_atomic",
]
