"""Secret redaction for everything a report shows from a transcript.

Reports redact by default; each kind found is listed in the report so a reader knows what was
hidden and why. Patterns follow the providers' documented token formats.

Every output redacts in one step at its boundary: a text renderer runs ``Redactor`` over what it
prints *before* cutting it to a width (a secret cut in half no longer matches its pattern, and its
first half would show); a JSON output (``check --format json|sarif``, ``timeline``/``graph --format
json``) passes its whole document through ``redact_tree``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, partial
from typing import Any


class _Regex:
    """A pattern compiled when first used: compiling all 34 took ~6 ms of every command that
    imports this module (``check`` does, for its outputs), and most texts open a few kinds' gates."""

    __slots__ = ("_compiled", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.compiled.fullmatch(text)

    def subn(self, repl: str | Callable[[re.Match[str]], str], text: str) -> tuple[str, int]:
        return self.compiled.subn(repl, text)


_RULES: list[tuple[str, _Regex, int]] = [
    # (kind, pattern, group to replace: 0 = whole match). Token formats follow gitleaks'
    # rules (config/gitleaks.toml) where it has one; the context rules (flags, headers, JSON keys)
    # are ours, with the exceptions that keep evidence: counts, booleans, paths, $VAR references.
    ("private key", _Regex(
        r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"), 0),
    ("Anthropic API key", _Regex(r"\bsk-ant-[A-Za-z0-9_\-]{20,}"), 0),
    # legacy keys are sk- and 48 letters/digits, no dashes: `sk-learn-feature-pipeline-worker` is a name
    ("OpenAI API key", _Regex(r"\bsk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{32,})"), 0),
    ("GitHub token", _Regex(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"), 0),
    ("GitLab token", _Regex(r"\bgl(?:pat|ptt|rt|dt|cbt|oas|ft|imt|agent|soat)-[A-Za-z0-9_\-]{20,}"), 0),
    ("AWS access key", _Regex(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"), 0),
    ("AWS secret key", _Regex(
        r"(?i)((?:aws_?secret_?access_?key|secret_?access_?key)['\"]?\s*[:=]\s*['\"]?)([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"), 2),
    ("Azure storage key", _Regex(r"(?i)(\bAccountKey=)([A-Za-z0-9+/=]{40,})"), 2),
    ("GCP private key id", _Regex(r"(\"private_key_id\"\s*:\s*\")([0-9a-f]{40})"), 2),
    ("Hugging Face token", _Regex(r"\bhf_[A-Za-z0-9]{30,}"), 0),
    ("Google API key", _Regex(r"\bAIza[0-9A-Za-z_\-]{35}"), 0),
    ("Slack token", _Regex(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), 0),
    ("Slack webhook", _Regex(r"\bhooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,}"), 0),
    ("Stripe key", _Regex(r"\b[sr]k_(?:live|test|prod)_[A-Za-z0-9]{20,}"), 0),
    ("SendGrid key", _Regex(r"\bSG\.[A-Za-z0-9_\-]{20,24}\.[A-Za-z0-9_\-]{39,50}"), 0),
    ("npm token", _Regex(r"\bnpm_[A-Za-z0-9]{36}\b"), 0),
    ("PyPI token", _Regex(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"), 0),
    ("DigitalOcean token", _Regex(r"\bdo[por]_v1_[a-f0-9]{64}\b"), 0),
    ("Shopify token", _Regex(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"), 0),
    ("Databricks token", _Regex(r"\bdapi[a-f0-9]{32}(?:-\d)?\b"), 0),
    ("Twilio key", _Regex(r"\bSK[0-9a-fA-F]{32}\b"), 0),
    ("JWT", _Regex(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"), 0),
    ("Authorization header", _Regex(r"(?i)(\bauthorization\s*[:=]\s*(?:bearer|basic|token)?\s*)([^\s'\"\\]+)"), 2),
    ("API key header", _Regex(
        r"(?i)(\bx-(?:api-key|api-token|auth-token|access-token|goog-api-key|functions-key)\s*:\s*)([^\s'\"\\]{4,})"), 2),
    # the user may be empty: redis://:pw@host
    ("password in URL", _Regex(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@'\"]*:)([^@\s/'\"]+)(@)"), 2),
    ("password argument", _Regex(
        r"(\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p)([^\s'\"-][^\s'\"]{2,})"
        r"|(\b(?:docker|podman|nerdctl)\s+login\b[^\n|;&]*?\s(?:-p|--password)(?:=|\s+)['\"]?)([^\s'\"-][^\s'\"]{2,})"
        r"|(\bsshpass\b[^\n|;&]*?\s-p\s*['\"]?)([^\s'\"-][^\s'\"]{2,})"), -1),
    ("secret in JSON", _Regex(
        r"(?i)([\"'][a-z0-9_.\-]*(?:api[_\-]?key|secret|token|password|passwd|access[_\-]?key|private[_\-]?key)"
        r"[\"']\s*:\s*[\"'])([^\"'\\\s]{4,})"), 2),
    # YAML and config lines, and a JSON object whose quotes a shell parse took (an argv)
    ("secret in config", _Regex(
        r"(?i)((?<![A-Za-z0-9_.\-])[a-z0-9_.\-]*(?:api[_\-]?key|secret[_\-]?key|client[_\-]?secret|access[_\-]?key"
        r"|private[_\-]?key(?:[_\-]?id)?|password|passwd|auth[_\-]?token|access[_\-]?token)\s*:[ \t]*)"
        r"([^\s'\",}\]]{4,})"), 2),
    ("secret variable", _Regex(
        r"(?i)(\b[A-Z0-9_]*(?:API_KEY|_KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Z0-9_]*\s*=\s*['\"]?)([^\s'\"]{4,})"), 2),
    ("secret flag", _Regex(
        r"(?i)(--(?:api-key|token|password|secret|hf-token)(?:=|[ \t]+)['\"]?)([^\s'\"]{4,})"), 2),
]


@dataclass(frozen=True)
class _Gate:
    """Text every match of a kind contains: most text holds none, and a substring test is ~100x
    cheaper than scanning every word boundary with the full pattern. The gate never hides a secret:
    its literals are in every match (``lower``: in the lower-cased, folded text, for case-blind
    kinds), and its pattern, tried only when a literal is there, is the match's own tail with the
    same flags."""

    any_of: tuple[str, ...]
    lower: bool = False
    pattern: _Regex | None = None


_GATES: dict[str, _Gate] = {
    "private key": _Gate(("-----BEGIN ",)),
    "Anthropic API key": _Gate(("sk-ant-",)),
    "OpenAI API key": _Gate(("sk-",)),
    "GitHub token": _Gate(("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    "GitLab token": _Gate(("gl",)),
    "AWS access key": _Gate(("AKIA", "ASIA", "ABIA", "ACCA")),
    "AWS secret key": _Gate(("secret",), lower=True),
    "Azure storage key": _Gate(("accountkey=",), lower=True),
    "GCP private key id": _Gate(('"private_key_id"',)),
    "Hugging Face token": _Gate(("hf_",)),
    "Google API key": _Gate(("AIza",)),
    "Slack token": _Gate(("xox",)),
    "Slack webhook": _Gate(("hooks.slack.com/",)),
    "Stripe key": _Gate(("k_live_", "k_test_", "k_prod_")),
    "SendGrid key": _Gate(("SG.",)),
    "npm token": _Gate(("npm_",)),
    "PyPI token": _Gate(("pypi-AgEIcHlwaS5vcmc",)),
    "DigitalOcean token": _Gate(("_v1_",)),
    "Shopify token": _Gate(("shpat_", "shpca_", "shppa_", "shpss_")),
    "Databricks token": _Gate(("dapi",)),
    "Twilio key": _Gate(("SK",)),
    "JWT": _Gate(("eyJ",)),
    "Authorization header": _Gate(("authorization",), lower=True,
                                  pattern=_Regex(r"(?i)authorization\s*[:=]")),
    "API key header": _Gate(("x-",), lower=True),
    "password in URL": _Gate(("://",), pattern=_Regex(r"://[^/\s:@'\"]*:[^@\s/'\"]+@")),
    "password argument": _Gate(("-p",), pattern=_Regex(r"mysql|mysqladmin|mariadb|login|sshpass")),
    "secret in JSON": _Gate(("key", "token", "secret", "passw"), lower=True),
    # the names' endings and the colon: the full pattern tries every name-like run at every place
    # (~1 µs a character, half the redaction time of a real session's report)
    "secret in config": _Gate(("key", "token", "secret", "passw"), lower=True,
                              pattern=_Regex(r"(?i)(?:key(?:[_\-]?id)?|secret|passw(?:or)?d|token)\s*:")),
    # (?i): API_KEY and _KEY hold "key", PASSWORD and PASSWD hold "passw"
    "secret variable": _Gate(("key", "token", "secret", "passw"), lower=True, pattern=_Regex(
        r"(?i)(?:API_KEY|_KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Z0-9_]*\s*=\s*['\"]?[^\s'\"]{4}")),
    "secret flag": _Gate(("--",)),
}


_RARE_FIRST = "JKzGHjBqNICAx=SEw5vkyb/f_1g.h-mpu:dclirsoa\"nte"
"""Characters from the rarest to the commonest in real sessions (counted over the corpus): each
gate literal is looked for only when its rarest character is in the text."""


_Probe = tuple[str, bool, Callable[[str], object] | None, tuple[tuple[str, tuple[str, ...]], ...]]


@cache
def _literals() -> list[_Probe]:
    """Each gate literal once, in clusters of the literals that start with the same character: (the
    cluster's rarest character, looked for in the lower-cased text, one search for any of its
    literals or None for a cluster of one, its literals with the kinds each opens). A literal is in
    a text only if each of its characters is, and a one-character search (``memchr`` in ASCII
    text) is ~10x faster than a search for a literal of two or more: most texts of a report lack
    ``J``, ``K``, ``z`` or ``G``, and their literals are then never searched for. Past that
    character, one regex of the cluster's literals (a common first character: ``re`` scans for it,
    then tries them) stands for five or six searches (``ghp_``, ``gho_``, ``ghu_``, …, ``sk-ant-``
    and ``shpat_``, …); only a text it matches, a rare one, is searched for each literal. The 50 MB
    session's 5,900 shown texts: 0.20 → 0.085 s. Built on first use: ``check`` imports this module
    for its outputs, and its regexes would be compiled in every process."""
    kinds: dict[tuple[str, bool], list[str]] = {}
    for kind, gate in _GATES.items():
        for lit in gate.any_of:
            kinds.setdefault((lit, gate.lower), []).append(kind)
    clusters: dict[tuple[str, bool], list[tuple[str, tuple[str, ...]]]] = {}
    for (lit, lower), names in kinds.items():
        clusters.setdefault((lit[0], lower), []).append((lit, tuple(names)))
    out: list[_Probe] = []
    for (_, lower), members in clusters.items():
        shared = set(members[0][0]).intersection(*(lit for lit, _ in members))  # the first character at least
        rarest = min(shared, key=lambda c: (_RARE_FIRST + c).index(c))  # one not ranked: as common as any
        search = None if len(members) == 1 else re.compile(
            "|".join(re.escape(lit) for lit, _ in sorted(members, key=lambda m: -len(m[0])))).search
        out.append((rarest, lower, search, tuple(members)))
    return out


_FOLD_TO_ASCII = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}
"""Every non-ASCII character ``re``'s IGNORECASE matches with an ASCII letter (İ and ı as i, ſ as s,
the Kelvin sign as k; ``test_redact`` checks the whole of Unicode): with these made their letter,
the lower-cased text holds a case-blind gate's literal wherever the pattern could match."""


_FOLDED_CHARS = tuple(map(chr, _FOLD_TO_ASCII))


def _folded(text: str) -> str:
    # four one-character searches are far cheaper than translate()'s lookup of every character
    return text.translate(_FOLD_TO_ASCII) if any(c in text for c in _FOLDED_CHARS) else text


def _candidates(text: str) -> set[str]:
    """The kinds whose gate literals ``text`` holds: one loop over each distinct literal, not a
    generator per kind (most texts hold none, and the loop was most of the redaction's time), in
    clusters behind their rarest character and one search (``_literals``). A case-blind kind's literals are
    looked for in the lower-cased text, non-ASCII text folded first (``_FOLD_TO_ASCII``):
    ``str.lower`` alone leaves ſ and ı, which the patterns match as s and i."""
    lowered = text.lower() if text.isascii() else _folded(text).lower()
    found: set[str] = set()
    for rarest, lower, search, members in _literals():
        hay = lowered if lower else text
        if rarest in hay and (search is None or search(hay) is not None):
            for lit, kinds in members:
                if lit in hay:
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
                before = text
                text, n = pattern.subn(partial(_replace_group, group=group, kind=kind), text)
                if text == before:
                    n = 0  # every match was kept as evidence
            if n:
                self.found[kind] += n
        return text

    def kinds(self) -> list[tuple[str, int]]:
        return sorted(self.found.items())


_CONTEXT_KINDS = frozenset({"secret variable", "secret flag", "secret in JSON", "secret in config"})
"""Kinds found by a name rather than a token format: their values may be evidence, not secrets."""
_BENIGN_VALUE = _Regex(r"(?i)\d{1,9}|true|false|none|null|yes|no|on|off|auto|\$\{?[A-Za-z_]\w*\}?")
_PATHISH_NAME = _Regex(r"(?i)(?:file|path|dir)\b|(?:file|path|dir)[\s\"']*[:=]")


def _benign(kind: str, prefix: str, value: str) -> bool:
    """Evidence to keep: ``MAX_TOKENS=4096``, ``TOKENIZERS_PARALLELISM=false``, ``API_KEY=$KEY`` (a
    reference, not the value), ``KEY_FILE=/run/secrets/k`` (where it is, not what it is)."""
    if kind not in _CONTEXT_KINDS:
        return False
    if _BENIGN_VALUE.fullmatch(value):
        return True
    return value.startswith(("/", "~/", "./")) and _PATHISH_NAME.search(prefix) is not None


def _replace_group(m: re.Match[str], group: int, kind: str = "") -> str:
    if group < 0:  # alternatives, each (prefix)(value): the value is the matched even group
        group = next(g for g in range(2, (m.re.groups or 0) + 1, 2) if m.group(g) is not None)
    if m.group(group) == MASK or _benign(kind, m.group(group - 1) or "", m.group(group)):
        return m.group(0)
    start, end = m.span(group)
    base = m.start(0)
    whole = m.group(0)
    return whole[: start - base] + MASK + whole[end - base:]


def redact_tree(value: Any, redactor: Redactor | None = None) -> Any:
    """A JSON-like value with every string in it (object keys too) redacted: the one step of a JSON
    output. Containers are copied only where something changed, so a clean document costs a walk."""
    r = redactor or Redactor()
    if isinstance(value, str):
        return r(value)
    if isinstance(value, dict):
        out = {r(k) if isinstance(k, str) else k: redact_tree(v, r) for k, v in value.items()}
        return out if any(a is not b for a, b in zip(out.values(), value.values(), strict=True)) \
            or any(a is not b for a, b in zip(out, value, strict=True)) else value
    if isinstance(value, list | tuple):
        if len(value) > 1 and all(isinstance(v, str) for v in value):
            line = _argv(list(value), r)
            return value if line is None else line
        items = [redact_tree(v, r) for v in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def _argv(words: list[str], r: Redactor) -> list[str] | None:
    """A list of strings read as one command line (an argv: ``["--api-key", "tok-…"]``, ``["mysql",
    "-pS3cret"]``), since a flag and its value are a secret only together. Joined by tabs (which
    the patterns read as spaces and words rarely hold) and split back; when a masked span took the
    tabs with it (a private key running on), the redacted line is the one item left. None: nothing
    to hide."""
    joined = "\t".join(words)
    red = r(joined)
    if red == joined:
        return None
    parts = red.split("\t")
    return parts if len(parts) == len(words) else [red]


def clip(text: str, room: int, redactor: Redactor | None = None) -> str:
    """``text`` on one line, redacted, then cut to ``room`` characters with an ellipsis: redaction
    first, so a secret the cut would halve is masked whole."""
    flat = (redactor or Redactor())(" ".join(text.split()))
    return flat if len(flat) <= room else flat[: max(room - 1, 0)] + "…"
