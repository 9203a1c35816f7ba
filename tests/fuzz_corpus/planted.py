"""Tools with one realistic planted bug each: what ``loopkit fuzz`` must find at its default budget.

``BUGS`` maps each tool's name to the finding kind (and a word of the message) that shows its bug.
Each bug sits where models' real output goes and hand-written tests rarely do: integer-valued
floats, bound edges, unicode keys and text, ``format`` edge values, deep nesting, lone surrogates,
numbers sent as strings.
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from loopkit.tools import Tool, tool


@tool
def page(items: list[str], number: int = 1) -> list[str]:
    """One page of ten items.

    Args:
        items: everything.
        number: the page, from 1.
    """
    start = (number - 1) * 10
    return items[start : start + 10]  # TypeError: slice indices must be integers (number=2.0)


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first addend.
        b: the second addend.
    """
    return a + b  # 2.0 + 1 returns 3.0, not an int


@tool
def label_counts(counts: dict[str, int]) -> str:
    """Describe label counts.

    Args:
        counts: label -> count.
    """
    return ", ".join(f"{k.encode('ascii').decode()}={v}" for k, v in counts.items())  # UnicodeEncodeError on "café"


@tool(parameters={"type": "object", "properties": {"day": {"type": "string", "format": "date"}}, "required": ["day"]})
def anniversary(day: str) -> str:
    """The same day next year."""
    d = datetime.datetime.strptime(day, "%Y-%m-%d").date()
    try:
        return d.replace(year=d.year + 1).isoformat()  # ValueError on 2000-02-29
    except OverflowError:
        return "never"


@tool(parameters={"type": "object", "properties": {"at": {"type": "string", "format": "time"}}, "required": ["at"]})
def alarm(at: str) -> str:
    """Set an alarm."""
    t = datetime.datetime.strptime(at.rstrip("Z"), "%H:%M:%S")  # offsets, fractions and leap seconds fail
    return t.strftime("alarm at %H:%M")


@tool(parameters={"type": "object", "properties": {"rate": {"type": "number", "minimum": 0, "maximum": 1}}, "required": ["rate"]})
def markup(rate: float) -> float:
    """Price factor for a margin rate."""
    return 1 / (1 - rate)  # ZeroDivisionError at the maximum, 1


@tool(parameters={"type": "object", "properties": {"bins": {"type": "integer", "minimum": 1, "maximum": 64}}, "required": ["bins"]})
def histogram(bins: int) -> list[int]:
    """Bin edges over 0..100."""
    step = 100 // (bins - 1)  # ZeroDivisionError at the minimum, 1
    return list(range(0, 101, step))


@tool
def badge(name: str) -> str:
    """A name badge for the legacy printer.

    Args:
        name: who.
    """
    return name.encode("latin-1").decode("latin-1").upper()  # UnicodeEncodeError on emoji, Hebrew...


@tool
def save_note(text: str) -> int:
    """Store a note; returns its size in bytes.

    Args:
        text: the note.
    """
    return len(text.encode("utf-8"))  # UnicodeEncodeError on a lone surrogate ("\\ud83d" in the JSON)


_VERSIONS = {1: "time-based", 3: "md5", 4: "random", 5: "sha1", 7: "unix time"}


@tool(parameters={"type": "object", "properties": {"id": {"type": "string", "format": "uuid"}}, "required": ["id"]})
def uuid_kind(id: str) -> str:
    """What kind of UUID this is."""
    return _VERSIONS[uuid.UUID(id).version]  # KeyError: None for the nil UUID


@tool(parameters={"type": "object", "properties": {"ip": {"type": "string", "format": "ipv6"}}, "required": ["ip"]})
def subnet(ip: str) -> str:
    """The /64 prefix of an IPv6 address."""
    groups = ip.split(":")
    return ":".join(groups[:4]) + "::/64" if groups[7] is not None else ""  # IndexError on "::1"


@tool(parameters={"type": "object", "properties": {"days": {"type": "integer", "minimum": 0}}, "required": ["days"]})
def due_date(days: int) -> str:
    """The date ``days`` from 2024-01-01."""
    return (datetime.date(2024, 1, 1) + datetime.timedelta(days=days)).isoformat()  # OverflowError on 2**31-1


