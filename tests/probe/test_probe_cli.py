"""``loopkit probe``: any program, any language, once per case; a rich table or --json; exit 1 on
a failed case, 2 on a usage error."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from loopkit.cli import main

NODE_AGENT = str(Path(__file__).parent / "subjects" / "node_agent.mjs")
node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
CASES = ["--case", "valid_call", "--case", "parallel_calls"]


@node
def test_a_javascript_agent_passes_over_the_wire(capsys):
    code = main(["probe", "--protocol", "openai_chat", "--tools", "add", "--json", *CASES, "--", "node", NODE_AGENT])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out
    assert out["tools"] == ["add"] and out["allowed"] == ["add"]
    assert {r["case"]: r["status"] for r in out["results"]} == {"text_answer": "pass", "valid_call": "pass", "parallel_calls": "pass"}
    assert out["results"][2]["model_calls"] == 2


@node
def test_a_broken_javascript_agent_fails_with_exit_status_1(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "220")
    code = main(["probe", "--protocol", "openai_chat", "--tools", "add", "--case", "parallel_calls", "--", "node", NODE_AGENT, "--skip-results"])
    out = capsys.readouterr().out
    assert code == 1
    assert "✗ FAIL" in out and "parallel_calls" in out and "loop-contract.md § 2.2 Calls run one after another" in out


def test_a_python_program_gets_the_prompt_and_the_sdk_environment(tmp_path, capsys):
    """The prompt arrives on stdin, in LOOPKIT_PROBE_PROMPT and as {prompt}; the SDK's variables
    point at the simulator, with a dummy key and no real credentials."""
    script = tmp_path / "agent.py"
    script.write_text(
        "import json, os, sys, urllib.request\n"
        "prompt = sys.stdin.read()\n"
        "assert prompt == os.environ['LOOPKIT_PROBE_PROMPT'] == sys.argv[1], (prompt, sys.argv)\n"
        "assert os.environ['ANTHROPIC_API_KEY'] == 'loopkit-probe-dummy-key' and 'OPENAI_API_KEY' not in os.environ\n"
        "body = json.dumps({'model': 'm', 'max_tokens': 64, 'messages': [{'role': 'user', 'content': prompt}]}).encode()\n"
        "req = urllib.request.Request(os.environ['ANTHROPIC_BASE_URL'] + '/v1/messages', body, {'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01'})\n"
        "msg = json.load(urllib.request.urlopen(req))\n"
        "print(''.join(b['text'] for b in msg['content'] if b['type'] == 'text'))\n",
        encoding="utf-8",
    )
    import os

    os.environ["OPENAI_API_KEY"] = "sk-real-looking"
    try:
        code = main(["probe", "--protocol", "anthropic", "--json", "--case", "long_unicode", "--", sys.executable, str(script), "{prompt}"])
    finally:
        del os.environ["OPENAI_API_KEY"]
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out
    assert [r["status"] for r in out["results"]] == ["pass", "pass"]


def test_a_program_that_hangs_is_killed(tmp_path, capsys):
    code = main(["probe", "--protocol", "openai_chat", "--timeout", "1", "--json", "--", sys.executable, "-c", "import time; time.sleep(30)"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    first = out["results"][0]
    assert first["failures"][0]["message"] == "the agent hung: the program did not exit within 1 s (killed); it made no model call"
    assert {r["status"] for r in out["results"][1:]} == {"not-applicable"}


def test_a_script_of_your_own_is_a_case(tmp_path, capsys):
    (tmp_path / "greeting.yaml").write_text("- Hello from my own script.\n", encoding="utf-8")
    code = main(["probe", "--protocol", "anthropic", "--json", "--case", "text_answer", "--script", str(tmp_path / "greeting.yaml"),
                 "--agent", "tests.probe.agents:echo_agent"])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out
    assert [(r["case"], r["status"]) for r in out["results"]] == [("text_answer", "pass"), ("greeting", "pass")]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["probe", "--protocol", "openai_chat"], "nothing to probe: give a command after --"),
        (["probe", "--protocol", "nope", "--", "true"], "unknown protocol 'nope'"),
        (["probe", "--protocol", "openai_chat", "--case", "nope", "--", "true"], "unknown case(s) ['nope']"),
        (["probe", "--protocol", "openai_chat", "--agent", "tests.probe.agents:missing"], "has no attribute 'missing'"),
        (["probe", "--protocol", "openai_chat", "--", "/no/such/program"], "cannot start '/no/such/program'"),
    ],
)
def test_usage_errors_exit_2(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


SDK_DEFAULTS = str(Path(__file__).parent / "subjects" / "sdk_defaults.py")


@pytest.mark.parametrize("protocol", ["openai_chat", "openai_responses", "anthropic", "gemini", "bedrock"])
def test_each_official_sdk_finds_the_simulator_with_no_configuration(protocol, capsys):
    """OpenAI(), Anthropic(), genai.Client() and boto3.client("bedrock-runtime") read the
    variables the probe sets: no base URL, key or region in the program."""
    code = main(["probe", "--protocol", protocol, "--json", "--case", "text_answer", "--", sys.executable, SDK_DEFAULTS, protocol])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out["results"][0]
    assert out["results"][0]["output"] == "All done: the probe's final answer."
