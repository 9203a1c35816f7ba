"""The worked example: the official ``anthropic`` SDK behind two glue functions conforms.

The example lives in the package (``loopkit.conformance.examples.anthropic_sdk``) so users can
read and run it; this test runs it through the whole suite, and checks the SDK's own retry waits.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

from test_builtin import BEDROCK_ONLY, CHAT_ONLY, GEMINI_ONLY, OPENAI_ONLY, RESPONSES_ONLY, VARIANT_ONLY

from loopkit.conformance import run_suite
from loopkit.conformance.examples.anthropic_sdk import anthropic_sdk_factory


def test_the_official_anthropic_sdk_behind_two_glue_functions_conforms(monkeypatch) -> None:
    import anthropic._base_client as sdk

    waits: list[float] = []
    monkeypatch.setattr(sdk, "time", SimpleNamespace(time=time.time, time_ns=time.time_ns, sleep=waits.append))
    report = run_suite(anthropic_sdk_factory, "anthropic")
    problems = [f"{r.case_id} [{r.status}]: {r.detail}" for r in report.results if r.status in ("fail", "error")]
    assert not problems, "\n".join(problems)
    # only the cases of other protocols' wires do not apply
    assert {r.case_id for r in report.results if r.status == "not-applicable"} == set(RESPONSES_ONLY) | GEMINI_ONLY | BEDROCK_ONLY | CHAT_ONLY | OPENAI_ONLY | VARIANT_ONLY
    assert 1.5 in waits  # the SDK honoured the 429's retry-after
