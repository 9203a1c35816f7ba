"""mkdocs hook: the navigation is built from the files under docs/ (no ``nav:`` to keep in step
with every branch's new pages); this names the api/ folder's section and puts it last."""

from __future__ import annotations

from typing import Any


def on_nav(nav: Any, config: Any, files: Any) -> Any:
    sections = [item for item in nav.items if item.is_section and item.title == "Api"]
    for section in sections:
        section.title = "API reference"
        nav.items.remove(section)
        nav.items.append(section)
    return nav
