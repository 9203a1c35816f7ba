"""The documentation works as written: the site builds in strict mode, and every code block of
README.md, docs/ and the folders' README.md files runs.

Code blocks are found and run with sybil, one test per Markdown file:

- ``python`` blocks run in order, sharing one namespace per file, with the repository root as the
  working directory. A block that defines a ``test_*`` function taking no arguments also calls it,
  so an example test in the docs is a test that passes.
- ``console`` blocks run each ``$ command`` line (the lines after it are its output, shown, not
  compared), ``bash``/``sh``/``shell`` blocks each line; ``&&`` chains and ``# comments`` are
  understood, wildcards expand from the repository root. A command must exit with 0.
  ``loopkit ...``, ``pytest PATH...`` and ``python ...`` run with this interpreter, so this
  checkout is what they test (a ``pytest`` runs in one process, ``-n 0``). ``loopkit ...`` runs
  in this process, through ``loopkit.cli.main`` as the console script calls it, and so does a
  ``pytest`` of scenario files or of folders without Python files (the scenario library), through ``pytest.main`` as
  pytester's in-process runs do: output captured, the repository root as cwd, ``sys.path``,
  ``sys.argv``, the environment and the signal handlers put back afterwards (a fresh interpreter
  per command costs a start-up for no check). ``loopkit serve`` and ``loopkit record`` (they run
  until a signal stops them), ``loopkit fuzz`` (hypothesis's settings are the process's) and a
  ``pytest`` of test modules (this session has imported modules of those names) get a process.
  ``pip install`` is taken as done (these tests run inside that installation); a command shown on
  several pages runs once. Any other program, or a ``pytest`` without a path (the whole suite,
  this test included), fails the test: mark the block.
- ``yaml`` blocks must parse; one with a ``script`` or an ``expect`` key is a scenario (or a
  piece of one) and must load as a scenario.
- ``json`` blocks must parse; ``text``, ``ini``, ``toml`` (and the other languages in
  ``SHOWN_ONLY``) are shown, not run. A block without a language, or with one this file does not
  know, fails the test: say what it is.
- ``<!-- skip: next "reason" -->`` before a block marks it as not run, with the reason (a live
  upstream, a placeholder module of the reader's own); ``-rA`` shows the skips with their reasons.
  (These are sybil's directives: ``skip: start``/``skip: end`` cover several blocks.)
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from unittest import SkipTest

import pytest
import yaml
from sybil import Document, Example
from sybil.evaluators.python import PythonEvaluator
from sybil.parsers.markdown import CodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parent.parent
IGNORED_DIRS = {".git", "node_modules", "site", "build", "dist", "tests", "__pycache__"}

SHOWN_ONLY = {"text", "ini", "toml", "diff", "http", "sse", "xml", "html", "csv", "markdown"}
SHELLS = ("bash", "sh", "shell")


def doc_files() -> list[Path]:
    """README.md, every page under docs/, and every folder's README.md (not tests' fixtures)."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS and d != "docs" and not d.startswith((".", "venv")))
        if "README.md" in names and Path(folder) != ROOT:
            files.append(Path(folder) / "README.md")
    return files


# ---------------------------------------------------------------- python


class PythonBlock:
    """Run the block; then call each ``test_*`` function it defined that takes no arguments."""

    def __init__(self) -> None:
        self.run = PythonEvaluator()

    def __call__(self, example: Example) -> None:
        namespace = example.namespace
        before = {k: v for k, v in namespace.items() if k.startswith("test_")}
        self.run(example)
        for name, fn in list(namespace.items()):
            if name.startswith("test_") and callable(fn) and before.get(name) is not fn and _no_arguments(fn):
                fn()


def _no_arguments(fn: object) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


# ---------------------------------------------------------------- shell


def _commands(example: Example, prompt: bool) -> list[tuple[int, list[str]]]:
    """(line number, argv) of every command in a console (``$ ...``) or shell block."""
    out = []
    lines = str(example.parsed).splitlines()
    i = 0
    while i < len(lines):
        line, number = lines[i], example.line + 1 + i
        i += 1
        if prompt:
            if not line.startswith("$ "):
                continue  # output shown after a command
            line = line[2:]
        while line.endswith("\\") and i < len(lines):
            line = line[:-1] + " " + lines[i].lstrip("$ ")
            i += 1
        words = [w for word in shlex.split(line, comments=True) for w in _glob(word)]
        if not words:
            continue
        command: list[str] = []
        for word in [*words, "&&"]:
            if word == "&&":
                out.append((number, command))
                command = []
            else:
                command.append(word)
    return out


