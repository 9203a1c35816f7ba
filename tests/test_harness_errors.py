"""One rule for harness errors (issue 11, "Loud failures"): a cassette miss, a script that ran out
and a simulator overrun mean the test's setup is wrong. They propagate out of ``run``, ``arun``,
``Runtime.exec`` and the scenario runner whatever ``raise_errors`` says, are never wrapped or
retried by an adapter, and where an official SDK swallows them, the cassette or simulator raises
the first one when it closes. Real provider failures keep their error stop.
"""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import httpx
import pytest

import loopkit
from loopkit import simulators
from loopkit.errors import (
    HarnessError,
    IncompleteScript,
    NetworkBlocked,
    NoMatchingInteraction,
    ProviderError,
    ScriptExhausted,
    ServerError,
    UnplayedInteractions,
    UsageError,
)
from loopkit.fakes import FunctionProvider, ScriptedProvider
from loopkit.providers import adapter_class
from loopkit.recording import Cassette, CassetteTransport, RecordingProvider, ReplayProvider, block_network, use_cassette
from loopkit.retry import RetryPolicy
from loopkit.runtime import Runtime, TickClock
from loopkit.script import HttpFault, Turn, call

KEY = "sk-test"
pytest_plugins = ["pytester"]


@loopkit.tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


def adapter(transport=None, *, base_url=None, retry=None, protocol="openai_chat"):
    kw = {"retry": retry} if retry is not None else {}
    return adapter_class(protocol)(model="gpt-x", api_key=KEY, transport=transport, base_url=base_url, **kw)


def record(path, prompt="Weather in Paris?", protocol="openai_chat") -> None:
    """A two-call conversation (a tool call, then the answer) recorded through an adapter."""
    script = [Turn(tool_calls=[call("lookup", {"city": "Paris"}, id="c1")]), Turn(text="Sunny.")]
    with use_cassette(path, record_mode="once") as cassette:
        inner = simulators.transport(protocol, script)
        provider = RecordingProvider(adapter(CassetteTransport(cassette, inner), protocol=protocol), cassette)
        result = loopkit.run(provider, prompt, tools=[lookup], clock=TickClock())
    assert result.reason == "stop" and len(cassette.interactions) == 2


# --- the class hierarchy -------------------------------------------------------------------------


def test_setup_errors_share_the_harness_base_and_provider_failures_do_not():
    for cls in (NoMatchingInteraction, UnplayedInteractions, ScriptExhausted, IncompleteScript, UsageError, NetworkBlocked):
        assert issubclass(cls, HarnessError), cls
    from loopkit.errors import CassetteError, ScenarioError, StreamProtocolError, WireError

    assert issubclass(CassetteError, HarnessError) and issubclass(ScenarioError, HarnessError)
    for cls in (ProviderError, ServerError, WireError, StreamProtocolError):
        assert not issubclass(cls, HarnessError), cls


# --- a cassette miss -----------------------------------------------------------------------------


@pytest.mark.parametrize("raise_errors", [False, True])
def test_a_cassette_miss_inside_run_raises_the_miss_with_its_diff(tmp_path, raise_errors):
    """Regression: the miss ended the run with reason 'error', its diff only in the last message."""
    path = tmp_path / "c.json"
    record(path)
    sleeps: list[float] = []
    with pytest.raises(NoMatchingInteraction) as info:
        with use_cassette(path) as cassette:
            provider = adapter(CassetteTransport(cassette), retry=RetryPolicy(max_retries=3, sleep=sleeps.append))
            loopkit.run(provider, "Weather in Oslo?", tools=[lookup], clock=TickClock(), raise_errors=raise_errors)
    assert sleeps == [] and len(cassette.harness_errors) == 1  # neither wrapped nor retried
    msg = str(info.value)
    assert "nearest recorded: interactions[0]" in msg
    assert "- recorded: 'Weather in Paris?'" in msg and "+ live:     'Weather in Oslo?'" in msg
    assert not isinstance(info.value, UnplayedInteractions)


