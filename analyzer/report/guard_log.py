"""The live guard's decision log, read back for one session's report: which commands the guard
judged, what it decided, and on which timeline row each decision belongs.

The log (``analyzer guard``, one JSON line per decision: ``ts``, ``agent``, ``session``,
``transcript``, ``tool_use_id``, ``command``, ``verdict``, ``rule``, ``rules``, ``reason``,
``latency_ms``, ``error``) is shared by every session of a user, and anything may have written
into it: it is read as hostile input. A bad line or a field of the wrong type is a diagnostic with
the log's file and line, never an exception. The reader lives in the report layer (the guard sits
above it) and so only knows the record's shape, not the guard's classes.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from analyzer.events import Diagnostic, Level, Session, ToolEvent
from analyzer.ingest.base import SessionBuilder, as_id, iter_jsonl, open_regular, parse_ts
from analyzer.report._clean import Cleaner

VERDICTS = ("allow", "warn", "ask", "deny")
"""The guard's decisions, weakest first (``analyzer.guard.verdict.DECISIONS``)."""
NEAR = timedelta(minutes=10)
"""How far apart a decision's time and its shell call's time may be when they are matched by
command text (the hook fires as the call is proposed; clocks and roundings differ a little)."""
MAX_DIAGNOSTICS = 50
"""A shared log can hold thousands of broken lines: the rest are counted in one diagnostic."""


@dataclass(frozen=True)
class GuardRecord:
    """One decision of the guard, fields typed or None (a field of the wrong type reads as absent)."""

    line: int
    verdict: str
    command: str | None = None
    session: str | None = None
    transcript: str | None = None
    tool_use_id: str | None = None
    rule: str | None = None
    reason: str = ""
    latency_ms: float | None = None
    error: str | None = None
    ts: datetime | None = None


@dataclass
class GuardLog:
    """The decisions of one session, found in a log, and what the log held besides."""

    path: str
    records: list[GuardRecord] = field(default_factory=list)
    other_sessions: int = 0
    """Readable decisions of other sessions (ignored)."""
    diagnostics: list[Diagnostic] = field(default_factory=list)


def read_guard_log(path: Path, session: Session) -> GuardLog:
    """The decisions in ``path`` that belong to ``session``: same session id, else (either side
    has none) the same transcript path. Raises ``OSError`` only when the file cannot be opened."""
    open_regular(path).close()  # a missing or unreadable log is the caller's error, not a diagnostic
    builder = SessionBuilder(path=path, format="guard-log")
    log = GuardLog(path=str(path))
    here = _resolved(session.path)
    for rec in iter_jsonl(path, builder, file=str(path)):
        record = _record(rec.line, rec.value, builder, str(path))
        if record is None:
            continue
        if _belongs(record, session, here):
            log.records.append(record)
        else:
            log.other_sessions += 1
    diags = builder.diagnostics
    log.diagnostics = diags[:MAX_DIAGNOSTICS]
    if len(diags) > MAX_DIAGNOSTICS:
        log.diagnostics.append(Diagnostic(level=Level.warning, file=str(path),
                                          message=f"… {len(diags) - MAX_DIAGNOSTICS} more diagnostics in the guard log"))
    return log


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _record(line: int, value: Any, builder: SessionBuilder, file: str) -> GuardRecord | None:
    """A decision from one parsed line, or None with a diagnostic."""
    if not isinstance(value, dict):
        builder.diag(Level.error, f"a {type(value).__name__}, not a guard decision object; line skipped", line, file)
        return None
    verdict = value.get("verdict")
    if verdict not in VERDICTS:
        shown = repr(verdict)[:40]
        builder.diag(Level.error, f"verdict {shown} is not one of {', '.join(VERDICTS)}; line skipped", line, file)
        return None
    wrong = [k for k in ("command", "session", "transcript", "rule", "reason", "error")
             if value.get(k) is not None and not isinstance(value[k], str)]
    latency = value.get("latency_ms")
    if isinstance(latency, bool) or not isinstance(latency, int | float) or not math.isfinite(latency) or latency < 0:
        if latency is not None:
            wrong.append("latency_ms")
        latency = None
    if wrong:
        builder.diag(Level.warning, f"{', '.join(wrong)} of the wrong type; read as absent", line, file)
    return GuardRecord(
        line=line, verdict=str(verdict), command=_text(value.get("command")), session=_text(value.get("session")),
        transcript=_text(value.get("transcript")), tool_use_id=as_id(value.get("tool_use_id")),
        rule=_text(value.get("rule")), reason=_text(value.get("reason")) or "", latency_ms=latency,
        error=_text(value.get("error")), ts=parse_ts(value["ts"]) if isinstance(value.get("ts"), str) else None,
    )


