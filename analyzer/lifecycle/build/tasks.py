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


class TaskSteps(WalkBase):
    """Steps for background tasks: polls, stops and the harness's notifications of their end."""

    def on_task_poll(self, ev: ToolEvent) -> None:
        inst = self.by_task.get(ev.task_id or "")
        if inst is None:
            return
        launch = self.launch_of_task(ev.task_id or "")
        running = ev.exit_code is None and not re.search(r"<status>(?:completed|killed|failed)", ev.output or "")
        if not running:
            self.task_ended(ev.task_id or "")
        # "still running" says the process is alive, not that it serves: readiness comes from its log
        self.probe(ev, inst, "task-poll", f"task {ev.task_id}", True if running else None)
        if ev.output:
            self.log_evidence(ev, inst, launch, ev.output)
        if ev.exit_code not in (None, 0) and launch is not None:
            self.fail_launch(ev, launch, self.w.position(launch), "exit", f"exit code {ev.exit_code}")

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
        lives = self.live.get(inst, [])
        fi = self.w.position(launch)
        if fi not in lives:
            return  # already stopped by the agent: the notification is the echo of that kill
        if (ev.status or "") == "killed":
            # stopped from outside the agent's calls (the harness restarting, the user): not a crash
            xi = self.w.record(Kill(event=ev.index, mechanism="task-killed", text=f"task {ev.task_id}",
                                  detail=f"background task {ev.task_id} running the {launch.label} was stopped"))
            lives.remove(fi)
            if not lives:
                self.w.change_state(inst, "stopped", xi, f"task {ev.task_id} was stopped")
        elif ev.exit_code not in (None, 0) or (ev.status or "") == "failed":
            xi = self.w.record(Failure(event=ev.index, instance=inst, reason="exit", launch_event=launch.event,
                                     quote=ev.text[:200] or f"exit code {ev.exit_code}",
                                     detail=f"background task {ev.task_id} ended with exit code {ev.exit_code}"))
            lives.remove(fi)
            self.w.link(f"event:{ev.index}", f"instance:{inst}", "reports-failure", xi)
            if not lives:
                self.w.change_state(inst, "failed", xi, f"task {ev.task_id} exited {ev.exit_code}")
        elif fi in self.task_bound and (ev.status or "") in ("completed", "") and ev.exit_code is not None:
            # the task's shell ran the server in its foreground: the task is over, so is the server
            xi = self.w.record(Kill(event=ev.index, mechanism="task-ended", text=f"task {ev.task_id}",
                                  detail=f"background task {ev.task_id} running the {launch.label} completed"))
            lives.remove(fi)
            if not lives:
                self.w.change_state(inst, "stopped", xi, f"task {ev.task_id} completed")
