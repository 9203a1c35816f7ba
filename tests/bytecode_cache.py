"""Keeps compiled bytecode when PYTHONDONTWRITEBYTECODE is set (loaded early, by ``-p`` in addopts).

The suite starts many Python processes: the pytest controller, its xdist workers, nested pytest
runs, ``loopkit`` commands, servers on 127.0.0.1. With PYTHONDONTWRITEBYTECODE set, each compiles
every module it imports again, and each pytest process assertion-rewrites again every package
that registers a pytest plugin (all of hypothesis, anyio, syrupy, xdist: about 140 modules, seconds
of CPU per process). The bytecode goes to a cache under the temporary folder instead, never next
to the sources, so the checkout stays as clean as the variable asked; the child processes inherit
the setting through the environment.

This must run before pytest imports the installed plugins, which a conftest.py is too late for:
``-p`` plugins load just before them (the ``pythonpath`` ini option makes this module importable).
"""

from __future__ import annotations

import os
import sys
import tempfile

if sys.dont_write_bytecode and not sys.pycache_prefix:
    sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "loopkit-tests-pycache")
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
