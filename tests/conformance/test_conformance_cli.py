"""``loopkit conformance``: a table or JSON, exit 1 on any failure, 2 on a usage error."""

from __future__ import annotations

import json

from loopkit.cli import main


def test_json_output_and_exit_zero_for_a_conforming_adapter(capsys) -> None:
    assert main(["conformance", "bedrock", "--json", "--case", "stream.text", "--case", "request.parallel.disabled"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["protocol"] == "bedrock"
    assert [(r["id"], r["status"]) for r in data["results"]] == [("request.parallel.disabled", "not-applicable"), ("stream.text", "pass")]


def test_case_prefixes_select_groups(capsys) -> None:
    assert main(["conformance", "bedrock", "--json", "--case", "request.tool_choice"]) == 0
    ids = [r["id"] for r in json.loads(capsys.readouterr().out)["results"]]
    assert ids == ["request.tool_choice.auto", "request.tool_choice.required", "request.tool_choice.none", "request.tool_choice.forced", "request.tool_choice.none_after_tool_round"]
    assert main(["conformance", "bedrock", "--case", "request.tool"]) == 2
    assert "no case matches 'request.tool'" in capsys.readouterr().err


def test_table_and_exit_one_on_a_failure(capsys) -> None:
    code = main(["conformance", "broken_adapters:required_to_auto_factory", "--protocol", "bedrock", "--case", "request.tool_choice.required"])
    out = capsys.readouterr().out
    assert code == 1
    assert "✗ FAIL" in out and "request.tool_choice.required" in out and "{'auto': {}}" in out


def test_usage_errors_exit_two(capsys) -> None:
    assert main(["conformance", "mypkg.nowhere:factory", "--protocol", "bedrock"]) == 2
    assert "cannot import 'mypkg.nowhere'" in capsys.readouterr().err
    assert main(["conformance", "broken_adapters:required_to_auto_factory"]) == 2


def test_served_flag_runs_the_simulator_on_loopback(capsys) -> None:
    assert main(["conformance", "bedrock", "--served", "--json", "--case", "stream.text"]) == 0
    assert [r["status"] for r in json.loads(capsys.readouterr().out)["results"]] == ["pass"]


def test_variant_answers_as_a_model_family(capsys) -> None:
    args = ["conformance", "bedrock", "--json", "--case", "request.history.is_error", "--case", "request.history.error_in_text"]
    assert main([*args, "--variant", "no-tool-result-status"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["variant"] == "no-tool-result-status"
    assert [(r["id"], r["status"]) for r in data["results"]] == [("request.history.is_error", "pass"), ("request.history.error_in_text", "pass")]
    # a factory that drops toolResult.status and says nothing in its place fails: the error is lost
    assert main(["conformance", "broken_adapters:loses_is_error_factory", "--protocol", "bedrock", "--variant", "no-tool-result-status", "--case", "request.history.is_error"]) == 1
    assert main(["conformance", "bedrock", "--variant", "no-tool-result-status", "--case", "request.history.error_in_text"]) == 0
    assert "(bedrock, variant no-tool-result-status)" in capsys.readouterr().out
    assert main([*args, "--variant", "no-status"]) == 2
    assert "bedrock has no variant 'no-status'" in capsys.readouterr().err
