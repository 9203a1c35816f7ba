"""Tool building, schemas from type hints and docstrings, adaptation, registry and policy, results."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import inspect
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict

import annotated_types
import pydantic
import pytest

from loopkit.errors import ToolDefinitionError, UsageError
from loopkit.events import ToolResult
from loopkit.messages import ImageContent, TextContent
from loopkit.provider import AbortSignal, ToolSpec
from loopkit.tools import (
    Tool,
    ToolRegistry,
    adapt_tool,
    default_registry,
    error_text,
    resolve_tools,
    to_tool_result,
    tool,
)

# --- types used by the schema tests (module level, so string annotations resolve) -------------


class Color(enum.Enum):
    """A primary colour."""

    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(TypedDict):
    street: str
    zip: NotRequired[str]


@dataclasses.dataclass
class Point:
    """A point on the plane.

    Attributes:
        x: horizontal position.
        y: vertical position.
    """

    x: float
    y: float = 0.0
    tags: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Segment:
    start: Point
    end: Point


class User(pydantic.BaseModel):
    name: str
    age: int = 0


class Team(pydantic.BaseModel):
    lead: User
    members: list[User] = []


@dataclasses.dataclass
class Node:
    value: int
    child: Node | None = None


def schema_of(fn: Any) -> dict[str, Any]:
    return tool(fn).parameters


def prop(annotation_fn: Any) -> dict[str, Any]:
    """The schema of the single parameter ``x`` of ``annotation_fn``."""
    return schema_of(annotation_fn)["properties"]["x"]


# --- schemas from type hints -------------------------------------------------------------------


def test_add_schema_is_exact() -> None:
    @tool
    def add(a: int, b: int) -> int:
        return a + b

    assert add.name == "add"
    assert add.description == ""
    assert add.parameters == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert add.spec == ToolSpec(name="add", description="", parameters=add.parameters)
    assert add.source == "user"
    assert add.is_async is False


def test_unannotated_parameter_takes_any_value() -> None:
    assert tool(name="f")(lambda x: None).parameters["properties"]["x"] == {}


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (str, {"type": "string"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (Any, {}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (list, {"type": "array"}),
        (set[str], {"type": "array", "items": {"type": "string"}}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {
                "type": "array",
                "items": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
                "additionalItems": False,
            },
        ),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (dict, {"type": "object"}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal[1, "a"], {"enum": [1, "a"]}),
        (Color, {"type": "string", "enum": ["red", "blue"], "description": "A primary colour."}),
        (Level, {"type": "integer", "enum": [1, 2]}),
        (Optional[int], {"type": ["integer", "null"]}),
        (int | str, {"type": ["integer", "string"]}),
        (
            list[int] | None,
            {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]},
        ),
        (Annotated[int, "how many"], {"type": "integer", "description": "how many"}),
        (
            Address,
            {
                "type": "object",
                "properties": {"street": {"type": "string"}, "zip": {"type": "string"}},
                "required": ["street"],
                "additionalProperties": False,
            },
        ),
    ],
)
def test_type_forms(annotation: Any, expected: dict[str, Any]) -> None:
    assert prop(_f(annotation)) == expected


def _f(annotation: Any) -> Any:
    """A function with one parameter ``x`` of the given annotation (set at runtime, so it is an
    object, not a string)."""

    def f(x): ...  # type: ignore[no-untyped-def]

    f.__annotations__ = {"x": annotation}
    return f


def test_dataclass_schema_and_docstring_attributes() -> None:
    assert prop(_f(Point)) == {
        "type": "object",
        "properties": {
            "x": {"type": "number", "description": "horizontal position."},
            "y": {"type": "number", "description": "vertical position."},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["x"],
        "additionalProperties": False,
        "description": "A point on the plane.",
    }


def test_pydantic_models_are_inlined() -> None:
    schema = prop(_f(Team))
    assert "$defs" not in str(schema) and "$ref" not in str(schema)
    assert schema["properties"]["lead"]["properties"]["name"] == {"title": "Name", "type": "string"}
    assert schema["properties"]["members"]["items"]["required"] == ["name"]


def test_defaults_are_not_required_and_shown() -> None:
    def search(query: str, limit: int = 10, color: Color = Color.RED, opt: str | None = None) -> None: ...

    p = schema_of(search)
    assert p["required"] == ["query"]
    assert p["properties"]["limit"] == {"type": "integer", "default": 10}
    assert p["properties"]["color"]["default"] == "red"
    assert p["properties"]["opt"] == {"type": ["string", "null"], "default": None}


def test_injected_parameters_and_self_are_not_in_the_schema() -> None:
    def work(n: int, signal: AbortSignal | None = None, on_update: Any = None, tool_call_id: str = "") -> None: ...

    assert schema_of(work)["properties"] == {"n": {"type": "integer"}}


def test_kwargs_open_additional_properties() -> None:
    def f(a: int, **rest: str) -> None: ...

    p = schema_of(f)
    assert p["additionalProperties"] == {"type": "string"}


def test_docstring_description_and_args() -> None:
    def lookup(city: str, units: str = "metric") -> str:
        """Look up the weather
        for a city.

        Second paragraph is not part of the description.

        Args:
            city (str): the city name,
                as the user wrote it.
            units: metric or imperial.

        Returns:
            the forecast.
        """
        return city

    t = tool(lookup)
    assert t.description == "Look up the weather for a city."
    assert t.parameters["properties"]["city"]["description"] == "the city name, as the user wrote it."
    assert t.parameters["properties"]["units"]["description"] == "metric or imperial."


def test_rest_style_params_and_explicit_description() -> None:
    def f(a: int) -> None:
        """Do it.

        :param a: the amount.
        """

    t = tool(description="Overridden.")(f)
    assert t.description == "Overridden."
    assert t.parameters["properties"]["a"]["description"] == "the amount."


def test_annotated_constraints_become_schema_keywords() -> None:
    def f(
        n: Annotated[int, pydantic.Field(ge=1, lt=10, description="count")],
        name: Annotated[str, pydantic.Field(min_length=1, max_length=8, pattern="^[a-z]+$")],
        tags: Annotated[list[str], annotated_types.MaxLen(3)],
        step: Annotated[float, annotated_types.MultipleOf(0.5)],
    ) -> None: ...

    t = tool(f)
    p = t.parameters["properties"]
    assert p["n"] == {"type": "integer", "minimum": 1, "exclusiveMaximum": 10, "description": "count"}
    assert p["name"] == {"type": "string", "minLength": 1, "maxLength": 8, "pattern": "^[a-z]+$"}
    assert p["tags"] == {"type": "array", "items": {"type": "string"}, "maxItems": 3}
    assert p["step"] == {"type": "number", "multipleOf": 0.5}
    error = t.prepare({"n": 10, "name": "ok", "tags": [], "step": 1})[1]
    assert error is not None and "  - n: 10 is greater than or equal to the maximum of 10" in error


def test_annotated_description_wins_over_docstring() -> None:
    def f(x: Annotated[int, "from annotation"]) -> None:
        """F.

        Args:
            x: from docstring.
        """

    assert prop(f)["description"] == "from annotation"


@pytest.mark.parametrize(
    ("annotation", "fragment"),
    [
        (complex, "has no JSON Schema form"),
        (dict[int, str], "dict keys must be str"),
        (Node, "refers to itself"),
    ],
)
def test_unsupported_types_raise(annotation: Any, fragment: str) -> None:
    with pytest.raises(ToolDefinitionError, match=fragment) as info:
        tool(_f(annotation))
    assert 'Tool "f"' in str(info.value) and "parameter 'x'" in str(info.value)


def test_var_positional_and_unresolvable_hints_raise() -> None:
    def star(*items: int) -> None: ...

    with pytest.raises(ToolDefinitionError, match=r"\*args"):
        tool(star)

    def bad(x: NoSuchType) -> None: ...  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(ToolDefinitionError, match="cannot resolve the type hints"):
        tool(bad)


# --- names and schemas are checked when the tool is built ---------------------------------------


@pytest.mark.parametrize("name", ["", "has space", "dot.name", "x" * 65, "add\n", "ünicode"])
def test_bad_names_raise(name: str) -> None:
    with pytest.raises(ToolDefinitionError, match="not accepted by providers"):
        tool(name=name)(lambda: None)


def test_good_names() -> None:
    for name in ["a", "get-weather_2", "x" * 64]:
        assert tool(name=name)(lambda: None).name == name


def test_a_tool_is_not_wrapped_twice() -> None:
    t = tool(name="once")(lambda: None)
    with pytest.raises(ToolDefinitionError, match="already a Tool"):
        tool(t)


def test_lambda_needs_a_name() -> None:
    with pytest.raises(ToolDefinitionError, match=r"use tool\(fn, name=\.\.\.\)"):
        tool(lambda: None)


@pytest.mark.parametrize(
    ("parameters", "fragment"),
    [
        ({"type": "object", "properties": {"a": {"type": "integr"}}}, "invalid parameters schema at properties/a/type"),
        ({"type": "object", "required": "a"}, "invalid parameters schema at required"),
        ({"type": "array"}, 'must have "type": "object"'),
        ([], "must be a JSON Schema object"),
    ],
)
def test_invalid_schemas_raise_naming_the_tool(parameters: Any, fragment: str) -> None:
    with pytest.raises(ToolDefinitionError, match=fragment) as info:
        Tool(name="broken", execute=lambda **kw: None, parameters=parameters)
    assert "broken" in str(info.value)


def test_tool_is_immutable_and_keeps_its_own_schema() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    t = Tool(name="t", execute=lambda a: a, parameters=schema)
    schema["properties"]["a"]["type"] = "string"
    assert t.parameters["properties"]["a"] == {"type": "integer"}
    assert t.prepare({"a": 1}) == ({"a": 1}, None)
    with pytest.raises(AttributeError, match="immutable"):
        t.name = "other"  # type: ignore[misc]


# --- the four forms, and methods ----------------------------------------------------------------


def test_decorator_with_and_without_parens_keeps_the_function_callable() -> None:
    @tool
    def one(a: int) -> int:
        return a

    @tool(name="two", source="builtin")
    def second(a: int) -> int:
        return a * 2

    assert one(3) == 3 and second(3) == 6
    assert (one.name, second.name, second.source) == ("one", "two", "builtin")


def test_spec_execute_dict_forms() -> None:
    params = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    plain = adapt_tool({"spec": {"name": "p", "description": "P.", "parameters": params}, "execute": lambda a: a + 1})
    openai = adapt_tool(
        {
            "spec": {"type": "function", "function": {"name": "o", "description": "O.", "parameters": params}},
            "execute": lambda args: args["a"] * 10,
            "source": "mcp",
        }
    )
    assert (plain.name, plain.description, plain.parameters) == ("p", "P.", params)
    assert plain.invoke({"a": 1}, tool_call_id="c") == 2
    assert (openai.name, openai.source) == ("o", "mcp")
    assert openai.invoke({"a": 2}, tool_call_id="c") == 20


def test_positional_only_dict_executor() -> None:
    def execute(arguments: dict[str, Any], /, tool_call_id: str) -> str:
        return f"{tool_call_id}:{sorted(arguments)}"

    t = adapt_tool({"spec": {"name": "po", "parameters": {"type": "object"}}, "execute": execute})
    assert t.invoke({"b": 1, "a": 2}, tool_call_id="c") == "c:['a', 'b']"


def test_dict_executor_gets_a_copy_of_the_arguments() -> None:
    def execute(args: dict[str, Any]) -> None:
        args["a"] = "changed"

    t = adapt_tool({"spec": {"name": "m", "parameters": {"type": "object"}}, "execute": execute})
    raw = {"a": 1}
    args, _ = t.prepare(raw)
    assert args is not None
    t.invoke(args, tool_call_id="c")
    assert raw == {"a": 1}


def test_openprogram_style_executor_gets_args_and_signal() -> None:
    class AgentTool:
        spec = {"name": "op", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}

        async def execute(self, tool_call_id: str, args: dict[str, Any], cancel_event: Any = None, on_update: Any = None) -> str:
            return f"{tool_call_id} {args['q']} {cancel_event.aborted}"

    t = adapt_tool(AgentTool())
    assert t.is_async is True
    assert asyncio.run(t.invoke({"q": "x"}, tool_call_id="c", signal=AbortSignal())) == "c x False"


def test_cancel_is_an_argument_when_the_schema_says_so() -> None:
    spec = {"name": "stop", "parameters": {"type": "object", "properties": {"cancel": {"type": "boolean"}}}}
    t = adapt_tool({"spec": spec, "execute": lambda cancel: cancel})
    assert t.invoke({"cancel": True}, tool_call_id="c", signal=AbortSignal()) is True


def test_object_with_spec_and_execute() -> None:
    class Echo:
        spec = ToolSpec(name="echo", description="Echo.", parameters={"type": "object", "properties": {"s": {"type": "string"}}})
        source = "plugin"

        def execute(self, s: str, tool_call_id: str) -> str:
            return f"{tool_call_id}:{s}"

    t = adapt_tool(Echo())
    assert (t.name, t.description, t.source) == ("echo", "Echo.", "plugin")
    assert t.invoke({"s": "hi"}, tool_call_id="c1") == "c1:hi"


def test_plain_typed_function_and_bound_method() -> None:
    def mul(a: int, b: int = 2) -> int:
        """Multiply."""
        return a * b

    class Calc:
        def __init__(self, k: int) -> None:
            self.k = k

        def scale(self, x: int) -> int:
            """Scale x."""
            return self.k * x

    t = adapt_tool(mul)
    assert (t.name, t.description, t.parameters["required"]) == ("mul", "Multiply.", ["a"])
    m = adapt_tool(Calc(3).scale)
    assert m.parameters["properties"] == {"x": {"type": "integer"}}
    assert m.invoke({"x": 2}, tool_call_id="c") == 6


def test_decorated_method_binds_through_the_instance() -> None:
    class Shop:
        def __init__(self, stock: int) -> None:
            self.stock = stock

        @tool
        def buy(self, n: int) -> int:
            """Buy n items."""
            self.stock -= n
            return self.stock

    assert Shop.buy.parameters["properties"] == {"n": {"type": "integer"}}
    shop = Shop(10)
    bound = shop.buy
    assert isinstance(bound, Tool) and bound.name == "buy" and bound.description == "Buy n items."
    assert bound.invoke({"n": 3}, tool_call_id="c") == 7
    assert adapt_tool(shop.buy).invoke({"n": 2}, tool_call_id="c") == 5
    assert shop.buy(1) == 4
    with pytest.raises(ToolDefinitionError, match="through an instance|from an instance"):
        adapt_tool(Shop.buy)
    with pytest.raises(UsageError, match="is a method"):
        Shop.buy.invoke({"n": 1}, tool_call_id="c")


def test_staticmethod_under_tool() -> None:
    class Box:
        @tool
        @staticmethod
        def size(n: int) -> int:
            return n

    assert Box().size.invoke({"n": 4}, tool_call_id="c") == 4


@pytest.mark.parametrize(
    ("obj", "fragment"),
    [
        ({"name": "lonely", "parameters": {"type": "object"}}, "Tool 'lonely' has no executor"),
        (
            {"spec": {"type": "function", "function": {"name": "fn_only"}}},
            "Tool 'fn_only' has no executor",
        ),
        ("add", "not names.*tools_allow=\\['add'\\]"),
        (42, "Cannot use a int as a tool"),
        (int, "Cannot use a type as a tool"),
        ({"execute": print}, "needs 'spec' and 'execute'"),
    ],
)
def test_adapt_rejects(obj: Any, fragment: str) -> None:
    with pytest.raises(ToolDefinitionError, match=fragment):
        adapt_tool(obj)


# --- invoke: sync, async, injection, conversion -------------------------------------------------


def test_sync_invoke_injects_declared_extras() -> None:
    seen: dict[str, Any] = {}

    @tool
    def work(n: int, signal: AbortSignal | None = None, on_update: Any = None, tool_call_id: str = "") -> int:
        seen.update(signal=signal, tool_call_id=tool_call_id)
        on_update(f"half of {n}")
        return n

    updates: list[Any] = []
    signal = AbortSignal()
    assert work.invoke({"n": 2}, tool_call_id="call_1", signal=signal, on_update=updates.append) == 2
    assert seen == {"signal": signal, "tool_call_id": "call_1"}
    assert updates == ["half of 2"]


def test_invoke_without_signal_or_on_update_gives_usable_defaults() -> None:
    @tool
    def work(signal: AbortSignal, on_update: Any) -> bool:
        on_update("progress")
        return signal.aborted

    assert work.invoke({}, tool_call_id="c") is False


def test_async_invoke_returns_an_awaitable() -> None:
    @tool
    async def fetch(url: str, tool_call_id: str, signal: AbortSignal, on_update: Any) -> str:
        on_update("started")
        await asyncio.sleep(0)
        return f"{tool_call_id} {url} aborted={signal.aborted} reason={signal.reason}"

    assert fetch.is_async is True
    assert fetch.parameters["properties"] == {"url": {"type": "string"}}
    signal = AbortSignal()
    signal.abort("user")
    updates: list[Any] = []
    pending = fetch.invoke({"url": "u"}, tool_call_id="c9", signal=signal, on_update=updates.append)
    assert inspect.isawaitable(pending)
    assert asyncio.run(pending) == "c9 u aborted=True reason=user"
    assert updates == ["started"]


def test_async_callable_object_is_async() -> None:
    class Exec:
        async def __call__(self, args: dict[str, Any]) -> int:
            return len(args)

    t = Tool(name="n", execute=Exec(), parameters={"type": "object"})
    assert t.is_async is True
    assert asyncio.run(t.invoke({"a": 1}, tool_call_id="c")) == 1


def test_arguments_become_annotated_python_types() -> None:
    got: dict[str, Any] = {}

    @tool
    def draw(seg: Segment, color: Color, users: list[User], pair: tuple[int, int], ratio: float, tags: set[str]) -> None:
        got.update(seg=seg, color=color, users=users, pair=pair, ratio=ratio, tags=tags)

    raw = {
        "seg": {"start": {"x": 1}, "end": {"x": 2, "y": 3}},
        "color": "blue",
        "users": [{"name": "ann"}],
        "pair": [1, 2],
        "ratio": 1,
        "tags": ["a", "a"],
    }
    args, error = draw.prepare(raw)
    assert error is None and args is not None
    draw.invoke(args, tool_call_id="c")
    assert got == {
        "seg": Segment(start=Point(x=1), end=Point(x=2, y=3)),
        "color": Color.BLUE,
        "users": [User(name="ann")],
        "pair": (1, 2),
        "ratio": 1.0,
        "tags": {"a"},
    }
    assert type(got["ratio"]) is float


def test_optional_model_converts_only_objects() -> None:
    got: list[Any] = []

    @tool
    def f(user: User | None = None) -> None:
        got.append(user)

    f.invoke({"user": None}, tool_call_id="c")
    f.invoke({"user": {"name": "b"}}, tool_call_id="c")
    assert got == [None, User(name="b")]


# --- registry, toolsets and policy --------------------------------------------------------------


def make_registry() -> ToolRegistry:
    reg = ToolRegistry()

    @reg.tool
    def read(path: str) -> str:
        return path

    @reg.tool(source="builtin")
    def write(path: str, text: str) -> None: ...

    @reg.tool(source="mcp")
    def fetch(url: str) -> str:
        return url

    reg.define_toolset("readonly", ["read", "fetch"])
    return reg


def names(tools: list[Tool]) -> list[str]:
    return [t.name for t in tools]


def test_registry_basics() -> None:
    reg = make_registry()
    assert reg.names() == ["read", "write", "fetch"]
    assert len(reg) == 3 and "read" in reg and "nope" not in reg
    assert names(list(reg)) == ["read", "write", "fetch"]
    assert reg.get("read").name == "read"
    assert reg.toolsets() == ["full", "none", "readonly"]
    with pytest.raises(UsageError, match="No tool named 'nope'.*known tools: fetch, read, write"):
        reg.get("nope")


def test_registry_refuses_a_second_tool_of_a_name() -> None:
    reg = make_registry()
    original = reg.get("read")
    reg.register(original)  # the same tool again is fine
    with pytest.raises(UsageError, match="already registered"):
        reg.register(tool(name="read")(lambda path: path))
    replacement = reg.register(tool(name="read")(lambda path: path), replace=True)
    assert reg.get("read") is replacement


def test_resolve_toolsets() -> None:
    reg = make_registry()
    assert names(reg.resolve()) == ["read", "write", "fetch"]
    assert names(reg.resolve(toolset="full")) == ["read", "write", "fetch"]
    assert reg.resolve(toolset="none") == []
    assert names(reg.resolve(toolset="readonly")) == ["read", "fetch"]


def test_resolve_policy() -> None:
    reg = make_registry()
    assert names(reg.resolve(allow=["write", "read"])) == ["read", "write"]
    assert names(reg.resolve(deny=["write"])) == ["read", "fetch"]
    assert names(reg.resolve(allow=["read", "write"], deny=["write"])) == ["read"]
    assert names(reg.resolve(source="mcp")) == ["fetch"]
    assert names(reg.resolve(source=["user", "mcp"])) == ["read", "fetch"]
    assert names(reg.resolve(toolset="readonly", allow=["write"])) == []  # allow is a hard intersection
    assert names(reg.resolve(allow="read")) == ["read"]  # one name as a str


def test_unknown_names_raise_listing_the_known_ones() -> None:
    reg = make_registry()
    with pytest.raises(UsageError, match="Unknown toolset 'web'; known toolsets: full, none, readonly"):
        reg.resolve(toolset="web")
    with pytest.raises(UsageError, match="allow= names unknown tool 'raed'; known tools: fetch, read, write"):
        reg.resolve(allow=["raed"])
    with pytest.raises(UsageError, match="deny= names unknown tools 'x', 'y'"):
        reg.resolve(deny=["x", "y"])
    with pytest.raises(UsageError, match="toolset 'bad' names unknown tool 'zzz'"):
        reg.define_toolset("bad", ["read", "zzz"])
    with pytest.raises(UsageError, match="built in"):
        reg.define_toolset("full", ["read"])


def test_resolve_tools_cases() -> None:
    reg = make_registry()

    @tool
    def calc(expr: str) -> str:
        return expr

    @tool(source="mcp")
    def search(q: str) -> str:
        return q

    assert names(resolve_tools(None, registry=reg)) == ["read", "write", "fetch"]
    assert resolve_tools(None, registry=reg, toolset="none") == []
    assert names(resolve_tools(None, registry=reg, toolset="readonly", deny=["fetch"])) == ["read"]
    assert resolve_tools([], registry=reg, toolset="readonly") == []
    # a list ignores the toolset and takes the policy
    assert names(resolve_tools([calc, search], registry=reg, toolset="none")) == ["calc", "search"]
    assert names(resolve_tools([calc, search], registry=reg, source="mcp")) == ["search"]
    assert names(resolve_tools([calc, search], registry=reg, allow=["calc"])) == ["calc"]
    assert names(resolve_tools([calc, search], registry=reg, deny=["calc"])) == ["search"]
    assert resolve_tools([calc], registry=reg, allow=["read"]) == []  # a registry name is known
    with pytest.raises(UsageError, match="allow= names unknown tool 'nope'"):
        resolve_tools([calc], registry=reg, allow=["nope"])


def test_resolve_tools_first_duplicate_wins() -> None:
    first = tool(name="dup")(lambda: "first")
    second = tool(name="dup")(lambda: "second")
    resolved = resolve_tools([first, second], registry=ToolRegistry())
    assert resolved == [first]


def test_resolve_tools_rejects_non_lists() -> None:
    reg = ToolRegistry()
    add = tool(name="add")(lambda a: a)
    for bad in ["add", add, {"spec": {}, "execute": print}]:
        with pytest.raises(UsageError, match="takes a list"):
            resolve_tools(bad, registry=reg)  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError, match="not names"):
        resolve_tools(["add"], registry=reg)


def test_default_registry_exists() -> None:
    assert isinstance(default_registry, ToolRegistry)


# --- results --------------------------------------------------------------------------------------


@dataclasses.dataclass
class Weather:
    city: str
    temp: float


def text_of(value: Any) -> str:
    result = to_tool_result(value)
    assert not result.is_error
    return result.text


def test_to_tool_result_text_and_json() -> None:
    assert to_tool_result("hi") == ToolResult(content=[TextContent(text="hi")])
    assert to_tool_result(None) == ToolResult(content=[TextContent(text="")])
    assert text_of(3) == "3"
    assert text_of(True) == "true"
    assert text_of({"a": [1, "é"]}) == '{"a": [1, "é"]}'
    assert text_of([1, 2]) == "[1, 2]"
    assert text_of(Weather("Oslo", 3.5)) == '{"city": "Oslo", "temp": 3.5}'
    assert text_of(User(name="a")) == '{"name": "a", "age": 0}'
    assert text_of({"c": Color.RED, "s": {"b", "a"}}) == '{"c": "red", "s": ["a", "b"]}'
    assert text_of({"when": object}) == '{"when": "<class \'object\'>"}'


def test_to_tool_result_circular_falls_back_to_str() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert text_of(loop) == "[[...]]"


def test_to_tool_result_blocks_pass_through() -> None:
    image = ImageContent(data="aGk=", mime_type="image/png")
    assert to_tool_result(image).content == [image]
    assert to_tool_result([TextContent(text="a"), image]).content == [TextContent(text="a"), image]
    result = ToolResult(content=[TextContent(text="x")], details={"k": 1})
    assert to_tool_result(result) is result


def test_to_tool_result_lifts_legacy_is_error() -> None:
    legacy = ToolResult(content=[TextContent(text="bad")], details={"is_error": True})
    lifted = to_tool_result(legacy)
    assert lifted.is_error is True and lifted.details == {"is_error": True}
    assert legacy.is_error is False  # the tool's own object is not changed

    class AgentToolResult:  # OpenProgram's shape, with its own block objects
        def __init__(self, content: list[Any], details: Any = None) -> None:
            self.content = content
            self.details = details

    class Block:
        type = "text"
        text = "from op"

    duck = to_tool_result(AgentToolResult([Block(), {"type": "text", "text": "d"}], details={"is_error": True}))
    assert duck == ToolResult(content=[TextContent(text="from op"), TextContent(text="d")], details={"is_error": True}, is_error=True)


def test_to_tool_result_bytes_is_an_error() -> None:
    result = to_tool_result(b"\x89PNG")
    assert result.is_error is True
    assert result.text.startswith("Tool returned 4 bytes")


@pytest.mark.parametrize(
    ("exc", "text"),
    [
        (ValueError("bad value"), "bad value"),
        (TimeoutError(), "TimeoutError"),
        (RuntimeError(""), "RuntimeError"),
        (RuntimeError("  "), "RuntimeError"),
        (KeyError("x"), "'x'"),
        (asyncio.CancelledError(), "CancelledError"),
    ],
)
def test_error_text(exc: BaseException, text: str) -> None:
    assert error_text(exc) == text


def test_error_text_survives_a_broken_str() -> None:
    class Weird(Exception):
        def __str__(self) -> str:
            raise RuntimeError("boom")

    assert error_text(Weird()) == "Weird"
