"""Ingest: a path in any supported format becomes a ``Session``.

``FORMATS`` is the registry, in detection order (most specific first: the generic chat-array
reader goes last, because many other formats embed chat arrays).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from analyzer._memory import paused_gc
from analyzer.events import Session
from analyzer.ingest import (
    aider,
    antigravity,
    asciinema,
    chat,
    claude_code,
    cline_api,
    cline_ui,
    codex,
    codex_exec,
    fixture,
    gemini,
    opencode,
    openhands,
    pi,
    specstory,
    superopen,
    swe_agent,
)
from analyzer.ingest.base import FormatModule, IngestError, read_head
from analyzer.ingest.jsondoc import json_prefix

FORMATS: dict[str, FormatModule] = {
    m.NAME: m
    for m in (fixture, claude_code, codex, codex_exec, opencode, gemini, openhands, swe_agent, asciinema, specstory,
              aider, superopen, cline_ui, cline_api, antigravity, pi, chat)
}


def detect(path: str | Path) -> tuple[FormatModule, str]:
    """Which format ``path`` is in, and why. Raises ``IngestError`` with a clear reason."""
    p = Path(path)
    if not p.exists():
        raise IngestError(p, "no such file or folder")
    try:
        head = read_head(p)
    except OSError as exc:
        raise IngestError(p, f"cannot read: {exc.strerror or exc}") from exc
    if p.is_file() and not head.strip():
        raise IngestError(p, "empty file: nothing to analyze")
    for fmt in FORMATS.values():
        reason = fmt.detect(p, head)
        if reason:
            return fmt, reason
    if p.is_dir():
        raise IngestError(p, "folder holds no session in a known format")
    if b"\x00" in head[:4096]:
        raise IngestError(p, "binary file, not a session log", line=1)
    broken = json_prefix(head)  # JSON damaged before its first record: name the spot, not line 1
    if broken is not None and broken.error is not None:
        e = broken.error
        raise IngestError(p, f"not valid JSON at line {e.line} column {e.column} ({e.reason}), and no "
                          "known format can be told from what comes before it", line=e.line)
    raise IngestError(
        p, "not a session log in any known format (tried: " + ", ".join(FORMATS) + ")", line=1
    )


def _format_of(p: Path, format: str | None) -> FormatModule:
    if format is None:
        return detect(p)[0]
    if format not in FORMATS:
        raise IngestError(p, f"unknown format {format!r} (known: {', '.join(FORMATS)})")
    if not p.exists():
        raise IngestError(p, "no such file or folder")
    return FORMATS[format]


def load(path: str | Path, format: str | None = None) -> Session:
    """Load one session. ``format`` skips detection (a name from ``FORMATS``). A file that holds
    several sessions is read as one timeline (an info diagnostic marks where each starts)."""
    p = Path(path)
    fmt = _format_of(p, format)
    with paused_gc():
        return fmt.load(p)


def load_all(path: str | Path, format: str | None = None) -> list[Session]:
    """Every session in ``path``, each with its own timeline: ``[load(path)]``, except for a file
    that holds several (Gemini stream-json runs a harness concatenated), whose format module has a
    ``load_all()``; each then says which one it is (``Session.part``)."""
    p = Path(path)
    fmt = _format_of(p, format)
    split: Callable[[Path], list[Session]] | None = getattr(fmt, "load_all", None)
    with paused_gc():
        return split(p) if split is not None else [fmt.load(p)]


__all__ = ["FORMATS", "FormatModule", "IngestError", "detect", "load", "load_all"]
