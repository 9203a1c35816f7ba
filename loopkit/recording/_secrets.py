"""What counts as a secret: key shapes, secret field names, and secret values.

Three rules decide what is removed from a cassette:

- **shape**: the hand-kept catalogue :data:`SHAPES` (OpenAI, Anthropic, Google, AWS access key ids,
  GitHub, Hugging Face, Slack, Stripe, xAI, Groq, Google OAuth, JWTs, ``Bearer`` tokens, PEM private
  keys). Chosen over detect-secrets' plugins after measuring both (cassettes/README.md).
- **name**: JSON keys such as ``token``, ``api_key``, ``password``, ``client_secret``,
  ``aws_secret_access_key`` (:func:`is_secret_field`), secret headers and query parameters.
- **value**: every value one of the rules above removed anywhere in the session, the credentials
  a recorder signed with (:func:`remember_credential`, used by the Bedrock adapter for its SigV4
  secret key and session token), values of environment variables whose names contain ``KEY``,
  ``TOKEN``, ``SECRET`` or ``PASSWORD``, and values the user lists. A value shorter than
  :data:`MIN_VALUE_LENGTH` characters is never scrubbed *by value* (it would hit ordinary text);
  it is still replaced where a name rule finds it.

A :class:`Matcher` finds all of these in a string in one regular-expression pass.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

PLACEHOLDER = "<scrubbed>"
MIN_VALUE_LENGTH = 8
"""Shortest value scrubbed by value wherever it occurs (environment values, learned values)."""

SHAPES: tuple[tuple[str, str], ...] = (
    ("anthropic-key", r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_\-]{8,}"),
    ("openai-key", r"(?<![A-Za-z0-9])sk-(?!ant-)[A-Za-z0-9_\-]{16,}"),
    ("google-api-key", r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{30,}"),
    ("google-oauth-token", r"(?<![A-Za-z0-9])ya29\.[0-9A-Za-z_\-]{20,}"),
    ("aws-access-key-id", r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("github-token", r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    ("huggingface-token", r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}"),
    ("slack-token", r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("stripe-key", r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("xai-key", r"(?<![A-Za-z0-9])xai-[A-Za-z0-9]{30,}"),
    ("groq-key", r"(?<![A-Za-z0-9])gsk_[A-Za-z0-9]{30,}"),
    ("jwt", r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}"),
    ("private-key", r"-----BEGIN[A-Z ]{0,20} PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z ]{0,20} PRIVATE KEY-----|$)"),
    ("bearer-token", r"(?i:bearer)\s+(?!<scrubbed)[A-Za-z0-9\-._~+/]{8,}=*"),
)
SHAPE_KINDS: tuple[str, ...] = tuple(k for k, _ in SHAPES)
_SHAPE_RE = re.compile("|".join(f"(?P<{k.replace('-', '_')}>{rx})" for k, rx in SHAPES))
# Every shape starts with one of these literals: `in` on them is far cheaper than the pattern.
_PREFIXES = ("sk-", "AIza", "ya29.", "AKIA", "ASIA", "ABIA", "ACCA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "hf_", "xox", "_live_", "_test_", "xai-", "gsk_", "eyJ", "PRIVATE KEY")

_FIELD_WORDS = ("token", "secret", "password", "passwd", "passphrase", "api_key", "apikey", "authorization", "credential", "credentials",
                "private_key", "access_key", "secret_key", "session_key", "client_secret", "cookie")  # fmt: skip
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_SECRET_FIELDS = frozenset({"token_type", "tokens", "credential_type", "secret_name", "password_policy"})


def _normal(name: str) -> str:
    return _CAMEL.sub("_", name).lower().replace("-", "_")


def is_secret_field(name: str) -> bool:
    """Whether a JSON key names a secret: ``token``, ``access_token``, ``api_key``, ``apiKey``,
    ``password``, ``client_secret``, ``Authorization``, ``aws_secret_access_key``... but not
    ``max_tokens``, ``input_tokens`` or ``token_count``."""
    n = _normal(name)
    if n in _NOT_SECRET_FIELDS:
        return False
    return any(n == w or n.endswith("_" + w) for w in _FIELD_WORDS)


_FIELD_ENDS = ("token", "secret", "password", "passwd", "passphrase", "api_key", "apikey", "authorization", "credential", "credentials",
               "private_key", "privatekey", "access_key", "accesskey", "secret_key", "secretkey", "session_key", "sessionkey", "cookie")  # fmt: skip
_KEY_END = re.compile(r'\\?"\s*:')


def may_hold_field(text: str) -> bool:
    """Whether serialised JSON may hold a secret field name: a key (also in JSON inside a JSON
    string) ending in one of the secret words. A fast pre-check: ``str.find`` per word, and a
    look at what follows each hit."""
    low = text.lower()
    for word in _FIELD_ENDS:
        i = low.find(word)
        while i != -1:
            if _KEY_END.match(low, i + len(word)):
                return True
            i = low.find(word, i + 1)
    return False


_ENV_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def environment_secrets(environ: dict[str, str] | None = None) -> set[str]:
    """Values of environment variables whose names contain KEY, TOKEN, SECRET or PASSWORD, at
    least :data:`MIN_VALUE_LENGTH` characters long and not a plain number or a path."""
    env = os.environ if environ is None else environ
    out = set()
    for name, value in env.items():
        upper = name.upper()
        if any(w in upper for w in _ENV_WORDS) and usable_value(value) and not value.startswith(("/", "~", "./")):
            out.add(value)
    return out


def usable_value(value: str) -> bool:
    """Whether a value is long and specific enough to be scrubbed wherever it occurs."""
    return len(value) >= MIN_VALUE_LENGTH and not value.isdigit() and not value.startswith("<scrubbed") and value.strip() == value


def aws_credentials() -> set[str]:
    """The AWS secret key and session token botocore would sign with, from the environment and
    the shared credentials/config files only (never the network: no instance metadata)."""
    try:
        from botocore.credentials import (
            ConfigProvider,
            EnvProvider,
            SharedCredentialProvider,
        )
        from botocore.session import get_session
    except ImportError:
        return set()
    out: set[str] = set()
    try:
        session = get_session()
        profile = session.get_config_variable("profile") or "default"
        providers = [
            EnvProvider(),
            SharedCredentialProvider(os.path.expanduser(session.get_config_variable("credentials_file")), profile),
            ConfigProvider(os.path.expanduser(session.get_config_variable("config_file")), profile),
        ]
        for provider in providers:
            creds = provider.load()
            if creds is not None:
                frozen = creds.get_frozen_credentials()
                out.update(v for v in (frozen.secret_key, frozen.token) if v and usable_value(v))
    except Exception:  # a malformed config file must not break recording
        return out
    return out


class Matcher:
    """Finds secret shapes and listed values in text.

    Args:
        values: literal secret values (each at least :data:`MIN_VALUE_LENGTH` long is used).
    """

    __slots__ = ("_firsts", "_values_re", "values")

    def __init__(self, values: Iterable[str] = ()) -> None:
        self.values = frozenset(v for v in values if usable_value(v))
        ordered = sorted(self.values, key=len, reverse=True)
        self._values_re = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self._firsts = tuple({v[:4] for v in ordered})

    def may_hold(self, text: str) -> bool:
        """A fast pre-check: False means :meth:`find` finds nothing in ``text``."""
        for p in _PREFIXES:
            if p in text:
                return True
        if "earer" in text or "EARER" in text:
            return True
        for p in self._firsts:
            if p in text:
                return True
        return False

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """Non-overlapping (start, end, kind) of every secret in ``text``; kind ``value`` for a
        listed value, else the shape's kind."""
        if not self.may_hold(text):
            return []
        found: list[tuple[int, int, str]] = []
        if self._values_re is not None:
            found = [(m.start(), m.end(), "value") for m in self._values_re.finditer(text)]
        for m in _SHAPE_RE.finditer(text):
            kind = (m.lastgroup or "").replace("_", "-")
            s = m.start()
            if kind == "bearer-token":
                s = m.end() - len(m.group().split(None, 1)[-1])  # the token, not the word
            found.append((s, m.end(), kind))
        if len(found) < 2:
            return found
        found.sort()
        merged: list[tuple[int, int, str]] = []
        for s, e, kind in found:  # overlapping matches become one; a shape's kind wins over "value"
            if merged and s < merged[-1][1]:
                ps, pe, pk = merged[-1]
                merged[-1] = (ps, max(pe, e), pk if pk != "value" else kind)
            else:
                merged.append((s, e, kind))
        return merged


def replacement(kind: str) -> str:
    return PLACEHOLDER if kind in ("value", "field") else f"<scrubbed:{kind}>"


def redact(text: str, matches: list[tuple[int, int, str]]) -> str:
    """``text`` with each match replaced by its placeholder."""
    if not matches:
        return text
    out, pos = [], 0
    for s, e, kind in matches:
        out.append(text[pos:s])
        out.append(replacement(kind))
        pos = e
    out.append(text[pos:])
    return "".join(out)


def redact_pieces(pieces: list[str], matches: list[tuple[int, int, str]]) -> list[str]:
    """Redact ``matches`` (positions in the concatenation of ``pieces``) and cut the result at the
    same places; a placeholder lands in the piece where its secret started, and the later pieces
    it spanned lose their part of it."""
    if not matches:
        return pieces
    text = "".join(pieces)
    out: list[str] = []
    a = 0
    for piece in pieces:
        b = a + len(piece)
        buf, pos = [], a
        for s, e, kind in matches:
            if s >= b or e <= a:
                continue
            if s >= a:
                buf.append(text[pos:s])
                buf.append(replacement(kind))
            pos = min(e, b)
        buf.append(text[pos:b])
        out.append("".join(buf))
        a = b
    return out
