from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from analyzer.events import AssistantEvent, Event, Level, ToolEvent, UserEvent
from analyzer.ingest import detect, load

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "openhands" / "http-server-trajectory.json"


def test_trajectory_events_in_order_with_ids_and_lines() -> None:
    s = load(FIXTURE)
    assert (s.format, s.agent, s.model, s.cwd) == ("openhands", "openhands", "claude-sonnet-4-20250514",
                                                    "/workspace/site")
    assert [e.kind for e in s.events] == [
        "user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "tool", "tool", "assistant",
        "user", "assistant", "tool", "assistant"]
    # 20 records: 14 events' records + 4 state changes/null observations skipped; 6 observations paired
    assert (s.counts.records, s.counts.skipped) == (20, 4) and not s.diagnostics
    first = s.events[0]
    assert isinstance(first, UserEvent) and first.ref == "1" and first.line == 2
    assert first.ts == datetime(2025, 6, 3, 10, 12, 9, 930214, tzinfo=UTC)  # naive ISO read as UTC
    said = s.events[1]
    assert isinstance(said, AssistantEvent) and said.text == "I'll serve the site with Python's built-in HTTP server:"


def test_foreground_server_that_keeps_running_is_a_background_task() -> None:
    s = load(FIXTURE)
    serve, poll, ctrl_c, launch, curl, kill = [e for e in s.events if isinstance(e, ToolEvent)]
    assert serve.command == "cd /workspace/site && python3 -m http.server 8000"
    assert (serve.ref, serve.line, serve.result_ref, serve.result_line) == ("3", 4, "4", 5)
    assert serve.exit_code is None and serve.background and serve.task_id == "3"
    assert serve.output == "Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ..."
    # the empty command polls the running server; C-c stops it
    assert (poll.category, poll.command, poll.task_id) == ("task_output", None, "3")
    assert (ctrl_c.category, ctrl_c.task_id, ctrl_c.exit_code, ctrl_c.is_error) == ("task_stop", "3", 130, True)
    assert ctrl_c.result_ts == datetime(2025, 6, 3, 10, 13, 20, 702884, tzinfo=UTC)
    assert launch.command == "nohup python3 -m http.server 8000 > /tmp/http.log 2>&1 &"
    assert (launch.exit_code, launch.background, launch.output, launch.cwd) == (0, False, "[1] 3107",
                                                                               "/workspace/site")
    assert (curl.output, curl.exit_code, curl.is_error) == ("200", 0, False)
    assert kill.command == "kill 3107" and kill.category == "shell" and kill.task_id is None


def test_user_terminal_commands_orphans_and_junk(tmp_path: Path) -> None:
    events = [
        {"id": 1, "timestamp": "2025-06-03T10:00:00", "source": "user", "action": "run",
         "args": {"command": "systemctl restart nginx", "is_input": False}},
        {"id": 2, "timestamp": "2025-06-03T10:00:01", "source": "user", "cause": 1, "observation": "run",
         "content": "", "extras": {"metadata": {"exit_code": 0}}},
        {"id": 3, "timestamp": "2025-06-03T10:00:02", "source": "agent", "cause": 99, "observation": "run",
         "content": "orphan", "extras": {"metadata": {"exit_code": 0}}},
        ["not", "an", "event"],
        {"id": 5, "timestamp": "2025-06-03T10:00:03", "source": "agent", "observation": "error",
         "content": "Agent got stuck in a loop", "extras": {}},
    ]
    p = tmp_path / "traj.json"
    p.write_text(json.dumps(events))
    assert detect(p)[0].NAME == "openhands"
    s = load(p)
    user_run = s.events[0]
    assert isinstance(user_run, ToolEvent) and user_run.by_user and user_run.exit_code == 0
    assert user_run.command == "systemctl restart nginx"
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.warning, 3), (Level.error, 4)]
    assert "cause 99" in s.diagnostics[0].message
    assert s.events[-1].kind == "system" and s.counts.records == 5


STORE = FIXTURE.parent / "file_store" / "sessions" / "5f1c2d3e4b5a69788796a5b4c3d2e1f0"


def _shape(events: list[Event]) -> list[tuple[object, ...]]:
    return [(e.kind, e.ref, e.line, getattr(e, "command", None), getattr(e, "output", None), getattr(e, "text", None))
            for e in events]


def test_the_event_store_reads_as_the_exported_trajectory() -> None:
    fmt, reason = detect(STORE)
    assert fmt.NAME == "openhands" and reason == "event store: 20 files in events/"
    store, listed = load(STORE), load(FIXTURE)
    assert _shape(store.events) == _shape(listed.events)
    assert (store.session_id, store.agent) == ("5f1c2d3e4b5a69788796a5b4c3d2e1f0", "openhands")
    assert store.events[0].source == str(STORE / "events" / "1.json")
    assert store.sources == [str(STORE / "events")]


def test_a_broken_event_file_is_named_and_the_others_are_read(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "s1"
    shutil.copytree(STORE, copy)
    (copy / "events" / "5.json").write_text('{"id": 5, "source": "agent", "act', encoding="utf-8")
    (copy / "events" / "notes.txt").write_text("not an event", encoding="utf-8")
    s = load(copy)
    errors = [d for d in s.diagnostics if d.level == Level.error]
    assert len(errors) == 1 and errors[0].file == str(copy / "events" / "5.json")
    assert "not JSON" in errors[0].message
    assert len(s.events) >= len(load(STORE).events) - 2  # one action lost, and its observation with it


def test_batch_walks_find_each_store_session_once() -> None:
    from analyzer.ingest.discover import discover_sessions

    found = [f.path for f in discover_sessions([FIXTURE.parent])]
    assert STORE in found and FIXTURE in found
    assert not [p for p in found if p.parent.name == "events" or p.name == "metadata.json"]


def test_a_folder_with_events_that_are_not_openhands_is_walked_into(tmp_path: Path) -> None:
    from analyzer.ingest.discover import discover_sessions

    proj = tmp_path / "root" / "proj"
    (proj / "events").mkdir(parents=True)
    (proj / "events" / "1.json").write_text('{"name": "deploy"}', encoding="utf-8")
    (proj / "logs").mkdir()
    session = proj / "logs" / "run.json"
    session.write_bytes(FIXTURE.read_bytes())
    assert [f.path for f in discover_sessions([tmp_path / "root"])] == [session]


def test_a_broken_first_event_file_does_not_hide_the_store(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "s1"
    shutil.copytree(STORE, copy)
    first = min((copy / "events").iterdir(), key=lambda p: int(p.stem))
    first.write_text("{broken", encoding="utf-8")
    assert detect(copy)[0].NAME == "openhands"
    s = load(copy)
    assert [d.file for d in s.diagnostics if d.level == Level.error] == [str(first)]
