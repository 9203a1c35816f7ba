"""Run the conformance suite against every mutant of one group (started by tools/mutation.py).

Runs inside a group's workspace (``.mutation/<group>/``), with mutmut's mutated copy of loopkit
(``mutants/``) first on ``sys.path``. Reads ``{"protocols": [...], "modes": [...], "variants":
[...], "jobs": N, "mutants": [...]}`` as JSON on stdin and prints one JSON line per mutant:
``[name, status, case]`` (status ``killed``, ``survived``, ``timeout`` or ``no_tests``; case is
the first case that failed, as ``protocol/mode:case_id``, or ``protocol/mode+variant:case_id``
for a run of the suite as one of the protocol's model families).

Why not ``mutmut run``: mutmut starts a pytest session for every mutant, which costs about two
seconds here, while the cases a mutant needs run in milliseconds. This worker keeps mutmut's
mutants and its trampolines (``set_mutant_under_test``, the ``stats`` hits), and replaces only the
runner: the suites are built once, then one child is forked per mutant from this warm process.

1. A clean run of every case of every target, with mutmut recording which mutated functions each
   case reaches. Any clean failure stops the run: a case that fails unmutated cannot kill anything.
   A case not applicable to a target (a mid-stream error for an adapter asking for a non-streamed
   answer) is no test of it.
2. A forced-failure run (mutmut's ``fail`` mutant makes every mutated function raise): if a case
   that reaches a mutated function still passes, the trampolines are not in the path and nothing
   this run says would mean anything.
3. Per mutant, a forked child runs just the cases that reach its function, in suite order,
   stopping at the first failure. A child that outruns its limit (ten times the clean time of
   those cases, at least two seconds) is a timeout: the suite noticed.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

from mutmut.mutation.trampoline import set_mutant_under_test
from mutmut.state import state
from mutmut.utils.format_utils import mangled_name_from_mutant_name

from loopkit.conformance import CASES, Suite

PASSING = ("pass", "not-applicable")


def outcome(suite: Suite, case: Any) -> str:
    try:
        return suite.run_case(case).status
    except BaseException as exc:  # a mutant can break the harness itself: the suite noticed
        return f"raised {type(exc).__name__}"


def main() -> int:
    job = json.loads(sys.stdin.read())
    variants = [None, *job.get("variants", [])]
    targets = [
        (f"{p}/{mode}" + (f"+{v}" if v else ""), Suite(p, stream=mode == "stream", variant=v))
        for p in job["protocols"]
        for v in variants
        for mode in job["modes"]
    ]
    runs = [(name, suite, case) for name, suite in targets for case in CASES]

    # 1. clean run, recording the mutated functions each case reaches
    reached: dict[str, list[int]] = {}
    seconds: list[float] = []
    set_mutant_under_test("stats")
    failures = []
    for i, (name, suite, case) in enumerate(runs):
        state()._stats.clear()
        started = time.perf_counter()
        status = outcome(suite, case)
        seconds.append(time.perf_counter() - started)
        if status not in PASSING:
            failures.append(f"{name}:{case.id} ({status})")
        if status == "pass":  # a case not applicable to this target tests nothing here
            for function in state()._stats:
                reached.setdefault(function, []).append(i)
    if failures:
        print(json.dumps({"clean_failures": failures}), flush=True)
        return 3

    # 2. the trampolines are in the path: with every mutated function raising, each case that
    # reaches one fails
    set_mutant_under_test("fail")
    reaching = sorted({i for cases in reached.values() for i in cases})
    unnoticed = [f"{runs[i][0]}:{runs[i][2].id}" for i in reaching if outcome(runs[i][1], runs[i][2]) in PASSING]
    if unnoticed or not reaching:
        print(json.dumps({"forced_fail_passed": unnoticed or ["no case reaches a mutated function"]}), flush=True)
        return 4
    set_mutant_under_test("")

    # 3. one forked child per mutant, at most `jobs` at a time
    running: dict[int, tuple[str, int]] = {}

    def reap() -> None:
        pid, status = os.wait()
        name, fd = running.pop(pid)
        killer = os.read(fd, 4096).decode()
        os.close(fd)
        if os.WIFSIGNALED(status):
            verdict = ["timeout", ""]
        else:
            verdict = ["killed", killer] if os.WEXITSTATUS(status) else ["survived", ""]
        print(json.dumps([name, *verdict]), flush=True)

    for name in job["mutants"]:
        cases = reached.get(mangled_name_from_mutant_name(name), [])
        if not cases:
            print(json.dumps([name, "no_tests", ""]), flush=True)
            continue
        while len(running) >= job["jobs"]:
            reap()
        limit = max(2.0, 10 * sum(seconds[i] for i in cases))
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: run the cases, report the first that fails
            os.close(read)
            signal.setitimer(signal.ITIMER_REAL, limit)
            set_mutant_under_test(name)
            for i in cases:
                target, suite, case = runs[i]
                if outcome(suite, case) not in PASSING:
                    os.write(write, f"{target}:{case.id}".encode())
                    os._exit(1)
            os._exit(0)
        os.close(write)
        running[pid] = (name, read)
    while running:
        reap()
    return 0


if __name__ == "__main__":
    sys.exit(main())
