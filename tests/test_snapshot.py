"""loopkit.snapshot.snapshot_data: deterministic plain data for runs, messages and events."""

from __future__ import annotations

import itertools

import loopkit
from loopkit.fakes import ScriptedProvider
from loopkit.script import Turn, call
from loopkit.serde import dump_messages
from loopkit.snapshot import snapshot_data


@loopkit.tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def _run(prefix: str, clock_start: int):
    counter = itertools.count(7)
    turns = [Turn(tool_calls=[call("add", {"a": 1, "b": 2}), call("add", {"a": 2, "b": 2})]), "7"]
    return loopkit.run(ScriptedProvider(turns, ids=lambda: f"{prefix}{next(counter)}"), "go", tools=[add], clock=loopkit.TickClock(start=clock_start))


def test_two_runs_with_other_ids_and_clocks_give_the_same_data() -> None:
    a, b = _run("toolu_", 1), _run("call_x", 10_000)
    assert snapshot_data(a) == snapshot_data(b)
    assert snapshot_data(a.events) == snapshot_data(b.events)
    assert snapshot_data(dump_messages(a.messages)) == snapshot_data(a.messages) == snapshot_data(a)["messages"]


def test_ids_are_renumbered_consistently_and_timestamps_dropped() -> None:
    data = snapshot_data(_run("toolu_", 1))
    assert data["reason"] == "stop" and data["model_calls"] == 2
    assert [b["id"] for b in data["messages"][1]["content"]] == ["call_1", "call_2"]
    assert [m["tool_call_id"] for m in data["messages"][2:4]] == ["call_1", "call_2"]
    assert not any("timestamp" in m for m in data["messages"])


def test_events_are_compact_and_use_the_same_ids() -> None:
    events = snapshot_data(_run("toolu_", 1).events)
    types = [e["type"] for e in events]
    assert types[0] == "agent_start" and types[-1] == "agent_end"
    assert {"type": "message_start", "role": "assistant"} in events
    starts = [e for e in events if e["type"] == "tool_execution_start"]
    assert [(e["tool_call_id"], e["args"]) for e in starts] == [("call_1", {"a": 1, "b": 2}), ("call_2", {"a": 2, "b": 2})]
    updates = [e["event"] for e in events if e["type"] == "message_update"]
    assert any(u["type"] == "toolcall_start" and u["id"] == "call_1" for u in updates)
    assert events[-1] == {"type": "agent_end", "reason": "stop"}


def test_keep_ids() -> None:
    data = snapshot_data(_run("toolu_", 1), keep_ids=True)
    assert [b["id"] for b in data["messages"][1]["content"]] == ["toolu_7", "toolu_8"]


def test_import_loopkit_snapshot_does_not_import_syrupy() -> None:
    import subprocess
    import sys

    code = "import sys, loopkit.snapshot; assert 'syrupy' not in sys.modules; from loopkit.snapshot import LoopkitExtension; assert 'syrupy' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