def test_a_miss_is_never_reported_as_unplayed_interactions(tmp_path):
    """Regression: use_cassette raised UnplayedInteractions ("fewer calls") after a miss."""
    path = tmp_path / "c.json"
    record(path)
    with pytest.raises(NoMatchingInteraction, match="Weather in Rome"):
        with use_cassette(path) as cassette:
            try:
                loopkit.run(adapter(CassetteTransport(cassette)), "Weather in Rome?", tools=[lookup], clock=TickClock())
            except NoMatchingInteraction:
                pass  # code under test that swallows the error: the cassette still raises it


@pytest.mark.parametrize("retries", [0, 2])
def test_a_miss_swallowed_by_the_anthropic_sdk_is_raised_when_use_cassette_closes(tmp_path, monkeypatch, retries):
    """The anthropic SDK wraps any transport exception in APIConnectionError and retries it."""
    anthropic = pytest.importorskip("anthropic")
    httpx2 = pytest.importorskip("httpx2")
    import anthropic._base_client as sdk

    waits: list[float] = []  # the SDK's backoff between retries, not slept
    monkeypatch.setattr(sdk, "time", SimpleNamespace(time=time.time, time_ns=time.time_ns, sleep=waits.append))
    path = tmp_path / "c.json"
    record(path, protocol="anthropic")
    with pytest.raises(NoMatchingInteraction, match="no recorded interaction matches POST /v1/messages") as info:
        with use_cassette(path) as cassette:
            transport = CassetteTransport(cassette, httpx_module=httpx2)
            client = anthropic.Anthropic(api_key=KEY, max_retries=retries, http_client=httpx2.Client(transport=transport))
            with pytest.raises(anthropic.APIConnectionError):
                client.messages.create(model="gpt-x", max_tokens=100, messages=[{"role": "user", "content": "Weather in Lima?"}])
            assert len(cassette.harness_errors) == retries + 1  # every attempt missed
            assert len(waits) == retries
    assert "first difference" in str(info.value) and info.value is cassette.harness_errors[0]


def test_a_miss_through_the_openai_sdk_surfaces_as_itself(tmp_path):
    openai = pytest.importorskip("openai")
    httpx2 = pytest.importorskip("httpx2")
    path = tmp_path / "c.json"
    record(path)
    with pytest.raises(NoMatchingInteraction, match="Weather in Lima"):
        with use_cassette(path) as cassette:
            transport = CassetteTransport(cassette, httpx_module=httpx2)
            client = openai.OpenAI(api_key=KEY, base_url="https://api.openai.com/v1", max_retries=2, http_client=httpx2.Client(transport=transport))
            client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "Weather in Lima?"}])
    assert len(cassette.harness_errors) == 1  # not retried


def test_a_block_that_fails_for_another_reason_after_a_swallowed_miss_raises_the_miss(tmp_path):
    path = tmp_path / "c.json"
    record(path)
    with pytest.raises(NoMatchingInteraction) as info:
        with use_cassette(path) as cassette:
            try:
                loopkit.run(adapter(CassetteTransport(cassette)), "Weather in Kyiv?", clock=TickClock())
            except NoMatchingInteraction:
                pass
            raise KeyError("the test's own assertion, caused by the miss")
    assert isinstance(info.value.__cause__, KeyError)


def test_replay_provider_inside_use_cassette_needs_no_fail_unplayed_false(tmp_path):
    """Regression (issue 14): transcripts replayed by a ReplayProvider never counted as played."""
    path = tmp_path / "c.json"
    record(path)
    with use_cassette(path) as cassette:
        result = loopkit.run(ReplayProvider(cassette), "Weather in Paris?", tools=[lookup], clock=TickClock())
    assert result.reason == "stop" and result.text == "Sunny."
    # a run that makes fewer calls is reported as such
    with pytest.raises(UnplayedInteractions, match=r"1 recorded interaction\(s\) were never requested: \[1\] POST"):
        with use_cassette(path) as cassette:
            loopkit.run(ReplayProvider(cassette), "Weather in Paris?", tools=[lookup], max_iterations=1, clock=TickClock())
    # and a run that asks for something else is a miss, not "fewer calls"
    with pytest.raises(NoMatchingInteraction, match="differs from the recording"):
        with use_cassette(path) as cassette:
            loopkit.run(ReplayProvider(cassette), "Weather in Oslo?", tools=[lookup], clock=TickClock())
    replay = ReplayProvider(Cassette(path))
    with pytest.raises(NoMatchingInteraction):
        loopkit.run(replay, "Weather in Oslo?", tools=[lookup], clock=TickClock())
    with pytest.raises(NoMatchingInteraction, match="differs from the recording"):
        replay.assert_complete()


