"""The import rules of docs/architecture.md, checked by walking every module's imports with ``ast``.

A module imports only from its own layer or the layers below; the L2 siblings
(providers, fakes, recording, simulators) never import each other; ``simulators`` imports only loopkit's
``script``, ``messages`` and ``errors``; and ``import loopkit`` loads no pytest, hypothesis or rich.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# module (or package prefix) -> layer; the longest matching prefix wins
LAYERS: dict[str, int] = {
    "loopkit.messages": 0,
    "loopkit.events": 0,
    "loopkit.errors": 0,
    "loopkit.script": 0,
    "loopkit.provider": 1,
    "loopkit.accumulate": 1,
    "loopkit.retry": 1,
    "loopkit.tools": 1,
    "loopkit._schema": 1,
    "loopkit._validation": 1,
    "loopkit.loop": 1,
    "loopkit.runtime": 1,
    "loopkit.serde": 1,
    "loopkit.eventstream": 1,
    "loopkit._sync": 1,
    "loopkit._targets": 1,
    "loopkit._credentials": 1,
    "loopkit.providers": 2,
    "loopkit.fakes": 2,
    "loopkit.simulators": 2,  # the repository's simulators/ folder, installed as loopkit.simulators
    "loopkit.recording": 2,
    "loopkit.mcp": 2,  # MCP sessions and the tool adapter; the SDK is imported lazily
    "loopkit.strategies": 3,
    "loopkit.scenario": 3,
    "loopkit.conformance": 3,
    "loopkit.fuzz": 3,
    "loopkit.snapshot": 3,
    "loopkit.mcp.fuzz": 3,
    "loopkit.probe": 3,
    "loopkit.report": 4,
    "loopkit.cli": 4,
    "loopkit.pytest_plugin": 4,
    "loopkit.pytest_cassettes": 4,
    "loopkit.pytest_probe": 4,
    "loopkit.__main__": 4,
    "loopkit": 4,  # the package's __init__ re-exports the public names
}
L2_SIBLINGS = ("loopkit.providers", "loopkit.fakes", "loopkit.recording", "loopkit.simulators")
SIMULATOR_ALLOWED = ("loopkit.script", "loopkit.messages", "loopkit.errors", "loopkit.simulators")
HEAVY = ("pytest", "hypothesis", "rich")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "simulators":  # installed as loopkit.simulators (pyproject's package-dir)
        parts.insert(0, "loopkit")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_key(module: str) -> str | None:
    best = None
    for key in LAYERS:
        if (module == key or module.startswith(key + ".")) and (best is None or len(key) > len(best)):
            best = key
    return best


def imports(path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, at module top level) for every import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out = []
    top_level = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno, id(node) in top_level) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                if node.level > 1:
                    base = base[: -(node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is None or node.level:
                # "from . import x" may import submodules: count each name as a module
                out.extend((f"{target}.{a.name}" if node.module is None else target, node.lineno, id(node) in top_level) for a in node.names)
            else:
                out.append((target, node.lineno, id(node) in top_level))
    return out


def source_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("path", source_files("loopkit"), ids=lambda p: str(p.relative_to(ROOT)))
def test_loopkit_module_imports_only_lower_layers(path: Path) -> None:
    me = module_name(path)
    my_key = layer_key(me)
    assert my_key is not None, f"{me} has no layer: add it to LAYERS in tests/test_layering.py (docs/architecture.md)"
    my_layer = LAYERS[my_key]
    problems = []
    for target, line, top in imports(path):
        # loopkit.strategies is the one place built on hypothesis (docs/architecture.md); import loopkit never loads it
        hypothesis_home = my_key == "loopkit.strategies" and target.split(".")[0] == "hypothesis"
        if target.split(".")[0] in HEAVY and top and my_layer < 4 and not hypothesis_home:
            problems.append(f"line {line}: imports {target} at module level (import it inside the function that needs it)")
        if not target.startswith("loopkit"):
            continue
        key = layer_key(target)
        if key is None or key == my_key or target.startswith(my_key + "."):
            continue
        if LAYERS[key] > my_layer:
            problems.append(f"line {line}: {me} (L{my_layer}) imports {target} (L{LAYERS[key]})")
        if my_key in L2_SIBLINGS and key in L2_SIBLINGS and key != my_key:
            problems.append(f"line {line}: L2 siblings must not import each other ({me} -> {target})")
    assert not problems, "\n".join(dict.fromkeys(problems))


@pytest.mark.parametrize("path", source_files("simulators"), ids=lambda p: str(p.relative_to(ROOT)))
def test_simulators_import_only_loopkit_vocabulary(path: Path) -> None:
    bad = [
        f"line {line}: {target}"
        for target, line, _ in imports(path)
        if target.startswith("loopkit") and not target.startswith(SIMULATOR_ALLOWED)
    ]
    assert not bad, f"{path.name} may import only {SIMULATOR_ALLOWED} from loopkit:\n" + "\n".join(bad)


def test_import_loopkit_stays_light() -> None:
    code = "import sys, loopkit; print(','.join(m for m in ('pytest', 'hypothesis', 'rich') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "", f"import loopkit imported: {out.stdout.strip()}"
