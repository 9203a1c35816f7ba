"""The values real tools get wrong, as tables: number edges, tricky unicode, format edge values
and near-misses. The generator (:mod:`._schema`) mixes them into its strategies and
:func:`~loopkit.strategies.edge_cases` enumerates them in order, so a boundary bug shows up in the
first examples instead of after thousands.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from . import _keywords as kw

# --- numbers ------------------------------------------------------------------------------------

BIG_INTEGERS: tuple[int, ...] = (2**31 - 1, -(2**31), 2**32, 2**53, 2**53 + 1, 2**63 - 1, -(2**63), 2**64, 10**20)
"""Integers at the limits of common machine types and of float precision (2**53 + 1)."""

FLOAT_EDGES: tuple[float, ...] = (
    -0.0, 0.5, -0.5, 0.1, 1e-7, 5e-324, -5e-324, 2.2250738585072014e-308, 1e16, 1.7976931348623157e308,
    -1.7976931348623157e308, 0.30000000000000004, 1.5, 2.5,
)  # fmt: skip
"""Floats that break rounding, formatting and division: signed zero, subnormals, the largest finite."""


def integer_edges(schema: Mapping[str, Any]) -> list[Any]:
    """Integers (and integer-valued floats, which JSON Schema counts as integers) at and next to
    the schema's bounds, then the usual suspects; only values the schema's scalar keywords allow."""
    lo, lo_ex, hi, hi_ex = kw.numeric_bounds(schema)
    imin = None if lo is None else (math.floor(lo) + 1 if lo_ex else math.ceil(lo))
    imax = None if hi is None else (math.ceil(hi) - 1 if hi_ex else math.floor(hi))
    step = schema.get("multipleOf")
    at: list[Any] = []
    inside: list[Any] = []
    for bound, sign in ((imin, 1), (imax, -1)):
        if bound is None:
            continue
        if step is not None and float(step).is_integer() and step:
            d = int(step)
            first = -((-bound) // d) * d if sign == 1 else (bound // d) * d
            at.append(first)
            inside.append(first + sign * d)
        else:
            at.append(bound)
            inside.append(bound + sign)
    out: list[Any] = [*at, *inside]
    out += [0, 1, -1, 2, 10, 100, 255, 256, 1000, *BIG_INTEGERS]
    if imin is not None:
        out.append(imin + 7)
    floats = [float(v) for v in out[:4] if isinstance(v, int) and abs(v) < 2**53] + [-0.0, 1.0, 6.0]
    return _allowed(schema, [*out[:4], *floats[:3], *out[4:], *floats[3:]])


def number_edges(schema: Mapping[str, Any]) -> list[Any]:
    """:func:`integer_edges` plus floats at, just inside and around the bounds and the
    :data:`FLOAT_EDGES`."""
    lo, lo_ex, hi, hi_ex = kw.numeric_bounds(schema)
    out: list[Any] = []
    step = schema.get("multipleOf")
    for bound, excl, toward in ((lo, lo_ex, math.inf), (hi, hi_ex, -math.inf)):
        if bound is None:
            continue
        b = float(bound)
        out += [b, math.nextafter(b, toward)] if not excl else [math.nextafter(b, toward)]
        if step is not None:
            k = math.ceil(b / step) if toward > 0 else math.floor(b / step)
            out += [k * step, (k + (1 if toward > 0 else -1)) * step]
        else:
            out += [b + (0.5 if toward > 0 else -0.5)]
    return _allowed(schema, [*out, *integer_edges(schema), *FLOAT_EDGES])


def _allowed(schema: Mapping[str, Any], values: list[Any]) -> list[Any]:
    numeric = {k: v for k, v in schema.items() if k in kw.NUMBER_KEYWORDS or k == "type"}
    return _dedupe([v for v in values if not kw.scalar_failures(numeric, v)])


def _dedupe(values: list[Any]) -> list[Any]:
    seen: set[str] = set()
    out = []
    for v in values:
        key = repr(v) + type(v).__name__
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


# --- text ---------------------------------------------------------------------------------------

TRICKY_TEXT: tuple[str, ...] = (
    "café",  # precomposed é
    "cafe\u0301",  # e + combining acute: two code points, one letter
    "\u05e9\u05dc\u05d5\u05dd",  # Hebrew (right to left)
    "\u0645\u0631\u062d\u0628\u0627",  # Arabic
    "abc\u202edef",  # right-to-left override
    "👍",  # outside the BMP: two UTF-16 units
    "👨\u200d👩\u200d👧",  # a ZWJ sequence: one glyph, five code points
    "🇩🇪",  # a flag: two regional indicators
    "a\x00b",  # NUL inside
    "\x00",
    "日本語",
    "İ",  # upper-cases and lower-cases to a different length
    "ß",
    "\ufeffbom",  # byte order mark
    "zero\u200bwidth",
    " ",
    "\t\n",
    "Ω≈ç√∫",
    "'; DROP TABLE t; --",
    "{}",
    "%s%n",
    "null",
    "\\",
    '"',
)  # fmt: skip
"""Strings that break encoders, normalisation, length checks, logging and string formatting."""

TRICKY_KEYS: tuple[str, ...] = ("café", "e\u0301", "日本", "🔑", "\u05de\u05e4\u05ea\u05d7", "a b", "", "\x00", "__proto__", "constructor", "İd", "$ref")
"""Property names a model may invent for a free-form object."""

LONE_SURROGATES: tuple[str, ...] = ("\ud83d", "\udc4d", "x\ud800y")
"""Strings JSON can carry (as ``\\ud83d`` escapes) that no UTF-8 encoder accepts."""


def text_edges(schema: Mapping[str, Any]) -> list[str]:
    """Plain-text edges (no pattern, no format) within the schema's length bounds."""
    lo, hi = schema.get("minLength", 0), schema.get("maxLength")
    fits = [s for s in TRICKY_TEXT if lo <= len(s) and (hi is None or len(s) <= hi)]
    sized = ["", "a" * lo, "é" * lo, "a" * (hi if hi is not None else 0), "🙂" * (hi if hi is not None else 0), "x" * (hi or 10_000)]
    return _dedupe([s for s in sized if lo <= len(s) and (hi is None or len(s) <= hi)] + fits)


