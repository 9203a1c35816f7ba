"""Read scenario YAML files, reporting every problem with file, line, column and what was expected.

The document is composed to PyYAML nodes (which carry marks) and built into plain data while a
``path -> mark`` map is kept. pydantic validates the data; each of its error locations is walked
back to the deepest node of the document that exists, so a message points at the key or value
the author has to change. Unknown keys get a "did you mean" hint and the list of keys that fit.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import ScenarioError
from .model import ScenarioModel

Loc = tuple[str | int, ...]


@dataclass(slots=True, frozen=True)
class Problem:
    """One thing wrong with a scenario file."""

    source: str
    line: int  # 1-based; 0 when unknown
    column: int  # 1-based; 0 when unknown
    path: str  # dotted path in the document, e.g. expect.calls[0].is_error
    message: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}:{self.column}" if self.line else self.source
        return f"{where}: {self.path or '(document)'}: {self.message}"


class ScenarioFileError(ScenarioError):
    """A scenario file (or a Scenario built in code) is malformed; ``problems`` lists every error."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        sources = sorted({p.source for p in problems})
        head = f"{len(problems)} problem(s) in {', '.join(sources)}:" if problems else "invalid scenario"
        super().__init__("\n".join([head, *("  " + str(p) for p in problems)]))


# --- YAML -> data + marks -----------------------------------------------------------------------


@dataclass(slots=True)
class _Marks:
    values: dict[Loc, Any]  # path -> yaml Mark of the value node
    keys: dict[Loc, Any]  # path -> yaml Mark of the mapping key


def compose(text: str, source: str) -> tuple[Any, _Marks]:
    """Parse YAML text into plain data and the marks of every node."""
    import yaml

    # libyaml's parser when PyYAML has it (a tenth of the CPU); a file it rejects is parsed again
    # by the pure-Python one, whose error messages say more
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    marks = _Marks({}, {})
    try:
        node = loader.get_single_node()
        if node is None:
            raise ScenarioFileError([Problem(source, 1, 1, "", "the file is empty; expected a mapping with name, script and expect")])
        problems: list[Problem] = []
        data = _build(loader, node, (), marks, problems, source)
        if problems:
            raise ScenarioFileError(problems)
        return data, marks
    except yaml.MarkedYAMLError as error:
        exc = error if isinstance(loader, yaml.SafeLoader) else _python_parser_error(text, error)
        mark = exc.problem_mark or exc.context_mark
        what = " ".join(x for x in (exc.context, exc.problem) if x)
        if exc.context and exc.context_mark is not None and exc.problem_mark is not None:
            c = exc.context_mark
            what = f"{exc.context} (line {c.line + 1}, column {c.column + 1}) {exc.problem}"
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        raise ScenarioFileError([Problem(source, line, col, "", f"not valid YAML: {what}")]) from None
    finally:
        loader.dispose()


def _python_parser_error(text: str, error: Any) -> Any:
    """The pure-Python parser's error for ``text``, or ``error`` when that parser accepts it."""
    import yaml

    try:
        yaml.SafeLoader(text).get_single_node()
    except yaml.MarkedYAMLError as exc:
        return exc
    return error


def _build(loader: Any, node: Any, path: Loc, marks: _Marks, problems: list[Problem], source: str) -> Any:
    import yaml

    marks.values[path] = node.start_mark
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        out: dict[Any, Any] = {}
        for knode, vnode in node.value:
            key = loader.construct_object(knode, deep=True)
            if not isinstance(key, (str, int)):
                problems.append(_at(source, knode.start_mark, path, f"a key must be a string, got {type(key).__name__}"))
                continue
            if key in out:
                problems.append(_at(source, knode.start_mark, path + (key,), f"duplicate key {key!r} (the first is on line {marks.keys[path + (key,)].line + 1})"))
                continue
            marks.keys[path + (key,)] = knode.start_mark
            out[key] = _build(loader, vnode, path + (key,), marks, problems, source)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, path + (i,), marks, problems, source) for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


def _at(source: str, mark: Any, path: Loc, message: str) -> Problem:
    return Problem(source, mark.line + 1, mark.column + 1, dotted(path), message)


def dotted(path: Iterable[str | int]) -> str:
    out = ""
    for seg in path:
        out += f"[{seg}]" if isinstance(seg, int) else (f".{seg}" if out else str(seg))
    return out


# --- pydantic errors -> problems --------------------------------------------------------------


def _resolve(data: Any, loc: Loc) -> tuple[Loc, Loc]:
    """Split ``loc`` into the longest prefix that exists in ``data`` and the rest. A key that
    lives one level down, under a one-key shorthand mapping (``- tool_execution_end: {...}``), is
    followed there."""
    found: list[str | int] = []
    cur = data
    for i, seg in enumerate(loc):
        if isinstance(cur, dict) and seg in cur:
            cur = cur[seg]
        elif isinstance(cur, list) and isinstance(seg, int) and 0 <= seg < len(cur):
            cur = cur[seg]
        elif isinstance(cur, dict) and len(cur) == 1 and isinstance(next(iter(cur.values())), dict) and seg in next(iter(cur.values())):
            (only,) = cur
            found.append(only)
            cur = cur[only][seg]
        else:
            return tuple(found), tuple(loc[i:])
        found.append(seg)
    return tuple(found), ()


