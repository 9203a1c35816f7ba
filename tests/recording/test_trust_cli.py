"""Hand-edited files fail at load with file, interaction and chunk; a miss names the right
interaction and field; ``loopkit record`` and ``cassette show|diff`` print nothing secret and
read well at 80 columns."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from loopkit.cli import build_parser, main
from loopkit.errors import CassetteError, NoMatchingInteraction
from loopkit.recording import Cassette, ReplayTransport, load_cassette_file

from .test_proxy import EVENTS, Upstream

ROOT = Path(__file__).parent.parent.parent
EXAMPLES = ROOT / "cassettes"
KEY = "sk-proj-Zx8Cv7Bn6Mm5Cv7Bn6Mm5Cv7Bn6Mm5"


def edited(tmp_path: Path, source: str, edit) -> Path:
    data = json.loads((EXAMPLES / source).read_text())
    edit(data)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data, indent=1))
    return path


# --- part 4: hand-edited files ------------------------------------------------------------------


def test_invalid_base64_fails_at_load_naming_file_interaction_and_chunk(tmp_path, capsys):
    def edit(data):
        data["interactions"][1]["response"]["chunks"][2] = {"t": 0.1, "base64": "not*base64!"}

    path = edited(tmp_path, "openai_chat/adapter_tool_round_trip.json", edit)
    with pytest.raises(CassetteError, match=r"edited\.json: interactions\[1\]\.response\.chunks\[2\]\.base64: not valid base64"):
        Cassette(path)
    assert main(["cassette", "show", str(path)]) == 2
    assert main(["cassette", "verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert "Traceback" not in out and "interactions[1].response.chunks[2].base64" in out


def test_an_edited_bedrock_frame_fails_at_load_with_its_interaction(tmp_path, capsys):
    def edit(data):
        chunk = next(c for c in data["interactions"][0]["response"]["chunks"] if c.get("frames"))
        chunk["frames"][0]["json"]["extra"] = "hand edit"  # the frame grows: 'size' no longer adds up

    path = edited(tmp_path, "bedrock/adapter_tool_round_trip.json", edit)
    with pytest.raises(CassetteError, match=r"edited\.json: interactions\[0\]\.response: the chunk sizes add up"):
        load_cassette_file(path)
    assert main(["cassette", "verify", str(path)]) == 1
    assert "interactions[0].response" in capsys.readouterr().out


def test_verify_decodes_every_stream_as_replay_would(tmp_path, capsys):
    def edit(data):
        chunks = data["interactions"][0]["response"]["chunks"]
        chunks[1]["text"] = "data: {not json\n\n"  # valid as a file, fails in the adapter's decoder

    path = edited(tmp_path, "openai_chat/adapter_tool_round_trip.json", edit)
    load_cassette_file(path)  # the format is fine
    assert main(["cassette", "verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert "interactions[0].response.chunks[1]: does not decode" in out


def test_a_miss_names_the_interaction_at_the_same_position_and_the_real_field(tmp_path):
    """A hand-edited request body of interaction 0: the miss points at interaction 0 and at the
    edited field, not at interaction 1 and a field "absent"."""
    source = EXAMPLES / "openai_chat/adapter_tool_round_trip.json"
    data = json.loads(source.read_text())
    live_first = json.loads(json.dumps(data["interactions"][0]["request"]["json"]))
    data["interactions"][0]["request"]["json"]["messages"][0]["content"] = "What is 2+4? Use the add tool."
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data))
    with httpx.Client(transport=ReplayTransport(Cassette(path))) as client:
        with pytest.raises(NoMatchingInteraction) as info:
            client.post("https://api.openai.com/v1/chat/completions", json=live_first)
    msg = str(info.value)
    assert "nearest recorded: interactions[0]" in msg
    assert "first difference: body messages[0].content (message 0)" in msg
    assert "2+4" in msg and "2+3" in msg and "<absent>" not in msg


# --- show and diff ------------------------------------------------------------------------------


def _run_cli(argv: list[str]) -> str:
    from loopkit.cli import cassette

    out = io.StringIO()
    args = build_parser().parse_args(argv)
    real = cassette._console
    cassette._console = lambda o, width=None: real(o, 80)  # as in an 80-column terminal
    try:
        args.handler(args, out=out)
    finally:
        cassette._console = real
    return out.getvalue()


def test_show_prints_the_whole_conversation_within_80_columns():
    out = _run_cli(["cassette", "show", str(EXAMPLES / "openai_chat/sdk_chat_stream.json")])
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "user" in out and "Say hello." in out and "Hello from the simulator." in out
    out = _run_cli(["cassette", "show", "--no-events", str(EXAMPLES / "anthropic/adapter_tool_round_trip.json")])
    assert max(len(line) for line in out.splitlines()) <= 80
    for part in ("What is 2+3? Use the add tool.", "add(", "tool add", "2 + 3 = 5."):
        assert part in out, part


def test_diff_shows_the_part_that_differs_of_a_long_value(tmp_path):
    source = EXAMPLES / "openai_chat/adapter_tool_round_trip.json"
    long = "word " * 80
    a, b = json.loads(source.read_text()), json.loads(source.read_text())
    a["interactions"][0]["request"]["json"]["messages"][0]["content"] = long + "ALPHA tail"
    b["interactions"][0]["request"]["json"]["messages"][0]["content"] = long + "OMEGA tail"
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    out = _run_cli(["cassette", "diff", str(pa), str(pb)])
    flat = "".join(line.strip(" │|") for line in out.splitlines())
    assert "ALPHA" in flat and "OMEGA" in flat
    assert max(len(line) for line in out.splitlines()) <= 80


def test_help_has_descriptions_without_markup(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    for argv in (["record", "--help"], ["cassette", "--help"], ["cassette", "verify", "--help"], ["cassette", "show", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        out = capsys.readouterr().out
        assert "``" not in out and ":func:" not in out and ":class:" not in out, argv
        assert max(len(line) for line in out.splitlines()) <= 100, argv
    with pytest.raises(SystemExit):
        main(["record", "--help"])
    out = capsys.readouterr().out
    assert "reverse proxy" in out and "exit status" in out


# --- loopkit record -----------------------------------------------------------------------------


def test_record_rejects_a_bad_upstream_and_a_missing_folder(tmp_path, capsys):
    assert main(["record", "--upstream", "notaurl", "--cassette", str(tmp_path / "x.json")]) == 2
    assert "--upstream must be an http:// or https:// URL" in capsys.readouterr().out
    assert main(["record", "--upstream", "http://127.0.0.1:9", "--cassette", "/nonexistent/dir/x.json"]) == 2
    out = capsys.readouterr().out
    assert "does not exist" in out and "saved" not in out
    assert not Path("/nonexistent/dir").exists()


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_record_console_prints_no_secret_no_traceback_and_an_honest_count(tmp_path, stop):
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    path = tmp_path / "r.json"
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # started as a shell starts a background job
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "loopkit", "record", "--upstream", f"http://127.0.0.1:{upstream.server_port}", "--cassette", str(path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        first = proc.stdout.readline()
        base = first.split(" on ")[1].split(" ")[0]
        with httpx.Client(base_url=base) as client:  # keep-alive: the client closes its connection at the end
            for _ in range(2):
                r = client.post(f"/v1/chat/completions?api_key={KEY}", json={"messages": [{"role": "user", "content": f"key {KEY}"}]})
                assert r.content == b"".join(EVENTS)
    finally:
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=60)
        upstream.shutdown()
        upstream.server_close()
    everything = first + out + err
    assert KEY[:8] not in everything and KEY[-8:] not in everything
    assert "Traceback" not in everything and "ConnectionResetError" not in everything
    assert "POST /v1/chat/completions?api_key=%3Cscrubbed%3E -> 200" in everything or "api_key=<scrubbed>" in everything
    assert "saved 2 interaction(s)" in out and proc.returncode == 0
    assert KEY[:8] not in path.read_text()


def test_record_with_nothing_recorded_says_so_and_fails(tmp_path):
    from loopkit.cli.record import report

    class Proxy:
        save_error = None
        cassette = Cassette(None, record_mode="all")

    out = io.StringIO()
    assert report(Proxy(), str(tmp_path / "x.json"), out) == 1
    assert "nothing was recorded" in out.getvalue() and "saved" not in out.getvalue()


def test_show_and_diff_print_no_secret_even_from_a_hand_edited_file(tmp_path):
    def edit(data):
        chunks = data["interactions"][0]["response"]["chunks"]
        text = next(c for c in chunks if '"content":"' in c.get("text", ""))
        text["text"] = text["text"].replace('"content":"', f'"content":"{KEY} ', 1)  # a delta now holds the key
        data["meta"] = {"by": KEY}

    path = edited(tmp_path, "openai_chat/adapter_tool_round_trip.json", edit)
    assert KEY[:12] in path.read_text()
    for argv in (["cassette", "show", str(path)], ["cassette", "show", "--json", str(path)], ["cassette", "diff", str(EXAMPLES / "openai_chat/adapter_tool_round_trip.json"), str(path)]):
        out = _run_cli(argv)
        assert KEY[:8] not in out and KEY[-8:] not in out, argv
