"""Mutation score of the adapters' codecs against the conformance suite (not part of the test run).

    pip install -e ".[mutation]"
    python tools/mutation.py                          # every adapter, then write the summary
    python tools/mutation.py --adapter anthropic      # one group; merges into the summary
    python tools/mutation.py --summary-only           # rebuild the summary from the last runs

mutmut (https://github.com/boxed/mutmut) makes the mutants: for each group of adapter modules it
writes, in a workspace under ``.mutation/<group>/``, a copy of ``loopkit`` (with the simulators as
``loopkit.simulators``) in which every function of the group's modules carries all its mutants
behind a trampoline. ``tools/mutation_worker.py`` then runs the conformance suite, and only the
suite, against each mutant: each module against its own protocol's cases (the OpenAI group
against both OpenAI protocols), with the built-in adapter asking for streamed answers and again
asking for non-streamed ones, so the non-streaming decoders are checked too; and again for each
model family of the protocol the suite has a variant for (:data:`VARIANTS`: Bedrock's models that
refuse ``toolResult.status``, with the adapter built for them). A mutant is killed
when any case fails; it survives when every case that reaches its function passes; "no case
reaches" it when no case runs its function at all.

The worker replaces ``mutmut run``'s runner only (one pytest session per mutant, about two seconds
each here): it builds the suites once and forks one child per mutant, which runs just the cases
that reach the mutated function (recorded by mutmut's trampolines on a clean run), stopping at
the first failure. A whole run takes minutes. The results are written back into mutmut's own
files, so ``mutmut results``, ``mutmut show NAME`` and ``mutmut browse`` work in a workspace.

The summary (``loopkit/conformance/mutation-summary.json``) keeps, per module, how many mutants
were killed, survived, timed out (counted as killed: the suite noticed) or were not reached, which
case killed how many, and every survivor with its diff. Survivors are judged in
``tools/mutation-verdicts.json`` (``equivalent``, with the reason; ``wording``, only loopkit's own
error text changes; or ``open``, a behaviour the suite misses, with the case that would catch it); ``tests/conformance/test_mutation_summary.py``
checks that the counts add up and every survivor is judged. The README's section is written from
the summary.
"""

from __future__ import annotations

import argparse
import ast
import collections
import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"
SUMMARY = ROOT / "loopkit" / "conformance" / "mutation-summary.json"
VERDICTS = ROOT / "tools" / "mutation-verdicts.json"
README = ROOT / "loopkit" / "conformance" / "README.md"
WORKER = ROOT / "tools" / "mutation_worker.py"
VERDICT_KINDS = ("equivalent", "wording", "open")
MODES = ("stream", "no-stream")

# group -> (modules mutated, protocols whose conformance cases are the tests)
GROUPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "openai": (
        ("loopkit/providers/openai_chat.py", "loopkit/providers/openai_responses.py", "loopkit/providers/_openai_common.py"),
        ("openai_chat", "openai_responses"),
    ),
    "anthropic": (("loopkit/providers/anthropic.py",), ("anthropic",)),
    "gemini": (("loopkit/providers/gemini.py",), ("gemini",)),
    "bedrock": (("loopkit/providers/bedrock.py",), ("bedrock",)),
}

# group -> the suite's variants (model families, loopkit.conformance.Suite(variant=...)) it also runs as
VARIANTS: dict[str, tuple[str, ...]] = {"bedrock": ("no-tool-result-status",)}

# the worker's statuses <-> mutmut's exit codes (so mutmut's own commands read the results)
EXIT_CODE = {"killed": 1, "survived": 0, "no_tests": 33, "timeout": 36}
COUNTED = ("killed", "timeout", "survived", "no_tests")

PYPROJECT = """[tool.mutmut]
source_paths = ["loopkit"]
only_mutate = {modules}
use_git_change_detection = false
"""

