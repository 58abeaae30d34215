"""A finished batch run: the listed sessions and the totals every output shows."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from analyzer.batch.job import SessionResult
from analyzer.rules.api import Severity

SEVERITIES = [s.value for s in sorted(Severity, key=lambda s: -s.rank)]
"""high, medium, low."""


def finding_order(f: dict[str, Any]) -> tuple[int, str, str, str]:
    """Anchor index, then rule (then fingerprint and message, so ties have an order too)."""
    return (f["anchor"]["index"], f["rule"], f.get("fingerprint") or "", f["message"])


def session_order(r: SessionResult) -> tuple[str, str]:
    return (r.path, r.member or "")


def when(r: SessionResult) -> datetime | None:
    """The session's date: its first event's time, else its file's modification time."""
    if r.started:
        return datetime.fromisoformat(r.started)
    if r.mtime_ns is not None:
        return datetime.fromtimestamp(r.mtime_ns / 1e9, tz=UTC)
    return None


def last_activity(r: SessionResult) -> datetime | None:
    """Its last event's time, else its file's modification time (for ``--since``)."""
    if r.ended:
        return datetime.fromisoformat(r.ended)
    if r.mtime_ns is not None:
        return datetime.fromtimestamp(r.mtime_ns / 1e9, tz=UTC)
    return None


def short_error(r: SessionResult) -> str:
    """The error without the session path it starts with (shown beside it anyway)."""
    error = r.error or ""
    if error.startswith(f"{r.path}:"):
        rest = error[len(r.path) + 1:]
        m = re.match(r"(\d+): ", rest)
        return f"line {m.group(1)}: {rest[m.end():]}" if m else rest.strip()
    return error


def twin_key(r: SessionResult) -> tuple[str, int, tuple[str, ...]] | None:
    """What makes two files one session: the same session id, events and findings (a seed fixture and
    its JSONL twin, a copied log). ``None`` for a session that did not load or has no id."""
    if r.status != "ok" or not r.session_id:
        return None
    return (r.session_id, r.events, tuple(sorted(str(f.get("fingerprint")) for f in r.findings)))


@dataclass
class RuleTotal:
    rule: str
    severity: str
    findings: int = 0
    sessions: int = 0


@dataclass
class BatchRun:
    results: list[SessionResult]
    """The listed sessions, in session order."""
    analyzed: int = 0
    """Sessions analyzed in this run (the rest came from the cache)."""
    cached: int = 0
    filtered: int = 0
    """Sessions left out by ``--since``."""
    engine_loads: int = 0
    """Times a worker process loaded rules and catalog."""
    workers: int = 0
    """Processes that analyzed sessions."""
    jobs: int = 1
    seconds: float = 0.0
    since: datetime | None = None
    reports: str = "html"
    reports_note: str | None = None
    """Why no reports were written, when none were."""
    rules: list[str] = field(default_factory=list)
    """The rules that ran."""
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    redact: bool = True
    """Redact secrets in what the index shows from the input (error messages)."""
    names: dict[str, str] = field(default_factory=dict)
    """Session key → its path relative to the folder it was found under (the index shows these)."""

    def __post_init__(self) -> None:
        self.results.sort(key=session_order)

    @property
    def failed(self) -> list[SessionResult]:
        return [r for r in self.results if r.status != "ok"]

    def findings(self) -> list[tuple[SessionResult, dict[str, Any]]]:
        """Every finding with its session, in the stable findings.jsonl order."""
        return [(r, f) for r in self.results for f in sorted(r.findings, key=finding_order)]

    def distinct(self) -> list[tuple[SessionResult, list[SessionResult]]]:
        """Each session once, with the other files that read the same session (its twins), in
        session order. Every total counts these, so a session in two files is not counted twice."""
        groups: list[tuple[SessionResult, list[SessionResult]]] = []
        first: dict[tuple[str, int, tuple[str, ...]], list[SessionResult]] = {}
        for r in self.results:
            key = twin_key(r)
            if key is not None and key in first:
                first[key].append(r)
                continue
            groups.append((r, []))
            if key is not None:
                first[key] = groups[-1][1]
        return groups

    def by_severity(self) -> dict[str, int]:
        """Findings per severity, each session once (twins folded)."""
        counts = Counter(f["severity"] for r, _ in self.distinct() for f in r.findings)
        return {s: counts.get(s, 0) for s in SEVERITIES}

    def per_rule(self) -> list[RuleTotal]:
        """Findings and sessions per rule, each session once (twins folded)."""
        totals: dict[str, RuleTotal] = {}
        for r, _ in self.distinct():
            for rule in sorted({f["rule"] for f in r.findings}):
                sev = next(f["severity"] for f in r.findings if f["rule"] == rule)
                t = totals.setdefault(rule, RuleTotal(rule, sev))
                t.sessions += 1
                t.findings += sum(f["rule"] == rule for f in r.findings)
        ranks = {s: i for i, s in enumerate(SEVERITIES)}
        return sorted(totals.values(), key=lambda t: (ranks.get(t.severity, 9), -t.findings, t.rule))
