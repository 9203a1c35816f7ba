"""Each kind.* conformance case fails on an adapter that gets its kind wrong, and the shipped
adapters pass them all."""

from __future__ import annotations

import pytest
from broken_kind_adapters import CHECKED, KIND_EXPECTED, broken_kind

from loopkit.conformance import CASES
from loopkit.conformance._kind_cases import KIND_CASES
from loopkit.conformance._suite import Suite, select_cases

PROTOCOLS = ("openai_chat", "openai_responses", "anthropic", "gemini", "bedrock")


@pytest.mark.parametrize(("bug", "protocol"), list(KIND_EXPECTED), ids=[f"{b}-{p}" for b, p in KIND_EXPECTED])
def test_kind_bug_fails_exactly_the_right_cases(bug: str, protocol: str) -> None:
    report = Suite(broken_kind(bug, protocol), protocol, cases=select_cases(CHECKED)).run()
    assert set(report.failing()) == KIND_EXPECTED[bug, protocol], "\n".join(f"{r.case_id}: {r.detail}" for r in report.results if r.status != "pass")
    assert all(r.mismatches for r in report.results if r.status == "fail"), "a failure says what was parsed or sent"


def test_every_kind_case_is_registered_and_proven_by_a_bug() -> None:
    assert all(c in CASES for c in KIND_CASES)
    proven = set().union(*KIND_EXPECTED.values())
    assert {c.id for c in KIND_CASES} - proven == {"kind.stop_sequence"}  # shares its bug with stop.reasons (below)


def test_stop_sequence_case_fails_when_the_stop_sequence_is_read_as_a_length_stop() -> None:
    from loopkit.providers.anthropic import AnthropicProvider, MessagesStreamDecoder

    class SequenceAsLength(MessagesStreamDecoder):
        __slots__ = ()

        def _event(self, name, data, out):
            super()._event(name, data.replace('"stop_reason":"stop_sequence"', '"stop_reason":"max_tokens"'), out)

    class Adapter(AnthropicProvider):
        def stream_decoder(self):
            return SequenceAsLength()

    def factory(*, transport=None, base_url=None, retry=None):
        return Adapter(model="m", api_key="k", transport=transport, retry=retry, **({"base_url": base_url} if base_url else {}))

    report = Suite(factory, "anthropic", cases=select_cases(["kind.stop_sequence"])).run()
    assert report.failing() == ["kind.stop_sequence"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_shipped_adapters_pass_the_kind_cases(protocol: str) -> None:
    suite = Suite(protocol, cases=KIND_CASES)
    report = suite.run()
    assert report.ok, [(r.case_id, r.detail) for r in report.results if r.status in ("fail", "error")]
    # a case is not applicable exactly where the simulator refuses the kind
    unsupported = {c.id for c in KIND_CASES if c.not_applicable(suite.wire, None) is not None}
    assert {r.case_id for r in report.results if r.status == "not-applicable"} == unsupported
    assert len(unsupported) <= 3