# --- formats ------------------------------------------------------------------------------------

FORMAT_EDGES: dict[str, tuple[str, ...]] = {
    "date": ("2000-02-29", "2024-02-29", "2023-12-31", "2023-01-31", "2023-04-30", "1970-01-01", "0001-01-01", "9999-12-31", "1900-03-01"),
    "time": ("23:59:59Z", "00:00:00Z", "23:59:60Z", "12:00:00.999999+14:00", "00:00:00-12:00", "12:30:00+05:30", "08:15:00.5Z"),
    "date-time": (
        "2000-02-29T00:00:00Z", "2023-12-31T23:59:59Z", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z",
        "0001-01-01T00:00:00Z", "2016-12-31T23:59:60Z", "2023-03-26T02:30:00+14:00", "2023-11-05T01:30:00-12:00",
        "2024-02-29t12:00:00z", "2023-06-15T12:00:00.123456+05:45",
    ),
    "email": (
        "a@b.co", "first.last+tag@sub.example.co.uk", '"john doe"@example.com', "user@[127.0.0.1]",
        "x@localhost", "o'brien@example.ie", "UPPER@EXAMPLE.COM", "a" * 64 + "@example.com",
    ),
    "uuid": (
        "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
        "123E4567-E89B-12D3-A456-426614174000", "01890a5d-ac96-774b-bcce-b302099a8057",
    ),
    "uri": (
        "https://example.com", "http://[::1]:8080/path?q=1#frag", "mailto:a@b.co", "urn:isbn:0451450523",
        "file:///tmp/x", "https://example.com/a%20b/%E2%82%AC", "https://user:pw@example.com:65535/",
        "https://example.com/" + "a" * 2000, "ftp://ftp.example.org/",
    ),
    "ipv4": ("0.0.0.0", "255.255.255.255", "127.0.0.1", "10.0.0.255", "192.168.1.1"),
    "ipv6": ("::", "::1", "::ffff:192.0.2.1", "fe80::1", "2001:0db8:0000:0000:0000:ff00:0042:8329", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
    "hostname": ("localhost", "a", "a" * 63 + ".example", "xn--bcher-kva.example", "EXAMPLE.COM", ".".join(["a" * 49] * 5)),
}  # fmt: skip
"""Valid values at the edges of each ``format``: leap days, month ends, the first and last
representable dates, leap seconds, extreme offsets, the nil UUID, IPv4-mapped IPv6, the longest
labels."""

FORMAT_NEAR_MISSES: dict[str, tuple[str, ...]] = {
    "date": ("2023-02-29", "2023-02-30", "2023-04-31", "2023-13-01", "2023-00-10", "2023-1-5", "20230105", "2023/01/05", "0000-01-01"),
    "time": ("24:00:00Z", "23:60:00Z", "12:00", "12:00:00", "25:00:00+00:00", "12:00:00+24:00"),
    "date-time": ("2023-01-01T00:00:00", "2023-01-01 00:00:00Z", "2023-02-29T00:00:00Z", "2023-01-01T24:00:00Z", "2023-01-01"),
    "email": ("a@", "@b.com", "a@@b.com", "a b@c.com", "a@b", "plainaddress"),
    "uuid": ("00000000-0000-0000-0000-00000000000", "g0000000-0000-0000-0000-000000000000", "00000000000000000000000000000000", "{00000000-0000-0000-0000-000000000000}"),
    "uri": ("example.com", "http//example.com", "https://", "/relative/path", "https://exa mple.com"),
    "ipv4": ("256.0.0.1", "1.2.3", "01.2.3.4", "1.2.3.4.5", "-1.0.0.0"),
    "ipv6": (":::", "2001:db8::1::1", "12345::", "::ffff:256.0.0.1"),
    "hostname": ("-bad.example", "bad-.example", "a..b", "a" * 64 + ".example", "under_score.example"),
}  # fmt: skip
"""Strings a model sends for a ``format`` that are almost right: what a tool must reject with a
clear error rather than crash on (loopkit, like most validators, does not enforce ``format``)."""


def format_edges(fmt: str, schema: Mapping[str, Any]) -> list[str]:
    """The edge values of ``fmt`` that fit the schema's length bounds."""
    lo, hi = schema.get("minLength", 0), schema.get("maxLength")
    return [s for s in FORMAT_EDGES.get(fmt, ()) if lo <= len(s) and (hi is None or len(s) <= hi)]


__all__ = [
    "BIG_INTEGERS",
    "FLOAT_EDGES",
    "FORMAT_EDGES",
    "FORMAT_NEAR_MISSES",
    "LONE_SURROGATES",
    "TRICKY_KEYS",
    "TRICKY_TEXT",
    "format_edges",
    "integer_edges",
    "number_edges",
    "text_edges",
]
