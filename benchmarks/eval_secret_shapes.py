"""Which catalogue of key shapes scrubs cassettes: detect-secrets' plugins or loopkit's own list?

Measures, for both:

- recall on a corpus of generated keys of the kinds an LLM-client recording holds (OpenAI,
  Anthropic, Google API and OAuth, AWS access key ids, GitHub, Hugging Face, Slack, Stripe, xAI,
  Groq, JWT, PEM private keys, Bearer tokens), 40 of each, each inside a sentence;
- false positives on the example cassettes in cassettes/ (which hold no secret): every line of
  every file is scanned, and every finding is a false positive;
- speed (MB/s over the example cassettes).

Run: ``PYTHONPATH=. python benchmarks/eval_secret_shapes.py`` (needs detect-secrets).
"""

from __future__ import annotations

import random
import string
import time
from collections import Counter
from pathlib import Path

from loopkit.recording._secrets import Matcher

ROOT = Path(__file__).resolve().parent.parent
ALNUM = string.ascii_letters + string.digits


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def corpus(n: int = 40, seed: int = 7) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    makers = {
        "openai-key": lambda: "sk-proj-" + rand(rng, ALNUM + "_-", 48) + "T3BlbkFJ" + rand(rng, ALNUM + "_-", 48),
        "openai-legacy": lambda: "sk-" + rand(rng, ALNUM, 20) + "T3BlbkFJ" + rand(rng, ALNUM, 20),
        "anthropic-key": lambda: "sk-ant-api03-" + rand(rng, ALNUM + "_-", 93) + "AA",
        "google-api-key": lambda: "AIza" + rand(rng, ALNUM + "_-", 35),
        "google-oauth-token": lambda: "ya29." + rand(rng, ALNUM + "_-", 60),
        "aws-access-key-id": lambda: rng.choice(["AKIA", "ASIA"]) + rand(rng, string.ascii_uppercase + string.digits, 16),
        "github-token": lambda: "ghp_" + rand(rng, ALNUM, 36),
        "huggingface-token": lambda: "hf_" + rand(rng, ALNUM, 34),
        "slack-token": lambda: "xoxb-" + rand(rng, string.digits, 12) + "-" + rand(rng, string.digits, 12) + "-" + rand(rng, ALNUM, 24),
        "stripe-key": lambda: "sk_live_" + rand(rng, ALNUM, 24),
        "xai-key": lambda: "xai-" + rand(rng, ALNUM, 80),
        "groq-key": lambda: "gsk_" + rand(rng, ALNUM, 52),
        "jwt": lambda: "eyJhbGciOiJIUzI1NiJ9." + "eyJ" + rand(rng, ALNUM, 30) + "." + rand(rng, ALNUM + "_-", 43),
        "private-key": lambda: "-----BEGIN RSA PRIVATE KEY-----",
        "bearer-token": lambda: "Bearer " + rand(rng, ALNUM + "._-", 40),
    }
    out = []
    for kind, make in makers.items():
        for _ in range(n):
            out.append((kind, make()))
    return out


def loopkit_finds(line: str) -> list[str]:
    return [line[s:e] for s, e, _ in Matcher().find(line)]


_GENERIC = ("Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector", "BasicAuthDetector", "IPPublicDetector")


def detect_secrets_finder(*, generic: bool):
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import transient_settings

    classes = get_mapping_from_secret_type_to_class().values()
    plugins = [{"name": cls.__name__} for cls in classes if generic or cls.__name__ not in _GENERIC]

    def finds(line: str) -> list[str]:
        with transient_settings({"plugins_used": plugins}):
            return [s.secret_value or "" for s in scan_line(line)]

    return finds


def evaluate(name: str, finds) -> None:
    hits: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for kind, secret in corpus():
        total[kind] += 1
        line = f"the key is {secret} ok"
        token = secret.split(" ")[-1]
        if any(len(f) >= 8 and (f in secret or token in f) for f in finds(line)):
            hits[kind] += 1
    recall = sum(hits.values()) / sum(total.values())
    missed = {k: f"{hits[k]}/{total[k]}" for k in total if hits[k] < total[k]}
    lines = [line for p in sorted(ROOT.glob("cassettes/*/*.json")) for line in p.read_text().splitlines()]
    size = sum(len(line) for line in lines)
    start = time.perf_counter()
    false = [(line.strip()[:60], f) for line in lines for f in finds(line) if f and f != "<scrubbed>"]
    took = time.perf_counter() - start
    print(f"{name}: recall {recall:.0%} ({sum(hits.values())}/{sum(total.values())})")
    print(f"  kinds not (fully) found: {missed or 'none'}")
    print(f"  false positives on the example cassettes ({len(lines)} lines): {len(false)}")
    for line, f in false[:5]:
        print(f"    {f[:12]!r}… in {line!r}")
    print(f"  speed: {size / took / 1e6:.2f} MB/s")


def main() -> None:
    evaluate("loopkit shape list", loopkit_finds)
    try:
        detect_secrets_finder(generic=False)
    except ImportError:
        print("detect-secrets is not installed")
        return
    evaluate("detect-secrets (key plugins only)", detect_secrets_finder(generic=False))
    evaluate("detect-secrets (all plugins, with entropy and keyword)", detect_secrets_finder(generic=True))


if __name__ == "__main__":
    main()
