"""Tool arguments for probe cases, drawn from the tool's own schema with a fixed seed.

The values come from :mod:`loopkit.strategies` (hypothesis is imported only when a probe needs
an argument, never by ``import loopkit``), so one seed always gives the same calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import UsageError


def normalize_schema(schema: Any) -> Any:
    """A declared schema as JSON Schema: Gemini's ``OBJECT``/``STRING`` types lower-cased."""
    if isinstance(schema, Mapping):
        out = {k: normalize_schema(v) for k, v in schema.items()}
        t = out.get("type")
        if isinstance(t, str):
            out["type"] = t.lower()
        elif isinstance(t, list):
            out["type"] = [x.lower() if isinstance(x, str) else x for x in t]
        return out
    if isinstance(schema, list):
        return [normalize_schema(v) for v in schema]
    return schema


class ArgumentDrawer:
    """Valid and invalid arguments for a schema; the same seed draws the same values."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._cache: dict[tuple[str, str, int], Any] = {}

    def valid(self, schema: Any, n: int = 1) -> list[dict[str, Any]]:
        """``n`` argument objects that satisfy ``schema``."""
        from ..strategies import arguments

        return self._draw("valid", schema, n, lambda: arguments(schema))

    def invalid(self, schema: Any) -> tuple[dict[str, Any], str] | None:
        """An object that breaks exactly one rule of ``schema``, with that rule in words; None when
        the schema has no rule to break while staying an object."""
        from ..strategies._arguments import object_violations

        try:
            strategy = object_violations(schema)
        except UsageError:
            return None
        (v,) = self._draw("invalid", schema, 1, lambda: strategy)
        return v.value, f"{v.rule} at {'/'.join(map(str, v.path)) or '<root>'}: {v.detail}"

    def _draw(self, kind: str, schema: Any, n: int, make: Any) -> list[Any]:
        import json

        key = (kind, json.dumps(schema, sort_keys=True, default=str), n)
        if key not in self._cache:
            self._cache[key] = _examples(make(), n, self.seed)
        return self._cache[key]


def _examples(strategy: Any, n: int, seed: int) -> list[Any]:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    found: list[Any] = []
    # a few more examples than needed: hypothesis starts with the simplest (0, "", {}),
    # and a probe is more telling with values a model would send
    want = n + 2

    @settings(database=None, deadline=None, max_examples=want, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @hypothesis_seed(seed)
    @given(strategy)
    def draw(value: Any) -> None:
        found.append(value)

    draw()
    if not found:
        raise UsageError("probe: could not draw arguments from the tool's schema")
    picked = found[-n:] if len(found) >= n else (found * n)[:n]
    return picked
