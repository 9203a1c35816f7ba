"""``loopkit serve``: a simulator on 127.0.0.1 from a script file, for clients in any language."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from loopkit.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _start(args: list[str]) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "loopkit", "serve", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    line = proc.stdout.readline()
    assert "listening on http://127.0.0.1:" in line, line + proc.stderr.read()
    return proc, line.rsplit(" ", 1)[1].strip()


def test_serve_answers_from_a_yaml_script_and_exits_when_done(tmp_path: Path) -> None:
    script = tmp_path / "turns.yaml"
    script.write_text("- tool_calls:\n    - {name: add, arguments: {a: 1, b: 2}, id: toolu_1}\n- Three.\n")
    proc, base_url = _start(["anthropic", "--script", str(script), "--exit-when-done"])
    headers = {"x-api-key": "test", "anthropic-version": "2023-06-01"}
    body = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "add 1 and 2"}], "tools": [{"name": "add", "input_schema": {"type": "object"}}]}
    first = httpx.post(f"{base_url}/v1/messages", json=body, headers=headers).json()
    assert first["stop_reason"] == "tool_use"
    assert first["content"][-1]["input"] == {"a": 1, "b": 2}
    body["messages"] += [
        {"role": "assistant", "content": first["content"]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first["content"][-1]["id"], "content": "3"}]},
    ]
    second = httpx.post(f"{base_url}/v1/messages", json=body, headers=headers).json()
    assert second["content"][0]["text"] == "Three."
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "used 2 of 2 turn(s)" in out
    assert err.splitlines() == ["POST /v1/messages 200 turn 1/2", "POST /v1/messages 200 turn 2/2"]


def test_serve_reports_a_broken_script_file_with_its_path(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "turns.json"
    bad.write_text(json.dumps([{"tool_calls": [{"arguments": {}}]}]))
    assert main(["serve", "anthropic", "--script", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "tool_calls[0]" in err


def test_serve_rejects_an_unknown_protocol(tmp_path: Path, capsys) -> None:
    ok = tmp_path / "turns.json"
    ok.write_text('["hi"]')
    assert main(["serve", "smoke_signals", "--script", str(ok)]) == 2
    assert "unknown protocol 'smoke_signals'" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["[1, 2", "- a: [\n"])
def test_serve_reports_unparsable_files(tmp_path: Path, capsys, content: str) -> None:
    path = tmp_path / ("turns.json" if content.startswith("[") else "turns.yaml")
    path.write_text(content)
    assert main(["serve", "anthropic", "--script", str(path)]) == 2
    assert "not valid" in capsys.readouterr().err



def test_the_request_log_names_errors_and_overruns_and_quiet_silences_it(tmp_path: Path) -> None:
    script = tmp_path / "turns.yaml"
    script.write_text("- faults: [{http: {status: 429, retry_after: 1}}]\n")
    headers = {"x-api-key": "test", "anthropic-version": "2023-06-01"}
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    proc, base_url = _start(["anthropic", "--script", str(script)])
    try:
        assert httpx.post(f"{base_url}/v1/messages", json=body, headers=headers).status_code == 429
        assert httpx.post(f"{base_url}/v1/messages", json=body, headers=headers).status_code == 500
        assert httpx.get(f"{base_url}/v1/nowhere").status_code == 404
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert err.splitlines()[:3] == [
        "POST /v1/messages 429 turn 1/1",
        "POST /v1/messages 500 script exhausted (1 turn(s))",
        "GET /v1/nowhere 404 no turn used",
    ]
    proc, base_url = _start(["anthropic", "--script", str(script), "--quiet", "--exit-when-done"])
    httpx.post(f"{base_url}/v1/messages", json=body, headers=headers)
    _, err = proc.communicate(timeout=10)
    assert err == ""


def test_a_value_of_the_wrong_type_is_refused_at_start_with_file_and_path(tmp_path: Path) -> None:
    script = tmp_path / "turns.yaml"
    script.write_text('- faults: [{http: {status: "abc"}}]\n- {text: Hi., usage: {input: many}}\n')
    done = subprocess.run([sys.executable, "-m", "loopkit", "serve", "anthropic", "--script", str(script)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""  # never started listening
    assert f"loopkit serve: error: {script}: 2 value(s) of the wrong type:" in done.stderr
    assert "[0].faults[0].http.status: input should be a valid integer, got 'abc'" in done.stderr
    assert "[1].usage.input: input should be a valid integer, got 'many'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_type_error_inside_a_turn_names_the_turn(tmp_path: Path, capsys) -> None:
    script = tmp_path / "turns.yaml"
    script.write_text("- Hi.\n- {text: a, chunk_size: big}\n")
    assert main(["serve", "anthropic", "--script", str(script)]) == 2
    assert f"{script}: [1] a value of the wrong type" in capsys.readouterr().err


def test_an_unknown_protocol_gets_a_hint(tmp_path: Path, capsys) -> None:
    ok = tmp_path / "turns.json"
    ok.write_text('["hi"]')
    assert main(["serve", "antropic", "--script", str(ok)]) == 2
    assert "unknown protocol 'antropic' (did you mean 'anthropic'?)" in capsys.readouterr().err


def test_a_port_in_use_is_a_clear_error(tmp_path: Path, capsys) -> None:
    import socket

    ok = tmp_path / "turns.json"
    ok.write_text('["hi"]')
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "anthropic", "--script", str(ok), "--port", str(port)]) == 2
    assert f"loopkit serve: error: cannot listen on 127.0.0.1:{port}: Address already in use" in capsys.readouterr().err
