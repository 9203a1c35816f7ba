"""Correct tools shaped like the planted ones: ``loopkit fuzz`` must find nothing in them."""

from __future__ import annotations

import datetime
import re
from typing import Any

from loopkit.tools import tool

_SAFE_EXPRESSION = re.compile(r"\s*(-?\d+)\s*([+*-])\s*(-?\d+)\s*")


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first addend.
        b: the second addend.
    """
    return int(a) + int(b)


@tool
def page(items: list[str], number: int = 1) -> list[str]:
    """One page of ten items.

    Args:
        items: everything.
        number: the page, from 1.
    """
    start = (int(number) - 1) * 10
    return items[max(start, 0) : max(start, 0) + 10]


@tool
def label_counts(counts: dict[str, int]) -> str:
    """Describe label counts.

    Args:
        counts: label -> count.
    """
    return ", ".join(f"{k}={int(v)}" for k, v in counts.items())


@tool(parameters={"type": "object", "properties": {"day": {"type": "string", "format": "date"}}, "required": ["day"], "additionalProperties": False})
def anniversary(day: str) -> str:
    """The same day next year (28 February for a leap day)."""
    try:
        d = datetime.date.fromisoformat(day)
    except ValueError:
        raise ValueError(f"day must be a date like 2024-05-17, got {day!r}") from None
    if d.year == datetime.MAXYEAR:
        return "never"
    if (d.month, d.day) == (2, 29):
        return d.replace(year=d.year + 1, day=28).isoformat()
    return d.replace(year=d.year + 1).isoformat()


@tool(parameters={"type": "object", "properties": {"expression": {"type": "string", "maxLength": 40}}, "required": ["expression"], "additionalProperties": False})
def calculate(expression: str) -> int:
    """Evaluate ``a + b``, ``a - b`` or ``a * b`` on integers; anything else is refused."""
    m = _SAFE_EXPRESSION.fullmatch(expression)
    if m is None:
        raise ValueError(f"unsupported expression {expression!r}: write a + b, a - b or a * b with integers")
    a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
    return a + b if op == "+" else a - b if op == "-" else a * b


def _describe(node: Any, depth: int = 0) -> list[str]:
    out = ["  " * depth + str(node.get("name", "?"))]
    for kid in node.get("kids", []):
        out += _describe(kid, depth + 1)
    return out


@tool(
    parameters={
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/node"}},
        "required": ["root"],
        "additionalProperties": False,
        "$defs": {"node": {"type": "object", "properties": {"name": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
    }
)
def outline(root: dict[str, Any]) -> str:
    """Render a tree as an indented outline."""
    return "\n".join(_describe(root))


EXPECTED = {"calculate": (ValueError, "unsupported expression")}
"""The deliberate errors of these tools, as ``fuzz_tools(..., expect_errors=EXPECTED)`` takes them."""

__all__ = ["add", "anniversary", "calculate", "label_counts", "outline", "page"]
