"""The suite's machinery: targets and factories, applicability, results, rendering, SSE rewriting."""

from __future__ import annotations

import io
import json

import pytest

from loopkit.conformance import CASES, Suite, resolve_factory, run_suite
from loopkit.conformance._factory import factory_shape
from loopkit.conformance._fixtures import request
from loopkit.conformance._render import report_table
from loopkit.errors import UsageError
from loopkit.providers import adapter_class


def bedrock(**kwargs):
    return adapter_class("bedrock")(model="sim-model", api_key="k", **kwargs)


def test_case_ids_are_unique_and_every_case_names_its_spec() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert all(c.statement.endswith(".") and c.spec for c in CASES)


def test_resolve_factory_reads_module_attr_and_builtin_names() -> None:
    assert resolve_factory("test_conformance_suite:bedrock") is bedrock
    assert callable(resolve_factory("bedrock"))


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("nonsense", "unknown adapter 'nonsense'; a target is a built-in adapter"),
        ("antropic", r"unknown adapter 'antropic' \(did you mean 'anthropic'\?\)"),
        ("no_such_module_xyz:f", "cannot import 'no_such_module_xyz'"),
        ("test_conformance_suite:missing", "has no attribute 'missing'"),
        ("test_conformance_suite:SERVED", "not a callable factory"),
    ],
)
def test_bad_targets_say_what_is_wrong(target: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        resolve_factory(target)


SERVED = "a string, not a factory"


def test_a_factory_must_take_transport_or_base_url() -> None:
    with pytest.raises(UsageError, match="neither transport= nor base_url="):
        factory_shape(lambda *, retry=None: None)
    shape = factory_shape(lambda **kw: None)
    assert (shape.transport, shape.base_url, shape.retry) == (True, True, True)


def test_module_targets_need_a_protocol() -> None:
    with pytest.raises(UsageError, match="--protocol"):
        Suite("test_conformance_suite:bedrock")
    with pytest.raises(UsageError, match="unknown protocol 'grpc'"):
        Suite("bedrock", "grpc")


def test_an_adapter_that_declares_no_parallel_support_gets_not_applicable_with_the_reason() -> None:
    """On a protocol that has the knob, an adapter's supports_parallel_tool_calls=False is reported, not passed."""

    class NoParallel(adapter_class("bedrock")):
        supports_parallel_tool_calls = False

    suite = Suite(lambda *, transport, retry=None: NoParallel(model="m", api_key="k", transport=transport, retry=retry), "anthropic")
    reason = suite.case("request.parallel.disabled").not_applicable(suite.wire, suite.provider())
    assert reason == "the adapter declares supports_parallel_tool_calls = False (NoParallel)"


def test_a_factory_that_raises_gives_error_results_not_a_crash() -> None:
    def broken(*, transport, retry=None):
        raise RuntimeError("cannot build")

    suite = Suite(broken, "bedrock")
    result = suite.run_case(suite.case("stream.text"))
    assert result.status == "error"
    assert result.reason.startswith("RuntimeError: cannot build")


def test_a_factory_without_retry_is_still_checked_through_the_request_log() -> None:
    """Without retry=, waits are not observable, but attempts are (and real waits stay short here)."""
    suite = Suite(lambda *, transport: bedrock(transport=transport, retry=None), "bedrock")
    assert not suite.harness.records_waits
    ex = suite.harness.run(request(), ["OK."])
    assert ex.waits is None and ex.attempts == 1


def test_report_json_and_table() -> None:
    from rich.console import Console

    suite = Suite("bedrock", cases=[c for c in CASES if c.id in ("stream.text", "failure.http_529")])
    report = suite.run()
    data = report.to_json()
    assert data["counts"] == {"pass": 1, "fail": 0, "not-applicable": 1, "error": 0}
    assert [r["id"] for r in data["results"]] == ["stream.text", "failure.http_529"]
    json.dumps(data)
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(report_table(report))
    text = out.getvalue()
    assert "✓ pass" in text and "– n/a" in text and "only Anthropic answers HTTP 529" in text


def test_failure_detail_names_what_was_sent_against_what_was_expected() -> None:
    from broken_adapters import required_to_auto_factory

    report = run_suite(required_to_auto_factory, "bedrock")
    (failed,) = [r for r in report.results if r.status == "fail"]
    assert failed.detail == "tool_choice 'required' on the wire: expected {'any': {}}, got {'auto': {}}"
    assert failed.to_json()["mismatches"] == [{"what": "tool_choice 'required' on the wire", "expected": {"any": {}}, "actual": {"auto": {}}}]
