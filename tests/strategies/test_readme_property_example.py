"""The README's property-test example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import loopkit

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_property_example_passes() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    example = next(b for b in blocks if "loopkit.strategies" in b)

    @loopkit.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    namespace: dict = {"add": add}
    exec(compile(example, str(README), "exec"), namespace)
    namespace["test_every_call_gets_one_result"]()
