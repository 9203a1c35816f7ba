"""What the two OpenAI simulators share: the error body and headers, token counts, id splitting.

Error bodies are ``{"error": {"message", "type", "param", "code"}}`` for both Chat Completions
and Responses (docs/wire.md §1.5, §2.5), with ``x-request-id`` and, on 429, ``retry-after`` /
``retry-after-ms`` and the ``x-ratelimit-*`` headers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from loopkit.messages import Usage
from loopkit.script import Turn

from ._core import SimRequest, SimResponse, Simulator

# status -> (type, code, message) the API sends when the script gives none
_DEFAULTS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-sim***. You can find your API key at https://platform.openai.com/account/api-keys."),
    403: ("invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported"),
    404: ("invalid_request_error", None, "The requested resource does not exist."),
    409: ("invalid_request_error", None, "Conflict."),
    422: ("invalid_request_error", None, "Unprocessable entity."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again in 1s."),
    500: ("server_error", None, "The server had an error while processing your request. Sorry about that!"),
    502: ("server_error", None, "Bad gateway."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later"),
}

BASE_HEADERS = {"openai-version": "2020-10-01", "openai-processing-ms": "1"}
STREAM_HEADERS = {"content-type": "text/event-stream; charset=utf-8", **BASE_HEADERS}


def error_body(status: int, message: str | None = None, error_type: str | None = None, *, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    """``{"error": {...}}`` for ``status``; ``error_type`` replaces the default type and code."""
    d_type, d_code, d_message = _DEFAULTS.get(status, ("server_error" if status >= 500 else "invalid_request_error", None, f"HTTP {status}"))
    return {
        "error": {
            "message": message or d_message,
            "type": error_type or d_type,
            "param": param,
            "code": code if code is not None else (error_type if error_type else d_code),
        }
    }


def error_response(status: int, body: dict[str, Any], request_id: str, *, retry_after: float | None = None) -> SimResponse:
    """An error response with OpenAI's headers."""
    headers = {"content-type": "application/json", "x-request-id": request_id, **BASE_HEADERS}
    if status == 429:
        headers.update(
            {
                "x-ratelimit-limit-requests": "500",
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-reset-requests": "1s",
                "x-ratelimit-limit-tokens": "30000",
                "x-ratelimit-remaining-tokens": "0",
                "x-ratelimit-reset-tokens": "1s",
            }
        )
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
        headers["retry-after-ms"] = str(int(retry_after * 1000))
    return SimResponse(status=status, headers=headers, chunks=[json.dumps(body).encode("utf-8")])


def arguments_text(arguments: Any) -> str:
    """A scripted call's arguments as the wire string: raw strings go out exactly as written."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def split_arbitrarily(text: str, size: int) -> list[str]:
    """Split argument text the way the API does: at uneven places, ignoring JSON structure
    (inside strings, escapes and multi-byte text). Deterministic."""
    if not text:
        return []
    pattern = (size, 1, max(1, size // 2), size + 3, 2)
    out, i, k = [], 0, 0
    while i < len(text):
        n = pattern[k % len(pattern)]
        out.append(text[i : i + n])
        i += n
        k += 1
    return out


def token_counts(turn: Turn, request_body: bytes, output_chars: int) -> tuple[int, int, int, int, int]:
    """``(prompt, completion, total, cached, cache_write)``: from the turn's Usage, else made up
    deterministically from the sizes (about four characters a token)."""
    u: Usage | None = turn.usage
    if u is None:
        prompt = max(1, len(request_body) // 4)
        completion = max(1, output_chars // 4) + (turn.reasoning_tokens or 0)  # output includes reasoning
        return prompt, completion, prompt + completion, 0, 0
    prompt = u.input + u.cache_read + u.cache_write
    total = u.total_tokens or prompt + u.output
    return prompt, u.output, total, u.cache_read, u.cache_write


class OpenAISimulator(Simulator):
    """What both OpenAI simulators do alike: a fixed ``created`` time, the request body parsed
    once per request, ``stream: true`` detection and the error responses.

    Args:
        script / model / chunk_size: as :class:`~simulators._core.Simulator`.
        created: the timestamp every answer carries (fixed, for snapshots).
    """

    base_path = "/v1"

    def __init__(self, script: Any, *, model: str = "sim-model", chunk_size: int = 8, created: int = 1_700_000_000) -> None:
        super().__init__(script, model=model, chunk_size=chunk_size)
        self.created = created
        self._parsed: tuple[SimRequest | None, Any] = (None, None)

    def body(self, request: SimRequest) -> Any:
        """The request's JSON body, parsed once (a request's body is read by several hooks)."""
        if self._parsed[0] is not request:
            self._parsed = (request, request.json)
        return self._parsed[1]

    def options(self, request: SimRequest) -> Mapping[str, Any]:
        """The body when it is a JSON object, else an empty mapping."""
        body = self.body(request)
        return body if isinstance(body, Mapping) else {}

    def wants_stream(self, request: SimRequest, route: str) -> bool:
        return self.options(request).get("stream") is True

    def bad_request(self, message: str, param: str | None = None, code: str | None = None) -> SimResponse:
        """A 400 ``invalid_request_error`` naming ``param``."""
        return error_response(400, error_body(400, message, param=param, code=code), self.new_id("req_sim"))

    def error_response(self, status: int, message: str | None = None, error_type: str | None = None, *, retry_after: float | None = None) -> SimResponse:
        return error_response(status, error_body(status, message, error_type), self.new_id("req_sim"), retry_after=retry_after)
