"""The transports providers open themselves share one TLS context per CA setting: building one
parses the whole CA bundle, which each provider used to pay on its first request."""

from __future__ import annotations

import ssl

import certifi
import pytest

from loopkit.providers._http import default_ssl_context


def test_one_verifying_context_per_ca_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    ctx = default_ssl_context()
    assert ctx is default_ssl_context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    assert ctx.cert_store_stats()["x509_ca"] > 0  # certifi's bundle, as httpx's default

    # SSL_CERT_FILE still chooses the CA bundle, as it does for httpx
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    other = default_ssl_context()
    assert other is not ctx and other is default_ssl_context()
    assert other.verify_mode == ssl.CERT_REQUIRED
