from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from analyzer.events import AssistantEvent, Level, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest import load, load_all
from analyzer.ingest.gemini import shell_result

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "gemini-cli"
DOCUMENT = FIXTURES / "session-2026-03-02T09-14-5c1e2a7b.json"
JSONL = FIXTURES / "session-2026-05-11T14-02-8f3d91c0.jsonl"
STREAM = FIXTURES / "stream-json-dev-server.jsonl"


def tools(s: object) -> list[ToolEvent]:
    return [e for e in getattr(s, "events", []) if isinstance(e, ToolEvent)]


def test_chat_document_background_pids_and_exit_codes() -> None:
    s = load(DOCUMENT)
    assert (s.format, s.agent, s.model) == ("gemini-cli", "gemini-cli", "gemini-2.5-pro")
    assert s.session_id == "5c1e2a7b-3f4d-4b7e-9a51-2d8e7c0b6f14"
    assert [e.kind for e in s.events] == ["user", "assistant", "tool", "tool", "tool", "assistant", "user",
                                          "tool", "tool", "tool", "system"]
    assert (s.counts.records, s.counts.events) == (8, 11) and not s.diagnostics
    thought = s.events[1]
    assert isinstance(thought, AssistantEvent) and thought.text == ""
    assert thought.thinking is not None and thought.thinking.startswith("Starting the dev server: The dev server")
    dev, curl, read, kill, probe, cancelled = tools(s)
    assert dev.command == "npm run dev > dev.log 2>&1 &" and dev.category == "shell"
    assert (dev.background, dev.task_id, dev.exit_code, dev.output) == (True, "90412", 0, "")
    assert dev.ref == "run_shell_command-1772442851866-4f1a2b3c4d5e6" and dev.line == 2
    assert dev.ts == datetime(2026, 3, 2, 9, 14, 11, 869000, tzinfo=UTC)
    assert curl.output == ('<!doctype html>\n<html lang="en">\n  <head>\n'
                           '    <script type="module" src="/@vite/client"></script>')
    assert (curl.background, curl.task_id, curl.exit_code) == (False, None, 0)
    assert read.category == "file" and "ready in 412 ms" in (read.output or "")
    assert kill.command == "kill -- -90410" and kill.exit_code == 0
    assert (probe.exit_code, probe.is_error) == (7, True)
    assert (cancelled.interrupted, cancelled.is_error, cancelled.exit_code) == (True, True, None)
    assert cancelled.output == "[Operation Cancelled] Reason: User cancelled the operation."
    note = s.events[-1]
    assert isinstance(note, SystemEvent) and (note.subtype, note.text) == ("info", "Request cancelled.")


def test_chat_jsonl_last_version_wins_and_rewound_messages_stay() -> None:
    s = load(JSONL)
    assert s.session_id == "8f3d91c0-6b2a-4e1d-a7c5-3e9f0d2b8a61" and s.model == "gemini-3-flash-preview"
    assert [e.kind for e in s.events] == ["user", "tool", "tool", "assistant", "user", "assistant", "tool", "user",
                                          "tool"]
    # 14 lines: metadata, 3 $set, 1 $rewindTo and the first version of the re-appended message are skipped
    assert (s.counts.records, s.counts.skipped) == (14, 6)
    dev, curl, kill_1, kill_2 = tools(s)
    # the message was appended twice: the event sits where it first appeared, with the completed call
    assert (dev.line, dev.background, dev.task_id, dev.exit_code) == (5, True, "51234", None)
    assert dev.output is not None and dev.output.startswith("Command is running in background. PID: 51234.")
    assert (curl.exit_code, curl.output) == (0, "HTTP/1.1 200 OK\nContent-Type: text/html; charset=utf-8")
    assert kill_1.exit_code == 0 and kill_1.line == 10
    assert (kill_2.exit_code, kill_2.is_error, kill_2.line) == (1, True, 13)
    assert kill_2.output == "bash: line 1: kill: (51234) - No such process"
    (rewind,) = s.diagnostics
    assert rewind.level is Level.info and rewind.line == 11 and "2 message(s)" in rewind.message
    assert isinstance(s.events[0], UserEvent) and s.events[0].text.startswith("Run the web app's dev server")


def test_stream_json_pairs_by_tool_id_and_joins_deltas() -> None:
    s = load(STREAM)
    assert (s.session_id, s.model) == ("2c9e4f7a-81b3-4d5e-a6c7-0f1e2d3c4b5a", "gemini-2.5-flash")
    assert [e.kind for e in s.events] == ["user", "tool", "tool", "tool", "tool", "assistant"]
    dev, curl, read, kill = tools(s)
    assert (dev.line, dev.result_line, dev.background, dev.task_id) == (3, 4, True, "7781")
    assert dev.input == {"command": "npm run docs:dev", "is_background": True}
    assert curl.output == "<title>Docs | Acme</title>" and curl.is_error is False and curl.exit_code is None
    assert read.is_error is True and read.output == "File not found: docs/.vitepress/dist/index.html"
    assert kill.command == "kill 7781" and kill.result_ts == datetime(2026, 4, 18, 16, 40, 24, 902000, tzinfo=UTC)
    said = s.events[-1]
    assert isinstance(said, AssistantEvent) and said.line == 11
    assert said.text == "The docs site served `<title>Docs | Acme</title>` on port 5174; I stopped it (PID 7781)."
    assert s.counts.skipped == 2 and not s.diagnostics  # init and the successful result


