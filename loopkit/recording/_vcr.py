"""vcrpy glue, for clients loopkit does not build (the official SDKs on httpx2, boto3 on urllib3).

:func:`make_vcr` returns a ``vcr.VCR`` that writes loopkit's cassette format (through
:class:`LoopkitSerializer` and the atomic :class:`LoopkitPersister`), matches on loopkit's
canonical request (:func:`body_matcher`, :func:`path_matcher`), scrubs with a :class:`Scrubber`
and refuses to save a cassette in which a secret survives.

What vcrpy loses and how loopkit makes up for it:

- vcrpy reads a whole response body before returning it, so it records no chunk boundaries and no
  timing. Its recordings are stored re-chunked, one chunk per SSE event (``text/event-stream``) or
  per event-stream message (Bedrock), all at ``t`` = 0.
- On replay vcrpy hands the body back as one buffered chunk. :func:`make_vcr` installs a small
  wrapper around vcrpy's httpx/httpx2 response builder that re-chunks the body the same way (per
  SSE event / per event-stream message), so a streaming client sees events one at a time.
  urllib3 (boto3) is not re-chunked: botocore reads the body in fixed 1 KiB pieces anyway and
  decodes event-stream messages across any split.
- For chunk-faithful recordings with real timing, record through :class:`CassetteTransport`
  instead (any httpx or httpx2 client accepts it as its transport).
"""

from __future__ import annotations

import http
from collections.abc import Collection
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ._bodies import chunk_bytes, header, rechunk, request_body_bytes, request_body_fields, response_chunks
from ._format import CassetteFile, Interaction, RecordedRequest, RecordedResponse, dump_cassette, parse_cassette, write_atomic
from ._match import VOLATILE_BODY_FIELDS, canonical_body, first_difference, normalise_path, short
from ._scrub import Scrubber, find_secrets


def _pairs(headers: Any) -> list[tuple[str, str]]:
    # vcrpy keeps headers in a dict whose order depends on the client; sorted, files are stable.
    out = []
    for k, values in (headers or {}).items():
        for v in values if isinstance(values, list) else [values]:
            out.append((str(k).lower(), v.decode("latin-1") if isinstance(v, bytes) else str(v)))
    return sorted(out, key=lambda kv: kv[0])


def _as_bytes(body: Any) -> bytes:
    if body is None:
        return b""
    return body if isinstance(body, bytes) else str(body).encode("utf-8")


class LoopkitSerializer:
    """A vcrpy serializer (``serialize``/``deserialize``) that reads and writes loopkit cassettes.

    Args:
        scrubber: applied to every interaction before it is written.
    """

    def __init__(self, scrubber: Scrubber | None = None) -> None:
        self.scrubber = scrubber or Scrubber()

    def serialize(self, data: dict[str, Any]) -> str:
        interactions = []
        for item in data.get("interactions", []):
            req, resp = item["request"], item["response"]
            headers = _pairs(resp.get("headers"))
            body = _as_bytes(resp.get("body", {}).get("string"))
            chunks, codec, tail = response_chunks([(0.0, p) for p in rechunk(body, header(headers, "content-type"))], header(headers, "content-type"))
            inter = Interaction(
                request=RecordedRequest(method=req["method"], url=req["uri"], headers=_pairs(req.get("headers")), **request_body_fields(_as_bytes(req.get("body")))),
                response=RecordedResponse.model_validate({"status": resp["status"]["code"], "headers": headers, "codec": codec, "chunks": chunks, "tail_base64": tail}),
            )
            interactions.append(inter)
        # The whole file at once: a secret learned in one interaction is removed from all of them.
        file = self.scrubber.cassette(CassetteFile(meta={"recorded_with": "vcrpy"}, interactions=interactions))
        findings = find_secrets(file)
        if findings:
            from ..errors import CassetteError

            raise CassetteError("refusing to save a cassette that still holds secrets:\n  " + "\n  ".join(map(str, findings[:10])))
        return dump_cassette(file)

    def deserialize(self, text: str) -> dict[str, Any]:
        file = parse_cassette(text)
        out = []
        for n, inter in enumerate(file.interactions):
            if inter.request is None or inter.response is None:
                continue
            req, resp = inter.request, inter.response
            headers: dict[str, list[str]] = {}
            for k, v in resp.headers:
                if k not in ("content-length", "transfer-encoding", "content-encoding"):
                    headers.setdefault(k, []).append(v)
            out.append(
                {
                    "request": {"method": req.method, "uri": req.url, "body": request_body_bytes(req) or None, "headers": {k: [v] for k, v in req.headers}},
                    "response": {
                        "status": {"code": resp.status, "message": _reason(resp.status)},
                        "headers": headers,
                        "body": {"string": b"".join(chunk_bytes(resp, where=f"interactions[{n}].response"))},
                    },
                }
            )
        return {"version": 1, "interactions": out}


def _reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


