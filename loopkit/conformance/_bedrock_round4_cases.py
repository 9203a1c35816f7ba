"""Tool results in forms the other cases do not check: a successful result with no content, and
(for a model family that takes no error flag, a :attr:`~._wire.Wire.variant`) an error result
whose text must say it is one."""

from __future__ import annotations

import json
from typing import Any

from ..messages import ToolResultMessage
from ._case import Case, Context
from ._fixtures import accepted, answer, call_ids, history, request
from ._wire import Wire


def check_error_in_text(ctx: Context) -> None:
    """The model takes no error flag: the error result's text says it is an error and carries
    the tool's text once; the successful result's text is sent as it is (it says nothing more)."""
    messages = history(ctx.wire)
    results = _two_results(ctx, ["Paris is clear; Tokyo's zone was not found."], messages, "a success, then an error")
    if results is None:
        return
    success, error = results
    ctx.expect("the successful result's text (as the tool gave it)", success.text, messages[2].text)
    if not error.error:
        ctx.fail(f"the error result's text ({ctx.wire.error_flag})", "a text that says it is an error", error.text)
    ctx.expect("times the error result's text carries the tool's text", error.text.count(messages[3].text), 1)


def check_empty_result(ctx: Context) -> None:
    """A successful result with no content is sent in a form the API accepts, with no text the
    tool did not give (an empty result is the tool's answer: the model must not read words the
    adapter made up)."""
    a, _ = call_ids(ctx.wire)
    messages = history(ctx.wire)
    messages[2] = ToolResultMessage(tool_call_id=a, tool_name="get_weather", content=[])
    results = _two_results(ctx, ["Paris said nothing."], messages, "an empty success, then an error")
    if results is None:
        return
    text = results[0].text
    if ctx.wire.name == "gemini":  # the text read is the response object's JSON: its string values are the tool's text (§4.6)
        data = json.loads(text)
        text = "".join(v for v in data.values() if isinstance(v, str)) if isinstance(data, dict) else text
    ctx.expect("the empty successful result's text", text, "")
    if results[0].error:
        ctx.fail(f"the empty successful result's error flag ({ctx.wire.error_flag})", "not an error", results[0])


def _two_results(ctx: Context, script: list[Any], messages: list[Any], what: str) -> list[Any] | None:
    """The two tool results the request with ``messages`` sent (accepted by the API), or None
    after failing the case when it sent another number."""
    ex = answer(ctx, script, request(messages=messages))
    accepted(ctx, ex)
    results = ctx.wire.results(ex.body or {})
    if len(results) != 2:
        ctx.fail("tool results sent", f"2 ({what})", results)
        return None
    return results


def _error_in_text(wire: Wire, provider: Any) -> str | None:
    if not wire.error_in_text:
        return f"{wire.name}'s results carry the error in {wire.error_flag if wire.error_flag != 'none' else 'no flag (request.history.results checks the text)'}; only a model family that takes no error flag (variant no-tool-result-status) needs it in the text"
    return None


BEDROCK_ROUND4_CASES: tuple[Case, ...] = (
    Case("request.history.error_in_text", "Where the model takes no error flag, an error result's text says it is an error and carries the tool's text once, and a successful result's text is sent as it is.", "docs/wire.md §5.7; docs/loop-contract.md §7.2", check_error_in_text, _error_in_text),
    Case("request.history.empty_result", "A successful tool result with no content is sent in a form the API accepts, with no text the tool did not give.", "docs/loop-contract.md §7.2; docs/wire.md §5.7", check_empty_result),
)