def test_replay_provider_counts_the_retried_attempts_of_a_call_as_played(tmp_path):
    path = tmp_path / "c.json"
    script = [Turn(faults=[HttpFault(status=500)]), Turn(text="Sunny.")]
    with use_cassette(path, record_mode="once") as cassette:
        inner = simulators.transport("openai_chat", script)
        retrying = adapter(CassetteTransport(cassette, inner), retry=RetryPolicy(max_retries=1, sleep=lambda s: None))
        assert loopkit.run(RecordingProvider(retrying, cassette), "hi", clock=TickClock()).text == "Sunny."
    assert [i.transcript is not None for i in cassette.interactions] == [False, True]
    with use_cassette(path) as cassette:
        assert loopkit.run(ReplayProvider(cassette), "hi", clock=TickClock()).text == "Sunny."


def test_the_network_guard_is_raised_as_itself_not_as_a_retried_connection_error():
    """httpcore wraps the guard's OSError in ConnectError; the adapter must not retry it as a
    dropped connection."""
    sleeps: list[float] = []
    provider = adapter(base_url="http://192.0.2.1/v1", retry=RetryPolicy(max_retries=3, sleep=sleeps.append))
    with block_network():
        with pytest.raises(NetworkBlocked):
            loopkit.run(provider, "hi", clock=TickClock())
    assert sleeps == [] and provider.attempts == [1]


@pytest.mark.parametrize("link", ["cause", "context"])
@pytest.mark.parametrize("raise_errors", [False, True])
def test_a_harness_error_a_client_library_wrapped_leaves_the_run_as_itself(link, raise_errors):
    """Regression: an SDK's connection error around the guard's NetworkBlocked (or httpcore's
    own, when httpx's exception table did not know its class) ended the run as a quiet error
    stop, or with raise_errors as the wrapper."""

    class SDKConnectionError(Exception):
        pass

    blocked = NetworkBlocked("network access blocked: connect to 192.0.2.1:443")

    def answer(request):
        try:
            raise blocked
        except NetworkBlocked as exc:
            if link == "cause":
                raise SDKConnectionError("Connection error.") from exc
            raise SDKConnectionError("Connection error.")  # noqa: B904 - the context alone links them

    with pytest.raises(NetworkBlocked) as info:
        loopkit.run(FunctionProvider(answer), "hi", raise_errors=raise_errors)
    assert info.value is blocked


# --- a script that ran out -----------------------------------------------------------------------


@pytest.mark.parametrize("raise_errors", [False, True])
def test_scripted_provider_overrun_propagates_and_assert_complete_reports_it(raise_errors):
    """Regression: the overrun ended as a quiet error stop and assert_complete() then passed."""
    fake = ScriptedProvider([Turn(tool_calls=[call("lookup", {"city": "Paris"}, id="c1")])])
    with pytest.raises(ScriptExhausted, match=r"^ScriptedProvider: script exhausted: request #2 needs turn 2, but the script has 1 turn\(s\)"):
        loopkit.run(fake, "hi", tools=[lookup], raise_errors=raise_errors)
    with pytest.raises(IncompleteScript, match=r"^ScriptedProvider: request\(s\) #2 arrived after the script was exhausted$"):
        fake.assert_complete()


