"""The conformance cases: request mapping, stream parsing, stop reasons, failures and retries.

Every case builds a :class:`~loopkit.provider.ModelRequest` and a script, runs the provider against
its protocol's simulator, and checks what the simulator received (through the suite's own reading
of the wire in :mod:`._wire`) and what the provider produced.
"""

from __future__ import annotations

from typing import Any

from ..errors import BadRequestError
from ._anthropic_round3_cases import ANTHROPIC_ROUND3_CASES
from ._bedrock_round2_cases import BEDROCK_ROUND2_CASES
from ._bedrock_round3_cases import BEDROCK_ROUND3_CASES
from ._bedrock_round4_cases import BEDROCK_ROUND4_CASES
from ._case import Case
from ._cross_cases import CROSS_CASES
from ._detail_cases import DETAIL_CASES
from ._failure_cases import (
    check_abort,
    check_auth,
    check_ends_early,
    check_error_body_not_json,
    check_error_forms,
    check_generic_stream_error,
    check_mid_stream,
    check_retries_bounded,
    check_slow,
    check_stream_exceptions,
    check_truncated,
    http_error_case,
    retried_case,
)
from ._form_cases import FORM_CASES
from ._gemini_round2_cases import GEMINI_ROUND2_CASES
from ._gemini_round3_cases import GEMINI_ROUND3_CASES
from ._gemini_round4_cases import GEMINI_ROUND4_CASES
from ._kind_cases import KIND_CASES
from ._openai_round2_cases import OPENAI_ROUND2_CASES
from ._openai_round3_cases import OPENAI_ROUND3_CASES
from ._request_cases import (
    check_empty_error_result,
    check_history_argument_types,
    check_history_calls,
    check_history_is_error,
    check_history_results,
    check_history_same_tool_twice,
    check_max_tokens,
    check_no_tools,
    check_none_after_tool_round,
    check_parallel_default,
    check_parallel_disabled,
    check_parallel_with_none,
    check_reasoning_passback,
    check_system,
    check_tools_declared,
    check_tools_strict,
    tool_choice_case,
)
from ._stream_cases import (
    check_async,
    check_blocks_ended,
    check_empty_arguments,
    check_ends_at_terminal,
    check_fragmented_arguments,
    check_ids_across_calls,
    check_length_mid_call,
    check_malformed_arguments,
    check_model_named,
    check_non_object_arguments,
    check_one_call,
    check_parallel_calls,
    check_same_tool_twice,
    check_server_tool_blocks,
    check_stop_reasons,
    check_text,
    check_text_then_call,
    check_thinking,
    check_unicode,
    check_usage,
    check_utf8_split,
)
from ._wire import Wire
from ._wire_form_cases import WIRE_FORM_CASES

# --- applicability ------------------------------------------------------------------------------


def _strict(wire: Wire, provider: Any) -> str | None:
    return None if wire.strict else f"{wire.name}'s function declarations have no strict field (docs/wire.md §4.2)"


def _parallel_knob(wire: Wire, provider: Any) -> str | None:
    if not wire.parallel_knob:
        return f"{wire.name} has no knob to forbid parallel tool calls (docs/wire.md §0.3)"
    if getattr(provider, "supports_parallel_tool_calls", True) is False:
        return f"the adapter declares supports_parallel_tool_calls = False ({type(provider).__name__})"
    return None


def _anthropic_only(wire: Wire, provider: Any) -> str | None:
    if wire.name != "anthropic":
        return f"on {wire.name} the parallel knob does not live in tool_choice, so tool_choice 'none' cannot conflict with it"
    return _parallel_knob(wire, provider)


def _reasoning(wire: Wire, provider: Any) -> str | None:
    return None if wire.reasoning else f"{wire.name} carries no reasoning or signature on the wire (docs/wire.md §1)"


def _fragments(wire: Wire, provider: Any) -> str | None:
    return None if wire.fragments_arguments else f"{wire.name} sends each function call whole, never as argument fragments (docs/wire.md §4.4)"


def _raw_arguments(wire: Wire, provider: Any) -> str | None:
    if wire.raw_arguments:
        return None
    return (
        f"{wire.name}'s functionCall.args is always a JSON object (a proto Struct) and calls arrive whole, so argument "
        "text that is broken, cut off or not an object cannot travel; the model's equivalent, finishReason "
        "MALFORMED_FUNCTION_CALL, is covered by stop.reasons (docs/wire.md §4.3, §4.7)"
    )


