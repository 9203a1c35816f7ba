"""A cassette in use: its interactions, the match index, record modes, playback and saving."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit

from ..errors import CassetteError, HarnessError, NoMatchingInteraction, UnplayedInteractions, UsageError
from ..messages import dumps
from ._format import CassetteFile, Interaction, dump_cassette, load_cassette_file, parse_cassette, write_atomic
from ._match import VOLATILE_BODY_FIELDS, Key, message_index, nearest, normalise_path, recorded_key, request_key, short
from ._scrub import Scrubber, find_secrets

RecordMode: TypeAlias = Literal["none", "once", "new_episodes", "all", "rewrite"]
RECORD_MODES: tuple[str, ...] = ("none", "once", "new_episodes", "all", "rewrite")

LOCK_TIMEOUT = 120.0
"""Seconds a save waits for another writer of the same cassette before giving up."""


class Cassette:
    """A cassette file opened for replay and/or recording.

    Record modes mean what vcrpy's modes of the same name mean:

    - ``none`` (the default) replays and never records; a request that matches nothing raises
      :class:`NoMatchingInteraction`. (vcrpy opens a missing file and fails at the first request;
      loopkit fails at once, naming the file.)
    - ``once`` records when the file does not exist yet; otherwise it behaves as ``none``.
    - ``new_episodes`` replays what matches and records the rest, appended to the file.
    - ``all`` replays nothing and records every request; at save, a recorded interaction replaces
      the interactions of the file that its request matches, and the file's other interactions
      are kept, as vcrpy does.
    - ``rewrite`` (pytest-recording's mode of that name, not vcrpy's) replays nothing and saves
      only what this session recorded: the way to drop interactions the code no longer asks for.

    Where loopkit differs on purpose: a session that failed (an exception through
    :func:`~loopkit.recording.use_cassette`, a failed test under the pytest fixture) saves
    nothing in any mode, so the previous file stays byte for byte (vcrpy saves by default); and
    writers of one file serialise under a file lock and merge (see :meth:`save`), so two
    pytest-xdist workers recording into one cassette keep both interactions.

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
        fresh = record_mode in ("all", "rewrite")  # replays nothing: the file is read at save
        # the file's bytes as last read or written, to see at save whether another writer changed it
        self._snapshot: bytes | None = None
        self._base: list[Interaction] | None = None  # the interactions those bytes hold, once parsed
        if data is None and self.existed:
            if record_mode in ("new_episodes", "all", "rewrite"):  # the modes that save into a file that exists
                self._snapshot = _read(self.path)  # type: ignore[arg-type]
            if not fresh:
                data = load_cassette_file(self.path)  # type: ignore[arg-type]
        if data is None and record_mode == "none":
            raise CassetteError(
                f"{self.path}: cassette not found and record_mode is 'none'; "
                "record it with record_mode='once' (pytest --loopkit-record=once)"
            )
        self.file = data if data is not None and not fresh else CassetteFile()
        if data is not None and not fresh:
            self._base = list(self.file.interactions)
        self._saves = 0
        self._saved = 0  # how many of ``recorded`` are in the file already
        self._lock = threading.Lock()
        self._index: dict[Key, list[int]] = {}
        self._cursor: dict[Key, int] = {}
        self._played: set[int] = set()
        self.recorded: list[int] = []
        self.served = 0  # requests answered from the recording
        # every miss, first first: an official SDK may swallow a transport's exception (and retry),
        # so use_cassette and the pytest fixture raise the first one when they close
        self.harness_errors: list[HarnessError] = []
        self._transcripts_replayed = False
        self.requests = 0  # requests asked for, answered or not (a miss is compared with this position)
        # Exact request bytes -> canonical key: a live body byte-identical to a recorded one (what
        # loopkit's adapters send: compact JSON) skips json.loads and the canonical re-dump.
        self._raw: dict[tuple[str, str, bytes], Key] = {}
        # interactions recorded but not in the index yet: keyed when a lookup first needs them, so
        # recording (which never looks up) does not pay for the canonical key of every request
        self._unindexed: list[int] = []
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
        return self.record_mode in ("all", "rewrite", "new_episodes") or (self.record_mode == "once" and not self.existed)

    # --- matching -----------------------------------------------------------------------------

    def _remember(self, n: int, req: Any) -> Key:
        key = recorded_key(req, self.volatile)
        self._index.setdefault(key, []).append(n)
        if req.has_json and not key[2]:
            raw = dumps(req.json_body).encode("utf-8")  # compact, as json.dumps(separators=(",", ":"))
            self._raw.setdefault((key[0], key[1], raw), key)
        return key

    def _index_recorded(self) -> None:
        """Put the interactions recorded since the last lookup into the index, each marked as
        answered (the cursor of its key moves past it: a recording is never replayed to the session
        that made it). Call holding ``self._lock``."""
        for n in self._unindexed:
            req = self.file.interactions[n].request
            if req is not None:
                key = self._remember(n, req)
                self._cursor[key] = len(self._index[key])
        self._unindexed.clear()

    def _key(self, method: str, url: str, content: bytes) -> tuple[Key, Any]:
        if self._unindexed:
            with self._lock:
                self._index_recorded()
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
        raise self.miss(method, url, content)

    def miss(self, method: str, url: str, content: bytes) -> NoMatchingInteraction:
        """The :class:`NoMatchingInteraction` for a live request, remembered in
        :attr:`harness_errors` (raise what this returns)."""
        key, body = self.live_key(method, url, content)
        err = self.no_match(method, url, key, body)
        self.remember(err)
        return err

    def remember(self, err: HarnessError) -> None:
        """Keep a harness error this cassette raised, so that closing it raises the first one
        even when a client swallowed it."""
        with self._lock:
            self.harness_errors.append(err)

    def no_match(self, method: str, url: str, key: Key, body: Any) -> NoMatchingInteraction:
        """The error for a request that matches nothing, with the nearest recorded request."""
        path = key[1]
        lines = [f"{self.name}: no recorded interaction matches {method.upper()} {path}"]
        with self._lock:
            self._index_recorded()
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
            f"  to re-record: record_mode='new_episodes' records the new request, 'rewrite' re-records the whole "
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
            self._unindexed.append(n)
        return n

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write what was recorded into the cassette's file, merged with what the file holds now.

        Under a file lock (one per save, whatever the number of interactions), the file is read
        again and the interactions recorded since the last save are merged in as the record mode
        says: appended (``once``, ``new_episodes``); replacing the file's interactions whose
        request they match (``all``); replacing what the file held when this cassette opened,
        while keeping what other writers added since (``rewrite``). Two pytest-xdist workers
        recording into one file therefore keep both interactions. The result is scanned for
        secrets (:class:`CassetteError` on a finding, the file untouched) and written atomically.

        ``path`` saves a copy elsewhere instead: everything this cassette holds, no merge.
        """
        # values learned late (a key first seen in a later request) are scrubbed from every
        # interaction before anything is merged or written
        self.scrubber.finish(self.file)
        if path is not None and (self.path is None or Path(path).resolve() != self.path.resolve()):
            return save_cassette(self.file, path)
        if self.path is None:
            raise UsageError("this cassette has no path; pass save(path)")
        target = self.path
        with cassette_lock(target):
            disk = _read(target) if target.exists() else None
            merged = self._merged(disk)
            text = _checked_text(merged, target)
            write_atomic(target, text)
        self._snapshot, self._base = text.encode("utf-8"), list(merged.interactions)
        self._saves += 1
        self._saved = len(self.recorded)
        return target

    def _merged(self, disk: bytes | None) -> CassetteFile:
        new = [self.file.interactions[n] for n in self.recorded[self._saved :]]
        mode = self.record_mode if self._saves == 0 else "new_episodes"  # later saves append
        current: list[Interaction] = []
        meta: dict[str, Any] = {}
        if disk is None or (mode == "rewrite" and disk == self._snapshot):
            pass  # nothing to keep (rewrite: nobody else wrote since this cassette opened)
        elif disk == self._snapshot and self._base is not None:
            current, meta = self._base, self.file.meta
        else:
            parsed = parse_cassette(disk, source=str(self.path))
            current, meta = parsed.interactions, parsed.meta
        if mode == "all" and current:
            replaced = {recorded_key(i.request, self.volatile) for i in new if i.request is not None}
            current = [i for i in current if i.request is None or recorded_key(i.request, self.volatile) not in replaced]
        elif mode == "rewrite" and current:
            current = self._added_by_others(current)
        return CassetteFile(meta={**meta, **self.file.meta}, interactions=[*current, *new])

    def _added_by_others(self, current: list[Interaction]) -> list[Interaction]:
        """What another writer added to the file since this cassette opened it."""
        if self._snapshot is None:
            return current
        if self._base is None:
            try:
                self._base = parse_cassette(self._snapshot, source=str(self.path)).interactions
            except CassetteError:  # the file being rewritten did not even parse
                self._base = []
        opened = {i.model_dump_json() for i in self._base}
        return [i for i in current if i.model_dump_json() not in opened]

    def mark_played(self, n: int) -> None:
        """Count interaction ``n`` as played (a :class:`ReplayProvider` answered from its
        transcript); from then on, transcripts never replayed count as unplayed too."""
        with self._lock:
            self._played.add(n)
            self._transcripts_replayed = True

    def unplayed(self) -> list[int]:
        """Indexes of HTTP interactions that no request has asked for (and of transcripts never
        replayed, once a :class:`ReplayProvider` replayed any)."""
        by_transcript = self._transcripts_replayed
        return [
            n
            for n, i in enumerate(self.file.interactions)
            if n not in self._played and (i.request is not None or (by_transcript and i.transcript is not None))
        ]

    def assert_all_played(self) -> None:
        """Raise :class:`UnplayedInteractions` when recorded interactions were never requested."""
        left = self.unplayed()
        if left:
            shown = ", ".join(_describe(n, self.file.interactions[n]) for n in left[:5])
            more = f" and {len(left) - 5} more" if len(left) > 5 else ""
            raise UnplayedInteractions(
                f"{self.name}: {len(left)} recorded interaction(s) were never requested: {shown}{more} "
                "(the code under test now makes fewer calls; re-record with record_mode='rewrite', or allow it with fail_unplayed=False)"
            )


def _describe(n: int, interaction: Interaction) -> str:
    req = interaction.request
    return f"[{n}] {req.method} {urlsplit(req.url).path}" if req is not None else f"[{n}] model call (transcript)"


def save_cassette(cassette: CassetteFile, path: str | os.PathLike[str]) -> Path:
    """Scan ``cassette`` for secrets and write it atomically to ``path`` (under the file's lock,
    so it never interleaves with a :meth:`Cassette.save` of the same file)."""
    text = _checked_text(cassette, path)
    with cassette_lock(path):
        write_atomic(path, text)
    return Path(path)


def _checked_text(cassette: CassetteFile, path: str | os.PathLike[str]) -> str:
    text = dump_cassette(cassette)
    findings = find_secrets(cassette, text=text)
    if findings:
        shown = "\n  ".join(str(f) for f in findings[:10])
        more = f"\n  … and {len(findings) - 10} more" if len(findings) > 10 else ""
        raise CassetteError(f"{path}: refusing to save a cassette that still holds secrets:\n  {shown}{more}")
    return text


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CassetteError(f"{path}: cannot read cassette ({exc.strerror or exc})") from None


@contextmanager
def cassette_lock(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the inter-process lock of the cassette file ``path`` (a ``filelock`` lock file in the
    system's temporary folder, named by a hash of the resolved path, so no lock file lands next
    to the cassettes; one folder per user)."""
    from filelock import FileLock, Timeout

    resolved = str(Path(path).resolve())
    user = f"-{os.getuid()}" if hasattr(os, "getuid") else ""  # a folder another user made is not ours to write
    folder = Path(tempfile.gettempdir()) / f"loopkit-cassette-locks{user}"
    folder.mkdir(exist_ok=True)
    lock = FileLock(str(folder / (hashlib.sha256(resolved.encode("utf-8")).hexdigest()[:32] + ".lock")), timeout=LOCK_TIMEOUT)
    try:
        lock.acquire()
    except Timeout:
        raise CassetteError(f"{path}: another process held the cassette's lock for {LOCK_TIMEOUT:.0f} s; nothing was saved") from None
    try:
        yield
    finally:
        lock.release()
