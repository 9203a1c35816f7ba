"""The README's example test runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_loop_example_passes() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    example = next(b for b in blocks if "def test_" in b)
    namespace: dict = {}
    exec(compile(example, str(README), "exec"), namespace)
    tests = [v for k, v in namespace.items() if k.startswith("test_")]
    assert tests
    for test in tests:
        test()


def test_readme_quick_start_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert 'pip install -e ".[dev]" && loopkit demo' in text
    assert "python -m pytest -q" in text
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert 'pip install --quiet -e ".[dev]"' in ci and "python -m pytest -q" in ci
