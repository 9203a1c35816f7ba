"""The network guard: non-loopback connections fail for every client; loopback still works."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import httpx
import httpx2
import pytest
import urllib3

from loopkit.errors import NetworkBlocked
from loopkit.recording import block_network
from loopkit.recording._netguard import is_loopback

REMOTE = "http://203.0.113.7:81/"  # TEST-NET-3: never routable, so nothing leaks if the guard failed


def test_raw_socket_connect_is_blocked_and_recorded():
    with block_network() as guard:
        s = socket.socket()
        try:
            with pytest.raises(NetworkBlocked, match=r"connect to 203.0.113.7:81"):
                s.connect(("203.0.113.7", 81))
            with pytest.raises(NetworkBlocked):
                s.connect_ex(("2001:db8::1", 81, 0, 0))
        finally:
            s.close()
    assert guard.attempts == ["203.0.113.7:81", "2001:db8::1:81"]


def test_name_lookup_is_blocked():
    with block_network():
        with pytest.raises(NetworkBlocked, match="name lookup to api.openai.com:443"):
            socket.getaddrinfo("api.openai.com", 443)


@pytest.mark.parametrize("client", ["httpx", "httpx2", "urllib3"])
def test_http_clients_are_blocked(client):
    with block_network() as guard:
        with pytest.raises(Exception) as info:
            if client == "httpx":
                httpx.get(REMOTE, timeout=2)
            elif client == "httpx2":
                httpx2.get(REMOTE, timeout=2)
            else:
                urllib3.PoolManager(retries=False).request("GET", REMOTE, timeout=2)
    chain = []
    exc = info.value
    while exc is not None:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    assert any(isinstance(e, NetworkBlocked) for e in chain) or "network access blocked" in str(info.value)
    assert guard.attempts


def test_loopback_is_allowed_and_guard_is_undone():
    class Hello(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *a):
            pass

    server = HTTPServer(("127.0.0.1", 0), Hello)
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    original = socket.socket.connect
    try:
        with block_network() as guard:
            assert httpx.get(f"http://127.0.0.1:{server.server_port}/").text == "ok"
            assert httpx.get(f"http://localhost:{server.server_port}/").text == "ok"
        assert guard.attempts == []
    finally:
        server.shutdown()
        server.server_close()
    assert socket.socket.connect is original


@pytest.mark.parametrize(("host", "ok"), [("127.0.0.1", True), ("127.9.9.9", True), ("::1", True), ("::ffff:127.0.0.1", True), ("localhost", True), ("10.0.0.1", False), ("example.com", False), ("0.0.0.0", False)])
def test_is_loopback(host, ok):
    assert is_loopback(host) is ok


def test_a_guard_that_ends_out_of_order_leaves_the_newer_one_on():
    """An earlier guard that ends late (left open by a generator the garbage collector finishes,
    or on another thread) must not switch off a newer one: it once put the real socket functions
    back under a test's own guard, and a blocked connection went out and was retried."""
    real = socket.socket.connect
    older, newer = block_network(), block_network()
    older.__enter__()
    guard = newer.__enter__()
    older.__exit__(None, None, None)
    try:
        with pytest.raises(NetworkBlocked):
            socket.create_connection(("192.0.2.1", 80), timeout=0.5)
        assert guard.attempts == ["192.0.2.1:80"]
    finally:
        newer.__exit__(None, None, None)
    assert socket.socket.connect is real