def _model_at(loc: Loc) -> type[BaseModel] | None:
    """The model class that validates the mapping at ``loc`` (to list the keys it accepts)."""
    tp: Any = ScenarioModel
    for seg in loc:
        tp = _step(tp, seg)
        if tp is None:
            return None
    tp = _strip(tp)
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _strip(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _step(tp: Any, seg: str | int) -> Any:
    tp = _strip(tp)
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            if arg is not type(None):
                got = _step(arg, seg)
                if got is not None:
                    return got
        return None
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        field = tp.model_fields.get(seg) if isinstance(seg, str) else None
        return None if field is None else field.annotation
    if origin is list and isinstance(seg, int):
        return typing.get_args(tp)[0]
    if origin is dict and isinstance(seg, str):
        return typing.get_args(tp)[1]
    return None


def _message(err: dict[str, Any], loc: Loc) -> str:
    kind = err["type"]
    if kind == "missing":
        return f"missing required key {loc[-1]!r}"
    if kind == "extra_forbidden":
        key = str(loc[-1])
        model = _model_at(loc[:-1])
        allowed = list(model.model_fields) if model is not None else []
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown key {key!r}{hint}; expected one of: {', '.join(allowed)}"
    msg = err["msg"]
    if msg.startswith("Value error, "):
        return msg[len("Value error, ") :]
    got = err.get("input")
    shown = repr(got)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{msg[0].lower()}{msg[1:]} (got {shown})"


def problems_from(exc: ValidationError, data: Any, marks: _Marks | None, source: str) -> list[Problem]:
    """Turn pydantic's errors into :class:`Problem`\\ s pointing into the document."""
    grouped: dict[Loc, list[str]] = {}
    where: dict[Loc, Any] = {}
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        found, rest = _resolve(data, loc)
        if err["type"] == "missing":
            found = tuple(found)
            text = _message(err, loc)
            mark = marks.values.get(found) if marks else None
            key = found + (f"<{loc[-1]}>",)
        elif err["type"] == "extra_forbidden" and not rest:
            text = _message(err, loc)
            mark = marks.keys.get(found) if marks else None
            key = found
        else:
            text = _message(err, loc)
            # a bad mapping key ("[key]" in pydantic's location) points at the key itself
            table = marks.keys if marks and rest[:1] == ("[key]",) else (marks.values if marks else None)
            mark = table.get(found) if table is not None else None
            key = found
        where.setdefault(key, mark)
        bucket = grouped.setdefault(key, [])
        if text not in bucket:
            bucket.append(text)
    out = []
    for key, texts in grouped.items():
        mark = where[key]
        path = tuple(s for s in key if not (isinstance(s, str) and s.startswith("<")))
        # several branches of one union failing at one node read as alternatives
        message = texts[0] if len(texts) == 1 else _alternatives(texts)
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        out.append(Problem(source, line, col, dotted(path), message))
    out.sort(key=lambda p: (p.line, p.column))
    return out


def _alternatives(texts: list[str]) -> str:
    """``input should be a valid dictionary (got 5)`` + ``... a valid string (got 5)`` ->
    ``expected a valid dictionary or a valid string (got 5)``."""
    prefix = "input should be "
    if all(t.startswith(prefix) for t in texts):
        wants, got = [], ""
        for t in texts:
            body = t[len(prefix) :]
            head, sep, tail = body.rpartition(" (got ")
            wants.append(head if sep else body)
            got = f" (got {tail}" if sep else got
        return "expected " + " or ".join(dict.fromkeys(wants)) + got
    return "expected one of: " + " | ".join(texts)


# --- entry points -----------------------------------------------------------------------------


def validate(data: Any, *, source: str, marks: _Marks | None = None, default_name: str | None = None) -> ScenarioModel:
    """Validate plain data as a scenario; raise :class:`ScenarioFileError` with every problem."""
    if not isinstance(data, dict):
        raise ScenarioFileError([Problem(source, 1 if marks else 0, 1 if marks else 0, "", f"a scenario is a mapping with name, script and expect; got {type(data).__name__}")])
    if "name" not in data and default_name is not None:
        data = {"name": default_name, **data}
    try:
        return ScenarioModel.model_validate(data)
    except ValidationError as exc:
        raise ScenarioFileError(problems_from(exc, data, marks, source)) from None


def load_text(text: str, *, source: str = "<string>", default_name: str | None = None) -> ScenarioModel:
    """Parse and validate one scenario from YAML text."""
    data, marks = compose(text, source)
    return validate(data, source=source, marks=marks, default_name=default_name)


def load_path(path: str | Path) -> ScenarioModel:
    """Parse and validate one scenario file (``name`` defaults to the file's stem)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"cannot read scenario file {p}: {exc.strerror}") from None
    return load_text(text, source=str(p), default_name=p.stem)


def discover(paths: Iterable[str | Path]) -> list[Path]:
    """Scenario files under ``paths`` (files as given; folders searched for ``*.yaml``/``*.yml``)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.suffix in (".yaml", ".yml") and f.is_file()))
        elif p.is_file():
            out.append(p)
        else:
            raise ScenarioError(f"no scenario file or folder at {p}")
    return out