def _error_flag(wire: Wire, provider: Any) -> str | None:
    if wire.error_flag == "none":
        return f"{wire.name} has no error flag on tool results; the error travels as the result's text (docs/wire.md §0.3, docs/loop-contract.md §7.2)"
    return None


def _overloaded(wire: Wire, provider: Any) -> str | None:
    return None if wire.overloaded_529 else f"only Anthropic answers HTTP 529 overloaded_error; {wire.name} has no such status (docs/wire.md §6.3)"


def _stream_exceptions(wire: Wire, provider: Any) -> str | None:
    return None if wire.stream_exceptions else f"{wire.name} has no typed in-stream exceptions: its stream errors are covered by failure.mid_stream"


def _error_forms(wire: Wire, provider: Any) -> str | None:
    return None if wire.error_forms() else f"the suite knows no other form of {wire.name}'s HTTP errors than the one failure.http_400 checks"


def _server_tools(wire: Wire, provider: Any) -> str | None:
    return None if wire.server_tool_events(0) else f"the suite knows no server-side tool blocks in {wire.name}'s stream"


def _generic_error(wire: Wire, provider: Any) -> str | None:
    if wire.generic_error_event("x", "x") is None:
        return f"{wire.name} has no untyped error event apart from its typed one (failure.mid_stream)"
    return None


