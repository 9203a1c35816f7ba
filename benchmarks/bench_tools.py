"""Time the tool hot path: Tool.prepare() and Tool.invoke() per call, in microseconds.

Run: ``PYTHONPATH=. python benchmarks/bench_tools.py``. Budget: prepare() of ``add(a: int, b: int)``
with valid arguments at most 3 µs (the whole loop round is ~30 µs).
"""

from __future__ import annotations

import timeit

from loopkit.tools import Tool, error_text, to_tool_result, tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def search(query: str, limit: int = 10, tags: list[str] | None = None, exact: bool = False) -> str:
    """Search."""
    return query


def per_call_us(fn, number: int = 200_000) -> float:  # type: ignore[no-untyped-def]
    best = min(timeit.repeat(fn, number=number, repeat=5))
    return best / number * 1e6


def main() -> None:
    valid = {"a": 1, "b": 2}
    coerced = {"a": "1", "b": " 2 "}
    invalid = {"a": "3.0"}
    search_args = {"query": "q", "limit": 5, "tags": ["x", "y"], "exact": True}
    add.prepare(valid)  # compile the validator once, as the first call of a run does
    search.prepare(search_args)
    rows: list[tuple[str, float]] = [
        ("add.prepare(valid)", per_call_us(lambda: add.prepare(valid))),
        ("add.prepare(strings coerced)", per_call_us(lambda: add.prepare(coerced))),
        ("search.prepare(valid, 4 params)", per_call_us(lambda: search.prepare(search_args))),
        ("add.invoke(valid)", per_call_us(lambda: add.invoke(valid, tool_call_id="c"))),
        ("to_tool_result('text')", per_call_us(lambda: to_tool_result("text"))),
        ("to_tool_result(3)", per_call_us(lambda: to_tool_result(3))),
        ("to_tool_result({'a': 1, 'b': [1, 2]})", per_call_us(lambda: to_tool_result({"a": 1, "b": [1, 2]}))),
        ("error_text(ValueError('x'))", per_call_us(lambda: error_text(ValueError("x")))),
        ("add.prepare(invalid) [error path]", per_call_us(lambda: add.prepare(invalid), number=2_000)),
        ("baseline: empty lambda call", per_call_us(lambda: None)),
    ]
    for label, us in rows:
        print(f"{label:38s} {us:8.3f} µs")
    assert isinstance(add, Tool)


if __name__ == "__main__":
    main()