GENERATE = """
import contextlib, io, sys
from pathlib import Path
from mutmut.__main__ import create_mutants
from mutmut.utils.file_utils import copy_src_dir
Path("mutants").mkdir(exist_ok=True)
with contextlib.redirect_stdout(io.StringIO()):
    copy_src_dir()
    stats = create_mutants({jobs})
print(stats)
"""


def prepare(group: str) -> Path:
    """A fresh workspace: the current loopkit (simulators inside, where the wheel puts them)."""
    modules, _ = GROUPS[group]
    work = WORK / group
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "loopkit", work / "loopkit", ignore=ignore, dirs_exist_ok=True)
    # a checkout may link loopkit/simulators to the folder (so it imports its own simulators)
    shutil.copytree(ROOT / "simulators", work / "loopkit" / "simulators", ignore=ignore, dirs_exist_ok=True)
    (work / "pyproject.toml").write_text(PYPROJECT.format(modules=json.dumps(list(modules))), encoding="utf-8")
    return work


def mutant_names(group: str) -> list[str]:
    names: list[str] = []
    for module in GROUPS[group][0]:
        meta = json.loads((WORK / group / "mutants" / (module + ".meta")).read_text(encoding="utf-8"))
        names += list(meta["exit_code_by_key"])
    return names


def run_group(group: str, *, jobs: int, modes: tuple[str, ...]) -> dict:
    """Make the group's mutants with mutmut, then run the suite against each (the worker)."""
    work = prepare(group)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": ""}
    made = subprocess.run([sys.executable, "-c", GENERATE.format(jobs=jobs)], cwd=work, env=env, capture_output=True, text=True)
    if made.returncode != 0:
        raise SystemExit(f"mutmut could not make the mutants of {group}:\n{made.stderr[-3000:]}")
    names = mutant_names(group)
    job = {"protocols": list(GROUPS[group][1]), "modes": list(modes), "variants": list(VARIANTS.get(group, ())), "jobs": jobs, "mutants": names}
    env["PYTHONPATH"] = str(work / "mutants")
    proc = subprocess.Popen([sys.executable, str(WORKER)], cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(job))
    proc.stdin.close()
    found: dict[str, list[str]] = {}
    for line in proc.stdout:
        row = json.loads(line)
        if isinstance(row, dict):  # the worker's reason for refusing to run
            proc.wait()
            raise SystemExit(f"{group}: the mutation run cannot start: {json.dumps(row, indent=1)}")
        found[row[0]] = row[1:]
        if len(found) % 200 == 0:
            print(f"  {group}: {len(found)}/{len(names)}", flush=True)
    if proc.wait() != 0 or set(found) != set(names):
        raise SystemExit(f"{group}: the worker stopped early (exit {proc.returncode}, {len(found)} of {len(names)} mutants)")
    for module in GROUPS[group][0]:  # mutmut's own record, for `mutmut results/show/browse`
        path = work / "mutants" / (module + ".meta")
        meta = json.loads(path.read_text(encoding="utf-8"))
        meta["exit_code_by_key"] = {k: EXIT_CODE[found[k][0]] for k in meta["exit_code_by_key"]}
        path.write_text(json.dumps(meta, indent=4), encoding="utf-8")
    run = {"mutants": len(names), "modes": list(modes), "variants": job["variants"], "jobs": jobs}
    (work / "results.json").write_text(json.dumps({"run": run, "results": found}, indent=0), encoding="utf-8")
    return run


def results(group: str) -> tuple[dict, dict[str, list[str]]]:
    """The last run of a group: its settings, and mutant name -> [status, killing case]."""
    path = WORK / group / "results.json"
    if not path.exists():
        raise SystemExit(f"no run of {group} in {WORK.relative_to(ROOT)}/ (run without --summary-only first)")
    data = json.loads(path.read_text(encoding="utf-8"))
    return data["run"], data["results"]


_SOURCES: dict[Path, dict[str, str]] = {}


