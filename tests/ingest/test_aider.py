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


ARCHITECT = """\
# aider chat started at 2026-04-02 09:15:00

> aider --architect
> Main model: o3 with architect edit format
> Editor model: gpt-4.1 with editor-whole edit format

#### make the health endpoint return the version$

Add a `version` field to the `/health` response in `app/main.py`:

1. Import `__version__`.
2. Return it from `health()`.

> Tokens: 2.1k sent, 120 received.$

#### Add a `version` field to the `/health` response in `app/main.py`:$
####$
#### 1. Import `__version__`.$
#### 2. Return it from `health()`.$

app/main.py
```python
from app import __version__
```

#### Add a version field to the response, thanks$
""".replace("$\n", "  \n")  # aider ends its lines with two spaces (Markdown breaks)


def test_architect_handoff_is_not_a_user_message(tmp_path: Path) -> None:
    """In architect mode aider logs the architect's answer, sent on to the editor model, as a
    ``####`` block: nobody typed it, so it is not read as the user's words."""
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(ARCHITECT, "utf-8")
    users = [e for e in load(path).events if isinstance(e, UserEvent)]
    # a user who later types words like the answer's is still the user
    assert [(u.line, u.text) for u in users] == [(7, "make the health endpoint return the version"),
                                                 (26, "Add a version field to the response, thanks")]
