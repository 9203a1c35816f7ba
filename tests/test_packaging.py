"""The distribution ships every package folder, the simulators under ``loopkit.simulators`` (never
as a generic top-level ``simulators``), and ``py.typed``."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def package_folders() -> set[str]:
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "loopkit").rglob("__init__.py")}
    found |= {"loopkit." + ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "simulators").rglob("__init__.py")}
    return found


def test_every_package_folder_is_listed() -> None:
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert listed == package_folders(), "add the package to [tool.setuptools] packages in pyproject.toml"


def test_the_simulators_are_installed_as_loopkit_simulators() -> None:
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"loopkit.simulators": "simulators"}
    assert not any(p == "simulators" or p.startswith("simulators.") for p in PYPROJECT["tool"]["setuptools"]["packages"])
    from loopkit import simulators

    assert simulators.__name__ == "loopkit.simulators"
    assert Path(simulators.__file__).resolve().parent == ROOT / "simulators"


def test_importing_the_folder_by_its_own_name_fails_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.delitem(sys.modules, "simulators", raising=False)
    with pytest.raises(ImportError, match="from loopkit import simulators"):
        __import__("simulators")
    sys.modules.pop("simulators", None)


def test_typed_and_free_names() -> None:
    assert (ROOT / "loopkit" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["loopkit"]
    # "loopkit" on the public index is another project: the distribution has a name of its own
    assert PYPROJECT["project"]["name"] == "loopkit-harness"
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"pytest", "hypothesis", "syrupy"} == {r.split(">")[0].split("[")[0] for r in extras["testing"]}
    assert not any(r.startswith(("openai", "anthropic", "google-genai", "boto3")) for r in extras["testing"])
