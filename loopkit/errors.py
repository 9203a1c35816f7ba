"""loopkit's exceptions: one root, :class:`LoopkitError`, and a typed subclass per failure.

Every message says what was wrong and where (file and line, cassette and field, call number), and
where it helps, what to do next.
"""

from __future__ import annotations

from typing import Any


class LoopkitError(Exception):
    """Root of every error loopkit raises on purpose."""


class HarnessError(LoopkitError):
    """The test's setup is wrong: a cassette miss or a malformed cassette, a script that ran out,
    a simulator asked for more turns than it holds, unused turns, loopkit called with arguments it
    cannot accept.

    A harness error is never a model failure, so it never becomes ``reason == "error"``: it
    propagates out of :func:`loopkit.run`, :func:`loopkit.arun`, :meth:`loopkit.Runtime.exec`
    and the scenario runner whatever ``raise_errors`` says (from a tool body too, when a fake or
    a cassette under it raised it: :class:`ScriptError`, :class:`ReplayError`), and an HTTP
    adapter neither wraps nor retries it. Where a third-party client swallows it (an official SDK
    turns a transport's exception into its own connection error and retries), the cassette or
    simulator that raised it remembers it and raises the first one when it is closed
    (``use_cassette``, ``simulators.serve``, the transports, the pytest fixtures). Provider
    failures (:class:`ProviderError`, :class:`WireError`, :class:`StreamProtocolError`) are not
    harness errors: they keep their error-stop semantics.
    """


def harness_cause(exc: BaseException | None) -> HarnessError | None:
    """The harness error that ``exc`` is or wraps (through ``__cause__`` / ``__context__``, as a
    client library that re-raises a transport's exception leaves it), else None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, HarnessError):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def raise_first(errors: list[HarnessError], current: BaseException | None = None) -> None:
    """Raise ``errors[0]`` (the first harness error a cassette or simulator remembered) unless it
    is already what is propagating (``current``); an unrelated exception it replaces stays
    chained as its cause."""
    if not errors or errors[0] is current:
        return
    first = errors[0]
    raise first from (None if current is None or harness_cause(current) is first else current)


class UsageError(HarnessError, ValueError):
    """loopkit was called with arguments it cannot accept."""


class ToolDefinitionError(UsageError):
    """A tool could not be built: no name, a bad JSON Schema, an unsupported form."""


class ScriptError(HarnessError):
    """A Script is malformed, or was consumed in a way it cannot answer."""


class ScriptExhausted(ScriptError):
    """A fake provider or simulator was asked for more model calls than its script holds."""

    def __init__(self, message: str, *, call_number: int, turns: int) -> None:
        super().__init__(message)
        self.call_number = call_number
        self.turns = turns


class IncompleteScript(ScriptError, AssertionError):
    """``assert_complete()`` found turns that were never used."""


class StreamProtocolError(LoopkitError):
    """A provider's stream broke the event contract (deltas for a block that never started, an
    event of an unknown type, events after the terminal one)."""


class SerdeError(HarnessError, ValueError):
    """Plain data could not be turned back into messages, tool specs or requests (the message
    names the path, e.g. ``messages[2].content[0].text``)."""


class WireError(LoopkitError):
    """Bytes on the wire could not be decoded (bad SSE, bad JSON, bad event-stream frame)."""


class EventStreamError(WireError):
    """An AWS event-stream (``application/vnd.amazon.eventstream``) frame could not be decoded.

    Args:
        message: what was wrong.
        offset: the byte offset in the stream of the message that failed, when known.
    """

    def __init__(self, message: str, *, offset: int | None = None) -> None:
        super().__init__(message if offset is None else f"event-stream message at byte {offset}: {message}")
        self.offset = offset


class EventStreamChecksumError(EventStreamError):
    """A prelude or message CRC32 did not match (botocore's ``ChecksumMismatch``)."""


class EventStreamLengthError(EventStreamError):
    """A prelude declared impossible or over-limit lengths (botocore's ``InvalidHeadersLength``,
    ``InvalidPayloadLength``)."""


class EventStreamHeaderError(EventStreamError):
    """A header block was malformed: a duplicate name (botocore's ``DuplicateHeader``), an unknown
    value type, a value running past the block, or a name that is not UTF-8."""


class EventStreamTruncated(EventStreamError):
    """The stream ended part-way through a message."""


class ProviderError(LoopkitError):
    """A provider answered with an error, over HTTP or in the middle of a stream.

    Args:
        message: the provider's error message.
        status: the HTTP status, or None for an error that arrived inside a stream.
        error_type: the provider's own error type (``rate_limit_error``, ``RESOURCE_EXHAUSTED``,
            ``ThrottlingException`` ...).
        retry_after: seconds the provider asked to wait, from headers or the body.
        provider: the provider that raised it, named as the adapter's messages name it
            (``AssistantMessage.provider``: ``openai``, ``anthropic``, ``google``, ``bedrock``).
        body: the provider's error answer, decoded (the HTTP error body, the in-stream error
            event's payload), when the wire sent it as JSON.
    """

    retryable_default = False

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        retry_after: float | None = None,
        provider: str | None = None,
        body: Any = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_type = error_type
        self.retry_after = retry_after
        self.provider = provider
        self.body = body
        self.retryable = self.retryable_default if retryable is None else retryable

    def __str__(self) -> str:
        parts = []
        if self.provider:
            parts.append(self.provider)
        if self.status is not None:
            parts.append(str(self.status))
        if self.error_type:
            parts.append(self.error_type)
        prefix = " ".join(parts)
        return f"{prefix}: {self.message}" if prefix else self.message


class BadRequestError(ProviderError):
    """400 (and 422): the request was malformed or unsupported."""


class AuthenticationError(ProviderError):
    """401: missing or wrong credentials."""


class PermissionDeniedError(ProviderError):
    """403: the credentials may not do this."""


class NotFoundError(ProviderError):
    """404: unknown model or path."""


class RateLimitError(ProviderError):
    """429: too many requests or tokens; retryable."""

    retryable_default = True


class ServerError(ProviderError):
    """5xx: the provider failed; retryable."""

    retryable_default = True


class OverloadedError(ServerError):
    """Anthropic's 529 and other overload signals; retryable."""


class StreamError(ProviderError):
    """An error event arrived in the middle of a stream."""


class ConnectionClosedError(ProviderError):
    """The connection closed before the stream finished (a truncated stream)."""

    retryable_default = True


def error_class_for_status(status: int) -> type[ProviderError]:
    """The ProviderError subclass for an HTTP status."""
    if status in (400, 413, 422):
        return BadRequestError
    if status == 401:
        return AuthenticationError
    if status == 403:
        return PermissionDeniedError
    if status == 404:
        return NotFoundError
    if status == 429:
        return RateLimitError
    if status == 529:
        return OverloadedError
    if status >= 500:
        return ServerError
    return ProviderError


class ReplayError(HarnessError):
    """A cassette could not be replayed."""


class CassetteError(ReplayError):
    """A cassette file is malformed, from a future format version, or still holds a secret."""


class NoMatchingInteraction(ReplayError):
    """A request matched no recorded interaction."""


class UnplayedInteractions(ReplayError, AssertionError):
    """A replay finished with recorded interactions that were never requested."""


class NetworkBlocked(ReplayError, ConnectionError):
    """Code under test tried to open a connection to a non-loopback address while the network
    was blocked (replay, or the pytest plugin's guard)."""


class ScenarioError(HarnessError):
    """A scenario file is malformed; the message names file, line and column."""
