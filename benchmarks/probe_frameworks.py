"""Probe agents built the documented way on real frameworks, and publish the framework × case table.

    python benchmarks/probe_frameworks.py                      # print the table
    python benchmarks/probe_frameworks.py --write docs/probe-frameworks.md

Each subject is a function ``agent(base_url, prompt) -> str`` written as the framework's docs
show (a model object pointed at ``base_url``, two plain Python tools), probed on every protocol
the framework supports with the packages of loopkit's ``frameworks`` extra. A failed case is a
finding about the framework (or the way its docs build an agent), never about the check: the
table links the rule, and the JSON report (``--json``) holds the request that shows it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # traces would be uploaded to api.openai.com
for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
    os.environ.pop(name, None)

from loopkit.probe import CASES, Probe  # noqa: E402

ANTHROPIC_MODEL = "claude-sonnet-4-5"
MODELS = {"openai_chat": "gpt-4o-mini", "openai_responses": "o4-mini", "anthropic": ANTHROPIC_MODEL}
"""Models as a user would pick them: a reasoning model where the protocol passes reasoning back."""
KEY = "loopkit-probe-dummy-key"


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


# --- pydantic-ai ---------------------------------------------------------------------------


def pydantic_ai_agent(protocol: str) -> Callable[[str, str], str]:
    from functools import cache

    from pydantic_ai import Agent

    @cache
    def build(base_url: str) -> Agent:
        if protocol == "anthropic":
            from pydantic_ai.models.anthropic import AnthropicModel
            from pydantic_ai.providers.anthropic import AnthropicProvider

            model = AnthropicModel(ANTHROPIC_MODEL, provider=AnthropicProvider(base_url=base_url, api_key=KEY))
        else:
            from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
            from pydantic_ai.providers.openai import OpenAIProvider

            cls = OpenAIChatModel if protocol == "openai_chat" else OpenAIResponsesModel
            model = cls(MODELS[protocol], provider=OpenAIProvider(base_url=base_url, api_key=KEY))
        return Agent(model, tools=[add, get_weather])

    def agent(base_url: str, prompt: str) -> str:
        return build(base_url).run_sync(prompt).output

    return agent


# --- OpenAI Agents SDK ---------------------------------------------------------------------


def openai_agents_agent(protocol: str) -> Callable[[str, str], str]:
    from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    tools = [function_tool(add), function_tool(get_weather)]

    async def agent(base_url: str, prompt: str) -> str:
        async with AsyncOpenAI(base_url=base_url, api_key=KEY) as client:  # closed on this run's event loop
            cls = OpenAIChatCompletionsModel if protocol == "openai_chat" else OpenAIResponsesModel
            a = Agent(name="probe", instructions="Use the tools.", tools=tools, model=cls(model=MODELS[protocol], openai_client=client))
            result = await Runner.run(a, prompt)
            return str(result.final_output)

    return agent


# --- LangGraph -----------------------------------------------------------------------------


def langgraph_agent(protocol: str) -> Callable[[str, str], str]:
    import warnings
    from functools import cache

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

    @cache
    def build(base_url: str):  # type: ignore[no-untyped-def]
        if protocol == "anthropic":
            from langchain_anthropic import ChatAnthropic

            model = ChatAnthropic(model=ANTHROPIC_MODEL, base_url=base_url, api_key=KEY)
        else:
            from langchain_openai import ChatOpenAI

            model = ChatOpenAI(model=MODELS[protocol], base_url=base_url, api_key=KEY, use_responses_api=protocol == "openai_responses")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return create_react_agent(model, tools=[add, get_weather])

    def agent(base_url: str, prompt: str) -> str:
        last = build(base_url).invoke({"messages": [("user", prompt)]})["messages"][-1]
        return last.text if isinstance(last.text, str) else last.text()

    return agent


# --- a plain loop over the official SDK ----------------------------------------------------


def sdk_loop_agent(protocol: str) -> Callable[[str, str], str]:
    from tests.probe.agents import AnthropicLoop, OpenAIChatLoop

    return AnthropicLoop() if protocol == "anthropic" else OpenAIChatLoop()


SUBJECTS: dict[str, tuple[str, Callable[[str], Callable[[str, str], str]], tuple[str, ...]]] = {
    # name: (package whose version is reported, factory, protocols)
    "pydantic-ai": ("pydantic-ai-slim", pydantic_ai_agent, ("openai_chat", "openai_responses", "anthropic")),
    "openai-agents": ("openai-agents", openai_agents_agent, ("openai_chat", "openai_responses")),
    "langgraph": ("langgraph", langgraph_agent, ("openai_chat", "openai_responses", "anthropic")),
    "official SDK loop": ("anthropic", sdk_loop_agent, ("openai_chat", "anthropic")),
}
MARK = {"pass": "pass", "fail": "**FAIL**", "not-applicable": "n/a"}


def columns() -> list[tuple[str, str]]:
    """(framework, protocol) of every column of the table."""
    return [(name, protocol) for name, (_, _, protocols) in SUBJECTS.items() for protocol in protocols]


def probe_all(subjects: list[str] | None = None, log: Callable[[str], None] = lambda s: None, *, protocol: str | None = None) -> list[dict]:
    """Every subject on every protocol it supports (or only ``protocol``): the JSON reports."""
    reports = []
    only = protocol
    for name in subjects or list(SUBJECTS):
        package, factory, protocols = SUBJECTS[name]
        for protocol in protocols:
            if only is not None and protocol != only:
                continue
            log(f"probing {name} on {protocol} ...")
            report = Probe(factory(protocol), protocol, tools="all", timeout=30, name=f"{name} ({protocol})").run()
            data = report.to_json()
            data["framework"], data["package"], data["version"] = name, package, version(package)
            reports.append(data)
    return reports


def render(reports: list[dict]) -> str:
    """The Markdown page: the table, then each failure as a finding with its request."""
    cases = [c.name for c in CASES]
    lines = [
        "# Frameworks under the probe",
        "",
        "Generated by `python benchmarks/probe_frameworks.py --write docs/probe-frameworks.md`;",
        "a test regenerates it and fails when it is out of date. Each agent is built the way its",
        "framework documents, with two plain tools (`add`, `get_weather`), and probed with",
        "`tools=\"all\"` on every protocol the framework supports with the `frameworks` extra.",
        "See [the probe](probe.md) for what each case does and checks.",
        "",
        "<!-- table-start -->",
        "",
        "| case | " + " | ".join(f"{r['framework']} {r['version']}<br>`{r['protocol']}`" for r in reports) + " |",
        "|---|" + "---|" * len(reports),
    ]
    for case in cases:
        row = []
        for r in reports:
            res = next((x for x in r["results"] if x["case"] == case), None)
            row.append("" if res is None else MARK[res["status"]])
        lines.append(f"| `{case}` | " + " | ".join(row) + " |")
    lines += ["", "<!-- table-end -->", "", "## Findings", ""]
    found = False
    for r in reports:
        for res in r["results"]:
            if res["status"] != "fail":
                continue
            found = True
            lines.append(f"### {r['framework']} {r['version']} on `{r['protocol']}`: `{res['case']}`")
            lines.append("")
            for f in res["failures"]:
                lines.append(f"- {f['message']} ([{f['rule']}]({f['link']}))")
            if res["agent_error"]:
                lines.append(f"- the agent: `{_one_line(res['agent_error'])}`")
            body = next((f["body"] for f in res["failures"] if f["body"] is not None), None)
            if body is not None:
                lines += ["", "The request that shows it:", "", "```json", json.dumps(_trim(body), indent=1, ensure_ascii=False), "```"]
            lines.append("")
    if not found:
        lines.append("None: every framework passed every case that applies.")
    lines += ["", "## Not applicable", ""]
    reasons = sorted({(res["case"], res["reason"]) for r in reports for res in r["results"] if res["status"] == "not-applicable"})
    lines += [f"- `{case}`: {reason}" for case, reason in reasons]
    return "\n".join(lines).rstrip() + "\n"


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]


def _trim(body: object, keep: int = 4) -> object:
    """The request body without the tool declarations (the same in every request), and only the
    last ``keep`` entries of a long history."""
    if not isinstance(body, dict):
        return body
    out = {}
    for k, v in body.items():
        if k in ("tools", "toolConfig"):
            v = "<the declared tools>"
        elif k in ("messages", "input", "contents") and isinstance(v, list) and len(v) > keep:
            v = [f"<{len(v) - keep} earlier entries>", *v[-keep:]]
        out[k] = v
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", metavar="PATH", help="write the Markdown page here")
    parser.add_argument("--json", action="store_true", help="print the JSON reports instead")
    parser.add_argument("--subject", action="append", choices=list(SUBJECTS), help="only this framework (repeatable)")
    args = parser.parse_args(argv)
    reports = probe_all(args.subject, log=lambda s: print(s, file=sys.stderr))
    if args.json:
        print(json.dumps(reports, indent=2, ensure_ascii=False))
        return 0
    page = render(reports)
    if args.write:
        Path(args.write).write_text(page, encoding="utf-8")
    else:
        print(page)
    return 0


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    sys.exit(main())
