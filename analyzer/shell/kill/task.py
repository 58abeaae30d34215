"""An agent's own "stop background task" tool (Claude Code ``TaskStop``/``KillShell``/``KillBash``)."""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.shell.kill.model import Hit, HitReason, KillVerdict, Process
from analyzer.shell.kill.signals import parse_signal
from analyzer.shell.model import SimpleCommand

__all__ = ["task_stop"]


def task_stop(
    task_id: str, processes: Sequence[Process], *, tool: str = "TaskStop", signal: str = "TERM",
) -> KillVerdict:
    """The tool kills the task's shell and its process tree, i.e. every process started in that task."""
    cmd = SimpleCommand(argv=[tool, task_id], name=tool, effective_argv=[tool, task_id])
    num, name = parse_signal(signal) or (15, "TERM")
    verdict = KillVerdict(command=cmd, mechanism="task-stop", signal=num, signal_name=name, targets=[task_id])
    for p in processes:
        if p.task_id is not None and p.task_id == task_id:
            why = HitReason(mechanism="task-stop", matched="task", written=tool, target=task_id, signal_name=name)
            verdict.victims.append(Hit(process=p, why=why))
    if not verdict.victims:
        verdict.notes.append(f"no known process belongs to task {task_id}")
    return verdict
