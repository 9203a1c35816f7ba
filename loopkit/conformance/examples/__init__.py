"""Worked examples of adapters that are not loopkit's own, run through the conformance suite."""