def _glob(word: str) -> list[str]:
    """A word with a wildcard expands to the matching paths, as the shell would."""
    if not any(c in word for c in "*?["):
        return [word]
    matches = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(word))
    return matches or [word]


def _argv(words: list[str]) -> list[str] | None:
    """How to run a documented command with this interpreter; None for one that is taken as done."""
    if words[:2] == ["pip", "install"] or words[:4] == ["python", "-m", "pip", "install"]:
        return None
    if words[0] == "loopkit":
        return [sys.executable, "-m", "loopkit", *words[1:]]
    if words[0] == "pytest" or words[:3] == ["python", "-m", "pytest"]:
        args = words[1:] if words[0] == "pytest" else words[3:]
        if not any(Path(ROOT, a.split("::")[0]).exists() for a in args if not a.startswith("-")):
            # would run this repository's whole suite, this test included
            raise AssertionError(f"{shlex.join(words)!r} names no test path: mark the block with a skip comment and say why")
        return [sys.executable, "-m", "pytest", *args]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    raise AssertionError(
        f"the docs test runs loopkit, python and pytest commands, not {shlex.join(words)!r}: put "
        '<!-- skip: next "why it is not run" --> before the block, or show it as ```text'
    )


# loopkit commands that run as ``python -m loopkit``: serve and record run until a signal stops
# them; fuzz runs hypothesis, whose settings profile is the process's (this suite loads its own)
OWN_PROCESS = {"serve", "record", "fuzz"}


def in_process(argv: list[str]) -> Callable[[], object] | None:
    """How to run ``argv`` in this process, or None for a command that needs its own.

    ``loopkit ...`` is ``loopkit.cli.main``, as the console script calls it. ``pytest PATH...``
    over scenario files or folders without Python files (the scenario library) is ``pytest.main``, as pytester's
    in-process runs are; a ``pytest`` of test modules runs in a process of its own, since this
    session has imported modules of the same names."""
    if argv[1:3] == ["-m", "loopkit"] and not set(argv[3:4]) & OWN_PROCESS:
        from loopkit.cli import main

        return lambda: main(argv[3:])
    if argv[1:3] == ["-m", "pytest"]:
        paths = [p for a in argv[3:] if not a.startswith("-") and (p := ROOT / a.split("::")[0]).exists()]  # (not option values)
        if paths and all(not any(p.rglob("*.py")) if p.is_dir() else p.suffix != ".py" for p in paths):
            return lambda: pytest.main(argv[3:])
    return None