def test_both_fakes_word_overruns_and_unused_turns_alike():
    def messages(fake, make_request):
        make_request(fake)
        make_request(fake)
        make_request(fake)
        with pytest.raises(IncompleteScript) as info:
            fake.assert_complete()
        return str(info.value).split(": ", 1)[1], [str(e).split(": ", 1)[1] for e in fake.harness_errors]

    def via_loop(fake):
        try:
            loopkit.run(fake, "hi")
        except ScriptExhausted:
            pass

    def via_http(sim):
        with httpx.Client(transport=simulators.transport(sim), base_url="http://sim") as client:
            try:
                client.post("/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
            except ScriptExhausted:
                pass

    scripted = messages(ScriptedProvider(["one"]), via_loop)
    simulated = messages(simulators.create("openai_chat", ["one"]), via_http)
    assert scripted == simulated == (
        "request(s) #2, #3 arrived after the script was exhausted",
        [f"script exhausted: request #{n} needs turn 2, but the script has 1 turn(s); add a turn, or check why the code under test made another request" for n in (2, 3)],
    )
    unused = [ScriptedProvider(["a", "b", "c"]), simulators.create("anthropic", ["a", "b", "c"])]
    for fake in unused:
        with pytest.raises(IncompleteScript, match=r": 3 of 3 turn\(s\) never used \(turns 1..3\)$"):
            fake.assert_complete()


def test_arun_exec_and_aexec_propagate_a_harness_error():
    with pytest.raises(ScriptExhausted):
        asyncio.run(loopkit.arun(ScriptedProvider([]), "hi"))
    runtime = Runtime(ScriptedProvider([Turn(tool_calls=[call("lookup", {"city": "Oslo"}, id="c1")])]))
    with pytest.raises(ScriptExhausted):  # never RunFailed: the run did not fail, the setup did
        runtime.exec("hi", tools=[lookup])
    with pytest.raises(ScriptExhausted):
        asyncio.run(Runtime(ScriptedProvider([])).aexec("hi", tools=[]))


def test_a_nested_runs_exhausted_script_inside_a_tool_propagates():
    inner = ScriptedProvider([])

    @loopkit.tool
    def delegate(question: str) -> str:
        """Ask a sub-agent."""
        return Runtime().exec(question, provider=inner, tools=[])

    outer = ScriptedProvider([Turn(tool_calls=[call("delegate", {"question": "why?"}, id="c1")]), "done"])
    with pytest.raises(ScriptExhausted, match="request #1 needs turn 1"):
        loopkit.run(outer, "go", tools=[delegate])


def test_a_nested_runs_exhausted_script_wrapped_by_the_tool_still_propagates():
    """Regression: a tool that wraps whatever its sub-agent raises turned the overrun into its own
    error result, which the outer model then read as a tool failure."""
    inner = ScriptedProvider([])

    @loopkit.tool
    def delegate(question: str) -> str:
        """Ask a sub-agent."""
        try:
            return Runtime().exec(question, provider=inner, tools=[])
        except Exception as exc:
            raise RuntimeError("the sub-agent failed") from exc

    outer = ScriptedProvider([Turn(tool_calls=[call("delegate", {"question": "why?"}, id="c1")]), "done"])
    with pytest.raises(ScriptExhausted, match="request #1 needs turn 1"):
        loopkit.run(outer, "go", tools=[delegate])


def test_provider_failures_keep_their_error_stop():
    result = loopkit.run(ScriptedProvider([Turn(faults=[HttpFault(status=500)])]), "hi")
    assert result.reason == "error" and isinstance(result.error, ServerError)


# --- a simulator overrun -------------------------------------------------------------------------


def test_simulator_transport_overrun_raises_out_of_run_unwrapped_and_unretried():
    sleeps: list[float] = []
    transport = simulators.transport("openai_chat", ["one"])
    provider = adapter(transport, retry=RetryPolicy(max_retries=3, sleep=sleeps.append))
    loopkit.run(provider, "hi", clock=TickClock())
    with pytest.raises(ScriptExhausted, match=r"openai_chat simulator: script exhausted: request #2"):
        loopkit.run(provider, "again", clock=TickClock())
    assert sleeps == []
    with pytest.raises(IncompleteScript, match=r"request\(s\) #2 arrived after the script was exhausted"):
        transport.assert_complete()


def test_served_simulator_overrun_reaches_loopkits_adapter_as_itself():
    sleeps: list[float] = []
    with pytest.raises(ScriptExhausted, match="request #2") as info:
        with simulators.serve("openai_chat", ["one"]) as sim:
            provider = adapter(base_url=sim.base_url, retry=RetryPolicy(max_retries=3, sleep=sleeps.append))
            loopkit.run(provider, "hi", clock=TickClock())
            loopkit.run(provider, "again", clock=TickClock())
    assert (info.value.call_number, info.value.turns) == (2, 1)
    assert sleeps == [] and len(sim.requests) == 2  # not retried


@pytest.mark.parametrize("retries", [0, 2])
def test_overrun_swallowed_by_the_openai_sdk_is_raised_when_serve_closes(retries):
    openai = pytest.importorskip("openai")
    with pytest.raises(ScriptExhausted, match=r"^openai_chat simulator: script exhausted: request #2 needs turn 2"):
        with simulators.serve("openai_chat", ["one"]) as sim:
            client = openai.OpenAI(base_url=sim.base_url, api_key=KEY, max_retries=retries)
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            with pytest.raises(openai.InternalServerError):
                client.chat.completions.create(model="m", messages=[{"role": "user", "content": "again"}])
            client.close()
    assert sim.simulator.overruns == [2]  # x-should-retry: false: the SDK does not retry it, whatever its max_retries


def test_overrun_swallowed_by_the_anthropic_sdk_through_the_transport_is_raised_by_serve():
    anthropic = pytest.importorskip("anthropic")
    with pytest.raises(ScriptExhausted, match="anthropic simulator"):
        with simulators.serve("anthropic", []) as sim:
            client = anthropic.Anthropic(base_url=sim.base_url, api_key=KEY, max_retries=1)
            with pytest.raises(anthropic.InternalServerError):
                client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}])


