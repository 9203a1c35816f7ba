"""docs/wire.md and docs/cassette-format.md: their Python blocks run as written, and print what the
page says they print.

Blocks of one page run in order in one namespace, from the repository root. When a ```python
block is directly followed by a ```text block, that text block is the block's expected output.
The conformance suite cites sections of docs/wire.md as ``wire.md §N``: each cited section exists.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("docs/wire.md", "docs/cassette-format.md")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.S | re.M)


def _blocks(page: str) -> list[tuple[str, str, str | None]]:
    """(language, code, expected output or None) for each ```python block of ``page``."""
    fences = [(m.group(1), m.group(2)) for m in _FENCE.finditer((ROOT / page).read_text(encoding="utf-8"))]
    out = []
    for i, (lang, code) in enumerate(fences):
        if lang == "python":
            nxt = fences[i + 1] if i + 1 < len(fences) else None
            out.append((lang, code, nxt[1] if nxt is not None and nxt[0] == "text" else None))
    return out


@pytest.mark.parametrize("page", PAGES)
def test_python_blocks_run_and_print_what_the_page_says(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    blocks = _blocks(page)
    assert blocks, f"{page} has no python blocks"
    namespace: dict = {"__name__": f"docs_{Path(page).stem}"}
    for n, (_, code, expected) in enumerate(blocks, start=1):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, f"{page} python block {n}", "exec"), namespace)
        if expected is not None:
            assert buf.getvalue().rstrip() == expected.rstrip(), f"{page} python block {n} printed:\n{buf.getvalue()}"


def test_every_section_the_conformance_suite_cites_exists() -> None:
    text = (ROOT / "docs/wire.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)[. ]", text, re.M))
    cited: set[str] = set()
    for path in (ROOT / "loopkit/conformance").rglob("*"):
        if path.is_file() and path.suffix in (".py", ".md"):
            for group in re.findall(r"wire\.md (§[0-9.§, -]+)", path.read_text(encoding="utf-8")):
                cited.update(s.rstrip(".") for s in re.findall(r"§(\d+(?:\.\d+)?)", group))
    assert cited, "no wire.md citations found in loopkit/conformance"
    missing = sorted(cited - headings, key=lambda s: [int(p) for p in s.split(".")])
    assert not missing, f"docs/wire.md lacks the cited sections {missing}"
