"""Probe subjects: correct reference agents and deliberately broken ones.

- :func:`engine_agent`: loopkit's own engine behind its adapter, for any protocol;
- :class:`AnthropicLoop` and :class:`OpenAIChatLoop`: small hand-written loops over the official
  SDKs (streaming), the way a user writes one; each ``defect`` breaks one rule on purpose.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import anthropic  # imported here, at collection: inside a probe case it would count against the case's time limit
import openai

import loopkit
from loopkit.providers import adapter_class

MODELS = {
    "openai_chat": "gpt-4o-mini",
    "openai_responses": "gpt-4o-mini",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
    "bedrock": "us.amazon.nova-micro-v1:0",
}


@loopkit.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@loopkit.tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


TOOLS = [add, get_weather]
SCHEMAS = {t.name: t.parameters for t in TOOLS}
RELEASE = threading.Event()  # set by the tests' teardown: a hung agent thread then ends


def engine_agent(protocol: str, *, max_iterations: int = 10):
    """loopkit's loop over its own adapter for ``protocol``: the reference agent."""

    def agent(base_url: str, prompt: str) -> str:
        provider = adapter_class(protocol)(model=MODELS[protocol], api_key="probe", base_url=base_url)
        return loopkit.Runtime(provider).exec(prompt, tools=TOOLS, max_iterations=max_iterations)

    agent.__qualname__ = f"loopkit engine ({protocol})"
    return agent


def _run_tool(name: str, raw: Any) -> tuple[str, bool]:
    if name not in SCHEMAS:
        return f"Tool {name} not found", True
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return f'Invalid arguments for tool "{name}": not valid JSON', True
    tool = next(t for t in TOOLS if t.name == name)
    prepared, problem = tool.prepare(args)
    if problem is not None:
        return problem, True
    return str(tool(**prepared)), False


class AnthropicLoop:
    """A tool loop over ``anthropic.Anthropic().messages.stream`` (the documented way)."""

    DEFECTS = ("skip_results", "no_error_flag", "crash_on_bad", "extra_call", "first_delta_only", "no_cap",
               "no_retry", "eager_retry", "partial_success", "refusal_blank", "drop_thinking", "hang")  # fmt: skip

    def __init__(self, defect: str | None = None, cap: int = 10) -> None:
        assert defect is None or defect in self.DEFECTS, defect
        self.defect = defect
        self.cap = cap
        self.__qualname__ = f"anthropic SDK loop{f' ({defect})' if defect else ''}"

    def __call__(self, base_url: str, prompt: str) -> str:
        d = self.defect
        client = anthropic.Anthropic(base_url=base_url, api_key="probe", max_retries=0 if d in ("no_retry", "eager_retry") else 2)
        tools = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in TOOLS]
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        calls = 0
        while d == "no_cap" or calls < self.cap:
            calls += 1
            if d == "hang" and calls == 2:
                RELEASE.wait(60)
            deltas: list[str] = []
            try:
                with client.messages.stream(model=MODELS["anthropic"], max_tokens=1024, messages=messages, tools=tools) as stream:
                    for event in stream:
                        if event.type == "text":
                            deltas.append(event.text)
                    final = stream.get_final_message()
            except anthropic.RateLimitError:
                if d != "eager_retry":
                    raise
                calls -= 1
                continue
            except Exception:
                if d == "partial_success":  # whatever broke the stream, keep what arrived
                    return "".join(deltas)
                raise
            if final.stop_reason == "refusal":
                if d == "refusal_blank":
                    return ""
                raise RuntimeError(f"the model refused: {''.join(deltas)}")
            content = [b.model_dump(exclude_none=True) for b in final.content]
            if d == "drop_thinking":
                content = [b for b in content if b["type"] != "thinking"]
            messages.append({"role": "assistant", "content": content})
            uses = [b for b in final.content if b.type == "tool_use"]
            if not uses:
                if d == "extra_call":
                    client.messages.create(model=MODELS["anthropic"], max_tokens=16, messages=[*messages, {"role": "user", "content": "ok?"}])
                return deltas[0] if d == "first_delta_only" and deltas else "".join(deltas)
            results = []
            for b in uses if d != "skip_results" else uses[:1]:
                text, is_error = _run_tool(b.name, b.input)
                if is_error and d == "crash_on_bad":
                    raise RuntimeError(text)
                block = {"type": "tool_result", "tool_use_id": b.id, "content": text}
                if is_error and d != "no_error_flag":
                    block["is_error"] = True
                results.append(block)
            messages.append({"role": "user", "content": results})
        raise RuntimeError(f"gave up after {calls} model calls")


class OpenAIChatLoop:
    """A tool loop over ``openai.OpenAI().chat.completions.create(stream=True)``."""

    DEFECTS = ("skip_results", "wrong_ids", "extra_call")

    def __init__(self, defect: str | None = None, cap: int = 10) -> None:
        assert defect is None or defect in self.DEFECTS, defect
        self.defect = defect
        self.cap = cap
        self.__qualname__ = f"openai SDK loop{f' ({defect})' if defect else ''}"

    def __call__(self, base_url: str, prompt: str) -> str:
        client = openai.OpenAI(base_url=base_url, api_key="probe")
        tools = [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}} for t in TOOLS]
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        for _ in range(self.cap):
            text, refusal, calls = "", "", {}
            for chunk in client.chat.completions.create(model=MODELS["openai_chat"], messages=messages, tools=tools, stream=True):
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta
                text += delta.content or ""
                refusal += getattr(delta, "refusal", None) or ""
                for tc in delta.tool_calls or []:
                    c = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                    c["id"] = tc.id or c["id"]
                    c["name"] = (tc.function.name if tc.function else None) or c["name"]
                    c["arguments"] += (tc.function.arguments if tc.function else None) or ""
            if refusal:  # the model refused: that is the run's outcome, never an empty answer
                raise RuntimeError(f"the model refused: {refusal}")
            if not calls:
                if self.defect == "extra_call":
                    client.chat.completions.create(model=MODELS["openai_chat"], messages=messages)
                return text
            ordered = [calls[i] for i in sorted(calls)]
            messages.append({"role": "assistant", "content": text or None, "tool_calls": [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in ordered]})  # fmt: skip
            for i, c in enumerate(ordered if self.defect != "skip_results" else ordered[:1]):
                result, _ = _run_tool(c["name"], c["arguments"])
                call_id = ordered[0]["id"] if self.defect == "wrong_ids" else c["id"]
                messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        raise RuntimeError("gave up")


def slow_agent(seconds: float):
    """An agent that answers correctly after sleeping (for the time budget of the benchmark)."""

    def agent(base_url: str, prompt: str) -> str:
        time.sleep(seconds)
        return "late"

    return agent


def echo_agent(base_url: str, prompt: str) -> str:
    """A tool-less agent over raw httpx (Anthropic): one call, its text."""
    import httpx

    r = httpx.post(f"{base_url}/v1/messages", json={"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": prompt}]},
                   headers={"x-api-key": "k", "anthropic-version": "2023-06-01"})  # fmt: skip
    r.raise_for_status()
    return "".join(b["text"] for b in r.json()["content"] if b["type"] == "text")
