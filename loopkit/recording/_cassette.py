"""A cassette in use: its interactions, the match index, record modes, playback and saving."""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit

from ..errors import CassetteError, NoMatchingInteraction, UnplayedInteractions, UsageError
from ._format import CassetteFile, Interaction, dump_cassette, load_cassette_file, write_atomic
from ._match import VOLATILE_BODY_FIELDS, Key, message_index, nearest, normalise_path, recorded_key, request_key, short
from ._scrub import Scrubber, find_secrets

RecordMode: TypeAlias = Literal["none", "once", "new_episodes", "all"]
RECORD_MODES: tuple[str, ...] = ("none", "once", "new_episodes", "all")


class Cassette:
    """A cassette file opened for replay and/or recording.

    Record modes, as in vcrpy: ``none`` (the default) replays and never records, and a request that
    matches nothing raises :class:`NoMatchingInteraction`; ``once`` records into a cassette file that
    does not exist yet and otherwise behaves as ``none``; ``new_episodes`` replays what matches and
    records the rest; ``all`` ignores what the file holds and records everything anew.

    Args:
        path: the cassette file (None: in memory only).
        record_mode: one of :data:`RECORD_MODES`.
        scrubber: what to remove before anything is stored.
        volatile_body_fields: JSON body fields ignored by matching.
        allow_playback_repeats: a recorded interaction may answer any number of identical requests
            (otherwise identical requests are answered in recorded order, each once).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        record_mode: RecordMode = "none",
        scrubber: Scrubber | None = None,
        volatile_body_fields: Collection[str] = VOLATILE_BODY_FIELDS,
        allow_playback_repeats: bool = False,
        data: CassetteFile | None = None,
    ) -> None:
        if record_mode not in RECORD_MODES:
            raise UsageError(f"record_mode must be one of {', '.join(RECORD_MODES)}; got {record_mode!r}")
        self.path = Path(path) if path is not None else None
        self.record_mode: RecordMode = record_mode
        self.scrubber = scrubber or Scrubber()
        self.volatile = tuple(volatile_body_fields)
        self.allow_playback_repeats = allow_playback_repeats
        self.existed = data is not None or (self.path is not None and self.path.exists())
        if data is None and self.existed and record_mode != "all":
            data = load_cassette_file(self.path)  # type: ignore[arg-type]
        if data is None and record_mode == "none":
            raise CassetteError(
                f"{self.path}: cassette not found and record_mode is 'none'; "
                "record it with record_mode='once' (pytest --loopkit-record=once)"
            )
        self.file = data if data is not None and record_mode != "all" else CassetteFile()
        self._lock = threading.Lock()
        self._index: dict[Key, list[int]] = {}
        self._cursor: dict[Key, int] = {}
        self._played: set[int] = set()
        self.recorded: list[int] = []
        self.served = 0  # requests answered from the recording
        self.requests = 0  # requests asked for, answered or not (a miss is compared with this position)
        # Exact request bytes -> canonical key: a live body byte-identical to a recorded one (what
        # loopkit's adapters send: compact JSON) skips json.loads and the canonical re-dump.
        self._raw: dict[tuple[str, str, bytes], Key] = {}
        for n, inter in enumerate(self.file.interactions):
            if inter.request is not None:
                self._remember(n, inter.request)

    @classmethod
    def load(cls, path: str | os.PathLike[str], **kwargs: Any) -> Cassette:
        """Open an existing cassette for replay (``record_mode`` ``none`` unless given)."""
        return cls(path, **kwargs)

    @property
    def name(self) -> str:
        return str(self.path) if self.path is not None else "<in-memory cassette>"

    @property
    def interactions(self) -> list[Interaction]:
        return self.file.interactions

    @property
    def replays(self) -> bool:
        """Whether requests are answered from the recording (all modes but ``all``, and ``once``
        on a new file)."""
        return self.record_mode in ("none", "new_episodes") or (self.record_mode == "once" and self.existed)

    @property
    def records(self) -> bool:
        """Whether a request with no recorded answer goes to the network and is recorded."""
        return self.record_mode in ("all", "new_episodes") or (self.record_mode == "once" and not self.existed)

    # --- matching -----------------------------------------------------------------------------

    def _remember(self, n: int, req: Any) -> Key:
        key = recorded_key(req, self.volatile)
        self._index.setdefault(key, []).append(n)
        if req.has_json and not key[2]:
            raw = json.dumps(req.json_body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            self._raw.setdefault((key[0], key[1], raw), key)
        return key

    def _key(self, method: str, url: str, content: bytes) -> tuple[Key, Any]:
        if "?" not in url:
            key = self._raw.get((method.upper(), normalise_path(urlsplit(url).path), content))
            if key is not None:
                return key, None
        return self.live_key(method, url, content)

    def live_key(self, method: str, url: str, content: bytes) -> tuple[Key, Any]:
        """Scrub a live request the way recordings are scrubbed and return (key, body data)."""
        url = self.scrubber.url(url)
        if not content:
            return request_key(method, url, "none", None, self.volatile), None
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            b64 = base64.b64encode(content).decode("ascii")
            return request_key(method, url, "base64", b64, self.volatile), b64
        try:
            body = json.loads(text)
        except ValueError:
            text = self.scrubber.json(text)
            return request_key(method, url, "text", text, self.volatile), text
        if self.scrubber.live_text(text):
            body = self.scrubber.json(body)
        return request_key(method, url, "json", body, self.volatile), body

    def play(self, method: str, url: str, content: bytes) -> Interaction | None:
        """The recorded interaction that answers this request, marking it played; None on a miss
        when this cassette records, else :class:`NoMatchingInteraction`."""
        key, body = self._key(method, url, content)
        with self._lock:
            self.requests += 1
            found = self._index.get(key)
            if found:
                at = self._cursor.get(key, 0)
                if at < len(found):
                    self._cursor[key] = at + 1
                    self._played.add(found[at])
                    self.served += 1
                    return self.file.interactions[found[at]]
                if self.allow_playback_repeats:
                    self.served += 1
                    return self.file.interactions[found[-1]]
        if self.records:
            return None
        if body is None:
            key, body = self.live_key(method, url, content)
        raise self.no_match(method, url, key, body)

    def no_match(self, method: str, url: str, key: Key, body: Any) -> NoMatchingInteraction:
        """The error for a request that matches nothing, with the nearest recorded request."""
        path = key[1]
        lines = [f"{self.name}: no recorded interaction matches {method.upper()} {path}"]
        found = self._index.get(key)
        if found:
            lines.append(
                f"  it was recorded {len(found)} time(s) and has now been requested once more "
                "(identical requests are answered in recorded order, each once; pass allow_playback_repeats=True to repeat)"
            )
        else:
            recorded = [(n, i.request) for n, i in enumerate(self.file.interactions) if i.request is not None]
            near = nearest(recorded, method, path, body, self.volatile, self.requests - 1)  # type: ignore[arg-type]
            if near is None:
                lines.append("  the cassette holds no HTTP interactions")
            else:
                n, diff = near
                req = self.file.interactions[n].request
                assert req is not None
                lines.append(f"  nearest recorded: interactions[{n}] {req.method} {normalise_path(urlsplit(req.url).path)}")
                if req.method.upper() != method.upper() or normalise_path(urlsplit(req.url).path) != path:
                    lines.append(f"  differs in method/path: recorded {req.method} {urlsplit(req.url).path}, live {method.upper()} {path}")
                if diff is not None:
                    where, rec, live = diff
                    idx = message_index(where)
                    lines.append(f"  first difference: body {where}" + (f" (message {idx})" if idx is not None else ""))
                    lines.append(f"    - recorded: {short(rec, live)}")
                    lines.append(f"    + live:     {short(live, rec)}")
                elif key[2] != recorded_key(req, self.volatile)[2]:
                    lines.append(f"  first difference: query {key[2]!r}")
        lines.append(
            f"  to re-record: record_mode='new_episodes' records the new request, 'all' re-records the whole "
            f"cassette (pytest --loopkit-record=new_episodes); this cassette's mode is {self.record_mode!r}"
        )
        return NoMatchingInteraction("\n".join(lines))

    # --- recording ----------------------------------------------------------------------------

    def add(self, interaction: Interaction) -> int:
        """Scrub and append an interaction; returns its index."""
        interaction = self.scrubber.interaction(interaction)
        with self._lock:
            n = len(self.file.interactions)
            self.file.interactions.append(interaction)
            self.recorded.append(n)
            self._played.add(n)
            if interaction.request is not None:
                key = self._remember(n, interaction.request)
                self._cursor[key] = len(self._index[key])
        return n

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Scan for secrets and write the cassette atomically; refuses (CassetteError) on a finding."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise UsageError("this cassette has no path; pass save(path)")
        return save_cassette(self.scrubber.finish(self.file), target)

    def unplayed(self) -> list[int]:
        """Indexes of HTTP interactions that no request has asked for."""
        return [n for n, i in enumerate(self.file.interactions) if i.request is not None and n not in self._played]

    def assert_all_played(self) -> None:
        """Raise :class:`UnplayedInteractions` when recorded interactions were never requested."""
        left = self.unplayed()
        if left:
            shown = ", ".join(
                f"[{n}] {self.file.interactions[n].request.method} {urlsplit(self.file.interactions[n].request.url).path}"  # type: ignore[union-attr]
                for n in left[:5]
            )
            more = f" and {len(left) - 5} more" if len(left) > 5 else ""
            raise UnplayedInteractions(
                f"{self.name}: {len(left)} recorded interaction(s) were never requested: {shown}{more} "
                "(the code under test now makes fewer calls; re-record with record_mode='all', or allow it with fail_unplayed=False)"
            )


def save_cassette(cassette: CassetteFile, path: str | os.PathLike[str]) -> Path:
    """Scan ``cassette`` for secrets and write it atomically to ``path``."""
    text = dump_cassette(cassette)
    findings = find_secrets(cassette, text=text)
    if findings:
        shown = "\n  ".join(str(f) for f in findings[:10])
        more = f"\n  … and {len(findings) - 10} more" if len(findings) > 10 else ""
        raise CassetteError(f"{path}: refusing to save a cassette that still holds secrets:\n  {shown}{more}")
    write_atomic(path, text)
    return Path(path)