CASES: tuple[Case, ...] = (
    Case("request.tools.declared", "Tool declarations reach the wire with their names, descriptions and parameter schemas unchanged.", "docs/wire.md §0.3", check_tools_declared),
    Case("request.tools.strict", "ToolSpec.strict reaches the declaration's strict field; a tool not asked to be strict is not made strict.", "docs/wire.md §1.2, §2.2, §3.2, §5.2", check_tools_strict, _strict),
    Case("request.max_tokens", "ModelRequest.max_tokens reaches the protocol's answer-length field.", "docs/wire.md §1.2, §2.2, §3.2, §4.2, §5.2", check_max_tokens),
    Case("request.tool_choice.auto", "tool_choice 'auto' is sent in the protocol's form (or left to its default, auto).", "docs/wire.md §0.3; docs/loop-contract.md §7.1", tool_choice_case("auto")),
    Case("request.tool_choice.required", "tool_choice 'required' makes a tool call mandatory in the protocol's form.", "docs/wire.md §0.3; docs/loop-contract.md §7.1", tool_choice_case("required")),
    Case("request.tool_choice.none", "tool_choice 'none' forbids tool calls in the protocol's form.", "docs/wire.md §0.3, §5.2; docs/loop-contract.md §7.1", tool_choice_case("none")),
    Case("request.tool_choice.forced", "A forced function is sent as the protocol's named-tool choice.", "docs/wire.md §0.3; docs/loop-contract.md §7.1", tool_choice_case({"type": "function", "name": "get_time"})),
    Case("request.tool_choice.none_after_tool_round", "tool_choice 'none' after a tool round keeps the history valid (Bedrock needs toolConfig once tools were used).", "docs/wire.md §5.2; docs/loop-contract.md §7.1", check_none_after_tool_round),
    Case("request.parallel.disabled", "parallel_tool_calls=False reaches the protocol's parallel knob, whatever the tool_choice.", "docs/wire.md §0.3; docs/loop-contract.md §7.1", check_parallel_disabled, _parallel_knob),
    Case("request.parallel.default", "parallel_tool_calls None or True does not forbid parallel calls.", "docs/loop-contract.md §7.1", check_parallel_default, _parallel_knob),
    Case("request.parallel.with_none", "parallel_tool_calls=False adds no disable_parallel_tool_use to tool_choice 'none'.", "docs/wire.md §3.2; docs/loop-contract.md §7.1", check_parallel_with_none, _anthropic_only),
    Case("request.no_tools", "A request without tools carries nothing tool-related, whatever tool_choice and parallel_tool_calls say.", "docs/wire.md §1.2; docs/loop-contract.md §7.1", check_no_tools),
    Case("request.history.tool_calls", "Assistant tool calls are echoed with the same ids, names and arguments, in order.", "docs/wire.md §1.6, §2.6, §3.6, §4.6, §5.7", check_history_calls),
    Case("request.history.results", "Each tool result answers its call's id and carries its text.", "docs/wire.md §0.3, §1.6, §2.6, §3.6, §4.6, §5.7", check_history_results),
    Case("request.history.same_tool_twice", "Results of two calls of one tool are paired with their calls by id, never by the tool's name.", "docs/wire.md §0.3, §1.6, §2.6, §3.6, §4.6, §5.7; docs/loop-contract.md §7.4", check_history_same_tool_twice),
    Case("request.history.argument_types", "Echoed tool-call arguments travel in the protocol's JSON type: a string of JSON on OpenAI, an object elsewhere.", "docs/wire.md §0.3, §1.6, §2.6, §3.6, §4.6, §5.7", check_history_argument_types),
    Case("request.history.is_error", "A tool result's is_error travels in the protocol's own convention, and only on errors.", "docs/wire.md §0.3; docs/loop-contract.md §7.2", check_history_is_error, _error_flag),
    Case("request.history.empty_error_result", "An error result with no text is still sent in a form the API accepts.", "docs/loop-contract.md §7.2; docs/wire.md §3.6", check_empty_error_result),
    Case("request.system", "The system prompt reaches the protocol's system slot.", "docs/wire.md §1.2, §2.2, §3.1, §4.2, §5.2", check_system),
    Case("request.reasoning.passback", "Reasoning from an answer is passed back, with its signature, on the next request.", "docs/wire.md §2.7, §3.6, §4.6, §5.8", check_reasoning_passback, _reasoning),
    Case("stream.text", "A plain text answer becomes one text block with stop reason 'stop'.", "docs/wire.md §1.4, §2.4, §3.4, §4.4, §5.4", check_text),
    Case("stream.text_then_tool_call", "Text followed by a tool call keeps both blocks, in order.", "docs/wire.md §1.7 #7, §3.7 #3, §5.8 #1", check_text_then_call),
    Case("stream.thinking", "Thinking is kept as a thinking block with its signature, before the text.", "docs/wire.md §2.4, §3.4, §4.3, §5.4", check_thinking, _reasoning),
    Case("stream.tool_call", "One tool call keeps its id, name and arguments, with stop reason 'toolUse'.", "docs/wire.md §0.3", check_one_call),
    Case("stream.parallel_calls", "Two tool calls in one answer are both kept, in order, with distinct ids.", "docs/wire.md §1.4 #4, §4.4", check_parallel_calls),
    Case("stream.same_tool_twice", "Two calls of one tool with different arguments stay two calls, each with its own id and arguments.", "docs/wire.md §0.3, §1.4 #4", check_same_tool_twice),
    Case("stream.ids_across_calls", "Tool calls the wire sends without an id (or with its own) get distinct ids across a run's model calls.", "docs/wire.md §4.7 #3; docs/loop-contract.md §7.4", check_ids_across_calls),
    Case("stream.arguments.fragmented", "Arguments split into one-character fragments (inside escapes and emoji) join into the same value.", "docs/wire.md §1.7 #3, §3.4, §5.4", check_fragmented_arguments, _fragments),
    Case("stream.arguments.empty", "A call with empty argument text has arguments {}.", "docs/wire.md §1.7 #2, §3.4, §5.8 #2", check_empty_arguments),
    Case("stream.arguments.malformed", "Argument text that is not JSON is surfaced as raw_arguments, never swallowed into {}.", "docs/wire.md §1.7 #1; docs/loop-contract.md §7.4", check_malformed_arguments, _raw_arguments),
    Case("stream.arguments.non_object", "Arguments that are JSON but not an object are kept as parsed, never replaced by {}.", "docs/loop-contract.md §7.4", check_non_object_arguments, _raw_arguments),
    Case("stream.length_mid_call", "A length stop inside a tool call keeps the call with its partial argument text as raw_arguments.", "docs/wire.md §3.7 #1, §6.3 (truncation)", check_length_mid_call, _raw_arguments),
    Case("stream.unicode", "Non-ASCII text and arguments (accents, emoji, CJK, RTL, combining marks, escapes) arrive intact.", "docs/wire.md §1.7 #3", check_unicode),
    Case("stream.utf8_split", "A body delivered 3 bytes at a time, splitting UTF-8 sequences, parses to the same message.", "docs/wire.md §0 (SSE framing), §5.6", check_utf8_split),
    Case("stream.usage", "Token usage is reported on the message.", "docs/wire.md §1.4 #6, §2.3, §3.4, §4.4, §5.4", check_usage),
    Case("stream.server_tool_calls", "Blocks of a tool the server ran itself (its toolUse with type server_tool_use and its toolResult) are dropped; the client's call around them is kept.", "docs/wire.md §5.4, §5.8 #7", check_server_tool_blocks, _server_tools),
    Case("stream.blocks_ended", "Every block a stream starts (thinking, text, each call) is ended once, before the terminal event.", "docs/loop-contract.md §7.6", check_blocks_ended),
    Case("stream.ends_at_terminal", "A stream that ends right after its terminal event (without what may follow it, like Bedrock's metadata) is a complete answer.", "docs/wire.md §5.4", check_ends_at_terminal, streamed_only=True),
    Case("stream.model_named", "The message names its api, its provider and the model the request asked for (ModelRequest.model), in stream() and astream().", "loopkit.events.StartEvent; loopkit.provider.ModelRequest", check_model_named),
    Case("stream.async", "astream() yields the same events as stream().", "docs/wire.md §6.3", check_async),
    Case("stop.reasons", "Every stop reason of the protocol maps to loopkit's (stop, toolUse, length, error).", "docs/wire.md §0.2; docs/loop-contract.md §7.3", check_stop_reasons),
    Case("failure.http_400", "HTTP 400 fails the call with a BadRequestError carrying the provider's message, and is not retried.", "docs/wire.md §6.3", http_error_case(400, (BadRequestError,))),
    Case("failure.error_body_not_json", "An HTTP error whose body is not JSON (a proxy's plain text) still fails by its status, with the text as the message.", "docs/wire.md §6.3", check_error_body_not_json),
    Case("failure.error_forms", "Each real form of the protocol's HTTP error (a namespaced shape id, a capitalised Message) fails with the shape's class, type and decoded message.", "docs/wire.md §5.5", check_error_forms, _error_forms),
    Case("failure.auth", "Bad credentials fail the call with an authentication error and are not retried.", "docs/wire.md §6.3", check_auth),
    Case("failure.http_429_retry_after", "HTTP 429 is retried after exactly the wait the provider asked for, in stream() and astream().", "docs/wire.md §1.1, §3.1, §4.5, §5.1", retried_case(429, retry_after=1.5)),
    Case("failure.http_500", "HTTP 500 is retried and the retry's answer is used.", "docs/wire.md §6.3", retried_case(500)),
    Case("failure.http_503", "HTTP 503 is retried and the retry's answer is used.", "docs/wire.md §6.3", retried_case(503)),
    Case("failure.http_529", "HTTP 529 overloaded_error is retried and the retry's answer is used.", "docs/wire.md §3.5", retried_case(529), _overloaded),
    Case("failure.retries_bounded", "Persistent 5xx answers are retried a bounded number of times, then fail.", "docs/wire.md §6.3", check_retries_bounded),
    Case("failure.mid_stream", "An error event mid-stream fails the call with the provider's message, without a 'done' or a retry.", "docs/wire.md §6.3; docs/loop-contract.md §7.5", check_mid_stream, streamed_only=True),
    Case("failure.stream_exceptions", "Each typed in-stream exception fails the call with the class of its modelled status, its type and its decoded message; it is retried before the first event exactly when that class is retryable.", "docs/wire.md §5.5, §5.6", check_stream_exceptions, _stream_exceptions, streamed_only=True),
    Case("failure.stream_error_event", "An untyped error event mid-stream fails the call with its code and message, without a 'done' or a retry.", "docs/wire.md §5.6", check_generic_stream_error, _generic_error, streamed_only=True),
    Case("failure.truncated", "A stream (or a JSON body) cut off part-way fails the call instead of ending as if complete.", "docs/wire.md §5.6, §6.3", check_truncated),
    Case("failure.ends_early", "A stream that ends cleanly (no connection error) before the protocol's terminal event raises ConnectionClosedError, and a JSON body that ends before it is whole fails the call, instead of ending as if complete.", "docs/wire.md §1.4, §2.4, §3.4, §4.4, §5.4; docs/loop-contract.md §7.6", check_ends_early),
    Case("failure.slow_stream", "Pauses between stream events do not change the message.", "docs/wire.md §6.3", check_slow),
    Case("failure.abort", "Setting the abort signal mid-stream ends the call with ErrorEvent(reason='aborted'), in stream() and astream().", "docs/loop-contract.md §7.5, §1.7", check_abort, streamed_only=True),
)
CASES += KIND_CASES
CASES += DETAIL_CASES
CASES += FORM_CASES
CASES += WIRE_FORM_CASES
CASES += OPENAI_ROUND2_CASES
CASES += CROSS_CASES
CASES += BEDROCK_ROUND2_CASES
CASES += GEMINI_ROUND2_CASES
CASES += BEDROCK_ROUND3_CASES
CASES += GEMINI_ROUND3_CASES
CASES += ANTHROPIC_ROUND3_CASES
CASES += OPENAI_ROUND3_CASES
CASES += BEDROCK_ROUND4_CASES
CASES += GEMINI_ROUND4_CASES
CASE_IDS: tuple[str, ...] = tuple(c.id for c in CASES)
