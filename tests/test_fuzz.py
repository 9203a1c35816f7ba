"""``loopkit fuzz``: planted bugs are found and shrunk; a correct tool passes."""

from __future__ import annotations

import json
import subprocess
import textwrap
from typing import Any

import pytest

from loopkit.cli import fuzz as fuzz_cli
from loopkit.errors import UsageError
from loopkit.fuzz import fuzz
from loopkit.tools import Tool, tool

SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 50},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "lang": {"enum": ["en", "de", "fr"]},
    },
    "required": ["query", "limit"],
    "additionalProperties": False,
}


def search(query: str, limit: int, lang: str = "en") -> list[str]:
    return [f"{query} #{i}" for i in range(min(int(limit), 3))]  # int(): 6.0 is a valid integer too


class NullCrashingValidator(Tool):
    """Its own validator reads ``limit`` as a number without checking for null first."""

    def prepare(self, raw_args: Any) -> tuple[dict[str, Any] | None, str | None]:
        if raw_args.get("limit", 1) > 100:  # TypeError on null: there is no None check
            return None, "limit must be at most 100"
        return super().prepare(raw_args)


class RangeBlindValidator(Tool):
    """Its own validator checks types but forgets the bounds."""

    def prepare(self, raw_args: Any) -> tuple[dict[str, Any] | None, str | None]:
        if isinstance(raw_args, dict) and isinstance(raw_args.get("query"), str) and isinstance(raw_args.get("limit"), int) and not isinstance(raw_args.get("limit"), bool):
            return dict(raw_args), None
        return super().prepare(raw_args)