@tool(parameters={"type": "object", "properties": {"when": {"type": "string", "format": "date-time"}}, "required": ["when"]})
def reminder(when: str) -> str:
    """Schedule a reminder."""
    at = datetime.datetime.fromisoformat(when.replace("Z", "+00:00"))  # noqa: FURB162 - the planted bug: leap second, lower-case z
    return at.isoformat()


@tool(parameters={"type": "object", "properties": {"to": {"type": "string", "format": "email"}}, "required": ["to"]})
def mail_domain(to: str) -> str:
    """The registrable domain of an address."""
    domain = to.rsplit("@", 1)[1]
    return domain.split(".")[-2]  # IndexError on x@localhost


_INDENT = ["", "  ", "    ", "      ", "        ", "          ", "            ", "              "]


def _render(node: Any, depth: int = 0) -> list[str]:
    lines = [f"{_INDENT[depth]}{node.get('name', '?')}"]  # IndexError past 8 levels
    for kid in node.get("kids", []):
        lines += _render(kid, depth + 1)
    return lines


TREE = {
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/node"}},
    "required": ["root"],
    "$defs": {"node": {"type": "object", "properties": {"name": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
}


@tool(parameters=TREE)
def outline(root: dict[str, Any]) -> str:
    """Render a tree as an indented outline."""
    return "\n".join(_render(root))


class _HandValidated(Tool):
    """Its own validator checks presence only, skipping loopkit's coercion of "5" to 5."""

    def prepare(self, raw_args: Any) -> tuple[dict[str, Any] | None, str | None]:
        if isinstance(raw_args, dict) and "quantity" in raw_args:
            return dict(raw_args), None
        return super().prepare(raw_args)


def _order(quantity: int) -> str:
    return f"ordered {quantity}"


order = _HandValidated(
    name="order",
    execute=_order,
    parameters={"type": "object", "properties": {"quantity": {"type": "integer", "minimum": 1}}, "required": ["quantity"]},
)


@tool(parameters={"type": "object", "properties": {"price": {"type": "number", "exclusiveMinimum": 0}}, "required": ["price"]})
def units_per_hundred(price: float) -> int:
    """How many units 100 buys."""
    return round(100 / price)  # OverflowError: 100 / 5e-324 is infinite


@tool(parameters={"type": "object", "properties": {"text": {"type": "string", "maxLength": 200}}, "required": ["text"]})
def preview(text: str) -> str:
    """The first 8 bytes of a text, for a fixed-width display."""
    return text.encode("utf-8")[:8].decode("utf-8")  # UnicodeDecodeError when the cut splits a character


BUGS: dict[str, tuple[str, str]] = {
    "page": ("valid_rejected", "TypeError"),
    "add": ("bad_return", "float"),
    "label_counts": ("valid_rejected", "UnicodeEncodeError"),
    "anniversary": ("valid_rejected", "ValueError"),
    "alarm": ("valid_rejected", "ValueError"),
    "markup": ("valid_rejected", "ZeroDivisionError"),
    "histogram": ("valid_rejected", "ZeroDivisionError"),
    "badge": ("valid_rejected", "UnicodeEncodeError"),
    "save_note": ("valid_rejected", "UnicodeEncodeError"),
    "uuid_kind": ("valid_rejected", "KeyError"),
    "subnet": ("valid_rejected", "IndexError"),
    "due_date": ("valid_rejected", "OverflowError"),
    "reminder": ("valid_rejected", "ValueError"),
    "mail_domain": ("valid_rejected", "IndexError"),
    "outline": ("valid_rejected", "IndexError"),
    "order": ("invalid_accepted", "schema does not allow"),
    "units_per_hundred": ("valid_rejected", "OverflowError"),
    "preview": ("valid_rejected", "UnicodeDecodeError"),
}
"""tool name -> (finding kind, a word of the finding's message)."""

__all__ = [
    "add", "alarm", "anniversary", "badge", "due_date", "histogram", "label_counts", "mail_domain", "markup",
    "order", "outline", "page", "preview", "reminder", "save_note", "subnet", "units_per_hundred", "uuid_kind",
]  # fmt: skip
