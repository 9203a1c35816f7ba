"""loopkit: a testing and simulation harness for LLM tool-call loops."""

from __future__ import annotations

__version__ = "0.1.0"
