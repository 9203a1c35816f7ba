"""``loopkit run``: the matrix (with numbered skip reasons), one report per distinct failure,
snapshots compared as pytest compares them, --provider, --json and the exit status."""

from __future__ import annotations

import json
from pathlib import Path

from loopkit.cli import main

pytest_plugins = ["pytester"]

GOOD = "name: good\nscript: [Hello.]\nexpect:\n  end: {reason: stop, text: Hello.}\n"
BAD = "name: bad\nscript: [Hello.]\nexpect:\n  end: {reason: error}\n"


def write(folder: Path, **files: str) -> Path:
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.yaml").write_text(text)
    return folder


def test_all_passing_exits_0_and_prints_the_matrix(tmp_path, capsys) -> None:
    folder = write(tmp_path / "topic", good=GOOD)
    assert main(["run", str(folder), "--provider", "scripted", "--provider", "bedrock"]) == 0
    out = capsys.readouterr().out
    assert "scenarios × providers" in out
    assert "topic/good" in out and "fake" in out and "bedr" in out
    assert "2 scenario run(s): 2 passed" in out


def test_a_failure_exits_1_and_prints_its_diff(tmp_path, capsys) -> None:
    folder = write(tmp_path / "topic", good=GOOD, bad=BAD)
    assert main(["run", str(folder), "--provider", "scripted"]) == 1
    out = capsys.readouterr().out
    assert "✗ bad [scripted]: failed" in out
    assert "end.reason" in out and "'error'" in out and "'stop'" in out
    assert "2 scenario run(s): 1 failed, 1 passed" in out


def test_json_output(tmp_path, capsys) -> None:
    folder = write(tmp_path / "topic", good=GOOD, bad=BAD)
    assert main(["run", str(folder / "bad.yaml"), str(folder / "good.yaml"), "--provider", "scripted", "--json", "--driver", "async"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["summary"] == {"passed": 1, "failed": 1, "skipped": 0, "xfailed": 0, "xpassed": 0}
    bad = out["results"][0]
    assert (bad["scenario"], bad["provider"], bad["status"]) == ("topic/bad", "scripted", "failed")
    assert bad["failures"] == [{"check": "end.reason", "expected": "'error'", "actual": "'stop'"}]


def test_malformed_file_exits_2_with_every_problem(tmp_path, capsys) -> None:
    folder = write(tmp_path / "topic", broken="script: [Hi.]\nexpect:\n  end: {reasn: stop}\n")
    assert main(["run", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "broken.yaml:3:9: expect.end.reasn: unknown key 'reasn' (did you mean 'reason'?)" in err


def test_unknown_provider_exits_2(tmp_path, capsys) -> None:
    folder = write(tmp_path / "topic", good=GOOD)
    assert main(["run", str(folder), "--provider", "geminii"]) == 2
    assert "unknown provider 'geminii' (did you mean 'gemini'?)" in capsys.readouterr().err


def test_skips_are_shown_in_the_matrix(tmp_path, capsys) -> None:
    folder = write(tmp_path / "t", aborted="name: aborted\nscript: [{text: x, aborted: true}]\nexpect:\n  end: {reason: aborted}\n")
    assert main(["run", str(folder), "--provider", "scripted", "--provider", "bedrock", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert [r["status"] for r in results] == ["passed", "skipped"]
    assert "abort signal" in results[1]["skip_reason"]


def test_skip_reasons_are_numbered_in_the_table(tmp_path, capsys) -> None:
    folder = write(tmp_path / "t", aborted="name: aborted\nscript: [{text: x, aborted: true}]\nexpect:\n  end: {reason: aborted}\n")
    assert main(["run", str(folder), "--provider", "scripted", "--provider", "bedrock"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "t/aborted" in line)
    assert "✓" in row and "–1" in row
    assert any(line.startswith("1 ") and "abort signal" in line for line in out.splitlines())


def test_one_report_for_a_failure_shared_by_several_providers(tmp_path, capsys) -> None:
    folder = write(tmp_path / "topic", bad=BAD)
    assert main(["run", str(folder), "--provider", "scripted", "--provider", "anthropic", "--provider", "bedrock"]) == 1
    out = capsys.readouterr().out
    assert out.count("✗ bad [") == 1
    assert "✗ bad [scripted, anthropic, bedrock]: failed" in out
    assert any(line.strip("─ ") == "topic/bad [scripted, anthropic, bedrock]" for line in out.splitlines())  # the rule above it
    assert "3 scenario run(s): 3 failed" in out


SNAP = "name: snap\nscript: [Hello.]\nexpect:\n  end: {reason: stop}\n  snapshot: true\n"


def test_run_compares_snapshots_as_pytest_does(pytester, capsys) -> None:
    """A tampered .ambr file fails `loopkit run` just as it fails the pytest items."""
    from importlib.metadata import entry_points

    plugin = () if any(ep.value == "loopkit.pytest_scenarios" for ep in entry_points(group="pytest11")) else ("-p", "loopkit.pytest_scenarios")
    folder = write(pytester.path / "scenarios", snap=SNAP)
    pytester.makeini("[pytest]\nloopkit_scenarios = scenarios\n")
    args = ["run", str(folder), "--provider", "scripted", "--provider", "anthropic", "--json"]

    def failures() -> list:
        return [f for r in json.loads(capsys.readouterr().out)["results"] for f in r["failures"]]

    assert main(args) == 1  # no snapshot stored yet
    assert [f["actual"] for f in failures()] == ["no such file (create it with: pytest --snapshot-update)"] * 2
    pytester.runpytest(*plugin, "--loopkit-provider", "scripted", "--loopkit-provider", "anthropic", "--snapshot-update").assert_outcomes(passed=2)
    capsys.readouterr()
    assert main(args) == 0
    assert failures() == []
    stored = folder / "__snapshots__" / "snap.ambr"
    stored.write_text(stored.read_text().replace("'Hello.'", "'Bye.'", 1))
    pytester.runpytest(*plugin, "--loopkit-provider", "scripted", "--loopkit-provider", "anthropic").assert_outcomes(passed=1, failed=1)
    capsys.readouterr()
    assert main(args) == 1
    (failure,) = failures()
    assert failure["check"] == "snapshot"
    assert "-          'text': 'Bye.'," in failure["actual"] and "+          'text': 'Hello.'," in failure["actual"]


def test_a_tool_reference_that_does_not_import_exits_2_before_anything_runs(tmp_path, capsys) -> None:
    folder = write(
        tmp_path / "topic",
        good=GOOD,
        typo="tools: {lookup: 'json:dumpz'}\nscript: [Hi.]\nexpect:\n  end: {reason: stop}\n",
        missing="tools: {lookup: 'no_such_module_here:f'}\nscript: [Hi.]\nexpect:\n  end: {reason: stop}\n",
    )
    assert main(["run", str(folder), "--provider", "scripted"]) == 2
    captured = capsys.readouterr()
    assert "scenario run(s)" not in captured.out
    assert f"{folder / 'typo.yaml'}: tool 'lookup'" in captured.err and "'json' has no attribute 'dumpz'" in captured.err
    assert f"{folder / 'missing.yaml'}: tool 'lookup'" in captured.err and "cannot import 'no_such_module_here'" in captured.err