# --- the pytest fixtures -------------------------------------------------------------------------


def test_fixtures_raise_a_swallowed_harness_error_at_teardown_once(pytester):
    pytester.makeconftest("")
    pytester.makepyfile(
        """
        import openai
        import pytest
        import loopkit
        from loopkit.errors import ScriptExhausted

        def test_sdk_swallows_the_overrun(loopkit_simulator):
            sim = loopkit_simulator("openai_chat", ["one"])
            client = openai.OpenAI(base_url=sim.base_url, api_key="k", max_retries=1)
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            try:
                client.chat.completions.create(model="m", messages=[{"role": "user", "content": "again"}])
            except openai.InternalServerError:
                pass  # the code under test gives up quietly

        def test_the_overrun_is_the_failure(scripted_provider):
            loopkit.run(scripted_provider([]), "hi")

        def test_an_expected_overrun_still_fails_at_teardown(scripted_provider):
            fake = scripted_provider([])
            with pytest.raises(ScriptExhausted):
                loopkit.run(fake, "hi")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1, errors=2)
    out = result.stdout.str()
    assert "ERROR at teardown of test_sdk_swallows_the_overrun" in out
    assert "ScriptExhausted: openai_chat simulator: script exhausted: request #2" in out
    assert "ERROR at teardown of test_the_overrun_is_the_failure" not in out  # reported once, as the failure
    assert "ERROR at teardown of test_an_expected_overrun_still_fails_at_teardown" in out


def test_cassette_fixture_raises_a_swallowed_miss_at_teardown(pytester, tmp_path):
    path = tmp_path / "c.json"
    record(path, protocol="anthropic")
    pytester.makepyfile(
        f"""
        import anthropic
        import httpx2
        import pytest

        @pytest.mark.loopkit_cassette({str(path)!r})
        def test_sdk_swallows_the_miss(loopkit_cassette):
            transport = loopkit_cassette.transport(httpx_module=httpx2)
            client = anthropic.Anthropic(api_key="k", max_retries=0, http_client=httpx2.Client(transport=transport))
            try:
                client.messages.create(model="gpt-x", max_tokens=9, messages=[{{"role": "user", "content": "Weather in Bern?"}}])
            except anthropic.APIConnectionError:
                pass  # the code under test gives up quietly
        """
    )
    before = path.read_bytes()
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    assert "NoMatchingInteraction" in out and "first difference: body" in out
    assert "UnplayedInteractions" not in out
    assert path.read_bytes() == before


# --- the CLI -------------------------------------------------------------------------------------


def test_loopkit_run_reports_a_scenario_whose_script_runs_out_as_a_setup_error(tmp_path, capsys):
    from loopkit.cli import main

    (tmp_path / "short.yaml").write_text(
        "name: short\nprompt: Add.\nscript:\n  - tool_calls: [{name: echo, arguments: {text: hi}, id: c1}]\n"
        "tools:\n  echo: echo\nexpect:\n  end: {reason: error}\n",
        encoding="utf-8",
    )
    assert main(["run", str(tmp_path / "short.yaml"), "--provider", "scripted", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("loopkit run: error: scenario ") and "short [scripted]: ScriptedProvider: script exhausted: request #2" in err
