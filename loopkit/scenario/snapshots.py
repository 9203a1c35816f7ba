"""``expect.snapshot: true`` outside pytest: compare a run's transcript with the syrupy snapshot
that the pytest plugin stores (``__snapshots__/<file stem>.ambr`` next to the scenario file, one
entry named ``<scenario name>[<provider>]``), so ``loopkit run`` and ``pytest`` agree.

syrupy is needed only here and is imported when a snapshot is compared.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from .checks import Failure


def snapshot_file(source: Path) -> Path:
    """Where the pytest plugin stores the snapshots of the scenario file ``source``."""
    return source.parent / "__snapshots__" / f"{source.stem}.ambr"


def compare(source: Path | None, name: str, provider: str, data: Any) -> Failure | None:
    """A :class:`Failure` when ``data`` (the transcript) differs from the stored snapshot
    ``name[provider]`` of the file ``source``, or when there is none to compare with."""
    if source is None:
        return Failure("snapshot", "a scenario file whose __snapshots__ folder holds the snapshot", "a scenario built in code (use pytest's snapshot fixture)")
    try:
        from syrupy.extensions.amber import AmberDataSerializer
    except ImportError:
        return Failure("snapshot", "syrupy, to read the stored snapshot", "syrupy is not installed (pip install syrupy)")
    path = snapshot_file(source)
    key = f"{name}[{provider}]"
    if not path.is_file():
        return Failure("snapshot", f"a stored snapshot in {path}", "no such file (create it with: pytest --snapshot-update)")
    stored = AmberDataSerializer.read_file(str(path))
    entry = stored.get(key)
    if stored.tainted or (entry is not None and entry.tainted):
        return Failure("snapshot", f"a snapshot file written by this syrupy version: {path}", "an outdated or tainted file (pytest --snapshot-update rewrites it)")
    if entry is None:
        return Failure("snapshot", f"this provider's snapshot in {path}", "none stored (create it with: pytest --snapshot-update)")
    actual = AmberDataSerializer.serialize(data)
    if actual == entry.data:
        return None
    diff = difflib.unified_diff(str(entry.data).splitlines(), actual.splitlines(), "stored", "this run", n=1, lineterm="")
    shown = [line for line in diff if not line.startswith(("---", "+++"))]
    return Failure("snapshot", f"the transcript stored in {path}", "a different transcript:\n" + "\n".join(shown[:40]))
