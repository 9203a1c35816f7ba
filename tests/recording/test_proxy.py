"""The recording reverse proxy: a client on 127.0.0.1 records through it against a local upstream."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from loopkit.recording import Cassette, ReplayTransport, load_cassette_file
from loopkit.recording._proxy import RecordingProxy

EVENTS = [b'data: {"n": 1}\n\n', b'data: {"n": 2}\n\n', b"data: [DONE]\n\n"]


class Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for e in EVENTS:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(e), e))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, *a):
        pass


def test_proxy_records_a_streamed_exchange(tmp_path):
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    path = tmp_path / "p.json"
    try:
        with RecordingProxy(f"http://127.0.0.1:{upstream.server_port}", Cassette(path, record_mode="all")) as proxy:
            with httpx.Client(base_url=proxy.base_url) as c:
                with c.stream("POST", "/v1/chat/completions", json={"messages": []}, headers={"authorization": "Bearer sk-abcdefghijklmnopqrstuvwxyz"}) as r:
                    got = b"".join(r.iter_raw())
    finally:
        upstream.shutdown()
        upstream.server_close()
    assert got == b"".join(EVENTS)
    inter = load_cassette_file(path).interactions[0]
    assert inter.request.url.endswith("/v1/chat/completions")
    assert dict(inter.request.headers)["authorization"] == "<scrubbed>"
    assert b"".join(c.text.encode() for c in inter.response.chunks) == b"".join(EVENTS)
    with httpx.Client(transport=ReplayTransport(Cassette(path))) as c:
        assert c.post(f"http://127.0.0.1:{upstream.server_port}/v1/chat/completions", json={"messages": []}).content == b"".join(EVENTS)


def test_record_command_parses_and_reports_a_busy_port(tmp_path):
    """``loopkit record`` builds its proxy from the options; a port in use is an error, not a crash."""
    import argparse
    import io
    import socket

    from loopkit.cli import record

    parser = argparse.ArgumentParser(prog="loopkit")
    record.add_parser(parser.add_subparsers(dest="command"))
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        args = parser.parse_args(["record", "--upstream", "http://127.0.0.1:9", "--cassette", str(tmp_path / "c.json"), "--port", str(busy.getsockname()[1])])
        assert (args.record_mode, args.handler) == ("all", record.run)
        out = io.StringIO()
        assert record.run(args, out=out) == 2
        assert out.getvalue().startswith("error: ")
    finally:
        busy.close()


def test_proxy_records_the_anthropic_sdk_against_the_simulator(tmp_path):
    """The recording proxy with a simulator as the upstream, and an official SDK as the client."""
    import anthropic

    from loopkit import simulators
    from loopkit.script import Turn

    path = tmp_path / "sdk.json"
    with simulators.serve("anthropic", [Turn(text="Hello through the proxy", chunk_size=4)]) as sim:
        with RecordingProxy(sim.base_url, Cassette(path, record_mode="all")) as proxy:
            client = anthropic.Anthropic(api_key="sk-ant-api03-abcdefghijklmnopqrstuvwxyz", base_url=proxy.base_url, max_retries=0)
            with client.messages.stream(model="claude-test", max_tokens=50, messages=[{"role": "user", "content": "hi"}]) as stream:
                text = "".join(stream.text_stream)
        sim.assert_complete()
    assert text == "Hello through the proxy"
    inter = load_cassette_file(path).interactions[0]
    assert inter.request.url.endswith("/v1/messages") and inter.response.status == 200
    assert len(inter.response.chunks) > 1
    assert "sk-ant-api03" not in path.read_text()