@tool
def shout(text: str) -> str:
    """Upper-case a text.

    Args:
        text: what to shout.
    """
    return text.upper() + "!" if text[0] else ""  # IndexError on "": the planted bug


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first addend.
        b: the second addend.
    """
    return int(a) + int(b)  # int(): the schema's "integer" also allows 2.0


def test_a_validator_that_crashes_on_null_is_found():
    report = fuzz(NullCrashingValidator(name="search", execute=search, parameters=SEARCH), examples=150, seed=3)
    (found,) = [f for f in report.findings if f.kind == "escaped_exception"]
    assert "TypeError" in found.message
    # null, or the number sent as a string (an edge case, tried first): both reach the unguarded comparison
    assert found.example.path == ("limit",) and found.example.arguments["limit"] in (None, "1")


def test_a_validator_that_accepts_out_of_range_values_is_found():
    report = fuzz(RangeBlindValidator(name="search", execute=search, parameters=SEARCH), examples=150, seed=3)
    kinds = {f.kind: f for f in report.findings}
    assert set(kinds) == {"invalid_accepted"}
    found = kinds["invalid_accepted"]
    assert found.example.rule in ("minimum", "maximum") and found.example.path == ("limit",)
    assert found.example.arguments["limit"] in (0, 101)  # shrunk to just past the bound


def test_a_function_that_raises_on_an_empty_string_is_found():
    report = fuzz(shout, examples=100, seed=3)
    kinds = {f.kind: f for f in report.findings}
    assert "valid_rejected" in kinds
    found = kinds["valid_rejected"]
    assert found.example.arguments == {"text": ""}
    assert "IndexError" in found.message and "string index out of range" in found.result_text


def test_an_empty_error_text_is_unhelpful():
    @tool
    def strict(n: int) -> int:
        """Reject odd numbers, saying nothing.

        Args:
            n: a number.
        """
        if n % 2:
            raise ValueError()
        return n

    report = fuzz(strict, examples=100, seed=3)
    kinds = {f.kind: f for f in report.findings}
    assert kinds["unhelpful_error"].result_text == "ValueError"
    assert kinds["unhelpful_error"].example.arguments == {"n": 1}


@pytest.mark.parametrize("target", [add, Tool(name="search", execute=search, parameters=SEARCH), {"spec": {"name": "search", "parameters": SEARCH}, "execute": search}])
def test_a_correct_tool_passes(target):
    report = fuzz(target, examples=150, seed=3)
    assert report.ok, report.to_json()
    assert report.examples == 150 and report.valid_examples and report.invalid_examples
    report.raise_for_findings()


def test_raise_for_findings_lists_them():
    with pytest.raises(AssertionError, match="valid_rejected"):
        fuzz(shout, examples=60, seed=1).raise_for_findings()


def test_same_seed_same_report():
    a = fuzz(shout, examples=40, seed=9, database=None)
    b = fuzz(shout, examples=40, seed=9, database=None)
    assert a.to_json() == b.to_json()


@pytest.mark.parametrize(
    ("target", "message"),
    [("no_colon", "module:function"), ("no_such_module_xyz:f", "cannot import"), ("json:nope", "no attribute")],
)
def test_bad_targets_raise_usage_errors(target, message):
    with pytest.raises(UsageError, match=message):
        fuzz(target, examples=5)


@pytest.fixture
def tools_module(tmp_path, monkeypatch):
    (tmp_path / "fuzz_targets.py").write_text(
        textwrap.dedent(
            '''
            from loopkit.tools import tool

            __all__ = ["add", "shout"]  # a plain function counts as a tool when listed here

            @tool
            def add(a: int, b: int) -> int:
                """Add.

                Args:
                    a: first.
                    b: second.
                """
                return int(a) + int(b)

            def shout(text: str) -> str:
                return text.upper() if text[0] else ""
            '''
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return "fuzz_targets"


def test_cli_json_exit_codes(tools_module, capsys):
    args = _parse(["fuzz", f"{tools_module}:add", "--examples", "30", "--seed", "1", "--json"])
    assert fuzz_cli.run(args) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    args = _parse(["fuzz", f"{tools_module}:shout", "--examples", "30", "--seed", "1", "--json"])
    assert fuzz_cli.run(args) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["findings"][0]["kind"] == "valid_rejected" and out["findings"][0]["arguments"] == {"text": ""}


def test_cli_prints_a_table(tools_module, capsys):
    assert fuzz_cli.run(_parse(["fuzz", f"{tools_module}:shout", "--examples", "30", "--seed", "1"])) == 1
    out = capsys.readouterr().out
    assert "valid_rejected" in out and '{"text": ""}' in out and "--seed 1" in out


def test_cli_exitfirst_ends_the_search_at_the_first_finding(tools_module, capsys):
    assert fuzz_cli.run(_parse(["fuzz", f"{tools_module}:shout", "--examples", "30", "--seed", "1", "--json"])) == 1
    whole = json.loads(capsys.readouterr().out)
    assert fuzz_cli.run(_parse(["fuzz", f"{tools_module}:shout", "--examples", "30", "--seed", "1", "--json", "-x"])) == 1
    first = json.loads(capsys.readouterr().out)
    assert len(first["findings"]) == 1 and first["examples"] < whole["examples"] == 30
    assert first["findings"][0]["arguments"] in [f["arguments"] for f in whole["findings"]]


def _parse(argv: list[str]):
    """Parse with the fuzz subcommand alone (the top-level CLI registers it from loopkit.cli.fuzz)."""
    import argparse

    parser = argparse.ArgumentParser(prog="loopkit")
    fuzz_cli.add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_a_bare_key_error_text_is_unhelpful():
    @tool
    def pick(key: str) -> str:
        """Pick a value.

        Args:
            key: which one.
        """
        return {"a": "x"}[key[:1]]

    report = fuzz(pick, examples=60, seed=3)
    unhelpful = [f for f in report.findings if f.kind == "unhelpful_error"]
    assert unhelpful and "too short" in unhelpful[0].message


# --- declared expectations --------------------------------------------------------------------


@tool
def calculate(expression: str) -> int:
    """Evaluate a sum of two integers.

    Args:
        expression: like "1 + 2".
    """
    left, plus, right = expression.partition("+")
    if not plus or not left.strip().lstrip("-").isdigit() or not right.strip().lstrip("-").isdigit():
        raise ValueError(f"unsupported expression {expression!r}: write two integers joined by +")
    return int(left) + int(right)


def test_declared_errors_are_not_findings():
    assert {f.kind for f in fuzz(calculate, examples=60, seed=2, database=None).findings} == {"valid_rejected"}
    for expect in (ValueError, (ValueError, "unsupported"), {ValueError: "^unsupported"}, [KeyError, (ValueError, None)]):
        report = fuzz(calculate, examples=60, seed=2, database=None, expect_errors=expect)
        assert report.ok, (expect, report.to_json())
        assert report.expected_errors > 0


def test_a_declared_error_with_another_message_is_still_a_finding():
    report = fuzz(calculate, examples=60, seed=2, database=None, expect_errors=(ValueError, "division by zero"))
    assert [f.kind for f in report.findings] == ["valid_rejected"]


def test_a_declared_error_must_still_explain_itself():
    @tool
    def strict(n: int) -> int:
        """Reject odd numbers, saying nothing.

        Args:
            n: a number.
        """
        if int(n) % 2:
            raise ValueError()
        return int(n)

    report = fuzz(strict, examples=60, seed=3, database=None, expect_errors=ValueError)
    assert [f.kind for f in report.findings] == ["unhelpful_error"]


@pytest.mark.parametrize("bad", ["ValueError", 3, (ValueError, 3), (ValueError, "("), [ValueError, "x"]])
def test_bad_expect_errors_are_usage_errors(bad):
    with pytest.raises(UsageError, match="expect_errors"):
        fuzz(calculate, examples=5, expect_errors=bad)


# --- targets and toolsets ---------------------------------------------------------------------


def test_a_spec_without_code_says_what_is_missing():
    with pytest.raises(UsageError, match=r"dict without 'execute' \(keys: 'name', 'parameters'\).*'execute': fn"):
        fuzz({"name": "search", "parameters": SEARCH}, examples=5)


def test_toolsets_from_a_list_a_registry_and_a_module(tools_module, tmp_path):
    from loopkit.fuzz import fuzz_tools
    from loopkit.tools import ToolRegistry

    for target in ([add, shout], ToolRegistry([add, shout]), tools_module):
        report = fuzz_tools(target, examples=30, seed=1, database=None)
        assert sorted(r.target for r in report.reports) == ["add", "shout"]
        assert not report.ok and {f.tool for f in report.findings} == {"shout"}
    with pytest.raises(UsageError, match="not in the toolset"):
        fuzz_tools([add], examples=5, expect_errors={"nope": ValueError})
    (tmp_path / "no_tools_here.py").write_text("LIMIT = 3\n")
    with pytest.raises(UsageError, match="exports no tools"):
        fuzz_tools("no_tools_here", examples=5)


# --- reproduction -----------------------------------------------------------------------------


def test_each_finding_comes_with_a_test_that_fails_until_the_bug_is_fixed():
    from fuzz_corpus import planted

    report = fuzz(planted.anniversary, seed=1, database=None)
    (leap,) = [f for f in report.findings if f.kind == "valid_rejected" and "ValueError" in f.message]
    code = leap.reproduction()
    assert "from fuzz_corpus.planted import anniversary" in code and "seed 1" in code
    namespace: dict = {}
    exec(compile(code, "<reproduction>", "exec"), namespace)  # noqa: S102 - running the generated test is the point
    (test,) = [v for k, v in namespace.items() if k.startswith("test_")]
    with pytest.raises(AssertionError, match="day is out of range for month"):
        test()


def test_raise_for_findings_shows_the_traceback_of_the_tool():
    from fuzz_corpus import planted

    from loopkit.fuzz import FuzzFailure

    report = fuzz(planted.markup, seed=1, database=None)
    with pytest.raises(FuzzFailure) as info:
        report.raise_for_findings()
    frames = []
    tb = info.value.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert frames[-1].endswith("planted.py")  # the line of the tool that divided by zero
    assert not [f for f in frames[:-1] if "loopkit" in f and not f.endswith(("_report.py", "test_fuzz.py"))]
    assert "ZeroDivisionError" in str(info.value) and "markup" in str(info.value)


def test_findings_are_saved_and_replayed_first():
    from hypothesis.database import InMemoryExampleDatabase

    db = InMemoryExampleDatabase()
    first = fuzz(shout, examples=40, seed=1, database=db)
    assert not first.ok and first.replayed == 0
    again = fuzz(shout, examples=40, seed=2, database=db)
    assert again.replayed == len(first.findings)
    assert {f.kind for f in again.findings} >= {f.kind for f in first.findings}

    @tool(name="shout")
    def fixed(text: str) -> str:
        """Upper-case a text.

        Args:
            text: what to shout.
        """
        return text.upper() + "!"

    fixed_report = fuzz(fixed, examples=40, seed=3, database=db)
    assert fixed_report.replayed == len(first.findings) and fixed_report.ok
    assert fuzz(fixed, examples=40, seed=3, database=db).replayed == 0  # fixed findings are forgotten


# --- what models send -------------------------------------------------------------------------


def test_numbers_as_strings_lone_surrogates_and_duplicate_keys_are_sent():
    seen: list[dict] = []

    @tool
    def echo(text: str, n: int) -> str:
        """Echo.

        Args:
            text: a text.
            n: a number.
        """
        seen.append({"text": text, "n": n})
        return "ok"

    report = fuzz(echo, examples=60, seed=1, database=None)
    assert report.ok, report.to_json()
    assert any("\ud83d" in s["text"] for s in seen)  # sent as the JSON escape "\ud83d"
    assert all(type(s["n"]) in (int, float) for s in seen)  # "0" was coerced before the call

    from loopkit.fuzz._search import _raw_variants
    from loopkit.strategies._schema import validator_for

    variants = list(_raw_variants({"text": "a", "n": 1}, validator_for(echo.parameters), {("text",)}))
    raws = {v.note.split(" ")[0]: v for v in variants}
    assert raws["duplicate"].raw.count('"text"') == 2 and json.loads(raws["duplicate"].raw) == {"text": "a", "n": 1}
    assert "\\ud83d" in raws["lone"].raw and json.loads(raws["lone"].raw)["text"] == "\ud83d"
    assert raws["number"].arguments == {"text": "a", "n": "1"}


def test_a_float_for_an_int_is_found_through_the_declared_return_type():
    @tool
    def plus(a: int, b: int) -> int:
        """Add.

        Args:
            a: first.
            b: second.
        """
        return a + b

    (found,) = fuzz(plus, examples=60, seed=1, database=None).findings
    assert found.kind == "bad_return" and "declared to return int" in found.message
    assert any(isinstance(v, float) for v in found.example.arguments.values())
    untyped = Tool(name="plus", execute=lambda a, b: a + b, parameters=plus.parameters)
    assert fuzz(untyped, examples=60, seed=1, database=None).ok  # no declared return type: nothing to check


# --- the command, as a user runs it -----------------------------------------------------------

ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent


def _console_script(name: str = "loopkit") -> str:
    import shutil
    import sys
    from pathlib import Path

    found = Path(sys.executable).with_name(name)
    path = str(found) if found.exists() else shutil.which(name)
    if path is None:
        pytest.skip("the loopkit console script is not installed (pip install -e .)")
    return path


def _run_cli(args: list[str], cwd) -> subprocess.CompletedProcess[str]:
    import os

    # the checkout's loopkit, not an installed copy; cwd is NOT on PYTHONPATH: the command adds it
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160", "NO_COLOR": "1"}
    return subprocess.run([_console_script(), *args], check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


TOOLS_FILE = '''
from loopkit.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add.

    Args:
        a: first.
        b: second.
    """
    return int(a) + int(b)


