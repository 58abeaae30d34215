"""Replay a recorded session through the guard, command by command, as its hooks would have seen
it: each shell call is judged before it runs (no output yet), then enters the world with its
result. What the replay test and ``bench/guard.py`` use."""

from __future__ import annotations

from collections.abc import Iterator

from analyzer.events import Session, ToolEvent
from analyzer.guard.judge import LiveWorld, unrun
from analyzer.guard.settings import GuardSettings
from analyzer.guard.verdict import Verdict
from analyzer.pipeline import Analyzer


def replay(session: Session, analyzer: Analyzer, settings: GuardSettings | None = None) -> Iterator[tuple[int, Verdict]]:
    """(event index, verdict) for every shell call of ``session``, in order, on one warm world."""
    live = LiveWorld(analyzer, settings, path=session.path, format=session.format, agent=session.agent,
                     session_id=session.session_id, cwd=session.cwd)
    for ev in session.events:
        if isinstance(ev, ToolEvent) and ev.command is not None:
            index = ev.index
            yield index, live.judge(unrun(ev))
        live.add(ev.model_copy())
