"""What adapter authors stumbled on: each finding, fixed, with its regression test."""

from __future__ import annotations

import io
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from loopkit.conformance import Suite, _harness, run_suite
from loopkit.conformance._harness import no_real_sleeps
from loopkit.conformance._render import report_table
from loopkit.errors import UsageError
from loopkit.providers import adapter_class

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[2]


class BadRequestError(Exception):
    """An SDK's exception that shares its name with loopkit's."""


def sdk_like_factory(*, transport, retry=None):
    class SDKErrors(adapter_class("anthropic")):
        def map_error(self, status, headers, body):
            return BadRequestError(f"Error code: {status}")

    return SDKErrors(model="m", api_key="k", transport=transport, retry=retry)


def test_a_failure_names_the_module_of_each_exception_class() -> None:
    suite = Suite(sdk_like_factory, "anthropic")
    result = suite.run_case(suite.case("failure.http_400"))
    assert result.status == "fail"
    assert "expected 'loopkit.errors.BadRequestError', got 'test_adapter_authors.BadRequestError: Error code: 400'" in result.detail


class NoStream:
    """Has astream only, and is not a BaseProvider."""

    async def astream(self, request):
        yield None


def test_a_provider_without_stream_is_one_clear_usage_error() -> None:
    with pytest.raises(UsageError, match=r"provider NoStream has no stream\(\): a Provider needs stream\(request\)"):
        run_suite(lambda *, transport: NoStream(), "anthropic")
    suite = Suite(lambda *, transport: NoStream(), "anthropic")
    result = suite.run_case(suite.case("stream.text"))
    assert result.status == "error" and "has no stream()" in result.reason


def test_the_cli_and_the_plugin_stop_once_on_a_provider_without_stream(pytester) -> None:
    pytester.makepyfile(shapeless="class P:\n    pass\n\ndef factory(*, transport=None, base_url=None):\n    return P()\n")
    result = pytester.runpytest("--loopkit-adapter=shapeless:factory", "--loopkit-protocol=bedrock")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--loopkit-adapter: conformance: the factory's provider P has no stream() and astream()*"])
    proc = subprocess.run(
        [sys.executable, "-m", "loopkit", "conformance", "shapeless:factory", "--protocol", "bedrock"], cwd=pytester.path, capture_output=True, text=True, env=_env()
    )
    assert proc.returncode == 2 and "has no stream() and astream()" in proc.stderr and proc.stderr.count("\n") <= 2


def test_the_plugin_imports_a_factory_module_from_the_current_directory(pytester) -> None:
    pytester.makepyfile(
        myadapter="from loopkit.providers import adapter_class\n\n"
        "def factory(*, transport=None, retry=None):\n"
        "    return adapter_class('bedrock')(model='m', api_key='k', transport=transport, retry=retry)\n"
    )
    result = pytester.runpytest("--loopkit-adapter=myadapter:factory", "--loopkit-protocol=bedrock", "-k", "request.system")
    result.assert_outcomes(passed=1)


def no_retry_factory(*, transport):
    """A factory that cannot take retry=: the adapter retries with its default RetryPolicy."""
    return adapter_class("anthropic")(model="m", api_key="k", transport=transport)


def test_a_factory_without_retry_never_sleeps_for_real(monkeypatch) -> None:
    def real_sleep(seconds):
        raise AssertionError(f"the suite slept for real ({seconds} s)")

    monkeypatch.setattr(_harness, "_REAL_SLEEP", real_sleep)
    suite = Suite(no_retry_factory, "anthropic")
    for case in ("failure.http_429_retry_after", "failure.http_500", "failure.retries_bounded"):
        result = suite.run_case(suite.case(case))
        assert result.status == "pass", result.detail
        assert "the factory takes no retry=" in result.reason


def test_no_real_sleeps_is_for_this_thread_only() -> None:
    with no_real_sleeps() as asked:
        time.sleep(30)
        other: list[float] = []
        t = threading.Thread(target=lambda: (time.sleep(0.001), other.append(1)))
        t.start()
        t.join()
    assert asked == [30] and other == [1]
    assert time.sleep is _harness._REAL_SLEEP


def test_the_report_reads_at_80_columns() -> None:
    from broken_adapters import required_to_auto_factory
    from rich.console import Console

    report = run_suite(required_to_auto_factory, "bedrock")
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(report_table(report, verbose=True))
    text = out.getvalue()
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "…" not in text  # no spec or detail cut off
    assert "request.tool_choice.required  docs/wire.md §0.3;" in text and "docs/loop-contract.md §7.1" in text
    assert "tool_choice 'required' on the wire: expected {'any': {}}, got" in text
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(report_table(report, verbose=False))
    summary = out.getvalue()
    assert "request.tool_choice.required" in summary and "request.tools.declared" not in summary
    assert len(summary.splitlines()) < 15


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}


def test_cli_typo_of_a_builtin_adapter_suggests_the_name() -> None:
    proc = subprocess.run([sys.executable, "-m", "loopkit", "conformance", "antropic"], capture_output=True, text=True, env=_env(), cwd=ROOT)
    assert proc.returncode == 2
    assert "unknown adapter 'antropic' (did you mean 'anthropic'?)" in proc.stderr


def test_cli_prints_a_summary_and_lists_every_case_with_v() -> None:
    cmd = [sys.executable, "-m", "loopkit", "conformance", "bedrock", "--case", "request", "--case", "stream.text"]
    quiet = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=ROOT)
    loud = subprocess.run([*cmd, "-v"], capture_output=True, text=True, env=_env(), cwd=ROOT)
    assert quiet.returncode == loud.returncode == 0
    assert "every case passed or does not apply" in quiet.stdout and "request.system" not in quiet.stdout
    assert len(quiet.stdout.splitlines()) < 12
    assert "request.system" in loud.stdout and "– n/a" in loud.stdout and "bedrock has no knob" in loud.stdout
