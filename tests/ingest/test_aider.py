from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from analyzer.events import AssistantEvent, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest import IngestError, detect, load

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "aider" / ".aider.chat.history.md"


def test_runs_user_lines_answers_and_sessions() -> None:
    assert detect(FIXTURE)[0].NAME == "aider"
    s = load(FIXTURE)
    assert (s.format, s.agent, s.model) == ("aider", "aider", "anthropic/claude-sonnet-4-20250514")
    assert [e.kind for e in s.events] == [
        "system", "tool", "user", "assistant", "tool", "user", "assistant", "tool", "tool", "user",
        "system", "tool", "user", "user", "assistant"]
    start = s.events[0]
    assert isinstance(start, SystemEvent) and start.subtype == "session_start"
    assert start.ts == datetime(2025, 9, 14, 10, 2, 51, tzinfo=UTC)
    runs = [e for e in s.events if isinstance(e, ToolEvent)]
    assert [(t.command, t.by_user, t.line) for t in runs] == [
        ("uvicorn api.main:app --port 8000", True, 11),  # /run
        ("lsof -i :8000", False, 27),  # > Running: the model's suggestion, run by aider
        ("kill 41873", False, 44),
        ("uvicorn api.main:app --port 8000", False, 45),
        ("curl -s localhost:8000/health", True, 56),  # !cmd
    ]
    assert all(t.output is None and t.exit_code is None and t.ts is None for t in runs)
    asked = s.events[2]
    assert isinstance(asked, UserEvent) and asked.text.startswith('the server crashes on startup with "address')
    answer = s.events[6]
    assert isinstance(answer, AssistantEvent) and answer.text.endswith("```")  # the quoted script is not text
    interrupt = s.events[9]
    assert isinstance(interrupt, UserEvent) and interrupt.origin == "interrupt"
    slash = s.events[12]
    assert isinstance(slash, UserEvent) and slash.origin == "command" and slash.text == "/ask is the server still up?"
    assert s.counts.skipped == 23 and not s.diagnostics


def test_markdown_without_sessions_is_not_aider(tmp_path: Path) -> None:
    p = tmp_path / "notes.md"
    p.write_text("# Notes\n\n#### not a user line\n")
    with pytest.raises(IngestError):
        load(p, format="aider")
    with pytest.raises(IngestError, match="not a session log"):
        detect(p)
