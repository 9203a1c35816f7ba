"""The cassette pytest plugin end to end with pytester: record, replay, drift, network, teardown."""

from __future__ import annotations

import json
from importlib.metadata import entry_points

pytest_plugins = ["pytester"]

PLUGIN_ARGS = () if any(ep.value == "loopkit.pytest_cassettes" for ep in entry_points(group="pytest11")) else ("-p", "loopkit.pytest_cassettes")

TEST_FILE = """
import httpx, pytest, socket

def server(request):
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"data: {\\"n\\": 1}\\n\\ndata: [DONE]\\n\\n")

def test_chat(loopkit_cassette):
    with httpx.Client(transport=loopkit_cassette.transport(httpx.MockTransport(server))) as c:
        r = c.post("https://api.openai.com/v1/chat/completions", json={"messages": [{"role": "user", "content": "QUESTION"}]},
                   headers={"authorization": "Bearer sk-abcdefghijklmnopqrstuvwxyz"})
    assert r.text.startswith("data: ")
"""


def test_record_then_replay_then_drift(pytester):
    pytester.makepyfile(test_agent=TEST_FILE.replace("QUESTION", "2+2?"))
    pytester.runpytest(*PLUGIN_ARGS, "--loopkit-record=once").assert_outcomes(passed=1)
    path = pytester.path / "cassettes" / "test_agent" / "test_chat.json"
    data = json.loads(path.read_text())
    assert data["interactions"][0]["request"]["json"]["messages"][0]["content"] == "2+2?"
    assert "sk-abc" not in path.read_text()
    # replay: the MockTransport must not be reached
    pytester.makepyfile(test_agent=TEST_FILE.replace("QUESTION", "2+2?").replace("def server(request):", "def server(request):\n    raise AssertionError('reached')"))
    pytester.runpytest(*PLUGIN_ARGS).assert_outcomes(passed=1)
    # drift
    pytester.makepyfile(test_agent=TEST_FILE.replace("QUESTION", "2+3?"))
    result = pytester.runpytest(*PLUGIN_ARGS)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*NoMatchingInteraction*", "*first difference: body messages[[]0[]].content (message 0)*", "*--loopkit-record=new_episodes*"])


def test_missing_cassette_in_mode_none_says_how_to_record(pytester):
    pytester.makepyfile(test_agent=TEST_FILE)
    result = pytester.runpytest(*PLUGIN_ARGS)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*cassette not found and record_mode is 'none'*--loopkit-record=once*"])


def test_network_is_blocked_while_replaying(pytester):
    pytester.makepyfile(test_agent=TEST_FILE.replace("QUESTION", "x"))
    pytester.runpytest(*PLUGIN_ARGS, "--loopkit-record=once").assert_outcomes(passed=1)
    pytester.makepyfile(
        test_agent=TEST_FILE.replace("QUESTION", "x")
        + """
    import urllib3
    try:
        urllib3.PoolManager(retries=False).request("GET", "http://203.0.113.7:81/", timeout=1)
    except Exception:
        pass  # a client that swallows the error still fails the test
"""
    )
    result = pytester.runpytest(*PLUGIN_ARGS)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*tried to reach the network while replaying*203.0.113.7:81*"])


def test_unplayed_interactions_fail_at_teardown_unless_allowed(pytester):
    pytester.makepyfile(
        test_two="""
import httpx, pytest

def server(request):
    return httpx.Response(200, json={"ok": True})

@pytest.mark.loopkit_cassette("two.json")
def test_two(loopkit_cassette):
    with httpx.Client(transport=loopkit_cassette.transport(httpx.MockTransport(server))) as c:
        c.post("https://x/v1/a", json={"n": 1})
        c.post("https://x/v1/a", json={"n": 2})

@pytest.mark.loopkit_cassette("two.json")
def test_one(loopkit_cassette):
    with httpx.Client(transport=loopkit_cassette.transport()) as c:
        c.post("https://x/v1/a", json={"n": 1})

@pytest.mark.loopkit_cassette("two.json", fail_unplayed=False)
def test_one_allowed(loopkit_cassette):
    with httpx.Client(transport=loopkit_cassette.transport()) as c:
        c.post("https://x/v1/a", json={"n": 1})
"""
    )
    pytester.runpytest(*PLUGIN_ARGS, "--loopkit-record=once", "test_two.py::test_two").assert_outcomes(passed=1)
    assert (pytester.path / "cassettes" / "two.json").exists()  # marker paths are relative to the cassette folder
    result = pytester.runpytest(*PLUGIN_ARGS, "test_two.py::test_one", "test_two.py::test_one_allowed")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*UnplayedInteractions*1 recorded interaction(s) were never requested*"])


def test_vcr_helper_for_clients_without_an_injectable_transport(pytester):
    """``loopkit_cassette.vcr()`` records through vcrpy into the same per-test file and replays."""
    pytester.makepyfile(
        test_sdk="""
import httpx2

class Body(httpx2.SyncByteStream):
    def __iter__(self):
        yield b"data: 1\\n\\ndata: 2\\n\\n"

def server(request):
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=Body())

def test_sdk(loopkit_cassette):
    with loopkit_cassette.vcr():
        with httpx2.Client(transport=httpx2.MockTransport(server)) as c:
            with c.stream("POST", "https://api.example.com/v1/x", json={"q": 1}) as r:
                chunks = list(r.iter_raw())
    assert b"".join(chunks) == b"data: 1\\n\\ndata: 2\\n\\n"
"""
    )
    pytester.runpytest(*PLUGIN_ARGS, "--loopkit-record=once").assert_outcomes(passed=1)
    data = json.loads((pytester.path / "cassettes" / "test_sdk" / "test_sdk.json").read_text())
    assert [c["text"] for c in data["interactions"][0]["response"]["chunks"]] == ["data: 1\n\n", "data: 2\n\n"]
    pytester.runpytest(*PLUGIN_ARGS).assert_outcomes(passed=1)


def test_every_relative_path_is_resolved_against_the_cassette_folder(pytester):
    """The default path mirrors the test file's path (no clash between same-named modules in two
    folders); marker paths and the default share one folder, set relative to the ini file."""
    body = '''
import httpx, pytest

def server(request):
    return httpx.Response(200, json={"ok": True})

def test_default(loopkit_cassette):
    with httpx.Client(transport=loopkit_cassette.transport(httpx.MockTransport(server))) as c:
        c.post("https://x/v1/a", json={"n": 1})

@pytest.mark.loopkit_cassette("shared/one.json")
def test_marker(loopkit_cassette):
    with httpx.Client(transport=loopkit_cassette.transport(httpx.MockTransport(server))) as c:
        c.post("https://x/v1/a", json={"n": 1})
'''
    pytester.mkpydir("a")
    pytester.mkpydir("b")
    (pytester.path / "a" / "test_same.py").write_text(body)
    (pytester.path / "b" / "test_same.py").write_text(body.replace("shared/one.json", "shared/two.json"))
    pytester.makeini("[pytest]\nloopkit_cassette_dir = recorded\n")
    pytester.runpytest(*PLUGIN_ARGS, "--loopkit-record=once").assert_outcomes(passed=4)
    made = sorted(str(p.relative_to(pytester.path)) for p in (pytester.path / "recorded").rglob("*.json"))
    assert made == ["recorded/a/test_same/test_default.json", "recorded/b/test_same/test_default.json", "recorded/shared/one.json", "recorded/shared/two.json"]
    pytester.runpytest(*PLUGIN_ARGS).assert_outcomes(passed=4)  # and they replay from there
