"""Adapters with one realistic bug each, for the cases every protocol shares
(``loopkit/conformance/_cross_cases.py``): who an error names, what it keeps, and a failed answer
in the history.

Each is a subclass of a shipped adapter with one hook bent. ``CROSS_EXPECTED`` maps (bug,
protocol) to the case ids that must fail, and only those, among every case of the suite.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from typing import Any

from broken_adapters import _factory_for

from loopkit.errors import ProviderError
from loopkit.messages import AssistantMessage
from loopkit.provider import ModelRequest
from loopkit.providers import adapter_class, anthropic


def _bent(err: ProviderError, bug: str, api: str) -> ProviderError:
    if bug == "errors_name_the_api":  # ProviderError(..., provider=self.api): "openai_chat", "gemini" ...
        err.provider = api
    else:  # "errors_without_body": ProviderError(message, status=..., error_type=...) and no body=
        err.body = None
    return err


def _echoes_failed_answers(request: ModelRequest) -> ModelRequest:
    """Sends an answer that ended in error or was aborted like any other (its stop reason is not
    read), so its call goes out with no result."""
    messages = [replace(m, stop_reason="toolUse") if isinstance(m, AssistantMessage) and m.stop_reason in ("error", "aborted") else m for m in request.messages]
    keep = ("tools", "tool_choice", "parallel_tool_calls", "model", "system", "max_tokens", "abort_signal", "call_number")
    return ModelRequest(messages, **{k: getattr(request, k) for k in keep})


def _messages_keeping_empty_answers(request: ModelRequest) -> list[dict[str, Any]]:
    """Anthropic's ``messages`` written without the check that an assistant turn has content:
    an empty answer goes out as ``{"role": "assistant", "content": []}``."""
    out: list[dict[str, Any]] = []
    for m in request.messages:
        if isinstance(m, AssistantMessage) and m.stop_reason not in ("error", "aborted"):
            role, blocks = "assistant", anthropic._assistant_blocks(m)
        else:
            encoded = anthropic._encode_one(m)
            if encoded is None:
                continue
            role, blocks = encoded
        if out and out[-1]["role"] == role:
            out[-1]["content"] += blocks
        else:
            out.append({"role": role, "content": list(blocks)})
    return out


def broken_cross(bug: str, protocol: str) -> Callable[..., Any]:
    """A factory for the adapter of ``protocol`` with ``bug`` planted."""
    base = adapter_class(protocol)
    attrs: dict[str, Any]
    if bug in ("errors_name_the_api", "errors_without_body"):

        def stream(self: Any, request: ModelRequest) -> Iterator[Any]:
            try:
                yield from base.stream(self, request)
            except ProviderError as err:
                raise _bent(err, bug, self.api) from None

        async def astream(self: Any, request: ModelRequest) -> AsyncIterator[Any]:
            try:
                async for event in base.astream(self, request):
                    yield event
            except ProviderError as err:
                raise _bent(err, bug, self.api) from None

        attrs = {"stream": stream, "astream": astream}
    elif bug == "keeps_empty_answers":

        def build_request(self: Any, request: ModelRequest) -> Any:
            call = base.build_request(self, request)
            call.json["messages"] = _messages_keeping_empty_answers(request)
            return call

        attrs = {"build_request": build_request}
    elif bug == "echoes_failed_answers":
        attrs = {"build_request": lambda self, request: base.build_request(self, _echoes_failed_answers(request))}
    else:
        raise ValueError(f"no planted bug {bug!r}")
    return _factory_for(type(f"{bug}_{protocol}", (base,), attrs))


ALL = ("openai_chat", "openai_responses", "anthropic", "gemini", "bedrock")

CROSS_EXPECTED: dict[tuple[str, str], set[str]] = {
    # every adapter names its api apart from its provider ("anthropic-messages" / "anthropic" ...)
    **{("errors_name_the_api", p): {"failure.error_identity"} for p in ALL},
    **{("errors_without_body", p): {"failure.error_identity"} for p in ("anthropic", "gemini")},
    # an answer the model itself failed keeps its error object too, where the protocol has one
    **{("errors_without_body", p): {"failure.error_identity", "failure.model_error"} for p in ("openai_chat", "openai_responses")},
    ("errors_without_body", "openai_chat"): {"failure.error_identity", "failure.model_error", "failure.error_shapes.details"},  # its HTTP 200 error body
    # Bedrock's other error forms and its typed in-stream exceptions keep their bodies too
    ("errors_without_body", "bedrock"): {"failure.error_identity", "failure.model_error", "failure.error_forms", "failure.stream_exceptions", "failure.stream_exception_unknown"},
    # Gemini answers a call left without a result itself (a synthetic error response), so the
    # failed answer it echoes is still valid there
    **{("echoes_failed_answers", p): {"request.history.failed_answer"} for p in ALL if p != "gemini"},
    ("keeps_empty_answers", "anthropic"): {"request.history.empty_answer"},
}
