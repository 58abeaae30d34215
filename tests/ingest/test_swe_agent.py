from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.events import Level, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest import detect, load, swe_agent
from analyzer.ingest.swe_agent import classify

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "swe-agent"


def tools(s: object) -> list[ToolEvent]:
    return [e for e in getattr(s, "events", []) if isinstance(e, ToolEvent)]


def test_trajectory_steps_are_the_calls_and_history_is_not_counted_twice() -> None:
    s = load(FIXTURES / "flask-health-503.traj")
    assert (s.format, s.agent, s.model, s.session_id) == ("swe-agent", "swe-agent", "claude-sonnet-4-20250514",
                                                          "acme__health-503")
    # system prompt and task come first in the timeline though the history follows the steps in the file
    prompt, task = s.events[:2]
    assert isinstance(prompt, SystemEvent) and prompt.subtype == "prompt" and prompt.line == 7
    assert isinstance(task, UserEvent) and task.line == 8 and "/health returns 503" in task.text
    calls = tools(s)
    assert [(t.name, t.category) for t in calls] == [
        ("open", "file"), ("str_replace_editor", "file"), ("bash", "shell"), ("bash", "shell"),
        ("bash", "shell"), ("submit", "other")]
    assert [t.line for t in calls] == [1, 2, 3, 4, 5, 6]
    launch, probe, stop = calls[2:5]
    assert launch.command == "nohup flask --app app run --port 5000 > /tmp/flask.log 2>&1 &"
    assert (launch.ref, launch.output, launch.cwd) == ("call_Xe5Hs1GqY9uM", "[1] 2291", "/testbed")
    assert probe.output == '{"status":"starting"} 503' and probe.exit_code is None and probe.ts is None
    assert stop.command is not None and stop.command.startswith("kill %1")
    assert calls[0].command is None and calls[0].input == {"action": "open app/health.py"}
    # 6 steps + 14 history items; 12 history items repeat the steps
    assert (s.counts.records, s.counts.skipped) == (20, 12) and not s.diagnostics
    assert sum(1 for t in calls if t.category == "shell") == 3


def test_history_only_file_pairs_actions_with_observations() -> None:
    s = load(FIXTURES / "runserver-exit-cost.traj")
    assert [e.kind for e in s.events] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    ps, restart = tools(s)
    assert ps.command == "ps aux | grep -v grep | grep runserver" and ps.line == 4 and ps.result_line == 5
    assert ps.output is not None and "--noreload" in ps.output
    assert restart.command == "pkill -f 'manage.py runserver'; nohup python manage.py runserver 0.0.0.0:8000 &"
    assert restart.output is None  # the run stopped before the observation
    assert s.counts.skipped == 1  # the demonstration


def test_enigma_exit_marker_attempts_and_bad_steps(tmp_path: Path) -> None:
    attempt = {"trajectory": [
        {"action": "curl -s localhost:9000/\n", "observation": "ok///PROCESS-DONE:0:PROCESS-DONE///",
         "thought": "probe"},
        {"observation": "no action here"},
        {"action": "false\n", "observation": "///PROCESS-DONE:1:PROCESS-DONE///", "thought": ""},
    ], "history": []}
    p = tmp_path / "retry.traj"
    p.write_text(json.dumps({"attempts": [attempt, attempt], "info": {}}))
    s = load(p)
    curls = [t for t in tools(s) if t.command == "curl -s localhost:9000/"]
    assert len(curls) == 2 and curls[0].output == "ok" and curls[0].exit_code == 0
    fails = [t for t in tools(s) if t.command == "false"]
    assert [(t.exit_code, t.is_error, t.line) for t in fails] == [(1, True, 3), (1, True, 6)]
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.error, 2), (Level.info, 4), (Level.error, 5)]


@pytest.mark.parametrize(("action", "expected"), [
    ("python reproduce.py", ("bash", "shell")),
    ("edit 12:14\n    return 1\nend_of_edit", ("edit", "file")),
    ("find_file fields.py src", ("find_file", "file")),
    ("submit", ("submit", "other")),
    ("connect_start web.chal.csaw.io 8000", ("connect_start", "other")),
    ("nohup python -m http.server 8000 &", ("bash", "shell")),
])
def test_classify_swe_agent_commands(action: str, expected: tuple[str, str]) -> None:
    assert classify(action) == expected


