"""``loopkit fuzz``: generated valid and invalid arguments through the real loop, findings shrunk.

Each example is one model tool call with generated arguments (from :func:`loopkit.strategies.
arguments` and :func:`~loopkit.strategies.violations`), answered by a
:class:`~loopkit.fakes.ScriptedProvider` and run by :func:`loopkit.run`, so the tool's real
validation, coercion, execution and error-result path all run. Four kinds of finding:

``escaped_exception``
    an exception came out of the loop (a tool's own ``prepare`` crashed, a tool raised a
    ``BaseException``...) instead of becoming an error result.
``invalid_accepted``
    arguments that break the schema reached the function (after coercion, still invalid).
``valid_rejected``
    arguments the schema allows got an error result (rejected, or the function raised).
``unhelpful_error``
    an error result whose text is empty, only an exception's class name, or (for a broken
    rule) does not name the property at fault.

The examples are findings replayed from hypothesis's example database, then edge cases (bounds,
integer-valued floats, unicode, ``format`` edges and near-misses, raw-text oddities), then
generated sets; each kind found is searched again and shrunk by hypothesis to a minimal example.
A tool's deliberate errors are declared with ``expect_errors=``. Use :func:`fuzz` from pytest
(``fuzz(my_tool).raise_for_findings()``), :func:`fuzz_tools` for a whole toolset, or the
``loopkit fuzz module[:function]`` command. Each finding's :meth:`Finding.reproduction` is a
pytest test to paste.
"""


from __future__ import annotations

from ._report import (
    KINDS,
    Example,
    Finding,
    FuzzFailure,
    FuzzReport,
    ToolsetReport,
    raise_for_findings,
)
from ._run import Expected
from ._search import MAX_FINDINGS, fuzz, fuzz_tools
from ._targets import load_target, load_toolset

__all__ = [
    "KINDS",
    "MAX_FINDINGS",
    "Example",
    "Expected",
    "Finding",
    "FuzzFailure",
    "FuzzReport",
    "ToolsetReport",
    "fuzz",
    "fuzz_tools",
    "load_target",
    "load_toolset",
    "raise_for_findings",
]
