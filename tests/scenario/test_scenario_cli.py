"""``loopkit run``: the matrix, the failure reports, --provider, --json and the exit status."""

from __future__ import annotations

import json
from pathlib import Path

from loopkit.cli import main

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
