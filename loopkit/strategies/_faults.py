"""``faults()``: the fault catalogue of docs/wire.md §6.3 as Script fault objects."""

from __future__ import annotations

from collections.abc import Collection

from hypothesis import strategies as st

from ..errors import UsageError
from ..script import Delay, Fault, HttpFault, MidStreamError, Truncate

PROTOCOLS: tuple[str, ...] = ("openai_chat", "openai_responses", "anthropic", "gemini", "bedrock")
FAULT_KINDS: tuple[str, ...] = ("bad_request", "auth", "rate_limit", "server", "mid_stream", "truncate", "delay")

_OPENAI = {
    "bad_request": [(400, "invalid_request_error")],
    "auth": [(401, "invalid_api_key")],
    "rate_limit": [(429, "rate_limit_exceeded")],
    "server": [(500, "server_error")],
    "mid_stream": ["server_error"],
}
# (status, error type as the provider spells it), per docs/wire.md §6.3
_CATALOGUE: dict[str, dict[str, list]] = {
    "openai_chat": _OPENAI,
    "openai_responses": _OPENAI,
    "anthropic": {
        "bad_request": [(400, "invalid_request_error")],
        "auth": [(401, "authentication_error")],
        "rate_limit": [(429, "rate_limit_error")],
        "server": [(500, "api_error"), (529, "overloaded_error")],
        "mid_stream": ["overloaded_error", "api_error"],
    },
    "gemini": {
        "bad_request": [(400, "INVALID_ARGUMENT")],
        "auth": [(400, "API_KEY_INVALID")],
        "rate_limit": [(429, "RESOURCE_EXHAUSTED")],
        "server": [(500, "INTERNAL"), (503, "UNAVAILABLE")],
        "mid_stream": ["INTERNAL", "RESOURCE_EXHAUSTED"],
    },
    "bedrock": {
        "bad_request": [(400, "ValidationException")],
        "auth": [(403, "UnrecognizedClientException"), (403, "AccessDeniedException")],
        "rate_limit": [(429, "ThrottlingException")],
        "server": [(500, "InternalServerException"), (503, "ServiceUnavailableException"), (424, "ModelErrorException")],
        "mid_stream": ["throttlingException", "internalServerException", "modelStreamErrorException"],
    },
}
_RETRYABLE = {429, 500, 503, 529}


def faults(
    protocol: str,
    *,
    kinds: Collection[str] | None = None,
    max_after: int = 8,
    max_delay: float = 2.0,
) -> st.SearchStrategy[Fault]:
    """Faults a provider of ``protocol`` really produces: HTTP errors with its own error types
    (400, bad key, 429 with ``retry_after``, 5xx and Anthropic's 529), an error event mid-stream,
    a truncated stream, a delay.

    Truncation by ``max_tokens`` and malformed calls are stream content, not faults: see
    :func:`scripts`, which mixes them in.

    Args:
        protocol: one of :data:`PROTOCOLS`.
        kinds: restrict to these (names from :data:`FAULT_KINDS`).
        max_after: the latest stream event a mid-stream fault may strike after.
        max_delay: the longest delay, in seconds (drivers inject the sleep, so tests stay fast).

    Example::

        @given(faults("anthropic", kinds={"rate_limit", "server"}))
        def test_retries(fault):
            provider = simulator(Script([Turn(faults=(fault,)), "ok"]))
    """
    if protocol not in _CATALOGUE:
        raise UsageError(f"faults({protocol!r}): unknown protocol; choose from {', '.join(PROTOCOLS)}")
    chosen = list(FAULT_KINDS if kinds is None else kinds)
    unknown = set(chosen) - set(FAULT_KINDS)
    if unknown or not chosen:
        raise UsageError(f"faults(kinds=...) got {sorted(chosen)}; choose one or more of {', '.join(FAULT_KINDS)}")
    if max_after < 0 or max_delay < 0:
        raise UsageError(f"faults(max_after={max_after}, max_delay={max_delay}): both must be >= 0")
    table = _CATALOGUE[protocol]
    after = st.integers(min_value=0, max_value=max_after)
    options: list[st.SearchStrategy[Fault]] = []
    for kind in chosen:
        if kind in ("bad_request", "auth", "rate_limit", "server"):
            for status, error_type in table[kind]:
                retry = st.none() | st.sampled_from([0.0, 0.5, 1.0, 2.0]) if status in _RETRYABLE else st.none()
                options.append(st.builds(HttpFault, status=st.just(status), error_type=st.just(error_type), retry_after=retry))
        elif kind == "mid_stream":
            options.append(st.builds(MidStreamError, after=after, error_type=st.sampled_from(table["mid_stream"])))
        elif kind == "truncate":
            options.append(st.builds(Truncate, after=after))
        else:
            options.append(st.builds(Delay, seconds=st.floats(0, max_delay), after=after))
    return st.one_of(options)
