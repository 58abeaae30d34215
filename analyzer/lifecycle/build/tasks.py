"""Steps for background tasks: polls, stops and the harness's notifications of their end."""

from __future__ import annotations

import re

from analyzer.events import SystemEvent, ToolEvent
from analyzer.lifecycle.build.base import WalkBase
from analyzer.lifecycle.facts import (
    Failure,
    Kill,
    Launch,
    Victim,
)

_POLL_STATUS = re.compile(r"<status>(\w+)</status>|^Status: ([A-Z]+)\s*$", re.M)
_POLL_EXIT = re.compile(r"<exit_code>(-?\d+)</exit_code>|^(?:Exit code:|Process exited with code) (-?\d+)\s*$", re.M)
_STATUS_WORDS = {"running": "running", "completed": "completed", "done": "completed", "failed": "failed",
                 "error": "failed", "killed": "killed", "canceled": "killed", "cancelled": "killed"}
"""A poll's status word (Claude Code's ``<status>``, Antigravity's ``Status:``) -> what it says."""


def poll_outcome(output: str, exit_code: int | None) -> tuple[str, int | None]:
    """(running, completed, failed or killed; the exit code) of a task poll: its status line and exit
    code, else the exit code the reader found (Codex's "Process exited with code 1"); no exit code
    and no status is still running."""
    # each regex only where its literals are: an alternation anchored at line starts gives the regex
    # engine nothing to skip to, and a poll of a busy task's output is long
    code = exit_code
    if code is None and ("<exit_code>" in output or "Exit code:" in output or "Process exited with code" in output) \
            and (m := _POLL_EXIT.search(output)):
        code = int(m.group(1) or m.group(2))
    said = _POLL_STATUS.search(output) if "<status>" in output or "Status: " in output else None
    status = _STATUS_WORDS.get((said.group(1) or said.group(2)).lower(), "") if said else ""
    if not status:
        status = "running" if code is None else "completed"
    return status, code


class TaskSteps(WalkBase):
    """Steps for background tasks: polls, stops and the harness's notifications of their end."""

    def on_task_poll(self, ev: ToolEvent) -> None:
        """An output poll of a background task (BashOutput/TaskOutput, Codex ``write_stdin``,
        Antigravity's task status) reports on the launch that task runs: still running (alive, not
        ready), or over, as its status and exit code say: failed, stopped, or done with an exit code
        (done without one leaves the outcome to the harness's notification)."""
        inst = self.by_task.get(ev.task_id or "")
        if inst is None:
            return
        launch = self.launch_of_task(ev.task_id or "")
        status, code = poll_outcome(ev.output or "", ev.exit_code)
        running = status == "running"
        if not running:
            self.task_ended(ev.task_id or "")
        # "still running" says the process is alive, not that it serves: readiness comes from its log
        self.probe(ev, inst, "task-poll", f"task {ev.task_id}", True if running else None)
        if ev.output:
            self.log_evidence(ev, inst, launch, ev.output)
        if launch is None or running or self.w.position(launch) not in self.live.get(inst, []):
            return  # over already: this poll is the echo of its end (a notification, the agent's kill)
        if code not in (None, 0) or status == "failed":
            self.fail_launch(ev, launch, self.w.position(launch), "exit",
                             f"exit code {code}" if code is not None else f"task {ev.task_id} failed")
        elif status == "killed":
            self.task_over(ev, inst, launch, "killed", code, "")
        elif status == "completed" and code is not None:
            # Antigravity's "Status: DONE" shows no exit code: how it ended is the notification's to say
            self.task_over(ev, inst, launch, "completed", code, "")

    def launch_of_task(self, task_id: str) -> Launch | None:
        return self.task_launch.get(task_id)  # Launch facts are only made by ``launch_of``

    def task_ended(self, task_id: str) -> None:
        """A background task is over: a compose ``up`` it ran is no longer running."""
        for ups in self.open_ups.values():
            for fi, tid in list(ups.items()):
                if tid == task_id:
                    del ups[fi]

    def on_task_stop(self, ev: ToolEvent) -> None:
        self.task_ended(ev.task_id or "")
        inst = self.by_task.get(ev.task_id or "")
        launch = self.launch_of_task(ev.task_id or "")
        victims = []
        if inst is not None and launch is not None:
            victims.append(Victim(label=self.w.instances[inst].name, role="server", instance=inst,
                                  launch_event=launch.event, reason=f"background task {ev.task_id} runs it"))
        kill = Kill(event=ev.index, mechanism="task-stop", text=f"{ev.name} {ev.task_id}", victims=victims,
                    detail=f"{ev.name} stops background task {ev.task_id}")
        self.apply_kill(kill)

    def on_task_note(self, ev: SystemEvent) -> None:
        self.task_ended(ev.task_id or "")
        inst = self.by_task.get(ev.task_id or "")
        launch = self.launch_of_task(ev.task_id or "")
        if inst is None or launch is None:
            return
        self.task_over(ev, inst, launch, ev.status or "", ev.exit_code, ev.text)

    def task_over(self, ev: SystemEvent | ToolEvent, inst: str, launch: Launch, status: str, code: int | None,
                  text: str) -> None:
        """The harness says the background task running ``launch`` is over (a notification, or a
        poll's final status): stopped from outside, failed, or completed, which ends a server its
        shell ran in the foreground. Once the launch is no longer running this is only its echo."""
        lives = self.live.get(inst, [])
        fi = self.w.position(launch)
        if fi not in lives:
            return  # already stopped by the agent: the notification is the echo of that kill
        task = ev.task_id
        if status == "killed":
            # stopped from outside the agent's calls (the harness restarting, the user): not a crash
            xi = self.w.record(Kill(event=ev.index, mechanism="task-killed", text=f"task {task}",
                                  detail=f"background task {task} running the {launch.label} was stopped"))
            lives.remove(fi)
            if not lives:
                self.w.change_state(inst, "stopped", xi, f"task {task} was stopped")
        elif code not in (None, 0) or status == "failed":
            xi = self.w.record(Failure(event=ev.index, instance=inst, reason="exit", launch_event=launch.event,
                                     quote=text[:200] or f"exit code {code}",
                                     detail=f"background task {task} ended with exit code {code}"))
            lives.remove(fi)
            self.w.link(f"event:{ev.index}", f"instance:{inst}", "reports-failure", xi)
            if not lives:
                self.w.change_state(inst, "failed", xi, f"task {task} exited {code}")
        elif fi in self.task_bound and status in ("completed", "") and code is not None:
            # the task's shell ran the server in its foreground: the task is over, so is the server
            xi = self.w.record(Kill(event=ev.index, mechanism="task-ended", text=f"task {task}",
                                  detail=f"background task {task} running the {launch.label} completed"))
            lives.remove(fi)
            if not lives:
                self.w.change_state(inst, "stopped", xi, f"task {task} completed")
