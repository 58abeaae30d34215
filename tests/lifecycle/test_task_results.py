"""Results that arrive later attach to the launch they report on: a poll's status and exit code
(Claude Code's BashOutput/TaskOutput, Codex's ``write_stdin``, Antigravity's task status) and the
harness's notifications. A launch a later result shows failed is failed, so a retry is a retry."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer import analyze
from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.build.tasks import poll_outcome
from analyzer.lifecycle.world import World


def session(tmp_path: Path, agent: str, events: str) -> Path:
    f = tmp_path / "s.session.yaml"
    f.write_text(f"agent: {agent}\nevents:\n" + events)
    return f


def world(path: Path) -> World:
    return build_world(load(path))


@pytest.mark.parametrize(("output", "code", "outcome"), [
    ("<status>running</status>\n<stdout>compiling…</stdout>", None, ("running", None)),
    ("<status>failed</status>\n\n<exit_code>1</exit_code>\n<stderr>Error</stderr>", None, ("failed", 1)),
    ("<status>completed</status>\n<exit_code>0</exit_code>", None, ("completed", 0)),
    ("<status>killed</status>", None, ("killed", None)),
    ("Task: 0c1d/task-41\nStatus: RUNNING\nLog: C:\\tasks\\41.log", None, ("running", None)),
    ("Task: 0c1d/task-41\nStatus: DONE\nLog: C:\\tasks\\41.log", None, ("completed", None)),
    ("Task: 0c1d/task-41\nStatus: CANCELED", None, ("killed", None)),
    ("Traceback (most recent call last):\nProcess exited with code 1", None, ("completed", 1)),
    ("INFO: Uvicorn running on http://127.0.0.1:8000", None, ("running", None)),
    ("ModuleNotFoundError: No module named 'app'", 1, ("completed", 1)),  # over; the step reads 1 as failed
])
def test_poll_outcomes(output: str, code: int | None, outcome: tuple[str, int | None]) -> None:
    assert poll_outcome(output, code) == outcome


def test_a_poll_showing_the_task_failed_makes_the_next_launch_a_retry(tmp_path: Path) -> None:
    f = session(tmp_path, "claude-code", """\
  - bash: npm run dev -- --port 3000
    background: true
    task: bash_1
    output: Command running in background with ID bash_1
  - tool: BashOutput
    input: {bash_id: bash_1}
    output: "<status>failed</status>\\n\\n<exit_code>1</exit_code>\\n\\n<stderr>Error: Cannot find module 'vite'</stderr>"
  - bash: npm install && npm run dev -- --port 3000
    background: true
    task: bash_2
    output: Command running in background with ID bash_2
""")
    w = world(f)
    assert [(c.state, c.event) for c in w.instances["local:3000"].history] == [
        ("starting", 0), ("failed", 1), ("starting", 2)]
    assert [la.duplicate_of for la in w.launches()] == [None, None]
    assert not [x for x in analyze(f).findings if x.rule == "duplicate-launch"]


def test_codex_write_stdin_exit_fails_the_unified_exec_launch(tmp_path: Path) -> None:
    f = session(tmp_path, "codex", """\
  - bash: uvicorn app:api --port 8000
    background: true
    task: "7"
    output: Process running with session ID 7
  - tool: write_stdin
    input: {session_id: 7, chars: ""}
    task: "7"
    output: "ModuleNotFoundError: No module named 'app'\\nProcess exited with code 1"
  - bash: uvicorn main:api --port 8000
    background: true
    task: "9"
    output: Process running with session ID 9
""")
    w = world(f)
    assert [c.state for c in w.instances["local:8000"].history] == ["starting", "failed", "starting"]
    assert [la.duplicate_of for la in w.launches()] == [None, None]


def test_antigravity_task_status_canceled_stops_its_server_and_done_waits_for_the_notification(
        tmp_path: Path) -> None:
    f = session(tmp_path, "antigravity", """\
  - bash: npm run dev -- --port 3000
    background: true
    task: task-12
    output: "Background task with task id: 0c1d/task-12"
  - tool: TaskOutput
    input: {task_id: task-12}
    output: "Task: 0c1d/task-12\\nStatus: RUNNING\\nLog: C:\\\\tasks\\\\12.log"
  - tool: TaskOutput
    input: {task_id: task-12}
    output: "Task: 0c1d/task-12\\nStatus: DONE\\nLog: C:\\\\tasks\\\\12.log"
  - system: task-notification
    task: task-12
    status: failed
    exit: 1
    text: "Task task-12 finished with exit code 1"
  - bash: python -m http.server 8080
    background: true
    task: task-30
    output: "Background task with task id: 0c1d/task-30"
  - tool: TaskOutput
    input: {task_id: task-30}
    output: "Task: 0c1d/task-30\\nStatus: CANCELED"
  - bash: npm run dev -- --port 3000
    background: true
    task: task-40
    output: "Background task with task id: 0c1d/task-40"
""")
    w = world(f)
    assert [(c.state, c.event) for c in w.instances["local:3000"].history] == [
        ("starting", 0), ("failed", 3), ("starting", 6)]  # DONE says over, not how: the notice does
    assert [c.state for c in w.instances["local:8080"].history] == ["starting", "stopped"]
    assert [la.duplicate_of for la in w.launches()] == [None, None, None]
