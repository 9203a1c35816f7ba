"""``module:attribute`` references, as the CLI, scenario files and fuzz targets name user code."""

from __future__ import annotations

import importlib
from typing import Any

from .errors import UsageError


def import_target(target: str, *, what: str, form: str = "module:attribute") -> Any:
    """The object ``target`` (``"package.module:name.attr"``) names.

    Raises :class:`UsageError` saying which part failed; ``what`` names the reference in the
    message (``"fuzz target"``, ``"conformance target"``, ...) and ``form`` the expected shape.
    """
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise UsageError(f"{what} {target!r} must look like '{form}'")
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as exc:
        raise UsageError(f"{what} {target!r}: cannot import {module!r} ({exc}); is it on PYTHONPATH?") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"{what} {target!r}: {module!r} has no attribute {attr!r}") from None
    return obj