def test_stream_json_bad_lines_orphans_and_concatenated_sessions(tmp_path: Path) -> None:
    lines = [
        '{"type":"init","timestamp":"2026-04-18T16:40:02.118Z","session_id":"s1","model":"gemini-2.5-flash"}',
        '{"type":"tool_use","timestamp":"2026-04-18T16:40:03Z","tool_name":"run_shell_command",'
        '"tool_id":"t1","parameters":{"command":"make serve &"}}',
        '{"type":"tool_result","tool_id":"t1",',
        '{"type":"tool_result","timestamp":"2026-04-18T16:40:04Z","tool_id":"zz","status":"success","output":""}',
        '{"type":"init","timestamp":"2026-04-18T17:00:00Z","session_id":"s2","model":"gemini-2.5-flash"}',
        '{"type":"error","timestamp":"2026-04-18T17:00:01Z","severity":"error","message":"Quota exceeded"}',
        '{"type":"result","timestamp":"2026-04-18T17:00:02Z","status":"error",'
        '"error":{"type":"quota","message":"Quota exceeded"}}',
    ]
    p = tmp_path / "run.jsonl"
    p.write_text("\n".join(lines) + "\n")
    s = load(p)
    assert s.format == "gemini-cli" and s.session_id == "s1"
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.error, 3), (Level.warning, 4), (Level.info, 5)]
    (serve,) = tools(s)
    assert serve.command == "make serve &" and serve.output is None
    error, result = s.events[1:]
    assert isinstance(error, SystemEvent) and error.subtype == "error" and error.text == "Quota exceeded"
    assert isinstance(result, SystemEvent) and result.status == "error"


@pytest.mark.parametrize(("text", "ok", "output", "code", "pids"), [
    # January 2026 build: every label, placeholders for empty values
    ("Command: npm test\nDirectory: (root)\nOutput: ok\nError: (none)\nExit Code: 0\nSignal: 0\n"
     "Background PIDs: (none)\nProcess Group PGID: 128", True, "ok", 0, []),
    # output lines that look like labels stay output: only the trailing labels are the trailer
    ("Command: npm test\nDirectory: (root)\nOutput: Error: Cannot find module 'x'\nExit Code: 1\n"
     "in the middle\nError: (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: 4411, 4412\n"
     "Process Group PGID: 4400", True, "Error: Cannot find module 'x'\nExit Code: 1\nin the middle", 1,
     ["4411", "4412"]),
    # newer build: no Exit Code line when 0, Error when the spawn failed
    ("Output: (empty)\nProcess Group PGID: 51350", True, "", 0, []),
    ("Output: (empty)\nError: spawn ENOENT\nProcess Group PGID: 7", False, "spawn ENOENT", None, []),
    ("Output: partial\nSignal: 15\nProcess Group PGID: 9", True, "partial", None, []),
    ("Command moved to background (PID: 7781).", True, "Command moved to background (PID: 7781).", None,
     ["7781"]),
    ("plain output", True, "plain output", None, []),
])
def test_shell_result_block(text: str, ok: bool, output: str, code: int | None, pids: list[str]) -> None:
    res = shell_result(text, ok)
    assert (res.output, res.exit_code, res.pids) == (output, code, pids)


def test_concatenated_runs_are_separate_sessions_with_the_files_line_numbers() -> None:
    path = FIXTURES / "stream-json-two-runs.jsonl"
    first, second = load_all(path)
    assert (first.part, second.part, first.path, second.path) == (1, 2, str(path), str(path))
    assert (first.name, second.name) == ("stream-json-two-runs.jsonl#1", "stream-json-two-runs.jsonl#2")
    assert (first.session_id, second.session_id) == ("a41f0c2e-5b6d-4e7f-8a9b-0c1d2e3f4a5b",
                                                     "b52a1d3f-6c7e-4f80-9bac-1d2e3f4a5b6c")
    # the harness's prompt line before the first init belongs to the first run
    assert [e.line for e in first.events] == [1, 3, 4, 6, 8]
    assert [e.line for e in second.events] == [11, 12, 14, 16]
    assert [e.index for e in second.events] == [0, 1, 2, 3]
    assert (first.counts.records, first.counts.skipped, second.counts.records, second.counts.skipped) == (9, 2, 8, 2)
    assert not first.diagnostics and not second.diagnostics
    # load() keeps one timeline and marks where the second run starts
    merged = load(path)
    assert merged.part is None and len(merged.events) == 9 and merged.session_id == first.session_id
    assert [(d.level, d.line) for d in merged.diagnostics] == [(Level.info, 10)]
    assert load_all(STREAM)[0].part is None  # a file of one session: as load() reads it