@tool
def calculate(expression: str) -> int:
    """Evaluate "a + b".

    Args:
        expression: two integers joined by +.
    """
    left, plus, right = expression.partition("+")
    if not plus or not left.strip().isdigit() or not right.strip().isdigit():
        raise ValueError(f"unsupported expression {expression!r}: write two integers joined by +")
    return int(left) + int(right)
'''


def test_the_console_script_fuzzes_a_module_of_the_current_directory(tmp_path):
    (tmp_path / "mytools.py").write_text(TOOLS_FILE)
    every = _run_cli(["fuzz", "mytools", "--examples", "20", "--seed", "1", "--no-database"], tmp_path)
    assert every.returncode == 1, every.stderr
    assert "summary" in every.stdout and "calculate" in every.stdout and "FAIL" in every.stdout
    assert "def test_calculate_valid_rejected_valueerror():" in every.stdout  # the test to paste


@pytest.fixture
def in_tools_dir(tmp_path, monkeypatch):
    """The current directory holds mytools.py; main() puts it on sys.path, restored afterwards."""
    import sys

    (tmp_path / "mytools.py").write_text(TOOLS_FILE + "\nSPEC = {'name': 'x', 'parameters': {}}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "mytools", raising=False)
    return tmp_path


def test_cli_allow_and_one_tool(in_tools_dir, capsys):
    from loopkit.cli import main

    assert main(["fuzz", "mytools:add", "--examples", "20", "--seed", "1", "--no-database"]) == 0
    assert "no findings" in capsys.readouterr().out
    argv = ["fuzz", "mytools", "--examples", "20", "--seed", "1", "--no-database", "--allow", "ValueError:unsupported", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is True and [t["target"] for t in out["tools"]] == ["add", "calculate"]
    assert [t["expected_errors"] > 0 for t in out["tools"]] == [False, True]


def test_cli_exercises_a_toolset(in_tools_dir, capsys):
    from loopkit.cli import main

    code = main(["fuzz", "mytools", "--exercise", "--seed", "1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert [(c["tool"], c["valid"]) for c in out["calls"]] == [("add", True), ("calculate", True), ("add", False), ("calculate", False)]
    assert all(c["is_error"] for c in out["calls"] if not c["valid"])
    assert code == (0 if out["ok"] else 1)
    assert main(["fuzz", "mytools:add", "--exercise"]) == 0
    assert "0 problem(s)." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fuzz", "mytools", "--allow", "NoSuchError"], "not an exception class"),
        (["fuzz", "nowhere_to_be_found"], "cannot import"),
        (["fuzz", "mytools:SPEC"], "dict without 'execute'"),
    ],
)
def test_cli_usage_errors_exit_2(in_tools_dir, capsys, argv, message):
    from loopkit.cli import main

    assert main(argv) == 2
    assert message in capsys.readouterr().err