def run_in_process(call: Callable[[], object], argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``call`` as the process ``argv`` would run: cwd the repository root, ``env`` as the
    environment, stdin empty, stdout and stderr captured; the exit status is what ``call`` returns
    or exits with (1 and the traceback for an exception). The working directory, environment,
    ``sys.path``, ``sys.argv``, SIGINT/SIGTERM handlers and the modules the command imported from
    the repository outside loopkit (the reader's own, as ``mytools``) are put back, as a fresh
    process would have left them."""
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_path, saved_argv, saved_cwd = dict(os.environ), list(sys.path), sys.argv, os.getcwd()
    saved_signals = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    saved_modules = set(sys.modules)
    try:
        # only what differs changes (never an empty environment, which other threads could see)
        for name in set(os.environ) - set(env):
            del os.environ[name]
        os.environ.update({k: v for k, v in env.items() if os.environ.get(k) != v})
        os.chdir(ROOT)
        sys.argv = argv[2:]  # as ``python -m MODULE`` sets it, the module's name first
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _stdin(io.StringIO()):
            try:
                code = int(call() or 0)  # type: ignore[call-overload]
            except SystemExit as exit_:
                if exit_.code is None or isinstance(exit_.code, int):
                    code = exit_.code or 0
                else:
                    print(exit_.code, file=sys.stderr)
                    code = 1
            except Exception:  # as the interpreter would: the traceback on stderr, exit status 1
                traceback.print_exc()
                code = 1
    finally:
        for name in set(os.environ) - set(saved_env):
            del os.environ[name]
        os.environ.update({k: v for k, v in saved_env.items() if os.environ.get(k) != v})
        os.chdir(saved_cwd)
        sys.path[:], sys.argv = saved_path, saved_argv
        for signum, handler in saved_signals.items():
            signal.signal(signum, handler)
        for name in set(sys.modules) - saved_modules:
            if _from_the_checkout_root(name):
                del sys.modules[name]
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def _from_the_checkout_root(name: str) -> bool:
    """Whether module ``name`` was imported from a file or package right in the repository root
    (the command's cwd), other than loopkit itself."""
    top = name.partition(".")[0]
    path = getattr(sys.modules.get(name), "__file__", None)
    if top == "loopkit" or not path:
        return False
    try:
        first = Path(path).resolve().relative_to(ROOT).parts[0]
    except ValueError:
        return False
    return first in (top, f"{top}.py")


@contextlib.contextmanager
def _stdin(stream: io.StringIO):
    saved, sys.stdin = sys.stdin, stream
    try:
        yield
    finally:
        sys.stdin = saved


_SUCCEEDED: set[tuple[str, ...]] = set()  # a command shown on several pages runs once per session


def shell_block(prompt: bool):
    def evaluate(example: Example) -> None:
        env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
        # an inner pytest runs in one process: this suite already keeps every core busy, and a
        # second pool of xdist workers per command would only add interpreter start-ups
        env["PYTEST_ADDOPTS"] = "-n 0" if importlib.util.find_spec("xdist") else ""
        for number, words in _commands(example, prompt):
            argv = _argv(words)
            if argv is None or tuple(argv) in _SUCCEEDED:
                continue
            call = in_process(argv)
            if call is not None:
                done = run_in_process(call, argv, env)
            else:
                done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
            if done.returncode != 0:
                raise AssertionError(
                    f"{example.path}:{number}: `{shlex.join(words)}` exited with {done.returncode}\n"
                    f"--- stdout (end)\n{done.stdout[-3000:]}\n--- stderr (end)\n{done.stderr[-3000:]}"
                )
            _SUCCEEDED.add(tuple(argv))

    evaluate.prompt = prompt  # type: ignore[attr-defined]  # (read by shared_commands)
    return evaluate


# ---------------------------------------------------------------- data


def yaml_block(example: Example) -> None:
    from loopkit.scenario.loader import load_text

    text = str(example.parsed)
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        where = f"{example.path}:{example.line + 1 + mark.line}:{mark.column + 1}" if mark else example.path
        raise AssertionError(f"{where}: invalid YAML: {e.problem}") from None
    if not isinstance(data, dict) or not ({"script", "expect"} & data.keys()):
        return
    if not {"script", "expect"} <= data.keys():
        # a piece of a scenario: complete it with the smallest valid rest, then load it
        base = {"name": "piece", "script": ["Done."], "expect": {"end": {"reason": "stop"}}}
        text = yaml.safe_dump({**base, **data}, sort_keys=False)
    load_text(text, source=f"{example.path}:{example.line}", default_name="example")


def json_block(example: Example) -> None:
    try:
        json.loads(str(example.parsed))
    except json.JSONDecodeError as e:
        raise AssertionError(
            f"{example.path}:{example.line + e.lineno}:{e.colno}: not valid JSON ({e.msg}); use ```text for a sketch with gaps"
        ) from None


def shown_only(example: Example) -> None:
    return None


PARSERS = [
    SkipParser(),
    CodeBlockParser("python", PythonBlock()),
    CodeBlockParser("console", shell_block(prompt=True)),
    *(CodeBlockParser(lang, shell_block(prompt=False)) for lang in SHELLS),
    CodeBlockParser("yaml", yaml_block),
    CodeBlockParser("json", json_block),
    *(CodeBlockParser(lang, shown_only) for lang in SHOWN_ONLY),
]

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$", re.M)


def fenced_languages(text: str) -> list[tuple[int, str]]:
    """(line, language) of every fenced block's opening line."""
    out, closing = [], None
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        if closing is None:
            closing = m["fence"]
            out.append((line, m["info"].strip().split(" ")[0]))
        elif m["fence"].startswith(closing) and not m["info"].strip():
            closing = None
    return out


KNOWN = {"python", "console", "yaml", "json", *SHELLS, *SHOWN_ONLY}


def run_document(path: Path) -> list[str]:
    """Run every code block of ``path`` (cwd: the repository root); return the skips' reasons."""
    unlabelled = [f"{path}:{line}: ```{lang}" for line, lang in fenced_languages(path.read_text(encoding="utf-8")) if lang not in KNOWN]
    assert not unlabelled, (
        "code blocks need a language the docs test knows (" + ", ".join(sorted(KNOWN)) + "):\n" + "\n".join(unlabelled)
    )
    document = Document.parse(str(path), *PARSERS)
    document.namespace["__name__"] = f"docs.{path.stem}"
    skipped = []
    for example in document.examples():
        try:
            example.evaluate()
        except SkipTest as skip:
            skipped.append(f"line {example.line}: {skip}")
    return skipped


def shared_commands(files: list[Path]) -> dict[Path, str]:
    """Pages that run a command another page runs too, each with the name of its group (pages
    linked through shared commands form one group). Under pytest-xdist a group runs on one worker
    (``--dist loadgroup``), so "a command shown on several pages runs once" holds there too."""
    runs: dict[Path, set[tuple[str, ...]]] = {}
    for path in files:
        runs[path] = set()
        for example in Document.parse(str(path), *PARSERS).examples():
            prompt = getattr(example.region.evaluator, "prompt", None)
            for _, words in _commands(example, prompt) if prompt is not None else []:
                try:
                    argv = _argv(words)
                except AssertionError:
                    continue  # fails wherever it runs
                if argv is not None:
                    runs[path].add(tuple(argv))
    groups: list[tuple[set[Path], set[tuple[str, ...]]]] = []
    for path, commands in runs.items():
        joined = [g for g in groups if g[1] & commands]
        merged = ({path}.union(*(g[0] for g in joined)), commands.union(*(g[1] for g in joined)))
        groups = [g for g in groups if g not in joined] + [merged]
    return {p: "docs:" + str(min(pages).relative_to(ROOT)) for pages, _ in groups if len(pages) > 1 for p in pages}


def _doc_params() -> list:
    files = doc_files()
    group = shared_commands(files)
    return [
        pytest.param(p, id=str(p.relative_to(ROOT)), marks=[pytest.mark.xdist_group(group[p])] if p in group else [])
        for p in files
    ]


@pytest.mark.parametrize("path", _doc_params())
def test_code_blocks_run_as_written(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    skipped = run_document(path)
    if skipped:
        # shown in the test report (-rA); a skip comment always carries its reason
        print(f"{path.relative_to(ROOT)}: not run:\n" + "\n".join(skipped))


# ---------------------------------------------------------------- the runner catches mistakes


def _page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_runner_runs_python_in_order_and_calls_example_tests(tmp_path: Path) -> None:
    page = _page(tmp_path, "```python\nx = 1\n```\n\ntext\n\n```python\ndef test_x():\n    assert x == 2\n```\n")
    with pytest.raises(AssertionError):
        run_document(page)


def test_runner_rejects_blocks_without_a_language_and_invalid_data(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="need a language"):
        run_document(_page(tmp_path, "```\nloopkit demo\n```\n"))
    with pytest.raises(AssertionError, match="invalid YAML"):
        run_document(_page(tmp_path, "```yaml\nfollow_ups:\n  - {poll: 1, messages: And then?}\n```\n"))
    with pytest.raises(AssertionError, match="not valid JSON"):
        run_document(_page(tmp_path, '```json\n{"a": ...}\n```\n'))


def test_runner_loads_scenario_pieces(tmp_path: Path) -> None:
    from loopkit.errors import ScenarioError

    assert run_document(_page(tmp_path, "```yaml\nexpect:\n  end: {reason: stop, model_calls: 1}\n```\n")) == []
    with pytest.raises(ScenarioError, match="model_call"):
        run_document(_page(tmp_path, "```yaml\nexpect:\n  end: {reason: stop, model_call: 1}\n```\n"))


def test_runner_commands(tmp_path: Path) -> None:
    page = _page(tmp_path, '<!-- skip: next "a live service" -->\n```console\n$ curl https://example.com\n```\n')
    assert run_document(page) == ["line 2: a live service"]   # the skipped block's line
    assert _commands_of("$ loopkit run x.yaml --json   # one file\nout\n$ pip install -e . && loopkit demo\n") == [
        ["loopkit", "run", "x.yaml", "--json"], ["pip", "install", "-e", "."], ["loopkit", "demo"],
    ]  # fmt: skip
    with pytest.raises(AssertionError, match="not 'curl"):
        run_document(_page(tmp_path, "```bash\ncurl https://example.com\n```\n"))
    with pytest.raises(AssertionError, match="names no test path"):
        run_document(_page(tmp_path, "```bash\npython -m pytest -q\n```\n"))
    with pytest.raises(AssertionError, match="exited with 2"):
        run_document(_page(tmp_path, "```console\n$ loopkit no-such-command\n```\n"))


def test_runner_runs_loopkit_in_process_and_puts_the_process_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import loopkit.cli

    seen: list[str] = []

    def crash(argv: list[str]) -> int:
        print("started", argv)
        seen.append(os.environ["PATH"])
        os.chdir(tmp_path)
        os.environ["LOOPKIT_DOCS_TEST"] = "1"
        sys.path.insert(0, "somewhere")
        signal.signal(signal.SIGTERM, lambda *_: None)
        raise RuntimeError("boom")

    before = (os.getcwd(), list(sys.path), signal.getsignal(signal.SIGTERM))
    monkeypatch.setattr(loopkit.cli, "main", crash)
    with pytest.raises(AssertionError, match=r"(?s)`loopkit demo --quiet` exited with 1.*started \['demo', '--quiet'\].*RuntimeError: boom"):
        run_document(_page(tmp_path, "```console\n$ loopkit demo --quiet\n```\n"))
    assert (os.getcwd(), sys.path, signal.getsignal(signal.SIGTERM)) == before
    assert "LOOPKIT_DOCS_TEST" not in os.environ
    assert seen[0].startswith(str(Path(sys.executable).parent) + os.pathsep)  # the command's environment
    # what gets a process of its own
    py = [sys.executable, "-m"]
    assert in_process([*py, "loopkit", "serve", "anthropic"]) is None and in_process([*py, "loopkit", "fuzz", "m:f"]) is None
    assert in_process([*py, "pytest", "scenarios/errors"]) is not None and in_process([*py, "pytest", "tests/cli"]) is None
    assert in_process([*py, "pytest", "scenarios/", "--loopkit-provider", "anthropic"]) is not None
    assert in_process([*py, "pytest", "scenarios/", "tests/test_docs.py::test_runner_commands"]) is None
    assert in_process([sys.executable, "benchmarks/x.py"]) is None


def _commands_of(console: str) -> list[list[str]]:
    class Parsed(str):
        pass

    example = type("E", (), {"parsed": Parsed(console), "line": 0})()
    return [words for _, words in _commands(example, prompt=True)]


def test_site_builds_in_strict_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``mkdocs build --strict``: a broken link, a missing page or a bad docstring fails."""
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    assert (tmp_path / "site" / "index.html").is_file()


def test_readme_quick_start_matches_ci() -> None:
    """The README's two commands are the ones CI runs."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'pip install -e ".[dev]" && loopkit demo' in text
    assert "python -m pytest -q" in text
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'pip install --quiet -e ".[dev]"' in ci and "loopkit demo" in ci and "python -m pytest -q" in ci


OUTSIDE = re.compile(r"(?<![\w.])/(work|home|Users)/|\.\./shared\b|\bshared/|\bspec/(wire|loop)\.md|\bDESIGN\.md")


def test_no_machine_paths_or_outside_links() -> None:
    """Nothing a user reads points outside the repository."""
    pages = [*doc_files(), *sorted((ROOT / "tests" / "fixtures").rglob("*.md")), ROOT / "mkdocs.yml"]
    bad = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in pages
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not bad, "machine paths or links outside the repository:\n" + "\n".join(bad)
