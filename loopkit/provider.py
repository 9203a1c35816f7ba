"""The Provider seam: what the loop asks a model (:class:`ModelRequest`) and how it answers.

A provider is anything with ``stream(request)`` (an iterator of stream events) and
``astream(request)`` (an async iterator). :class:`BaseProvider` derives whichever one a subclass
does not write. Adapters, fakes, recorders and replayers all implement this one seam.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from .events import StreamEvent
from .messages import Message

ToolChoice: TypeAlias = Literal["auto", "required", "none"] | Mapping[str, Any] | None
"""``"auto" | "required" | "none" | {"type": "function", "name": X}``, or None to omit it."""


def forced_tool_name(choice: ToolChoice) -> str | None:
    """The tool name of a forced-function choice, else None."""
    if isinstance(choice, Mapping):
        name = choice.get("name")
        if name is None and isinstance(choice.get("function"), Mapping):
            name = choice["function"].get("name")
        return name if isinstance(name, str) else None
    return None


@dataclass(slots=True, kw_only=True, frozen=True)
class ToolSpec:
    """A tool as the model sees it: name, description and the JSON Schema of its arguments.

    ``strict`` asks the provider to hold the model's arguments to the schema exactly (OpenAI's
    strict function tools, Anthropic's and Bedrock's ``strict`` tools); None leaves the field out.
    Gemini has no such field, so its adapter sends nothing for it.
    """

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None


class AbortSignal:
    """A thread-safe flag a caller sets to stop a run; providers and tools may poll it."""

    __slots__ = ("_event", "reason")

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason: str | None = None

    def abort(self, reason: str | None = None) -> None:
        self.reason = reason
        self._event.set()

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    def __bool__(self) -> bool:  # pragma: no cover - guard against `if signal:` mistakes
        raise TypeError("use signal.aborted, not the truth value of an AbortSignal")


class ModelRequest:
    """One model call as the loop makes it.

    ``messages`` is the whole history sent on this call. The loop hands out a view of its
    append-only history, so building a request costs O(1) however long the run is; reading
    ``messages`` gives a list (a fresh copy each time).

    ``max_tokens`` caps the answer's length, in the protocol's own field (``max_completion_tokens``,
    ``max_output_tokens``, ``max_tokens``, ``generationConfig.maxOutputTokens``,
    ``inferenceConfig.maxTokens``); None leaves it to the adapter (Anthropic requires one and
    sends its default).
    """

    __slots__ = ("_history", "_count", "tools", "tool_choice", "parallel_tool_calls", "model", "system", "max_tokens", "abort_signal", "call_number")

    def __init__(
        self,
        messages: Sequence[Message] = (),
        *,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = None,
        parallel_tool_calls: bool | None = None,
        model: str | None = None,
        system: str | None = None,
        max_tokens: int | None = None,
        abort_signal: AbortSignal | None = None,
        call_number: int = 1,
        _count: int | None = None,
    ) -> None:
        self._history = messages if _count is not None else list(messages)
        self._count = len(self._history) if _count is None else _count
        self.tools = tuple(tools)
        self.tool_choice = tool_choice
        self.parallel_tool_calls = parallel_tool_calls
        self.model = model
        self.system = system
        self.max_tokens = max_tokens
        self.abort_signal = abort_signal
        self.call_number = call_number

    def next_call(self, call_number: int) -> ModelRequest:
        """This request for a later model call of the same run: the same settings over the
        history as it stands now (the loop's history only grows)."""
        request = object.__new__(ModelRequest)
        request._history = self._history
        request._count = len(self._history)
        request.tools = self.tools
        request.tool_choice = self.tool_choice
        request.parallel_tool_calls = self.parallel_tool_calls
        request.model = self.model
        request.system = self.system
        request.max_tokens = self.max_tokens
        request.abort_signal = self.abort_signal
        request.call_number = call_number
        return request

    @property
    def messages(self) -> list[Message]:
        h = self._history
        return h[: self._count] if isinstance(h, list) else list(h)[: self._count]

    def iter_messages(self) -> Iterator[Message]:
        """The messages without copying the list."""
        h = self._history
        for i in range(self._count):
            yield h[i]

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]

    def __repr__(self) -> str:
        return (
            f"ModelRequest(call_number={self.call_number}, messages=<{self._count}>, tools={self.tool_names}, "
            f"tool_choice={self.tool_choice!r}, parallel_tool_calls={self.parallel_tool_calls!r}, model={self.model!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ModelRequest):
            return NotImplemented
        return (
            self.messages == other.messages
            and self.tools == other.tools
            and self.tool_choice == other.tool_choice
            and self.parallel_tool_calls == other.parallel_tool_calls
            and self.model == other.model
            and self.system == other.system
            and self.max_tokens == other.max_tokens
        )

    __hash__ = None  # type: ignore[assignment]


@runtime_checkable
class Provider(Protocol):
    """Anything that answers a :class:`ModelRequest` with stream events.

    ``stream`` returns an iterator of events, or a ``list`` when every event is known before the
    first is consumed (a scripted fake): the loop then takes the list in one step.
    """

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]: ...

    def astream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...


class BaseProvider:
    """Implement ``stream`` or ``astream``; this class derives the other one."""

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        if type(self).astream is BaseProvider.astream:
            raise NotImplementedError(f"{type(self).__name__} implements neither stream() nor astream()")
        return _sync_iter(self.astream(request))

    async def astream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if type(self).stream is BaseProvider.stream:
            raise NotImplementedError(f"{type(self).__name__} implements neither stream() nor astream()")
        for event in self.stream(request):
            yield event


def _sync_iter(agen: AsyncIterator[StreamEvent]) -> Iterator[StreamEvent]:
    """Step an async iterator from sync code: on a private event loop, or, when this thread
    already runs one (sync code called from async code), on a worker thread's loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _stepped(agen)
    return _threaded(agen)


def _stepped(agen: AsyncIterator[StreamEvent]) -> Iterator[StreamEvent]:
    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                yield loop.run_until_complete(agen.__anext__())
            except StopAsyncIteration:
                return
    finally:
        aclose = getattr(agen, "aclose", None)
        if aclose is not None:
            loop.run_until_complete(aclose())
        loop.close()


_DONE = object()


def _threaded(agen: AsyncIterator[StreamEvent]) -> Iterator[StreamEvent]:
    items: queue.Queue[tuple[bool, Any]] = queue.Queue()
    stop = threading.Event()

    async def pump() -> None:
        try:
            async for event in agen:
                items.put((True, event))
                if stop.is_set():  # the consumer went away: stop pulling
                    break
            items.put((True, _DONE))
        except BaseException as exc:  # noqa: BLE001 - handed to the consuming thread
            items.put((False, exc))
        finally:
            aclose = getattr(agen, "aclose", None)
            if aclose is not None:
                await aclose()

    context = contextvars.copy_context()
    worker = threading.Thread(target=context.run, args=(asyncio.run, pump()), name="loopkit-astream", daemon=True)
    worker.start()
    try:
        while True:
            ok, value = items.get()
            if not ok:
                raise value
            if value is _DONE:
                return
            yield value
    finally:
        stop.set()
