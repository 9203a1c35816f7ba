"""Fuzzing whole MCP servers: each planted bug is found at the default budget with a fixed seed,
the correct server gives no findings, a crash restarts the server, a hang ends at the time limit."""

from __future__ import annotations

import pytest
from mcp_servers import serve_http

from loopkit.mcp import MCPSession, fuzz
from loopkit.mcp.fuzz import ServerFuzzReport, fuzz_server

SEED = 1
_REPORTS: dict[str, ServerFuzzReport] = {}


def fuzzed(session: MCPSession, tool: str) -> ServerFuzzReport:
    """One run per planted tool at the default budget, shared by the tests that read it. It ends
    at the first finding (``until``) except for ``bounds``, whose two findings are both read."""
    if tool not in _REPORTS:
        until = None if tool == "bounds" else (lambda finding: True)
        _REPORTS[tool] = fuzz_server(session, tools=[tool], seed=SEED, until=until)
    return _REPORTS[tool]


@pytest.mark.parametrize(
    ("tool", "kind", "arguments"),
    [
        ("bounds", "invalid_accepted", None),
        ("blank", "valid_rejected", {"name": ""}),
        ("strict", "protocol_error", None),
        ("vague", "unhelpful_error", None),
        ("square", "output_mismatch", {"n": -1}),
    ],
)
def test_each_planted_bug_is_found_and_shrunk(planted: MCPSession, tool: str, kind: str, arguments: dict | None) -> None:
    report = fuzzed(planted, tool)
    (tool_report,) = report.reports
    assert tool_report.examples == 200 if tool == "bounds" else 0 < tool_report.examples < 200
    assert {f.kind for f in tool_report.findings} == {kind}, tool_report.findings
    if arguments is not None:
        assert tool_report.findings[0].example.arguments == arguments
    with pytest.raises(AssertionError, match=kind):
        report.raise_for_findings()


def test_until_ends_the_search_at_the_first_finding_it_accepts(planted: MCPSession) -> None:
    """The examples before the stop are the ones the whole run sends: the same finding, shrunk the
    same way; a predicate that accepts no finding runs the whole budget."""
    whole = fuzz_server(planted, tools=["blank"], seed=SEED, examples=60)
    first = fuzz_server(planted, tools=["blank"], seed=SEED, examples=60, until=lambda f: f.kind == "valid_rejected")
    (whole_report,), (first_report,) = whole.reports, first.reports
    assert first_report.examples < whole_report.examples == 60
    assert [(f.kind, f.example.arguments) for f in first_report.findings] == [(f.kind, f.example.arguments) for f in whole_report.findings]
    never = fuzz_server(planted, tools=["blank"], seed=SEED, examples=20, until=lambda f: False)
    assert never.reports[0].examples == 20 and never.reports[0].findings


def test_invalid_accepted_names_each_rule_and_minimal_value(planted: MCPSession) -> None:
    findings = fuzzed(planted, "bounds").reports[0].findings
    assert sorted((f.example.rule, f.example.arguments["count"]) for f in findings) == [("maximum", 11), ("minimum", 0)]


def test_protocol_error_cites_the_specification(planted: MCPSession) -> None:
    (finding,) = fuzzed(planted, "strict").reports[0].findings
    assert "-32602" in finding.message and "2026-07-28" in finding.message and "isError" in finding.message


def test_correct_tools_give_no_findings(planted: MCPSession, correct: MCPSession) -> None:
    fuzz_server(planted, tools=["ok"], seed=SEED).raise_for_findings()
    report = fuzz_server(correct, seed=SEED, examples=100)  # three tools: half the budget keeps the suite quick
    assert [r.target for r in report.reports] == ["add", "repeat", "paint"]
    report.raise_for_findings()
    assert report.restarts == 0 and report.not_fuzzed == []


@pytest.fixture
def one_shrink_restart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shrinking a crash or a hang may cost one restart or time limit, not the default three:
    each one is a server start (a second of CPU) or a wait, and the tests using this are about
    the crash or hang being kept, not about how small it gets. One still runs the budget out
    (the search ends on the call after it)."""
    monkeypatch.setattr(fuzz, "SHRINK_RESTARTS", 1)


def test_a_crash_is_recorded_and_the_server_restarted(planted: MCPSession, one_shrink_restart: None) -> None:
    before = planted.restarts
    report = fuzz_server(planted, tools=["crash"], seed=SEED, examples=50)  # each crash costs a restart
    (finding,) = report.reports[0].findings
    assert finding.kind == "server_crash"
    text = finding.example.arguments["text"]
    assert len(text) > 18  # the planted crash: the arguments that killed it are kept
    # the server's last words on standard error, about these very arguments
    assert f"cannot handle a text of {len(text)} characters" in finding.message
    assert report.reports[0].examples == 50  # the examples after each crash still ran
    assert report.restarts >= 1 and planted.restarts - before == report.restarts
    assert planted.call("ok", {"n": 1}).is_error is False  # and the session works afterwards


def test_a_hang_ends_at_the_time_limit(planted: MCPSession, one_shrink_restart: None) -> None:
    # each hang waits out the limit; at half a second a call to a loaded machine's server was
    # once taken for a hang (the fuzzer's default limit is 10 s)
    report = fuzz_server(planted, tools=["stall"], seed=SEED, timeout=1.0, until=lambda f: True)
    (finding,) = report.reports[0].findings
    assert finding.kind == "server_hang"
    assert any(c in finding.example.arguments["text"] for c in "\n\r\t")
    assert "1 s" in finding.message and "still answers" in finding.message
    assert report.restarts == 0  # the server kept answering other requests: no restart needed


def test_fuzzing_over_streamable_http(planted_url: str) -> None:
    # the transport is the point, not the budget (the default one is the stdio tests'): 20 examples
    report = fuzz_server(planted_url, tools=["ok", "strict"], seed=SEED, examples=20, until=lambda f: True)
    assert [r.target for r in report.reports] == ["ok", "strict"]
    assert [f.kind for _, f in report.findings] == ["protocol_error"]
    assert "bounds" in report.not_fuzzed


def test_an_http_server_that_dies_ends_the_run_with_the_crash_kept() -> None:
    with serve_http("planted") as url:
        report = fuzz_server(url, tools=["crash", "ok"], seed=SEED, examples=60)
    (crash,) = report.reports  # "ok" never ran: the server was gone
    assert [f.kind for f in crash.findings] == ["server_crash"]
    assert "could not be started again" in crash.findings[0].message
    assert not report.ok and "crash: stopped: the server could not be started again" in report.errors[0]
    with pytest.raises(AssertionError, match="could not be started again"):
        report.raise_for_findings()


def test_unknown_tool_and_bad_budget_are_usage_errors(planted: MCPSession) -> None:
    from loopkit.errors import UsageError

    with pytest.raises(UsageError, match="has no tool 'nope'"):
        fuzz_server(planted, tools=["nope"])
    with pytest.raises(UsageError, match="examples"):
        fuzz_server(planted, examples=0)
