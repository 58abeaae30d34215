"""The agent's own stop-task tool: every process the task started, and nothing else."""

from __future__ import annotations

from analyzer.shell.kill import Process, task_stop


def test_task_stop_hits_the_task_processes() -> None:
    a = Process(argv=("python", "src/fetch.py"), task_id="bash_3", label="fetch")
    b = Process(argv=("streamlit", "run", "app.py"), task_id="bash_4", label="streamlit")
    v = task_stop("bash_3", [a, b])
    assert v.mechanism == "task-stop" and [x.process.label for x in v.victims] == ["fetch"]
    assert "bash_3" in v.victims[0].reason
    empty = task_stop("bash_9", [a, b], tool="KillShell")
    assert empty.victims == [] and empty.command.name == "KillShell"
