from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.events import Level, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest import load
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
