"""Secret redaction for everything a report shows from a transcript.

Reports redact by default; each kind found is listed in the report so a reader knows what was
hidden and why. Patterns follow the providers' documented token formats.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import partial

_RULES: list[tuple[str, re.Pattern[str], int]] = [
    # (kind, pattern, group to replace: 0 = whole match)
    ("private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"), 0),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}"), 0),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}"), 0),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"), 0),
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), 0),
    ("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), 0),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"), 0),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0),
    ("Stripe key", re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{20,}"), 0),
    ("JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"), 0),
    ("Authorization header", re.compile(r"(?i)(\bauthorization\s*[:=]\s*(?:bearer|basic|token)?\s*)([^\s'\"\\]+)"), 2),
    ("password in URL", re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@'\"]+:)([^@\s/'\"]+)(@)"), 2),
    ("secret variable", re.compile(
        r"(?i)(\b[A-Z0-9_]*(?:API_KEY|_KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Z0-9_]*\s*=\s*['\"]?)([^\s'\"]{4,})"), 2),
    ("secret flag", re.compile(
        r"(?i)(--(?:api-key|token|password|secret|hf-token)[= ]['\"]?)([^\s'\"]{4,})"), 2),
]


@dataclass(frozen=True)
class _Gate:
    """Text every match of a kind contains: most text holds none, and a substring test is ~100x
    cheaper than scanning every word boundary with the full pattern. The gate never hides a secret:
    its literals are in every match (``lower``: in the lower-cased text, for case-blind kinds), and
    its pattern, tried only when a literal is there (or the text is not ASCII), is the match's own
    tail with the same flags."""

    any_of: tuple[str, ...]
    lower: bool = False
    pattern: re.Pattern[str] | None = None


_GATES: dict[str, _Gate] = {
    "private key": _Gate(("-----BEGIN ",)),
    "Anthropic API key": _Gate(("sk-ant-",)),
    "OpenAI API key": _Gate(("sk-",)),
    "GitHub token": _Gate(("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    "AWS access key": _Gate(("AKIA", "ASIA")),
    "Hugging Face token": _Gate(("hf_",)),
    "Google API key": _Gate(("AIza",)),
    "Slack token": _Gate(("xox",)),
    "Stripe key": _Gate(("k_live_", "k_test_")),
    "JWT": _Gate(("eyJ",)),
    "Authorization header": _Gate(("authorization",), lower=True,
                                  pattern=re.compile(r"(?i)authorization\s*[:=]")),
    "password in URL": _Gate(("://",), pattern=re.compile(r"://[^/\s:@'\"]+:[^@\s/'\"]+@")),
    # (?i): API_KEY and _KEY hold "key", PASSWORD and PASSWD hold "passw"
    "secret variable": _Gate(("key", "token", "secret", "passw"), lower=True, pattern=re.compile(
        r"(?i)(?:API_KEY|_KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Z0-9_]*\s*=\s*['\"]?[^\s'\"]{4}")),
    "secret flag": _Gate(("--",)),
}


def _literal_index() -> list[tuple[str, bool, tuple[str, ...]]]:
    """Each gate literal once: (literal, looked for in the lower-cased text, the kinds it opens)."""
    kinds: dict[tuple[str, bool], list[str]] = {}
    for kind, gate in _GATES.items():
        for lit in gate.any_of:
            kinds.setdefault((lit, gate.lower), []).append(kind)
    return [(lit, lower, tuple(names)) for (lit, lower), names in kinds.items()]


_LITERALS = _literal_index()


def _candidates(text: str) -> set[str]:
    """The kinds whose gate literals ``text`` holds: one loop over each distinct literal, not a
    generator per kind (most texts hold none, and the loop was most of the redaction's time). For
    non-ASCII text every case-blind kind is a candidate: its regex also matches letters such as
    the Kelvin sign for k, so only the pattern decides."""
    lowered = text.lower() if text.isascii() else None
    found: set[str] = set()
    for lit, lower, kinds in _LITERALS:
        if lit in text if not lower else (lowered is None or lit in lowered):
            found.update(kinds)
    return found


MASK = "[REDACTED]"


@dataclass
class Redactor:
    """Redacts text and counts what it hid, by kind."""

    enabled: bool = True
    found: Counter[str] = field(default_factory=Counter)

    def __call__(self, text: str | None) -> str:
        if not text or not self.enabled:
            return text or ""
        candidates = _candidates(text)  # masking only removes literals: the set stays a superset
        if not candidates:
            return text
        for kind, pattern, group in _RULES:
            if kind not in candidates:
                continue
            gate = _GATES[kind].pattern
            if gate is not None and gate.search(text) is None:
                continue
            if group == 0:
                text, n = pattern.subn(MASK, text)
            else:
                text, n = pattern.subn(partial(_replace_group, group=group), text)
            if n:
                self.found[kind] += n
        return text

    def kinds(self) -> list[tuple[str, int]]:
        return sorted(self.found.items())


def _replace_group(m: re.Match[str], group: int) -> str:
    if m.group(group) == MASK:
        return m.group(0)
    start, end = m.span(group)
    base = m.start(0)
    whole = m.group(0)
    return whole[: start - base] + MASK + whole[end - base:]