def diff(group: str, mutant: str, module: str) -> str:
    """The lines a mutant changes, from mutmut's mutated copy of the module (each mutant is a
    copy of its function next to ``<function>__mutmut_orig``)."""
    path = WORK / group / "mutants" / module
    if path not in _SOURCES:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        tree = ast.parse(text)
        _SOURCES[path] = {
            n.name: "\n".join(lines[n.lineno - 1 : n.end_lineno]) for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
    functions = _SOURCES[path]
    name = mutant.rsplit(".", 1)[1]
    base = name.rsplit("__mutmut_", 1)[0]
    orig = functions.get(base + "__mutmut_orig", "").replace(base + "__mutmut_orig", base).splitlines()
    mutated = functions.get(name, "").replace(name, base).splitlines()
    out = [line for line in difflib.unified_diff(orig, mutated, lineterm="", n=0) if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    return "\n".join(line[0] + " " + line[1:].strip() for line in out)


def module_of(mutant: str, modules: tuple[str, ...]) -> str:
    for module in modules:
        if mutant.startswith(module.removesuffix(".py").replace("/", ".") + "."):
            return module
    raise SystemExit(f"mutant {mutant} belongs to none of {modules}")


def suite_hash() -> str:
    """What a run's outcome depends on besides the mutated modules: the suite and the simulators."""
    h = hashlib.sha256()
    for path in sorted([*(ROOT / "loopkit" / "conformance").glob("*.py"), *(ROOT / "simulators").rglob("*.py")]):
        h.update(path.relative_to(ROOT).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def summarise(groups: list[str]) -> dict:
    """The summary: the groups run now, merged with the earlier summary's other groups."""
    verdicts = json.loads(VERDICTS.read_text(encoding="utf-8")) if VERDICTS.exists() else {}
    old = json.loads(SUMMARY.read_text(encoding="utf-8")) if SUMMARY.exists() else {}
    redone = {m for g in groups for m in GROUPS[g][0]}
    modules_out = {m: v for m, v in old.get("modules", {}).items() if m not in redone and "source_sha256" in v}
    survivors = [s for s in old.get("survivors", []) if s["module"] in modules_out]
    unreached = {m: v for m, v in old.get("not_reached", {}).items() if m in modules_out}
    kills: dict[str, dict[str, int]] = {m: v for m, v in old.get("kills_by_case", {}).items() if m in modules_out}
    suite = suite_hash()
    for group in groups:
        run, found = results(group)
        modules = GROUPS[group][0]
        for module in modules:
            mine = {k: v for k, v in found.items() if module_of(k, modules) == module}
            counts = {c: sum(1 for v in mine.values() if v[0] == c) for c in COUNTED}
            source = (ROOT / module).read_bytes()
            modules_out[module] = {"group": group, "total": len(mine), **counts, "run": run, "source_sha256": hashlib.sha256(source).hexdigest(), "suite_sha256": suite}
            kills[module] = dict(collections.Counter(v[1].split("/", 1)[1] for v in mine.values() if v[0] == "killed").most_common())
            for name, (status, _) in sorted(mine.items()):
                function = name.rsplit(".", 1)[1].rsplit("__mutmut_", 1)[0]
                if status == "survived":
                    change = diff(group, name, module)
                    survivors.append({"mutant": name, "module": module, "function": function, "diff": change, **judge(function, change, verdicts)})
                elif status == "no_tests":
                    per = unreached.setdefault(module, {})
                    per[function] = per.get(function, 0) + 1
    for module, m in modules_out.items():
        m["equivalent"] = sum(1 for sv in survivors if sv["module"] == module and sv["verdict"] == "equivalent")
    totals = {c: sum(m[c] for m in modules_out.values()) for c in ("total", *COUNTED)}
    detected = totals["killed"] + totals["timeout"]
    equivalent = sum(m["equivalent"] for m in modules_out.values())
    return {
        "tool": f"mutmut {_version('mutmut')}",
        "command": "python tools/mutation.py",
        "tests": "the conformance suite only; each module against its own protocol's cases, with the built-in adapter streaming and not streaming",
        "score": {
            "killed_or_timeout": detected,
            "total": totals["total"],
            "percent": _percent(detected, totals["total"]),
            # the mutation score proper: equivalent mutants cannot be killed and leave the denominator
            "equivalent": equivalent,
            "percent_of_non_equivalent": _percent(detected, totals["total"] - equivalent),
        },
        "totals": totals,
        "modules": dict(sorted(modules_out.items())),
        "survivors": sorted(survivors, key=lambda s: s["mutant"]),
        "not_reached": {m: dict(sorted(v.items())) for m, v in sorted(unreached.items())},
        "kills_by_case": {m: kills[m] for m in sorted(kills)},
    }


def _percent(part: int, whole: int) -> float:
    return round(100 * part / whole, 1) if whole else 0.0


def judge(function: str, change: str, verdicts: dict) -> dict[str, str]:
    """The verdict on a survivor: the first rule whose function and diff patterns match
    (``tools/mutation-verdicts.json``; a rule with ``"wording": true`` matches only a change
    confined to an error's message text, see :func:`wording_only`)."""
    for rule in verdicts.get("rules", []):
        if not re.search(rule["function"], function):
            continue
        if rule.get("wording") and not wording_only(change):
            continue
        if re.search(rule.get("diff", "."), change, re.S):
            return {"verdict": rule["verdict"], "reason": rule["reason"]}
    return {"verdict": "unjudged", "reason": ""}


_MESSAGE_ARG = {"json_or_wire_error": 1}  # calls whose message is not the first argument


def wording_only(change: str) -> bool:
    """Whether a one-line mutant changes nothing but the message text of an error it builds:
    the only differences between the two lines' syntax trees sit inside the message argument
    (first positional, or ``json_or_wire_error``'s second) of a call to an ``...Error`` class or
    function."""
    lines = change.splitlines()
    if len(lines) != 2 or not (lines[0].startswith("- ") and lines[1].startswith("+ ")):
        return False
    try:
        before, after = (ast.parse(line[2:].strip()) for line in lines)
    except SyntaxError:
        return False

    def same(a: ast.AST, b: ast.AST, in_message: bool) -> bool:
        if in_message:
            return True
        if type(a) is not type(b):
            return False
        if isinstance(a, ast.Call) and isinstance(b, ast.Call):
            name = a.func.attr if isinstance(a.func, ast.Attribute) else getattr(a.func, "id", "")
            at = _MESSAGE_ARG.get(name, 0 if name.endswith("Error") or name.endswith("_error") else -1)
            if not same(a.func, b.func, False) or len(a.args) != len(b.args) or len(a.keywords) != len(b.keywords):
                return False
            args_same = all(same(x, y, i == at and isinstance(x, (ast.Constant, ast.JoinedStr)) and isinstance(y, (ast.Constant, ast.JoinedStr))) for i, (x, y) in enumerate(zip(a.args, b.args)))
            kws_same = all(x.arg == y.arg and same(x.value, y.value, False) for x, y in zip(a.keywords, b.keywords))
            return args_same and kws_same
        for field in a._fields:
            x, y = getattr(a, field), getattr(b, field)
            if isinstance(x, list):
                if not isinstance(y, list) or len(x) != len(y) or not all(same(i, j, False) if isinstance(i, ast.AST) else i == j for i, j in zip(x, y)):
                    return False
            elif isinstance(x, ast.AST):
                if not isinstance(y, ast.AST) or not same(x, y, False):
                    return False
            elif x != y:
                return False
        return True

    return ast.dump(before) != ast.dump(after) and same(before, after, False)


def readme_section(summary: dict) -> str:
    """The README's mutation-score text, from the summary."""
    s, t = summary["score"], summary["totals"]
    lines = [
        "<!-- mutation:start (written by tools/mutation.py) -->",
        f"Last run: {summary['tool']}, the conformance suite as the only test. **{s['killed_or_timeout']} of {s['total']} "
        f"mutants killed: {s['percent']}%**. {s['equivalent']} of the survivors are equivalent (no behaviour differs, "
        f"so no test can kill them); the score, killed over the mutants that are not equivalent, is "
        f"**{s['killed_or_timeout']} of {s['total'] - s['equivalent']}: {s['percent_of_non_equivalent']}%** (the target is 90%). "
        f"{t['survived']} survived; {t['no_tests']} sit in code no case reaches and count as not killed.",
        "",
        "| module | mutants | killed (incl. timeout) | survived | equivalent | no case reaches | score |",
        "|---|---|---|---|---|---|---|",
    ]
    for module, m in summary["modules"].items():
        killed = m["killed"] + m["timeout"]
        lines.append(f"| `{module}` | {m['total']} | {killed} | {m['survived']} | {m['equivalent']} | {m['no_tests']} | {_percent(killed, m['total'] - m['equivalent'])}% |")
    groups: dict[tuple[str, str], list[dict]] = {}
    for sv in summary["survivors"]:
        groups.setdefault((sv["verdict"], sv["reason"]), []).append(sv)
    lines += ["", "Every survivor, grouped by the verdict on it (`equivalent`: no behaviour changes; `wording`: only the text of loopkit's own error message changes, which the suite never checks; `open`: a behaviour the suite misses, with the case that would catch it):", ""]
    for (verdict, reason), members in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        lines.append(f"- **{verdict}** ({len(members)}): {reason or 'not judged yet'}")
        for sv in members:
            change = " / ".join(line for line in sv["diff"].splitlines())
            short = change if len(change) <= 110 else change[:107] + "..."
            lines.append(f"    - `{sv['module'].rsplit('/', 1)[1]}` `{sv['function']}`: `{short.replace('`', chr(39))}`")
    lines.append("<!-- mutation:end -->")
    return "\n".join(lines)


def write_readme(summary: dict) -> None:
    text = README.read_text(encoding="utf-8")
    section = readme_section(summary)
    if "<!-- mutation:start" in text:
        text = re.sub(r"<!-- mutation:start.*?<!-- mutation:end -->", lambda m: section, text, flags=re.S)
    else:
        text = text.replace("MUTATION_RESULTS", section)
    README.write_text(text, encoding="utf-8")


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adapter", action="append", choices=list(GROUPS), help="run only this group (repeatable)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="mutants run at once (default: one per core)")
    parser.add_argument("--modes", default=",".join(MODES), help="the built-in adapter's modes, comma-separated (default: stream,no-stream)")
    parser.add_argument("--summary-only", action="store_true", help="rebuild the summary and the README from the last runs in .mutation/")
    args = parser.parse_args(argv)
    groups = args.adapter or list(GROUPS)
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    if not modes or set(modes) - set(MODES):
        parser.error(f"--modes takes {', '.join(MODES)}")
    if not args.summary_only:
        for group in groups:
            print(f"mutating {group} ...", flush=True)
            print(f"  {run_group(group, jobs=args.jobs, modes=modes)}", flush=True)
    summary = summarise(groups)
    SUMMARY.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    write_readme(summary)
    s = summary["score"]
    print(f"killed: {s['killed_or_timeout']}/{s['total']} = {s['percent']}%; score (equivalent mutants left out): {s['killed_or_timeout']}/{s['total'] - s['equivalent']} = {s['percent_of_non_equivalent']}% (summary: {SUMMARY.relative_to(ROOT)})")
    for module, m in summary["modules"].items():
        print(f"  {module}: {m['killed'] + m['timeout']}/{m['total']} killed, {m['survived']} survived, {m['no_tests']} not reached")
    return 0


if __name__ == "__main__":
    sys.exit(main())
