"""``pytest --loopkit-adapter=... --loopkit-protocol=...``: one item per case, tested with pytester."""

from __future__ import annotations

import re
from importlib.metadata import entry_points

from test_builtin import NOT_APPLICABLE

from loopkit.conformance import CASE_IDS

pytest_plugins = ["pytester"]

INSTALLED = any(ep.value == "loopkit.pytest_conformance" for ep in entry_points(group="pytest11"))
PLUGIN_ARGS = () if INSTALLED else ("-p", "loopkit.pytest_conformance")
BEDROCK_NOT_APPLICABLE = len(NOT_APPLICABLE["bedrock"])


def test_one_item_per_case(pytester) -> None:
    result = pytester.runpytest(*PLUGIN_ARGS, "--loopkit-adapter=bedrock", "--loopkit-protocol=bedrock", "--collect-only", "-q")
    lines = [line for line in result.outlines if "::" in line]
    assert lines == [f"loopkit-conformance[bedrock]::{case_id}" for case_id in CASE_IDS]


def test_builtin_adapter_passes_and_inexpressible_cases_skip_with_the_reason(pytester) -> None:
    result = pytester.runpytest(*PLUGIN_ARGS, "--loopkit-adapter=bedrock", "--loopkit-protocol=bedrock", "-rs")
    result.assert_outcomes(passed=len(CASE_IDS) - BEDROCK_NOT_APPLICABLE, skipped=BEDROCK_NOT_APPLICABLE)
    result.stdout.fnmatch_lines(["*not applicable: bedrock has no knob to forbid parallel tool calls*"])


def test_a_planted_bug_fails_its_item_with_the_mismatch(pytester) -> None:
    result = pytester.runpytest(
        *PLUGIN_ARGS,
        "--loopkit-adapter=broken_adapters:loses_is_error_factory",
        "--loopkit-protocol=bedrock",
        "-k",
        "history",
    )
    selected = [c for c in CASE_IDS if "history" in c]
    # request.history.call_item_ids is Responses-only, request.history.part_signatures Gemini-only,
    # request.history.error_in_text for a model that takes no error flag (--loopkit-variant)
    result.assert_outcomes(passed=len(selected) - 4, failed=1, skipped=3)
    result.stdout.fnmatch_lines([f"collected {len(CASE_IDS)} items / {len(CASE_IDS) - len(selected)} deselected / {len(selected)} selected"])
    result.stdout.re_match_lines(
        [
            re.escape("request.history.is_error (docs/wire.md §0.3; docs/loop-contract.md §7.2): ") + ".*",
            re.escape('  error flags (toolResult.status="error") of [success, error] results: expected [False, True], got [False, False]'),
        ]
    )


def test_variant_option_answers_as_that_model_family(pytester) -> None:
    """--loopkit-variant: the built-in adapter is built for a model that refuses toolResult.status,
    and the case for an error said in the text runs instead of being skipped."""
    args = (*PLUGIN_ARGS, "--loopkit-adapter=bedrock", "--loopkit-protocol=bedrock", "-k", "is_error or error_in_text")
    pytester.runpytest(*args, "--loopkit-variant=no-tool-result-status").assert_outcomes(passed=2)
    pytester.runpytest(*args).assert_outcomes(passed=1, skipped=1)


def test_no_items_without_the_option_and_a_clear_error_for_a_bad_target(pytester) -> None:
    pytester.makepyfile("def test_plain(): pass")
    pytester.runpytest(*PLUGIN_ARGS).assert_outcomes(passed=1)
    result = pytester.runpytest(*PLUGIN_ARGS, "--loopkit-adapter=nowhere_xyz:f", "--loopkit-protocol=bedrock")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--loopkit-adapter: conformance target 'nowhere_xyz:f': cannot import*"])
