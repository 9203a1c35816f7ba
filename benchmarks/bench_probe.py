"""What a probe costs on top of the agent: prints figures (budgets in docs/probe.md's issue).

- per case: the probe's time for one case minus a direct call of the same agent against a bare
  simulator doing the same work (budget: <= 20 ms);
- the whole probe of one in-process agent (loopkit's engine over its Anthropic adapter) on one
  protocol (budget: < 5 s).

The machine may be loaded: compare the overhead with the direct call's own time, not in absolute.

    python benchmarks/bench_probe.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402

import loopkit  # noqa: E402
from loopkit import simulators  # noqa: E402
from loopkit.probe import Probe  # noqa: E402
from loopkit.probe._cases import FINAL  # noqa: E402
from loopkit.providers import adapter_class  # noqa: E402
from loopkit.script import Turn  # noqa: E402


@loopkit.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


CLIENT = httpx.Client()


def agent(base_url: str, prompt: str) -> str:
    provider = adapter_class("anthropic")(model="claude-sonnet-4-5", api_key="k", base_url=base_url, client=CLIENT)
    return loopkit.Runtime(provider).exec(prompt, tools=[add], max_iterations=8)


def direct(n: int) -> list[float]:
    """The agent against a bare served simulator, one text turn per call."""
    out = []
    for _ in range(n):
        with simulators.serve("anthropic", [Turn(text=FINAL)]) as sim:
            t = time.perf_counter()
            agent(sim.base_url, "hello")
            out.append(time.perf_counter() - t)
    return out


def probed(n: int) -> list[float]:
    """The same work as a probe case (text_answer), the probe's whole time per case."""
    p = Probe(agent, "anthropic", cases=[])
    try:
        p.run_case("text_answer")  # start-up: server, first request
        out = []
        for _ in range(n):
            p._discovery = None
            t = time.perf_counter()
            p.run_case("text_answer")
            out.append(time.perf_counter() - t)
        return out
    finally:
        p.close()


def main() -> None:
    agent_warm = direct(3)  # imports, connection pool
    n = 40
    d = statistics.median(direct(n))
    p = statistics.median(probed(n))
    print(f"one case: direct call {d * 1000:.2f} ms, through the probe {p * 1000:.2f} ms, overhead {(p - d) * 1000:.2f} ms (budget 20 ms)")
    del agent_warm
    t = time.perf_counter()
    report = Probe(agent, "anthropic", tools=["add"]).run()
    whole = time.perf_counter() - t
    slow = sorted(report.results, key=lambda r: -r.seconds)[:3]
    print(f"whole probe, {len(report.results)} cases, in-process agent on anthropic: {whole:.2f} s (budget 5 s); "
          f"{report.counts()}; slowest: " + ", ".join(f"{r.case} {r.seconds:.2f} s" for r in slow))  # fmt: skip


if __name__ == "__main__":
    main()
