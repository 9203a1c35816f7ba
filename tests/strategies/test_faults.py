"""faults(): the catalogue of docs/wire.md §6.3 as Script faults."""

from __future__ import annotations

import pytest
from hypothesis import given

from strategy_schemas import few, first_match

from loopkit.errors import UsageError
from loopkit.script import Delay, HttpFault, MidStreamError, Truncate, Turn
from loopkit.strategies import PROTOCOLS, faults


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_faults_are_script_faults(protocol):
    @few()
    @given(faults(protocol))
    def check(fault):
        assert Turn(faults=(fault,)).faults == (fault,)  # Turn validates its faults

    check()


@pytest.mark.parametrize(
    ("protocol", "status", "error_type"),
    [
        ("anthropic", 529, "overloaded_error"),
        ("gemini", 429, "RESOURCE_EXHAUSTED"),
        ("gemini", 400, "API_KEY_INVALID"),
        ("bedrock", 429, "ThrottlingException"),
        ("bedrock", 424, "ModelErrorException"),
        ("openai_chat", 401, "invalid_api_key"),
        ("openai_responses", 500, "server_error"),
    ],
)
def test_catalogue_entries_occur(protocol, status, error_type):
    found = first_match(faults(protocol), lambda f: isinstance(f, HttpFault) and f.status == status and f.error_type == error_type)
    assert found.status == status


@given(faults("anthropic", kinds={"bad_request", "auth"}))
def test_client_errors_carry_no_retry_after(fault):
    assert isinstance(fault, HttpFault) and fault.retry_after is None


@given(faults("openai_chat", kinds={"mid_stream", "truncate", "delay"}, max_after=3, max_delay=0.5))
def test_stream_faults_respect_bounds(fault):
    assert isinstance(fault, (MidStreamError, Truncate, Delay))
    assert 0 <= fault.after <= 3
    if isinstance(fault, Delay):
        assert 0 <= fault.seconds <= 0.5


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: faults("azure"), "unknown protocol"),
        (lambda: faults("gemini", kinds={"oops"}), "choose one or more"),
        (lambda: faults("gemini", max_after=-1), ">= 0"),
    ],
)
def test_bad_input_raises_eagerly(call, message):
    with pytest.raises(UsageError, match=message):
        call()