class LoopkitPersister:
    """A vcrpy persister that writes atomically (temporary file + ``os.replace``)."""

    @classmethod
    def load_cassette(cls, cassette_path: str | Path, serializer: Any) -> Any:
        from vcr.persisters.filesystem import CassetteNotFoundError
        from vcr.serialize import deserialize

        p = Path(cassette_path)
        if not p.is_file():
            raise CassetteNotFoundError()
        return deserialize(p.read_text(encoding="utf-8"), serializer)

    @staticmethod
    def save_cassette(cassette_path: str | Path, cassette_dict: dict[str, Any], serializer: Any) -> None:
        from vcr.serialize import serialize

        write_atomic(cassette_path, serialize(cassette_dict, serializer))


def _vcr_body(request: Any) -> Any:
    body = _as_bytes(getattr(request, "body", None))
    fields = request_body_fields(body)
    return fields.get("json", fields.get("text", fields.get("base64")))


def make_matchers(scrubber: Scrubber, volatile: Collection[str] = VOLATILE_BODY_FIELDS) -> dict[str, Any]:
    """vcrpy matchers ``(live, recorded) -> None`` (vcrpy's argument order) that raise AssertionError
    with a one-line reason."""

    def path_matcher(r1: Any, r2: Any) -> None:
        a, b = normalise_path(urlsplit(scrubber.url(r1.uri)).path), normalise_path(urlsplit(scrubber.url(r2.uri)).path)
        if a != b:
            raise AssertionError(f"path {a} != {b}")

    def query_matcher(r1: Any, r2: Any) -> None:
        a, b = sorted(parse_qsl(urlsplit(scrubber.url(r1.uri)).query)), sorted(parse_qsl(urlsplit(scrubber.url(r2.uri)).query))
        if a != b:
            raise AssertionError(f"query {a} != {b}")

    def body_matcher(r1: Any, r2: Any) -> None:
        b, a = scrubber.json(_vcr_body(r1)), scrubber.json(_vcr_body(r2))
        if canonical_body(a, volatile) != canonical_body(b, volatile):
            diff = first_difference(a, b)
            where, x, y = diff if diff else ("(body)", a, b)
            raise AssertionError(f"body {where}: recorded {short(x, y)} != live {short(y, x)}")

    return {"loopkit_path": path_matcher, "loopkit_query": query_matcher, "loopkit_body": body_matcher}


def install_rechunking() -> None:
    """Make vcrpy's httpx/httpx2 replay hand a stream back one SSE event / frame at a time."""
    from vcr.stubs import httpx_stubs

    from ._transport import _stream_classes

    original = httpx_stubs._deserialize_response
    # The mark lives on vcrpy's module itself, so a re-imported vcrpy (pytester restores
    # sys.modules) is patched again rather than assumed patched.
    if getattr(original, "_loopkit_rechunks", False):
        return

    def deserialize_response(vcr_response: dict[str, Any], httpx: Any) -> Any:
        response = original(vcr_response, httpx)
        body = _as_bytes(vcr_response.get("body", {}).get("string"))
        pieces = rechunk(body, response.headers.get("content-type"))
        if len(pieces) > 1:
            replay_stream = _stream_classes(httpx)[0]
            response.stream = replay_stream(pieces, [0.0] * len(pieces), 0.0, None, None, None)
        return response

    deserialize_response._loopkit_rechunks = True  # type: ignore[attr-defined]
    httpx_stubs._deserialize_response = deserialize_response


def make_vcr(
    *,
    record_mode: str = "none",
    scrubber: Scrubber | None = None,
    cassette_library_dir: str | None = None,
    volatile_body_fields: Collection[str] = VOLATILE_BODY_FIELDS,
    **kwargs: Any,
) -> Any:
    """A ``vcr.VCR`` writing loopkit cassettes, matching on loopkit's canonical request.

    A block that raises saves nothing (``record_on_exception=False``, unlike vcrpy's default),
    so a test that fails while recording leaves the previous file as it was. ``rewrite`` (not a
    vcrpy mode) is vcrpy's ``all`` with ``drop_unused_requests=True``: only what was recorded
    is saved.

    Args:
        record_mode: ``none`` (default), ``once``, ``new_episodes``, ``all`` or ``rewrite``.
        scrubber: what to remove before saving (secrets by name, shape and value, as everywhere).
        cassette_library_dir: where relative cassette paths live.
        volatile_body_fields: JSON body fields ignored by matching.
        **kwargs: any other ``vcr.VCR`` option.
    """
    import vcr

    scrubber = scrubber or Scrubber()
    install_rechunking()
    kwargs.setdefault("record_on_exception", False)
    if record_mode == "rewrite":
        record_mode = "all"
        kwargs.setdefault("drop_unused_requests", True)
    v = vcr.VCR(
        serializer="loopkit",
        record_mode=record_mode,
        cassette_library_dir=cassette_library_dir,
        match_on=("method", "loopkit_path", "loopkit_query", "loopkit_body"),
        decode_compressed_response=True,
        path_transformer=vcr.VCR.ensure_suffix(".json"),
        **kwargs,
    )
    v.register_serializer("loopkit", LoopkitSerializer(scrubber))
    v.register_persister(LoopkitPersister)
    for name, fn in make_matchers(scrubber, volatile_body_fields).items():
        v.register_matcher(name, fn)
    return v


__all__ = ["LoopkitPersister", "LoopkitSerializer", "install_rechunking", "make_matchers", "make_vcr"]
