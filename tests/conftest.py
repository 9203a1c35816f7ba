"""Shared test configuration: hypothesis profiles (``--hypothesis-profile=deep`` for long runs).

``default`` is derandomized with no example database, so CI runs are deterministic.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=100, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("deep", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")
