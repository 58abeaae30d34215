from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.events import SystemEvent, ToolEvent, UserEvent
from analyzer.ingest import IngestError, detect, load

CASE = """\
agent: claude-code
start: 2026-03-01T03:00:00Z
events:
  - user: Start the API on port 8000
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
    background: true
    task: bash_1
  - bash: curl -sf localhost:8000/health
    output: '{"ok": true}'
    at: +90
  - tool: KillBash
    input: {shell_id: bash_1}
    expect: [kill-after-ready, over-broad-kill]
    ok: duplicate-launch
  - system: task-notification
    task: bash_1
    exit: 137
  - bash: sleep 600
    no-result: true
"""


def write(tmp_path: Path, text: str, name: str = "case.session.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_fixture_events_lines_times_and_marks(tmp_path: Path) -> None:
    s = load(write(tmp_path, CASE))
    assert s.format == "fixture" and s.agent == "claude-code"
    kinds = [e.kind for e in s.events]
    assert kinds == ["user", "tool", "tool", "tool", "system", "tool"]
    assert [e.index for e in s.events] == list(range(6))
    assert [e.line for e in s.events] == [4, 5, 8, 11, 15, 18]
    launch, curl, kill, note, sleep = s.events[1:]
    assert isinstance(launch, ToolEvent) and launch.background and launch.task_id == "bash_1"
    assert launch.output == ""  # an omitted output is an empty result
    assert isinstance(curl, ToolEvent) and curl.output == '{"ok": true}'
    assert (curl.ts - launch.ts).total_seconds() == 90
    assert isinstance(kill, ToolEvent) and kill.category == "task_stop" and kill.task_id == "bash_1"
    assert kill.marks.expect == ("kill-after-ready", "over-broad-kill")
    assert kill.marks.ok == ("duplicate-launch",)
    assert isinstance(note, SystemEvent) and note.exit_code == 137
    assert isinstance(sleep, ToolEvent) and sleep.output is None
    assert isinstance(s.events[0], UserEvent) and not s.events[0].marks


def test_fixture_bad_event_is_a_diagnostic_and_the_rest_loads(tmp_path: Path) -> None:
    text = "events:\n  - user: hi\n  - bogus: 1\n  - bash: ls\n"
    s = load(write(tmp_path, text))
    assert [e.kind for e in s.events] == ["user", "tool"]
    assert len(s.diagnostics) == 1 and s.diagnostics[0].line == 3
    assert "exactly one of" in s.diagnostics[0].message


def test_detect_is_by_content_not_name(tmp_path: Path) -> None:
    p = write(tmp_path, CASE, name="no-extension")
    fmt, reason = detect(p)
    assert fmt.NAME == "fixture" and "events" in reason


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "empty file"), (b"\x00\x01\x02binary\xff" * 50, "binary file"),
     (b"just some prose\n", "not a session log")],
)
def test_unreadable_inputs_give_one_clear_error(tmp_path: Path, content: bytes, message: str) -> None:
    p = tmp_path / "x.log"
    p.write_bytes(content)
    with pytest.raises(IngestError, match=message) as info:
        load(p)
    assert str(p) in str(info.value)


def test_missing_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such file"):
        load(tmp_path / "nope.jsonl")
    with pytest.raises(IngestError, match="no session"):
        load(tmp_path)
