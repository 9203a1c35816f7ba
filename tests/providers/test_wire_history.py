"""The incremental conversions can never go stale: adapters' WireHistory and simulators' cached
validation, with one provider or simulator seeing growing, unrelated, shortened and edited
histories."""

from __future__ import annotations

import pytest

from loopkit import simulators
from loopkit.errors import BadRequestError, UsageError
from loopkit.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from loopkit.provider import ModelRequest, ToolSpec
from loopkit.providers import ADAPTERS, adapter_class
from loopkit.providers._http import WireHistory

TOOLS = [ToolSpec(name="add", description="Add.", parameters={"type": "object", "properties": {"a": {"type": "integer"}}})]


def user(text: str) -> UserMessage:
    return UserMessage(content=text)


def calls(*ids: str, stop: str = "toolUse") -> AssistantMessage:
    return AssistantMessage(content=[ToolCall(id=i, name="add", arguments={"a": n}) for n, i in enumerate(ids)], stop_reason=stop)  # type: ignore[arg-type]


def result(call_id: str, text: str = "1", *, name: str = "add", error: bool = False) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)], is_error=error)


def answer(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], stop_reason="stop")


# --- WireHistory ----------------------------------------------------------------------------------


def _fold(history: WireHistory, messages: list, log: list, key: object = None) -> list:
    def step(out: list, m: object) -> None:
        log.append(m)
        out.append(m.content)  # type: ignore[attr-defined]

    return history.fold(messages, list, step, list, key=key)


def test_fold_goes_on_from_an_identical_prefix_and_starts_again_otherwise():
    history, log = WireHistory(), []
    a, b, c = user("a"), user("b"), user("c")
    assert _fold(history, [a, b], log) == ["a", "b"]
    assert _fold(history, [a, b, c], log) == ["a", "b", "c"] and log == [a, b, c]  # only c was new
    log.clear()
    assert _fold(history, [user("a"), b, c], log) == ["a", "b", "c"] and len(log) == 3  # an equal but other object
    log.clear()
    assert _fold(history, [a], log) == ["a"] and len(log) == 1  # shortened
    log.clear()
    assert _fold(history, [a, c], log) == ["a", "c"] and log == [c]
    log.clear()
    assert _fold(history, [a, c], log, key="other option") == ["a", "c"] and len(log) == 2


def test_a_step_that_raises_leaves_no_half_folded_state():
    history = WireHistory()
    a, b = user("a"), user("b")

    def step(out: list, m: UserMessage) -> None:
        if m.content == "boom":
            raise UsageError("boom")
        out.append(m.content)

    assert history.fold([a], list, step, list) == ["a"]
    with pytest.raises(UsageError):
        history.fold([a, user("boom")], list, step, list)
    assert history.fold([a, b], list, step, list) == ["a", "b"]


# --- adapters: the same provider, many histories ---------------------------------------------------


def _histories() -> list[list]:
    q, a1, r1, r2 = user("q"), calls("c1", "c2"), result("c1"), result("c2", error=True)
    failed = calls("c3", stop="error")
    grown = [q, a1, r1, r2, user("steer"), failed, result("c3"), calls("c4"), result("c4"), answer("done")]
    return [
        *(grown[:n] for n in range(1, len(grown) + 1)),  # the loop's growing history
        [user("another run"), calls("c1"), result("c1")],  # an unrelated history
        grown[:3],  # shortened
        [q, a1, result("c1", "edited"), r2],  # same length as a prefix, one message replaced
        [q, a1, r1, r2, user("steer"), answer("branch")],
        grown,
    ]


@pytest.mark.parametrize("protocol", list(ADAPTERS))
def test_one_provider_builds_every_history_as_a_fresh_provider_does(protocol: str):
    cls = adapter_class(protocol)
    shared = cls(model="m", api_key="k")
    earlier = []
    for messages in _histories():
        request = ModelRequest(messages, tools=TOOLS, system="sys")
        body = shared.build_request(request).json
        assert body == cls(model="m", api_key="k").build_request(request).json, messages
        earlier.append((request, body))
    for request, body in earlier:  # no later round changed a body already built
        assert body == cls(model="m", api_key="k").build_request(request).json


def test_bedrock_error_status_change_is_not_served_from_the_cache():
    cls = adapter_class("bedrock")
    provider = cls(model="m", api_key="k")
    request = ModelRequest([user("q"), calls("c1"), result("c1", "bad", error=True)], tools=TOOLS)
    with_status = provider.build_request(request).json
    provider.error_status = False
    assert provider.build_request(request).json == cls(model="m", api_key="k", error_status=False).build_request(request).json != with_status


@pytest.mark.parametrize(
    ("url", "headers", "content"),
    [
        ("http://sim/v1/messages", {"content-type": "application/json", "x-api-key": "k"}, b'{"a":1}'),
        ("https://h.example:8443/model/a%2Fb/converse?x=1", {"Content-Type": "application/json", "HOST": "other"}, b"{}"),
        ("http://sim/p", {"content-length": "2", "x": "y"}, b"{}"),
        ("http://sim/p", {}, b""),
    ],
)
def test_requests_are_the_ones_httpx_builds(url: str, headers: dict, content: bytes):
    import httpx

    provider = adapter_class("anthropic")(model="m", api_key="k", timeout=5)
    for _ in range(2):  # the second time from the parsed-URL cache
        ours = provider._request("POST", url, headers, content)
        ref = httpx.Request("POST", url, headers=headers, content=content, extensions=ours.extensions)
        assert (ours.method, ours.url, ours.headers.raw, ours.content) == (ref.method, ref.url, ref.headers.raw, ref.content)


# --- simulators: cached validation ----------------------------------------------------------------


@pytest.mark.parametrize("protocol", list(ADAPTERS))
def test_simulator_checks_whatever_is_not_the_last_valid_history(protocol: str):
    sim = simulators.create(protocol, ["ok", "ok", "ok"])
    provider = adapter_class(protocol)(model="m", api_key="k", base_url="http://sim" + sim.base_path, transport=simulators.transport(sim))
    q, a1, r1, a2, r2 = user("q"), calls("c1"), result("c1"), calls("c2"), result("c2")

    def send(messages: list) -> None:
        list(provider.stream(ModelRequest(messages, tools=TOOLS)))

    send([q, a1, r1, a2, r2])
    with pytest.raises(BadRequestError):  # the valid history, then a result that answers no call
        send([q, a1, r1, a2, r2, calls("c3"), result("c9", name="other")])
    with pytest.raises(BadRequestError):  # as long as the valid history, but wrong in the middle
        send([q, calls("c7"), result("c8", name="other"), a2, r2])
    with pytest.raises(BadRequestError):  # shorter than the valid history
        send([q, calls("c7"), result("c8", name="other")])
    send([q, a1, r1, a2, r2, calls("c3"), result("c3")])
    send([user("another run"), calls("c5"), result("c5")])
    assert sim.used == 3
