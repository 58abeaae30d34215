"""Cline / Roo Code task histories: ``ui_messages.json`` (cline-ui) and ``api_conversation_history.json``
(cline-api)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from analyzer.events import AssistantEvent, Level, ToolEvent, UserEvent
from analyzer.ingest import detect, load
from analyzer.ingest.cline_api import read_command_result
from tests.ingest._new_formats import FIXTURES, corpus_files

UI = FIXTURES / "cline" / "ui_messages.json"
API = FIXTURES / "cline" / "api_conversation_history.json"


def test_ui_messages_launch_probe_kill() -> None:
    s = load(UI)
    assert (s.format, s.agent) == ("cline-ui", "cline") and not s.diagnostics
    calls = s.shell_calls()
    assert [(t.command, t.line, t.ref) for t in calls] == [
        ("uvicorn app.main:api --port 8000", 4, "1767261602500"),  # REQ_APP marker dropped
        ("curl -s localhost:8000/health", 9, "1767261608000"),
        ("kill 4242", 16, "1767261662000"),
        ("lsof -i :8000", 18, "1767261663000"),
    ]
    server, probe, kill, check = calls
    # output chunks joined; "still running in the user's terminal" is a running (background) command
    assert server.background and server.exit_code is None and server.result_line == 5
    assert server.output is not None and "Application startup complete" in server.output
    assert (probe.output, probe.exit_code, probe.background) == ('{"status":"ok"}', 0, False)
    assert (kill.exit_code, kill.result_line) == (0, 17)  # no output: the result is the API request's
    assert (check.exit_code, check.is_error) == (1, True)
    assert server.ts == datetime(2026, 1, 1, 10, 0, 2, 500000, tzinfo=UTC)
    users = [e for e in s.events if isinstance(e, UserEvent)]
    assert [(u.line, u.text) for u in users] == [
        (1, "Start the API on port 8000 and check that it answers."),  # the task
        (14, "Ready. Now stop it, I'll run it myself."),  # user_feedback
    ]
    said = [e.text for e in s.events if isinstance(e, AssistantEvent)]
    assert said[1] == "The API is up on port 8000 and /health answers ok."  # completion_result
    assert s.counts.records == 20 and s.counts.skipped == 8  # checkpoints, API requests, the empty ask


def test_api_history_xml_and_native_tool_calls() -> None:
    s = load(API)
    assert (s.format, s.agent) == ("cline-api", "cline") and not s.diagnostics
    calls = s.shell_calls()
    assert [(t.command, t.line, t.ref, t.result_line) for t in calls] == [
        ("uvicorn app.main:api --port 8000", 2, None, 3),  # XML in the reply's text
        ("curl -s localhost:8000/health", 4, None, 5),
        ("kill 4242", 8, "tooluse_Kq3vX9mB2rTzA1", 9),  # native tool_use
        ("lsof -i :8000", 10, "tooluse_Pw7nC4dE8sYuF2", 11),
    ]
    assert calls[0].background and calls[0].output is not None and "Uvicorn running" in calls[0].output
    assert "environment_details" not in (calls[0].output or "")
    assert (calls[1].output, calls[1].exit_code) == ('{"status":"ok"}', None)  # "Command executed."
    assert [t.exit_code for t in calls[2:]] == [0, 1]
    first = s.events[0]
    assert isinstance(first, UserEvent) and first.text == "Start the API on port 8000 and check that it answers."
    reply = s.events[1]
    assert isinstance(reply, AssistantEvent) and reply.text == "I'll start uvicorn on port 8000."
    assert reply.thinking and "uvicorn" in reply.thinking and "<execute_command>" not in reply.text
    feedback = [e for e in s.events if isinstance(e, UserEvent)][1]
    assert (feedback.text, feedback.line) == ("Ready. Now stop it, I'll run it myself.", 7)
    assert calls[2].ts == datetime(2026, 1, 1, 10, 1, 2, tzinfo=UTC)


@pytest.mark.parametrize(("text", "exit_code", "running", "denied"), [
    ("Command executed successfully (exit code 0).\nOutput:\nok", 0, False, False),
    ("Command failed with exit code 127.\nOutput:\nnot found", 127, False, False),
    ("Command is still running in the user's terminal.\nHere's the output so far:\nx", None, True, False),
    ("Command timed out after 30 seconds. Running in background.\nOutput so far:\nx", None, True, False),
    ("The user denied this operation.", None, False, True),
])
def test_command_result_texts(text: str, exit_code: int | None, running: bool, denied: bool) -> None:
    r = read_command_result(f"[execute_command for 'x'] Result:\n\n{text}")
    assert (r.exit_code, r.running, r.denied, r.interrupted) == (exit_code, running, denied, denied)


def test_bad_records_are_diagnosed_not_raised(tmp_path: Path) -> None:
    records = json.loads(UI.read_text())
    records[3:3] = [42, {"ts": 1, "type": "say"}, {"ts": 2, "type": "say", "say": "command_output", "text": 7}]
    broken = tmp_path / "ui_messages.json"
    broken.write_text(json.dumps(records)[:-40])  # and cut off
    s = load(broken)
    assert s.format == "cline-ui"
    cut, *bad = s.diagnostics
    assert cut.level is Level.error and "cut off" in cut.message
    assert [(d.level, d.line) for d in bad] == [(Level.error, 4), (Level.warning, 5), (Level.warning, 6)]
    assert s.shell_calls()[0].command == "uvicorn app.main:api --port 8000"


def _raw_commands(path: Path) -> int:
    return sum((r.get("say") or r.get("ask")) == "command" for r in json.loads(path.read_text("utf-8")))


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_files("cline-ui"), ids=lambda p: p.name)
def test_corpus_ui_messages(corpus: Path, path: Path) -> None:
    assert detect(path)[0].NAME == "cline-ui"
    s = load(path)
    assert [d for d in s.diagnostics if d.level is Level.error] == []
    assert len(s.shell_calls()) == _raw_commands(path)
    assert s.counts.records == len(json.loads(path.read_text("utf-8")))


@pytest.mark.corpus
def test_corpus_labelled_anchors(corpus: Path) -> None:
    s = load(corpus / "cline" / "mcp-vscode-ui-messages.json")
    by_ref = {t.ref: t for t in s.shell_calls()}
    second, kill = by_ref["1760537011688"], by_ref["1760537040107"]  # labels.yaml's anchors
    assert (second.line, kill.line) == (299, 311)
    assert second.background and "EADDRINUSE" in (second.output or "")
    assert kill.command == "taskkill /PID 35016 /F"
    assert isinstance(s.events[0], UserEvent)
    assert all(isinstance(e, ToolEvent) or e.line for e in s.events)
