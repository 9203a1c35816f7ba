"""``loopkit fuzz --mcp -- COMMAND...`` and ``loopkit fuzz --mcp-url URL``."""

from __future__ import annotations

import json
import sys

import pytest
from mcp_servers import SERVERS

from loopkit.cli import main


def test_fuzz_a_stdio_server_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fuzz", "--mcp", "--tools", "blank,ok", "--seed", "1", "--examples", "30", "-x", "--json", "--", sys.executable, str(SERVERS / "planted.py")])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [t["target"] for t in out["tools"]] == ["blank", "ok"]
    # -x: blank's search ended at its finding; ok, with none, ran the whole budget
    assert out["tools"][0]["examples"] < 30 and out["tools"][1]["examples"] == 30
    assert [f["kind"] for f in out["tools"][0]["findings"]] == ["valid_rejected"]
    assert out["tools"][0]["findings"][0]["arguments"] == {"name": ""}
    assert "crash" in out["not_fuzzed"] and out["seed"] == 1


def test_fuzz_an_http_server_with_the_summary_table(planted_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "--mcp-url", planted_url, "--tools", "ok", "--seed", "2", "--examples", "20"]) == 0
    out = capsys.readouterr().out
    assert "no findings" in out and "ok" in out and "not called: bounds" in out
    assert main(["fuzz", "--mcp-url", planted_url, "--tools", "vague", "--seed", "1", "--examples", "20"]) == 1
    out = capsys.readouterr().out
    assert "unhelpful_error" in out and "rerun with --seed 1" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fuzz", "--mcp"], "needs the server's command after --"),
        (["fuzz", "--mcp-url", "ftp://x"], "must start with http"),
        (["fuzz", "--mcp", "--mcp-url", "http://127.0.0.1:1/mcp", "--", "x"], "not both"),
        (["fuzz"], "give one target"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err