def _resolved(path: str | None) -> str | None:
    if not path or "://" in path:
        return path
    try:
        return str(Path(os.path.expanduser(path)).resolve(strict=False))
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL byte
        return None


def _belongs(record: GuardRecord, session: Session, here: str | None) -> bool:
    if session.session_id and record.session:
        return record.session == session.session_id
    return here is not None and record.transcript is not None and _resolved(record.transcript) == here


# -- on the timeline ----------------------------------------------------------------------------


def _folded(command: str) -> str:
    return " ".join(command.split())


def attach(records: Iterable[GuardRecord], session: Session) -> dict[int, list[GuardRecord]]:
    """Each decision on the shell call it was about: the call whose ``ref`` is its
    ``tool_use_id``, else the nearest call in time with the same command text not matched yet.
    Decisions found on no call are left out (the transcript may be cut, or the call never logged)."""
    shell = [ev for ev in session.events if isinstance(ev, ToolEvent) and ev.command is not None]
    by_ref = {ev.ref: ev.index for ev in shell if ev.ref}
    out: dict[int, list[GuardRecord]] = {}
    rest: list[GuardRecord] = []
    for rec in records:
        if rec.tool_use_id and rec.tool_use_id in by_ref:
            out.setdefault(by_ref[rec.tool_use_id], []).append(rec)
        elif rec.command:
            rest.append(rec)
    by_text: dict[str, list[ToolEvent]] = {}
    for ev in shell:
        if ev.index not in out:
            by_text.setdefault(_folded(ev.command or ""), []).append(ev)
    for rec in rest:
        candidates = by_text.get(_folded(rec.command or ""), [])
        hit = _nearest(rec, candidates)
        if hit is not None:
            candidates.remove(hit)
            out.setdefault(hit.index, []).append(rec)
    return out


def _nearest(rec: GuardRecord, candidates: list[ToolEvent]) -> ToolEvent | None:
    """Without times on both sides, the first candidate (decisions and calls are both in order)."""
    if rec.ts is None:
        return candidates[0] if candidates else None
    timed = [(abs(ev.ts - rec.ts), ev) for ev in candidates if ev.ts is not None]
    if not timed:
        return candidates[0] if candidates else None
    gap, ev = min(timed, key=lambda t: t[0])
    return ev if gap <= NEAR else None


# -- as the report shows it ---------------------------------------------------------------------

LABELS = {"deny": "denied", "ask": "asked the user", "warn": "allowed with a warning", "open": "failed open"}


@dataclass(frozen=True)
class GuardBadge:
    """One decision on a timeline row. ``decision`` is a key of ``LABELS`` (a CSS class chosen
    here, never by the log); the other fields are redacted plain text."""

    decision: str
    label: str
    rule: str
    reason: str
    latency: str
    line: int


@dataclass
class GuardSummary:
    log: str
    judged: int
    denied: int
    asked: int
    warned: int
    failed_open: int
    unplaced: int
    """Decisions of this session found on no timeline row."""
    other_sessions: int
    diagnostics: list[dict[str, str]]


def badge(rec: GuardRecord, clean: Cleaner) -> GuardBadge | None:
    """The badge of a decision worth a look (a plain allow is none)."""
    decision = "open" if rec.error else rec.verdict
    if decision not in LABELS:
        return None
    reason = rec.error if rec.error else rec.reason
    latency = f"{rec.latency_ms:,.0f} ms" if rec.latency_ms is not None else ""
    return GuardBadge(decision=decision, label=LABELS[decision], rule=clean.one_line(rec.rule, 80),
                      reason=clean.one_line(reason, 1200), latency=latency, line=rec.line)


def summarize(log: GuardLog, placed: dict[int, list[GuardRecord]], clean: Cleaner) -> GuardSummary:
    judged = [r for r in log.records if r.command is not None]
    on_rows = {id(r) for recs in placed.values() for r in recs}
    return GuardSummary(
        log=clean.one_line(log.path, 300), judged=len(judged),
        denied=sum(r.verdict == "deny" for r in judged), asked=sum(r.verdict == "ask" for r in judged),
        warned=sum(r.verdict == "warn" for r in judged), failed_open=sum(r.error is not None for r in log.records),
        unplaced=sum(id(r) not in on_rows for r in judged), other_sessions=log.other_sessions,
        diagnostics=[{"level": d.level.value, "where": f"{d.file}:{d.line}" if d.line is not None else str(d.file),
                      "message": clean.one_line(d.message, 400)} for d in log.diagnostics],
    )
