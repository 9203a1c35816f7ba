"""The scenario file format as pydantic models (the edge where untrusted YAML comes in).

Every model forbids unknown keys, so a typo is an error (the loader adds a "did you mean" hint and
the file, line and column). Shorthands are normalised before validation: a turn may be a string
(a text answer), a tool may be a kind name, a text check may be a string (equality), a prompt or a
message list may be one string. :meth:`ScenarioModel.turns` gives the script as
:class:`loopkit.script.Turn` objects.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from ..messages import Usage
from ..errors import ScriptError
from ..script import Delay, HttpFault, MidStreamError, ScriptedCall, Truncate, Turn

PROVIDER_NAMES: tuple[str, ...] = ("scripted", "openai_chat", "openai_responses", "anthropic", "gemini", "bedrock")
"""Every provider a scenario can name: the in-process fake and the five wire protocols."""

EVENT_TYPES: tuple[str, ...] = (
    "agent_start", "turn_start", "message_start", "message_update", "message_end",
    "tool_execution_start", "tool_execution_update", "tool_execution_end", "turn_end", "agent_end",
)  # fmt: skip

BUILTIN_KINDS: dict[str, tuple[str, ...]] = {
    # kind -> the tool fields it accepts (besides kind and description)
    "echo": (),
    "add": (),
    "raises": ("message", "exception"),
    "slow": ("seconds", "result"),
    "counter": (),
    "abort": ("result",),
    "nested": ("prompt", "max_iterations"),
    "mcp": ("command", "url", "tool"),
}
_FUNCTION_REF = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def check_provider(name: str) -> str:
    """Raise ValueError (with a hint) unless ``name`` is a provider a scenario can name."""
    if name not in PROVIDER_NAMES:
        raise ValueError(f"unknown provider {name!r}{_hint(name, PROVIDER_NAMES)}; expected one of {', '.join(PROVIDER_NAMES)}")
    return name


ProviderName = Annotated[str, AfterValidator(check_provider)]


def _hint(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _str_to(key: str) -> Any:
    return BeforeValidator(lambda v: {key: v} if isinstance(v, str) else v)


Strings = Annotated[list[str], BeforeValidator(_one_or_many)]


# --- tools ------------------------------------------------------------------------------------


class ToolDef(_Model):
    """A tool the scenario gives the model: a built-in kind, or ``module:function``."""

    kind: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    message: str | None = None
    exception: str | None = None
    seconds: float | None = Field(default=None, ge=0)
    result: Any = None
    prompt: str | None = None
    max_iterations: int | None = None
    command: Annotated[list[str], Field(min_length=1)] | None = None
    url: str | None = None
    tool: str | None = None

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        if kind in BUILTIN_KINDS or _FUNCTION_REF.fullmatch(kind):
            return kind
        raise ValueError(f"unknown tool kind {kind!r}{_hint(kind, BUILTIN_KINDS)}; expected one of {', '.join(BUILTIN_KINDS)} or 'module:function'")

    @field_validator("exception")
    @classmethod
    def _builtin_exception(cls, name: str | None) -> str | None:
        import builtins

        if name is not None and not (isinstance(getattr(builtins, name, None), type) and issubclass(getattr(builtins, name), Exception)):
            raise ValueError(f"{name!r} is not a built-in exception class (e.g. ValueError, KeyError, TimeoutError)")
        return name

    @model_validator(mode="after")
    def _fields_fit_kind(self) -> ToolDef:
        allowed = BUILTIN_KINDS.get(self.kind, ("parameters",))
        extra = [f for f in ("parameters", "message", "exception", "seconds", "result", "prompt", "max_iterations", "command", "url", "tool") if f in self.model_fields_set and f not in allowed]
        if extra:
            fits = ", ".join(("kind", "description", *allowed))
            raise ValueError(f"key(s) {', '.join(extra)} do not apply to a {self.kind!r} tool; it takes {fits}")
        if self.kind == "nested" and not self.prompt:
            raise ValueError("a 'nested' tool needs a 'prompt' (what the nested exec asks)")
        if self.kind == "mcp" and (self.command is None) == (self.url is None):
            raise ValueError("an 'mcp' tool needs either 'command' (a stdio server) or 'url' (streamable HTTP)")
        return self


# --- the script -------------------------------------------------------------------------------


class CallDef(_Model):
    """A tool call the scripted model makes; ``arguments`` is a mapping or a raw string sent as is."""

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None
    thought_signature: str | None = None


class HttpDef(_Model):
    status: int = Field(ge=400, le=599)
    message: str | None = None
    error_type: str | None = None
    retry_after: float | None = Field(default=None, ge=0)
    headers: dict[str, str] = Field(default_factory=dict)


class AfterDef(_Model):
    after: int = Field(default=1, ge=0)


class MidStreamDef(AfterDef):
    message: str = "Internal server error"
    error_type: str | None = None


class DelayDef(AfterDef):
    after: int = Field(default=0, ge=0)
    seconds: float = Field(ge=0)


class FaultDef(_Model):
    """One fault: exactly one of ``http``, ``mid_stream_error``, ``truncate``, ``delay``."""

    http: HttpDef | None = None
    mid_stream_error: MidStreamDef | None = None
    truncate: AfterDef | None = None
    delay: DelayDef | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> FaultDef:
        if len(self.model_fields_set) != 1:
            raise ValueError("a fault is exactly one of http, mid_stream_error, truncate, delay")
        return self

    def to_fault(self) -> Any:
        if self.http is not None:
            return HttpFault(**self.http.model_dump())
        if self.mid_stream_error is not None:
            return MidStreamError(**self.mid_stream_error.model_dump())
        if self.truncate is not None:
            return Truncate(after=self.truncate.after)
        assert self.delay is not None
        return Delay(seconds=self.delay.seconds, after=self.delay.after)


class UsageDef(_Model):
    input: int = Field(default=0, ge=0)
    output: int = Field(default=0, ge=0)
    cache_read: int = Field(default=0, ge=0)
    cache_write: int = Field(default=0, ge=0)


class TurnDef(_Model):
    """One model answer (the fields of :class:`loopkit.script.Turn`)."""

    text: str | None = None
    thinking: str | None = None
    thinking_signature: str | None = None
    tool_calls: list[CallDef] = Field(default_factory=list)
    stop_reason: Literal["stop", "length", "toolUse", "error", "aborted"] | None = None
    usage: UsageDef | None = None
    error: str | None = None
    aborted: bool = False
    faults: list[FaultDef] = Field(default_factory=list)
    chunk_size: int | None = Field(default=None, ge=1)
    stop_sequence: str | None = Field(default=None, min_length=1)
    refusal: str | None = None
    content_filter: bool = False
    pause_turn: bool = False
    redacted_thinking: str | None = None
    reasoning_tokens: int | None = Field(default=None, ge=0)
    split_usage: bool = False
    wire_stop_reason: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_ending(self) -> TurnDef:
        try:
            self.to_turn()
        except ScriptError as exc:
            raise ValueError(str(exc)) from None
        return self

    def to_turn(self) -> Turn:
        usage = None
        if self.usage is not None:
            u = self.usage
            usage = Usage(input=u.input, output=u.output, cache_read=u.cache_read, cache_write=u.cache_write, total_tokens=u.input + u.output + u.cache_read + u.cache_write)
        return Turn(
            text=self.text,
            thinking=self.thinking,
            thinking_signature=self.thinking_signature,
            tool_calls=tuple(ScriptedCall(name=c.name, arguments=c.arguments, id=c.id, thought_signature=c.thought_signature) for c in self.tool_calls),
            stop_reason=self.stop_reason,
            usage=usage,
            error=self.error,
            aborted=self.aborted,
            faults=tuple(f.to_fault() for f in self.faults),
            chunk_size=self.chunk_size,
            stop_sequence=self.stop_sequence,
            refusal=self.refusal,
            content_filter=self.content_filter,
            pause_turn=self.pause_turn,
            redacted_thinking=self.redacted_thinking,
            reasoning_tokens=self.reasoning_tokens,
            split_usage=self.split_usage,
            wire_stop_reason=self.wire_stop_reason,
        )


# --- steering and follow-ups ------------------------------------------------------------------


class CallRef(_Model):
    """A tool call of the run: ``round`` (model call n of the run) and ``call`` (its k-th call),
    both 1-based, or the ``id`` the script gave it."""

    round: int | None = Field(default=None, ge=1)
    call: int | None = Field(default=None, ge=1)
    id: str | None = None

    @model_validator(mode="after")
    def _addressed(self) -> CallRef:
        by_position = self.round is not None or self.call is not None
        if by_position and self.id is not None:
            raise ValueError("address a call by round and call, or by id, not both")
        if not by_position and self.id is None:
            raise ValueError("address a call with round and call (1-based), or with the id the script gave it")
        if by_position and (self.round is None or self.call is None):
            raise ValueError("give both round and call (1-based)")
        return self

    def label(self) -> str:
        return f"call {self.id!r}" if self.id is not None else f"round {self.round} call {self.call}"


class Position(_Model):
    round: int = Field(ge=1)
    call: int = Field(ge=1)


class SteerDef(_Model):
    """What one steering poll returns. Exactly one of: ``at_start`` (the first poll, before the
    first model call), ``after_call`` (right after that tool call's result), ``after_round``
    (after that round's turn_end), ``poll`` (the n-th poll, 1-based)."""

    at_start: bool | None = None
    after_call: Position | None = None
    after_round: int | None = Field(default=None, ge=1)
    poll: int | None = Field(default=None, ge=1)
    messages: Strings

    @model_validator(mode="after")
    def _one_point(self) -> SteerDef:
        points = [k for k in ("at_start", "after_call", "after_round", "poll") if getattr(self, k) not in (None, False)]
        if len(points) != 1:
            raise ValueError("say when with exactly one of at_start: true, after_call: {round, call}, after_round: N, poll: N")
        return self


class FollowDef(_Model):
    """What one follow-up poll returns: ``after_round`` (the poll after that round) or ``poll``."""

    after_round: int | None = Field(default=None, ge=1)
    poll: int | None = Field(default=None, ge=1)
    messages: Strings

    @model_validator(mode="after")
    def _one_point(self) -> FollowDef:
        if (self.after_round is None) == (self.poll is None):
            raise ValueError("say when with exactly one of after_round: N, poll: N")
        return self


# --- config -----------------------------------------------------------------------------------


def normalise_tool_choice(value: Any) -> Any:
    """``auto | required | none | {type: function, name: X}`` (``{name: X}`` is accepted)."""
    if value is None or value in ("auto", "required", "none"):
        return value
    if isinstance(value, dict) and isinstance(value.get("name"), str) and set(value) <= {"type", "name"} and value.get("type", "function") == "function":
        return {"type": "function", "name": value["name"]}
    raise ValueError(f"tool_choice must be auto, required, none or {{type: function, name: X}}; got {value!r}")


class Config(_Model):
    max_iterations: int | None = None
    tool_choice: Any = None
    parallel_tool_calls: bool | None = None
    retries: int = Field(default=0, ge=0)
    system: str | None = None
    stream: bool = True

    @field_validator("tool_choice")
    @classmethod
    def _choice(cls, value: Any) -> Any:
        return normalise_tool_choice(value)


# --- expectations -----------------------------------------------------------------------------


class Match(_Model):
    """A text check: ``equals``, ``contains`` and/or ``regex`` (re.search). A plain string means equals."""

    equals: str | None = None
    contains: str | None = None
    regex: str | None = None

    @model_validator(mode="after")
    def _something(self) -> Match:
        if self.equals is None and self.contains is None and self.regex is None:
            raise ValueError("a text check needs equals, contains or regex")
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"regex {self.regex!r} does not compile: {exc}") from None
        return self

    def problems(self, text: str) -> list[str]:
        out = []
        if self.equals is not None and text != self.equals:
            out.append(f"text should equal {self.equals!r}")
        if self.contains is not None and self.contains not in text:
            out.append(f"text should contain {self.contains!r}")
        if self.regex is not None and re.search(self.regex, text) is None:
            out.append(f"text should match /{self.regex}/")
        return out

    def describe(self) -> str:
        parts = []
        if self.equals is not None:
            parts.append(f"== {self.equals!r}")
        if self.contains is not None:
            parts.append(f"contains {self.contains!r}")
        if self.regex is not None:
            parts.append(f"matches /{self.regex}/")
        return " and ".join(parts)


TextCheck = Annotated[Match, _str_to("equals")]


class EndExpect(_Model):
    reason: Literal["stop", "error", "aborted", "max_iterations"] | None = None
    model_calls: int | None = Field(default=None, ge=0)
    text: TextCheck | None = None
    error: TextCheck | None = None
    pending: list[str] | None = None


class CallExpect(CallRef):
    executed: bool | None = None
    is_error: bool | None = None
    text: TextCheck | None = None


class NextRequest(_Model):
    """On model call ``model_call`` the model was sent the result of ``result_for``."""

    model_call: int = Field(ge=1)
    result_for: CallRef
    is_error: bool | None = None
    text: TextCheck | None = None


class RequestExpect(_Model):
    """What model call ``model_call`` asked for (checked on the request and on the wire)."""

    model_call: int = Field(ge=1)
    tool_choice: Any = None
    parallel_tool_calls: bool | None = None
    tools: list[str] | None = None

    @field_validator("tool_choice")
    @classmethod
    def _choice(cls, value: Any) -> Any:
        return normalise_tool_choice(value)


class EventSpec(_Model):
    """One event of an ordered subsequence: a type, narrowed by optional fields."""

    type: str
    round: int | None = Field(default=None, ge=1)
    call: int | None = Field(default=None, ge=1)
    id: str | None = None
    name: str | None = None
    is_error: bool | None = None
    role: Literal["user", "assistant", "toolResult"] | None = None
    reason: str | None = None
    text: TextCheck | None = None

    @field_validator("type")
    @classmethod
    def _known(cls, t: str) -> str:
        if t not in EVENT_TYPES:
            raise ValueError(f"unknown event type {t!r}{_hint(t, EVENT_TYPES)}; expected one of {', '.join(EVENT_TYPES)}")
        return t

    def describe(self) -> str:
        fields = {k: v for k, v in self.model_dump(exclude_none=True).items() if k != "type"}
        if self.text is not None:
            fields["text"] = self.text.describe()
        return self.type + (f"({', '.join(f'{k}={v}' for k, v in fields.items())})" if fields else "")


def _event_shorthand(value: Any) -> Any:
    if isinstance(value, str):
        return {"type": value}
    if isinstance(value, dict) and len(value) == 1:
        (key, fields), = value.items()
        if key != "type" and (fields is None or isinstance(fields, dict)):
            return {"type": key, **(fields or {})}
    return value


class Expect(_Model):
    end: EndExpect
    calls: list[CallExpect] = Field(default_factory=list)
    skipped: list[CallRef] = Field(default_factory=list)
    executions: dict[str, int] = Field(default_factory=dict)
    next_request: list[NextRequest] = Field(default_factory=list)
    requests: list[RequestExpect] = Field(default_factory=list)
    events: list[Annotated[EventSpec, BeforeValidator(_event_shorthand)]] = Field(default_factory=list)
    sleeps: list[float] | None = None
    snapshot: bool = False


# --- the scenario -----------------------------------------------------------------------------


def _tool_shorthand(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ({"kind": v} if isinstance(v, str) else v) for k, v in value.items()}
    return value


def _turn_shorthand(value: Any) -> Any:
    if isinstance(value, list):
        return [{"text": t} if isinstance(t, str) else t for t in value]
    return value


class ScenarioModel(_Model):
    """A whole scenario file."""

    name: str
    description: str = ""
    prompt: Strings = Field(default_factory=lambda: ["Go."])
    tools: Annotated[dict[str, ToolDef], BeforeValidator(_tool_shorthand)] = Field(default_factory=dict)
    config: Config = Field(default_factory=Config)
    script: Annotated[list[TurnDef], BeforeValidator(_turn_shorthand)] = Field(min_length=1)
    steering: list[SteerDef] = Field(default_factory=list)
    follow_ups: list[FollowDef] = Field(default_factory=list)
    providers: list[ProviderName] | None = None
    xfail: dict[ProviderName, str] = Field(default_factory=dict)
    expect: Expect

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if not _NAME.fullmatch(name):
            raise ValueError(f"name {name!r} may hold only letters, digits, '_', '-' and '.'")
        return name

    @field_validator("tools")
    @classmethod
    def _tool_names(cls, tools: dict[str, ToolDef]) -> dict[str, ToolDef]:
        for name in tools:
            if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name):
                raise ValueError(f"tool name {name!r} is not accepted by providers: use 1-64 letters, digits, '_' or '-'")
        return tools

    def turns(self) -> list[Turn]:
        return [t.to_turn() for t in self.script]

    def raw_argument_calls(self) -> list[str]:
        """Raw-string arguments in the script that are not a JSON object (broken or non-object)."""
        out = []
        for t in self.script:
            for c in t.tool_calls:
                if isinstance(c.arguments, str) and c.arguments.strip():
                    try:
                        ok = isinstance(json.loads(c.arguments), dict)
                    except ValueError:
                        ok = False
                    if not ok:
                        out.append(c.arguments)
        return out
