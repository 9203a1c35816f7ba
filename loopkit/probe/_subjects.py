"""The agents a probe can run: a Python callable (sync or async) or any program (a command).

Each run gets the simulator's base URL and the prompt, and ends within a wall-clock limit: a
program is killed (its whole process group); a callable that hangs is left behind in its daemon
thread, and the simulator it talks to answers nothing more once the probe ends.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ._env import probe_environ

AgentFn = Callable[[str, str], Any]
"""``agent(base_url, prompt) -> str``, sync or async: the final answer, or raise on failure."""


@dataclass(slots=True, kw_only=True)
class AgentRun:
    """What one run of the agent gave.

    Args:
        output: the final answer (a program's stdout without its last newline); None on failure.
        error: why the run failed (an exception, a non-zero exit with its stderr), else None.
        timed_out: the run did not finish within the limit.
        seconds: wall-clock time of the run.
    """

    output: str | None = None
    error: str | None = None
    timed_out: bool = False
    seconds: float = 0.0

    @property
    def succeeded(self) -> bool:
        return self.error is None and not self.timed_out and self.output is not None


class Subject:
    """Something the probe can run once per case."""

    name: str = "agent"

    def run(self, *, protocol: str, url: str, base_url: str, prompt: str, timeout: float) -> AgentRun:
        raise NotImplementedError


class CallableSubject(Subject):
    """A Python function ``agent(base_url, prompt) -> str`` (or ``async def``)."""

    def __init__(self, fn: AgentFn, *, name: str | None = None) -> None:
        if not callable(fn):
            raise UsageError(f"probe: the agent must be a callable agent(base_url, prompt) -> str, got {fn!r}")
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", None) or repr(fn)

    def run(self, *, protocol: str, url: str, base_url: str, prompt: str, timeout: float) -> AgentRun:
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                value = self.fn(base_url, prompt)
                if inspect.isawaitable(value):
                    value = asyncio.run(_awaited(value))
                box["value"] = value
            except BaseException as exc:  # noqa: BLE001 - anything the agent raises is its answer
                box["error"] = f"{type(exc).__name__}: {exc}"

        start = time.perf_counter()
        thread = threading.Thread(target=target, name=f"loopkit-probe-{self.name}", daemon=True)
        thread.start()
        thread.join(timeout)
        seconds = time.perf_counter() - start
        if thread.is_alive():
            return AgentRun(timed_out=True, seconds=seconds, error=f"the agent did not return within {timeout:g} s")
        if "error" in box:
            return AgentRun(error=box["error"], seconds=seconds)
        value = box.get("value")
        if not isinstance(value, str):
            return AgentRun(error=f"the agent returned {type(value).__name__}, not the answer's text (str)", seconds=seconds)
        return AgentRun(output=value, seconds=seconds)


async def _awaited(value: Any) -> Any:
    return await value


class CommandSubject(Subject):
    """A program in any language, run once per case.

    The prompt reaches it three ways, so any program can take it: on stdin (then closed), in
    ``LOOPKIT_PROBE_PROMPT``, and in place of a ``{prompt}`` argument. Its stdout (without the
    last newline) is the answer; a non-zero exit status is a failed run.
    """

    def __init__(self, command: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None) -> None:
        if not command:
            raise UsageError("probe: give the command to run after --, e.g. loopkit probe --protocol anthropic -- python agent.py")
        self.command = list(command)
        self.cwd = cwd
        self.base_env = dict(os.environ if env is None else env)
        self.name = " ".join(self.command)

    def run(self, *, protocol: str, url: str, base_url: str, prompt: str, timeout: float) -> AgentRun:
        env = probe_environ(self.base_env, protocol, url, base_url) | {"LOOPKIT_PROBE_PROMPT": prompt}
        argv = [a.replace("{prompt}", prompt) for a in self.command]
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=self.cwd, start_new_session=True
            )
        except OSError as exc:
            raise UsageError(f"probe: cannot start {argv[0]!r}: {exc}") from None
        try:
            out, err = proc.communicate(prompt.encode("utf-8"), timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            seconds = time.perf_counter() - start
            return AgentRun(timed_out=True, seconds=seconds, error=f"the program did not exit within {timeout:g} s (killed){_stderr_tail(err)}")
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            return AgentRun(error=f"exit status {proc.returncode}{_stderr_tail(err)}", seconds=seconds)
        text = out.decode("utf-8", errors="replace")
        return AgentRun(output=text.removesuffix("\n").removesuffix("\r"), seconds=seconds)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the program and anything it started, no more
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _stderr_tail(err: bytes, lines: int = 6) -> str:
    text = err.decode("utf-8", errors="replace").strip()
    if not text:
        return ""
    tail = text.splitlines()[-lines:]
    return ": " + "\n".join(tail)


def as_subject(agent: Subject | AgentFn | Sequence[str]) -> Subject:
    """A :class:`Subject` from a callable, a command (list of strings) or a subject."""
    if isinstance(agent, Subject):
        return agent
    if isinstance(agent, (list, tuple)):
        return CommandSubject(agent)
    if isinstance(agent, str):
        raise UsageError(f"probe: pass a command as a list of arguments ([{agent!r}, ...]), not one string")
    return CallableSubject(agent)
