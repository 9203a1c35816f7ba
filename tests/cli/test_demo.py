"""``loopkit demo``: every session ends as expected on every available protocol."""

from __future__ import annotations

import json

from loopkit.cli import main
from loopkit.cli.demo import available_protocols


def test_demo_json_reports_every_session_on_every_protocol(capsys) -> None:
    assert main(["demo", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["failures"] == 0
    assert out["protocols"] == available_protocols()
    assert [s["session"] for s in out["sessions"]] == [
        "plain answer",
        "tool round trip",
        "unknown tool fed back",
        "invalid and broken arguments",
        "steering skips the rest",
        "cap reached",
    ]
    for row in out["sessions"]:
        for protocol in out["protocols"]:
            if row["session"] == "invalid and broken arguments" and protocol == "gemini":
                assert row[protocol] == "error"  # broken JSON cannot travel in a Gemini functionCall
            else:
                assert row[protocol] == row["expected"]
    if "gemini" in out["protocols"]:
        assert any("MALFORMED_FUNCTION_CALL" in n for n in out["notes"])


def test_demo_prints_transcripts_and_summary(capsys) -> None:
    assert main(["demo", "--protocol", "scripted"]) == 0
    out = capsys.readouterr().out
    assert "Skipped due to queued user message." in out
    assert "Tool search_web not found" in out
    assert "max_iterations" in out
    assert "all protocols agree with the scripted run" in out


def test_an_unknown_protocol_is_a_usage_error_with_a_hint(capsys) -> None:
    assert main(["demo", "--protocol", "scripted", "--protocol", "anthropc"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing ran
    assert "loopkit demo: error: unknown protocol 'anthropc' (did you mean 'anthropic'?)" in captured.err
