"""Keeps compiled bytecode when PYTHONDONTWRITEBYTECODE is set (loaded early, by ``-p`` in addopts).

The suite starts many Python processes: the pytest controller, its xdist workers, nested pytest
runs, ``loopkit`` commands, servers on 127.0.0.1. With PYTHONDONTWRITEBYTECODE set, each compiles
every module it imports again, and each pytest process assertion-rewrites again every package
that registers a pytest plugin (all of hypothesis, anyio, syrupy, xdist: about 140 modules, seconds
of CPU per process). The bytecode goes to a cache under the temporary folder instead, never next
to the sources, so the checkout stays as clean as the variable asked; the child processes inherit
the setting through the environment. The bytecode compiled when Python and the packages were
installed is linked into that cache first (:func:`seed`), since Python then reads only there.

This must run before pytest imports the installed plugins, which a conftest.py is too late for:
``-p`` plugins load just before them (the ``pythonpath`` ini option makes this module importable).
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tempfile


_NEVER_IMPORTED = frozenset({"test", "tests", "idlelib", "tkinter", "turtledemo", "lib2to3", "ensurepip"})


def seed(prefix: str) -> None:
    """Link the bytecode that was compiled at install time (the standard library's and
    site-packages' ``__pycache__``) into ``prefix``, once per folder.

    With a prefix Python reads bytecode only there, so on a fresh machine (CI) every process
    would otherwise compile every installed module it imports again (anthropic's hundreds of type
    modules, pydantic, hypothesis...), until one of them had written it: tens of seconds of CPU
    before the first test. A link costs no copy; the import system still checks each file against
    its source, as it does in ``__pycache__``."""
    tag = f".{sys.implementation.cache_tag}.pyc"
    paths = sysconfig.get_paths()
    for root in dict.fromkeys(paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")):
        marker = os.path.join(prefix + os.path.abspath(root), ".seeded")
        if os.path.exists(marker) or not os.path.isdir(root):
            continue
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = [d for d in subfolders if d not in _NEVER_IMPORTED and not (root == paths["stdlib"] and d == "site-packages")]
            if os.path.basename(folder) != "__pycache__":
                continue
            target = prefix + os.path.dirname(os.path.abspath(folder))
            for name in files:
                if not name.endswith(tag):
                    continue  # another interpreter's, or an optimized (.opt-1) one
                os.makedirs(target, exist_ok=True)
                dest = os.path.join(target, name)
                try:
                    os.link(os.path.join(folder, name), dest)
                except FileExistsError:
                    pass
                except OSError:  # another file system: copy
                    shutil.copyfile(os.path.join(folder, name), dest)
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        open(marker, "w").close()  # noqa: SIM115


if sys.dont_write_bytecode and not sys.pycache_prefix:
    sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "loopkit-tests-pycache")
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    seed(sys.pycache_prefix)
