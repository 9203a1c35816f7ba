"""``tool_calls()`` and ``scripted_calls()``: what a model asks for, well formed or not."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import event
from hypothesis import strategies as st

from ..errors import UsageError
from ..messages import ToolCall
from ..script import ScriptedCall
from ._arguments import arguments, object_violations
from ._schema import JSONSchema, merge, validator_for

CALL_KINDS: tuple[str, ...] = (
    "valid", "unknown_name", "empty_name", "broken_json", "non_object", "schema_violation",
    "duplicate_id", "missing_id", "huge_value",
)  # fmt: skip
"""What :func:`tool_calls` can make: one well-formed kind and eight ways for a call to be wrong."""

_ID_CHARS = st.characters(codec="ascii", categories=("Ll", "Nd"))
_IDS = st.text(_ID_CHARS, min_size=6, max_size=12).map(lambda s: f"call_{s}")
_HEAVY = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",), min_codepoint=0x80),
    min_size=1,
    max_size=40,
)


@dataclass(frozen=True, slots=True)
class _Spec:
    name: str
    valid: st.SearchStrategy[Any]
    invalid: st.SearchStrategy[Any] | None


def tool_specs(tools: Iterable[Any]) -> list[tuple[str, JSONSchema]]:
    """``(name, parameters schema)`` for each tool: a ToolSpec, a loopkit tool (``.spec``), a
    ``{"spec", "execute"}`` mapping, or a mapping with ``name``/``parameters``."""
    out = []
    for i, tool in enumerate(tools):
        spec = tool.get("spec", tool) if isinstance(tool, Mapping) else getattr(tool, "spec", tool)
        if isinstance(spec, Mapping):
            name, params = spec.get("name"), spec.get("parameters", spec.get("input_schema", {"type": "object"}))
        else:
            name, params = getattr(spec, "name", None), getattr(spec, "parameters", {"type": "object"})
        if not isinstance(name, str) or not name:
            raise UsageError(f"tools[{i}] has no name: pass ToolSpec, loopkit tools, or mappings with 'name' and 'parameters'")
        out.append((name, params))
    return out


def _prepare(tools: Iterable[Any], malformed: bool, min_size: int, max_size: int, kinds: Collection[str] | None, fn: str) -> tuple[list[_Spec], list[str]]:
    if not isinstance(malformed, bool):
        raise UsageError(f"{fn}(malformed=...) takes True or False, got {malformed!r}")
    if min_size < 0 or max_size < min_size:
        raise UsageError(f"{fn}(min_size={min_size}, max_size={max_size}): need 0 <= min_size <= max_size")
    specs = []
    for name, declared in tool_specs(tools):
        try:
            validator_for(declared)
            schema, _ = merge(declared, {"type": "object"})  # arguments are an object, whatever the schema allows
            invalid: st.SearchStrategy[Any] | None = object_violations(schema).map(lambda v: v.value)
        except UsageError as exc:
            if "no rule" not in str(exc):
                raise UsageError(f"{fn}(): tool {name!r}: {exc}") from None
            invalid = None
        specs.append(_Spec(name, arguments(schema), invalid))
    chosen = list(CALL_KINDS if kinds is None else kinds) if malformed else ["valid"]
    unknown = set(chosen) - set(CALL_KINDS)
    if unknown:
        raise UsageError(f"{fn}(kinds=...) got unknown kind(s) {sorted(unknown)}; choose from {', '.join(CALL_KINDS)}")
    if not specs:
        chosen = [k for k in chosen if k in ("unknown_name", "empty_name")]
        if not chosen:
            raise UsageError(f"{fn}() needs at least one tool to call; with no tools only unknown_name/empty_name calls exist")
    if not any(s.invalid is not None for s in specs):
        chosen = [k for k in chosen if k != "schema_violation"] or chosen
    if not chosen:
        raise UsageError(f"{fn}(kinds=...) is empty")
    return specs, chosen


@st.composite
def _call_parts(draw: Any, specs: list[_Spec], kinds: list[str], id_: str) -> tuple[str, str, Any, str | None, str]:
    """``(kind, name, arguments, raw_arguments, id)`` of one call; ids for list-level kinds are fixed later."""
    kind = draw(st.sampled_from(kinds))
    pool = [s for s in specs if s.invalid is not None] if kind == "schema_violation" else specs
    spec = draw(st.sampled_from(pool)) if pool else None
    name = spec.name if spec else ""
    args: Any = draw(spec.valid) if spec and kind not in ("schema_violation", "non_object") else {}
    raw: str | None = None
    if kind == "unknown_name":
        known = {s.name for s in specs}
        name = draw(st.sampled_from([f"{name}_v2", name.upper(), f"{name}s", "unknown_tool", "functions." + name]).filter(lambda n: n and n not in known))
    elif kind == "empty_name":
        name = ""
    elif kind == "broken_json":
        text = json.dumps(args, ensure_ascii=False)
        cut = draw(st.integers(min_value=1, max_value=max(1, len(text) - 1)))
        candidates = [text[:cut], text.replace('"', "'"), text[:-1] + ",}" if text.endswith("}") else text + "}", "{" + text, "{\"a\": NaN"]
        raw = draw(st.sampled_from([c for c in candidates if _broken(c)] or ["{"]))
        args = None
    elif kind == "non_object":
        args = draw(st.one_of(st.lists(st.integers(), max_size=3), st.text(max_size=10), st.integers(), st.none(), st.booleans()))
    elif kind == "schema_violation":
        args = draw(spec.invalid)  # type: ignore[union-attr,arg-type]
    elif kind == "missing_id":
        id_ = ""
    elif kind == "huge_value":
        args = _with_huge_string(args, draw(st.integers(min_value=2_000, max_value=20_000)), draw(_HEAVY))
    return kind, name, args, raw, id_


def _broken(text: str) -> bool:
    if not text.strip():
        return False
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def _with_huge_string(args: Any, size: int, alphabet: str) -> Any:
    """``args`` with its first string value (or a new key ``text``) replaced by a huge unicode string."""
    huge = (alphabet * (size // len(alphabet) + 1))[:size]
    if isinstance(args, dict):
        for k, v in args.items():
            if isinstance(v, str):
                return {**args, k: huge}
        return {**args, "text": huge}
    return {"text": huge}


@st.composite
def _parts_lists(draw: Any, specs: list[_Spec], kinds: list[str], min_size: int, max_size: int) -> list[tuple[str, str, Any, str | None, str]]:
    n = draw(st.integers(min_value=min_size, max_value=max_size))
    ids = draw(st.lists(_IDS, min_size=n, max_size=n, unique=True))
    per_call = [k for k in kinds if k != "duplicate_id"] or ["valid"]
    if "valid" in per_call:  # about half the calls well formed: a run should get past its first mistake
        per_call = ["valid"] * (len(per_call) - 1) + per_call
    parts = [draw(_call_parts(specs, per_call, ids[i])) for i in range(n)]
    if "duplicate_id" in kinds and n >= 2 and draw(st.booleans()):
        i, j = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
        kind, name, args, raw, _ = parts[j]
        parts[j] = ("duplicate_id", name, args, raw, parts[i][4])
    for p in parts:
        event(f"tool call: {p[0]}")
    return parts


def tool_calls(
    tools: Sequence[Any],
    *,
    malformed: bool = True,
    min_size: int = 1,
    max_size: int = 3,
    kinds: Collection[str] | None = None,
) -> st.SearchStrategy[list[ToolCall]]:
    """Lists of :class:`~loopkit.messages.ToolCall` against ``tools``, as one assistant message holds them.

    Valid calls carry arguments from :func:`arguments`. With ``malformed``, calls may also have
    an unknown or empty name, argument text that is not JSON (``arguments=None`` and the text in
    ``raw_arguments``), JSON that is not an object, arguments that break the schema, a missing or
    duplicated id, or a huge unicode-heavy value (see :data:`CALL_KINDS`).

    Args:
        tools: ToolSpecs, loopkit tools, ``{"spec", "execute"}`` or ``{"name", "parameters"}`` mappings.
        malformed: False for well-formed calls only.
        min_size: fewest calls in a list.
        max_size: most calls in a list.
        kinds: restrict to these kinds (names from :data:`CALL_KINDS`).

    Example::

        @given(tool_calls([weather_spec], kinds={"broken_json", "non_object"}))
        def test_bad_calls_become_errors(calls): ...
    """
    specs, chosen = _prepare(tools, malformed, min_size, max_size, kinds, "tool_calls")
    return _parts_lists(specs, chosen, min_size, max_size).map(
        lambda parts: [ToolCall(id=i, name=n, arguments=a, raw_arguments=r) for _, n, a, r, i in parts]
    )


def scripted_calls(
    tools: Sequence[Any],
    *,
    malformed: bool = True,
    min_size: int = 1,
    max_size: int = 3,
    kinds: Collection[str] | None = None,
) -> st.SearchStrategy[list[ScriptedCall]]:
    """Like :func:`tool_calls`, as :class:`~loopkit.script.ScriptedCall` values for a Script.

    Broken JSON and non-object JSON become the raw argument string the scripted model sends.

    Example::

        @given(scripted_calls(tools, max_size=2))
        def test_loop(calls):
            run(ScriptedProvider([Turn(tool_calls=calls), "done"]), "go", tools=tools)
    """
    specs, chosen = _prepare(tools, malformed, min_size, max_size, kinds, "scripted_calls")

    def build(parts: list[tuple[str, str, Any, str | None, str]]) -> list[ScriptedCall]:
        out = []
        for kind, name, args, raw, id_ in parts:
            if raw is not None:
                sent: Mapping[str, Any] | str = raw
            elif not isinstance(args, dict):
                sent = json.dumps(args)
            else:
                sent = args
            out.append(ScriptedCall(name=name, arguments=sent, id=id_))
        return out

    return _parts_lists(specs, chosen, min_size, max_size).map(build)
