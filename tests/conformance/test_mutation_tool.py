"""tools/mutation.py's verdict rules: only a change confined to an error's message text is
judged ``wording``; anything that changes what the adapter does is not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("mutation_tool_rules", ROOT / "tools" / "mutation.py")
assert spec is not None and spec.loader is not None
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)


@pytest.mark.parametrize(
    "change",
    [
        '- raise UsageError(f"anthropic: cannot send {type(m).__name__}")\n+ raise UsageError(None)',
        '- raise ConnectionClosedError("stream ended early", provider="bedrock")\n+ raise ConnectionClosedError("XXstream ended earlyXX", provider="bedrock")',
        '- raise WireError(f"bad {x!r}") from exc\n+ raise WireError(f"BAD {x!r}") from exc',
        '- chunk = json_or_wire_error(data, f"{API} stream chunk")\n+ chunk = json_or_wire_error(data, None)',
        '- raise WireError(f"bad {payload.get(\'type\')}")\n+ raise WireError(f"bad {payload.get(None)}")',
    ],
)
def test_message_text_changes_are_wording(change: str) -> None:
    assert tool.wording_only(change)


@pytest.mark.parametrize(
    "change",
    [
        # the provider's own message, the error's fields, the class, or anything outside an error
        '- raise stream_error({"message": m, "type": t}, api=API)\n+ raise stream_error({"MESSAGE": m, "type": t}, api=API)',
        '- raise ConnectionClosedError("stream ended early", provider="bedrock")\n+ raise ConnectionClosedError("stream ended early", provider=None)',
        '- raise WireError("bad")\n+ raise UsageError("bad")',
        '- out.append(StartEvent(model=message.get("model", ""), response_id=message.get("id")))\n+ out.append(StartEvent(model=message.get("model", ""), response_id=message.get(None)))',
        '- message = body.decode("utf-8", "replace")[:500] or f"HTTP {status}"\n+ message = body.decode("utf-8", "REPLACE")[:500] or f"HTTP {status}"',
        '- raise WireError("bad")\n- x = 1\n+ raise WireError("XXbadXX")',
    ],
)
def test_behaviour_changes_are_not_wording(change: str) -> None:
    assert not tool.wording_only(change)


def test_rules_apply_in_order_and_unmatched_survivors_stay_unjudged() -> None:
    rules = {
        "rules": [
            {"function": "^x_only_here$", "diff": "ping", "verdict": "equivalent", "reason": "a ping carries nothing"},
            {"function": ".", "wording": True, "verdict": "wording", "reason": "text"},
        ]
    }
    assert tool.judge("x_only_here", "- if t == 'ping':\n+ if t == 'PING':", rules)["verdict"] == "equivalent"
    assert tool.judge("x_elsewhere", "- if t == 'ping':\n+ if t == 'PING':", rules)["verdict"] == "unjudged"
    assert tool.judge("x_elsewhere", '- raise WireError("a")\n+ raise WireError(None)', rules)["verdict"] == "wording"