def test_a_1x_history_only_file_pairs_observations_with_their_call_ids() -> None:
    path = FIXTURES / "history-only-function-calling.traj"
    fmt, why = detect(path)
    assert fmt.NAME == "swe-agent" and "history" in why
    s = load(path)
    assert [e.kind for e in s.events[:2]] == ["system", "user"] and not s.diagnostics
    view, launch, probe, stop, submit = tools(s)
    assert (view.name, view.category, view.ref, view.line, view.result_line) == (
        "str_replace_editor", "file", "toolu_01Vw3kHealth", 3, 4)
    assert launch.command == "nohup uvicorn api.main:app --port 8000 > /tmp/api.log 2>&1 &"
    assert (launch.ref, launch.output) == ("toolu_01Lh6Uvic", "OBSERVATION:\n[1] 4127")
    said = s.events[s.events.index(launch) - 1]
    assert said.kind == "assistant" and said.thinking == "A foreground server would block the shell until the timeout."
    assert (probe.line, probe.result_line, probe.output) == (7, 8, "OBSERVATION:\n500")
    assert stop.command == "kill %1" and (submit.name, submit.category) == ("submit", "other")
    assert s.counts.records == 12 and s.counts.skipped == 0


def test_history_observations_follow_their_tool_call_id_and_a_stray_one_is_not_the_user(tmp_path: Path) -> None:
    def action(cid: str, cmd: str) -> dict[str, object]:
        return {"role": "assistant", "content": "", "thought": "", "action": cmd, "message_type": "action",
                "tool_calls": [{"id": cid, "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}

    def observation(cid: str, out: str) -> dict[str, object]:
        return {"role": "tool", "content": out, "message_type": "observation", "tool_call_ids": [cid]}

    p = tmp_path / "h.traj"
    p.write_text(json.dumps({"history": [
        {"role": "user", "content": "task", "agent": "main", "message_type": "observation"},
        action("c1", "python -m http.server 8000 &"), action("c2", "curl -s localhost:8000"),
        observation("c2", "<html>"), observation("c1", "[1] 90"), observation("c9", "late output"),
    ]}))
    s = load(p)
    serve, curl = tools(s)
    assert (serve.output, serve.result_line, curl.output, curl.result_line) == ("[1] 90", 5, "<html>", 4)
    stray = s.events[-1]
    assert isinstance(stray, UserEvent) and stray.origin == "meta" and stray.text == "late output"


def test_a_history_of_plain_chat_messages_is_not_claimed(tmp_path: Path) -> None:
    head = json.dumps({"history": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]})
    assert swe_agent.detect(tmp_path / "x.json", head.encode()) is None


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["marshmallow-1867-function-calling.traj", "django-13344-uvicorn-timeout.traj",
                                  "pydicom-1458-gpt4.traj", "ctf-web-i-got-id.traj"])
def test_corpus_history_alone_gives_the_calls_of_the_steps(corpus: Path, tmp_path: Path, name: str) -> None:
    """The same run read without its ``trajectory`` (what a history-only file holds): same calls and ids."""
    doc = json.loads((corpus / "swe-agent" / name).read_text("utf-8"))
    whole = load(corpus / "swe-agent" / name)
    alone = tmp_path / name
    alone.write_text(json.dumps({"history": doc["history"]}))
    s = load(alone)
    assert [(t.name, t.command, t.ref) for t in tools(s)] == [(t.name, t.command, t.ref) for t in tools(whole)]
    assert [d for d in s.diagnostics if d.level is not Level.info] == []
    assert sum(t.output is not None for t in tools(s)) >= len(tools(s)) - 1  # the last may have none


def test_a_history_action_with_tool_calls_of_the_wrong_type_is_still_read(tmp_path: Path) -> None:
    p = tmp_path / "h.traj"
    p.write_text(json.dumps({"history": [
        {"role": "assistant", "content": "", "action": "ls", "tool_calls": {"id": "c1"}, "message_type": "action"},
        {"role": "tool", "content": "a.txt", "tool_call_ids": "c1", "message_type": "observation"},
    ]}))
    (ls,) = tools(load(p))
    assert (ls.command, ls.ref, ls.output) == ("ls", None, "a.txt")
