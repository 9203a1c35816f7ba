"""loopkit: a testing and simulation harness for LLM tool-call loops.

The loop engine (:func:`run`, :func:`arun`, :class:`Runtime`), the message and event vocabulary,
scripted fakes (:mod:`loopkit.fakes`) and scripts (:mod:`loopkit.script`). Wire adapters live in
:mod:`loopkit.providers`, simulators in the top-level ``simulators`` package.
"""

from __future__ import annotations

from .errors import (
    HarnessError,
    LoopkitError,
    ProviderError,
    ScriptExhausted,
    StreamProtocolError,
    ToolDefinitionError,
    UsageError,
)
from .events import (
    AgentEnd,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolResult,
    TurnEnd,
    TurnStart,
)
from .messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from .provider import AbortSignal, BaseProvider, ModelRequest, Provider, ToolSpec
from .runtime import MessageQueue, RunFailed, RunResult, Runtime, TickClock, arun, run
from .script import Script, Turn, call
from .tools import Tool, ToolRegistry, tool

__version__ = "0.1.0"

__all__ = [
    "AbortSignal",
    "AgentEnd",
    "AgentStart",
    "AssistantMessage",
    "BaseProvider",
    "HarnessError",
    "ImageContent",
    "LoopkitError",
    "MessageEnd",
    "MessageQueue",
    "MessageStart",
    "MessageUpdate",
    "ModelRequest",
    "Provider",
    "ProviderError",
    "RunFailed",
    "RunResult",
    "Runtime",
    "Script",
    "ScriptExhausted",
    "StreamProtocolError",
    "TextContent",
    "ThinkingContent",
    "TickClock",
    "Tool",
    "ToolCall",
    "ToolDefinitionError",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolRegistry",
    "ToolResult",
    "ToolResultMessage",
    "ToolSpec",
    "Turn",
    "TurnEnd",
    "TurnStart",
    "Usage",
    "UsageError",
    "UserMessage",
    "__version__",
    "arun",
    "call",
    "run",
    "tool",
]
