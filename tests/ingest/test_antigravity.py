"""Google Antigravity transcripts: detection, calls paired with the result steps after them, background
tasks and their ends, the user's own commands and words, and the real transcripts of the corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.events import AssistantEvent, Level, SystemEvent, UserEvent
from analyzer.ingest import FORMATS, antigravity, detect, load
from analyzer.ingest.base import read_head
from analyzer.pipeline import analyze
from tests.ingest.test_corpus_other import detection_cases

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "antigravity" / "transcript.jsonl"
CORPUS = ROOT.parent / "shared" / "corpus" / "antigravity"
CORPUS_FILES = sorted(CORPUS.glob("*.jsonl")) if CORPUS.is_dir() else []


def test_detected_from_its_steps() -> None:
    fmt, reason = detect(FIXTURE)
    assert fmt.NAME == "antigravity" and "step_index" in reason


@pytest.mark.parametrize(("path", "fmt"), detection_cases(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_claims_no_other_formats_file(path: Path, fmt: str) -> None:
    assert antigravity.detect(path, read_head(path)) is None


def test_user_agent_and_harness_events_in_step_order() -> None:
    s = load(FIXTURE)
    assert (s.format, s.agent, s.session_id, s.model) == (
        "antigravity", "antigravity", "7f3c2a10-5b7e-4c1d-9a2e-0d4b6c8e1f23", "Gemini 3.5 Flash (Medium)")
    users = [e for e in s.events if isinstance(e, UserEvent)]
    # the typed request without the IDE's metadata, and the instruction typed in place of a denied command
    assert [u.text for u in users] == [
        "Start the shop API on port 8000 and check that it answers.",
        "Thanks. Add a /metrics route and restart it so I can see it.",
        "don't upgrade anything, just restart your own server task",
        "the API is down again"]
    assert [u.line for u in users] == [1, 11, 14, 25]
    (ide,) = [e for e in s.events if isinstance(e, SystemEvent) and e.subtype == "ide-state"]
    assert ide.line == 1 and "tail -f logs/access.log" in ide.text and "local time" not in ide.text
    first = s.events[2]
    assert isinstance(first, AssistantEvent) and first.text.startswith("I'll start uvicorn") and first.thinking
    # CONVERSATION_HISTORY and EPHEMERAL_MESSAGE are prompt plumbing
    assert (s.counts.records, s.counts.skipped) == (29, 2)
    assert [e.index for e in s.events] == list(range(len(s.events)))
    assert all(e.ref is None for e in s.events)  # step indexes repeat after rewinds: no ids
    assert s.diagnostics == []


def test_commands_with_exit_codes_outputs_and_background_tasks() -> None:
    s = load(FIXTURE)
    shell = s.shell_calls()
    assert [t.command for t in shell] == [
        "uvicorn app:api --host 127.0.0.1 --port 8000", "curl -s http://127.0.0.1:8000/health",
        "pip install --upgrade fastapi", "uvicorn app:api --host 127.0.0.1 --port 8000",
        "curl -sf http://127.0.0.1:8000/metrics", "curl -s http://127.0.0.1:8000/health",
        "uvicorn app:api --host 127.0.0.1 --port 8000"]
    launch, probe, denied, relaunch, metrics, by_user, last = shell
    # the call's line is its PLANNER_RESPONSE (how labels.yaml anchors), the result's its own step
    assert (launch.line, launch.result_line, launch.background, launch.task_id) == (3, 4, True, "task-3")
    assert launch.cwd == "/home/dev/shop-api" and launch.input["WaitMsBeforeAsync"] == 3000
    assert (probe.exit_code, probe.is_error, probe.output) == (0, False, '{"status": "ok"}')
    assert (denied.line, denied.interrupted, denied.is_error, denied.exit_code) == (12, True, True, None)
    assert "user denied permission" in (denied.output or "")
    assert (relaunch.task_id, metrics.output, metrics.exit_code) == ("task-18", '{"requests": 0}', 0)
    assert (by_user.by_user, by_user.exit_code, by_user.line, by_user.cwd) == (True, 7, 24, "/home/dev/shop-api")
    assert (last.line, last.task_id) == (28, "task-28")
    edit = next(t for t in s.tools() if t.name == "replace_file_content")
    assert (edit.category, edit.line, edit.result_line) == ("file", 12, 13)  # two calls in one response


def test_task_polls_stops_and_ends() -> None:
    s = load(FIXTURE)
    poll, stop = [t for t in s.tools() if t.name == "manage_task"]
    assert (poll.category, poll.task_id) == ("task_output", "task-3")
    assert "Uvicorn running on http://127.0.0.1:8000" in (poll.output or "") and "REMINDER" not in (poll.output or "")
    assert (stop.category, stop.task_id, stop.line) == ("task_stop", "task-3", 15)
    notes = [(e.task_id, e.status, e.line) for e in s.events if isinstance(e, SystemEvent) and e.task_id]
    # the cancel's echo, then the harness restart stopping the one task still running
    assert notes == [("task-3", "killed", 17), ("task-18", "killed", 23)]
    subtypes = [e.subtype for e in s.events if isinstance(e, SystemEvent)]
    assert {"api_error", "checkpoint", "message"} <= set(subtypes)


def test_the_world_sees_launch_probe_and_stop() -> None:
    analysis = analyze(FIXTURE)
    (inst,) = analysis.world.instances.values()
    assert (inst.host, inst.port) == ("local", 8000)
    states = [c.state for c in inst.history]
    assert states[:3] == ["starting", "ready", "stopped"]  # launched, its log says ready, manage_task kill


def test_bad_steps_are_reported_and_the_rest_is_read(tmp_path: Path) -> None:
    lines = FIXTURE.read_text("utf-8").splitlines()
    broken = [*lines[:3], lines[3][:50], json.dumps({"step_index": 3}), json.dumps([1, 2]), *lines[4:]]
    p = tmp_path / "transcript.jsonl"
    p.write_text("\n".join(broken) + "\n", encoding="utf-8")
    s = load(p, format="antigravity")
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.error, 4), (Level.error, 5), (Level.error, 6)]
    launch = s.shell_calls()[0]
    assert launch.output is None  # its result step was the cut line
    assert len(s.shell_calls()) == 7


def raw_shell_calls(path: Path) -> int:
    """run_command calls in the responses, and the commands the user ran in the IDE, from the raw steps."""
    count = 0
    for line in path.read_bytes().splitlines():
        if not line.strip():
            continue
        step = json.loads(line)
        count += sum(c.get("name") == "run_command" for c in step.get("tool_calls") or [])
        count += step.get("source") == "USER_EXPLICIT" and step.get("type") == "RUN_COMMAND"
    return count


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_transcript_loads_cleanly_with_every_shell_call(corpus: Path, path: Path) -> None:
    assert detect(path)[0].NAME == "antigravity"
    assert [name for name, fmt in FORMATS.items() if fmt.detect(path, read_head(path))] == ["antigravity"]
    s = load(path)
    assert [d for d in s.diagnostics if d.level is Level.error] == []
    assert len(s.shell_calls()) == raw_shell_calls(path)
    assert all(t.output is not None for t in s.shell_calls())  # every command's result step was found
    assert s.session_id and [e.index for e in s.events] == list(range(len(s.events)))


@pytest.mark.corpus
def test_corpus_anchors_match_the_labels(corpus: Path) -> None:
    s = load(corpus / "antigravity" / "chengeto-pwa-devserver.jsonl")
    dup = next(t for t in s.shell_calls() if t.line == 572)  # labels.yaml: steps call 603, result 604
    assert (dup.command, dup.background, dup.task_id, dup.result_line) == ("cmd /c npm run dev", True, "task-604", 573)
    kill = next(t for t in s.shell_calls() if t.line == 730)
    assert (kill.command or "").startswith('powershell -Command "Stop-Process -Name node -Force')
    eager = load(corpus / "antigravity" / "eager-nextdev-port-in-use.jsonl")
    refused = next(t for t in eager.shell_calls() if t.line == 778)
    assert refused.exit_code == 1 and "Another next dev server is already running" in (refused.output or "")
    assert sum(t.by_user for t in eager.shell_calls()) == 19
