"""``loopkit`` starts fast: building the command line (``loopkit --help``, ``loopkit COMMAND
--help``) imports none of what the commands need to run (the HTTP client, the cassette format,
the adapters, the simulators, rich, pydantic). Each command imports those when it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from loopkit.cli import COMMANDS

ROOT = Path(__file__).resolve().parent.parent.parent

HEAVY = ("httpx", "rich", "pydantic", "pytest", "hypothesis", "yaml", "anyio")
LOOPKIT_HEAVY = ("loopkit.recording", "loopkit.providers", "loopkit.simulators", "loopkit.scenario", "loopkit.fakes", "loopkit.conformance")

PROGRAM = """
import contextlib, io, sys
from loopkit.cli import main
for argv in [["--help"], *([c, "--help"] for c in sys.argv[1:])]:
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main(argv)
        except SystemExit as e:
            assert e.code == 0, (argv, e.code)
heavy = {heavy!r}
print("\\n".join(sorted(m for m in sys.modules if m.partition(".")[0] in heavy or m.startswith({loopkit_heavy!r}))))
"""


def test_help_imports_nothing_heavy() -> None:
    code = PROGRAM.format(heavy=HEAVY, loopkit_heavy=LOOPKIT_HEAVY)
    done = subprocess.run([sys.executable, "-c", code, *COMMANDS], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", "loopkit --help imported:\n" + done.stdout


def test_record_modes_are_the_cassettes() -> None:
    from loopkit.cli.record import RECORD_MODES
    from loopkit.recording import RECORD_MODES as CASSETTE_MODES

    assert RECORD_MODES == CASSETTE_MODES
