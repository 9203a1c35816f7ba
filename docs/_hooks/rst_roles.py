"""mkdocs hook: loopkit's docstrings use reST roles (``:class:`~loopkit.errors.UsageError```),
which Markdown renders as ``:class:`` followed by code. Show them as the code alone, shortened as
the ``~`` asks, and drop reST's ``::`` literal-block marker and escaped spaces."""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:class|func|meth|data|mod|attr|exc|obj|const|py:\w+):<code>(~?)([^<]*)</code>")
LITERAL_MARKER = re.compile(r"(?<=\S)::</p>")


def _role(match: re.Match[str]) -> str:
    short, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if short else target}</code>"


def on_page_content(html: str, **kwargs: object) -> str:
    html = ROLE.sub(_role, html)
    html = html.replace("</code>\\ ", "</code>")
    return LITERAL_MARKER.sub(":</p>", html)
