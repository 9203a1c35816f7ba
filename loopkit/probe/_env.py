"""Where each official SDK looks for its endpoint and key: the environment a probed program gets.

A program run by ``loopkit probe -- COMMAND`` talks to the simulator without a line of
configuration when it builds its client the documented way (``OpenAI()``, ``Anthropic()``,
``genai.Client()``, ``boto3.client("bedrock-runtime")``): each reads these variables.
"""

from __future__ import annotations

from collections.abc import Mapping

DUMMY_KEY = "loopkit-probe-dummy-key"
"""The API key every probed program gets: the simulators accept anything, and a real service would
refuse it, so nothing a probe runs can spend money by mistake."""


def protocol_env(protocol: str, url: str, base_url: str) -> dict[str, str]:
    """The variables that point ``protocol``'s official SDK at a simulator.

    Args:
        protocol: the wire protocol.
        url: the simulator's bare address (``http://127.0.0.1:PORT``).
        base_url: what the protocol's SDK takes as its base URL (``.../v1`` for OpenAI).
    """
    env = {"LOOPKIT_PROBE_PROTOCOL": protocol, "LOOPKIT_PROBE_BASE_URL": base_url}
    if protocol in ("openai_chat", "openai_responses"):
        env |= {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": DUMMY_KEY}
    elif protocol == "anthropic":
        env |= {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": DUMMY_KEY}
    elif protocol == "gemini":
        # google-genai: GOOGLE_GEMINI_BASE_URL (google/genai/_base_url.py), key from
        # GOOGLE_API_KEY or GEMINI_API_KEY; GOOGLE_GENAI_USE_VERTEXAI would send it to Vertex
        env |= {"GOOGLE_GEMINI_BASE_URL": base_url, "GEMINI_API_KEY": DUMMY_KEY, "GOOGLE_API_KEY": DUMMY_KEY, "GOOGLE_GENAI_USE_VERTEXAI": "false"}
    elif protocol == "bedrock":
        # botocore's service-specific endpoint variable, and credentials that sign but mean nothing
        env |= {
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": url,
            "AWS_ACCESS_KEY_ID": "AKIDLOOPKITPROBE",
            "AWS_SECRET_ACCESS_KEY": DUMMY_KEY,
            "AWS_SESSION_TOKEN": DUMMY_KEY,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
        }
    return env


SCRUBBED = (
    "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "ANTHROPIC_AUTH_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
)  # fmt: skip
"""Variables removed from a probed program's environment, with every ``*_API_KEY`` and ``AWS_*``:
they would point it at a real account."""


def probe_environ(base: Mapping[str, str], protocol: str, url: str, base_url: str) -> dict[str, str]:
    """``base`` (the caller's environment) without credentials, plus :func:`protocol_env`."""
    env = {k: v for k, v in base.items() if k not in SCRUBBED and not k.endswith("_API_KEY") and not k.startswith("AWS_")}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"  # a proxy must not see the loopback traffic
    return env | protocol_env(protocol, url, base_url)
