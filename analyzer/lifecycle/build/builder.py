"""The builder: one walk over the session's events, each event handed to the step for its kind."""

from __future__ import annotations

from analyzer.events import AssistantEvent, Event, SystemEvent, ToolEvent, UserEvent
from analyzer.lifecycle.build.compose import ComposeSteps
from analyzer.lifecycle.build.kills import KillSteps
from analyzer.lifecycle.build.launches import LaunchSteps
from analyzer.lifecycle.build.messages import MessageSteps
from analyzer.lifecycle.build.probes import ProbeSteps
from analyzer.lifecycle.build.tasks import TaskSteps
from analyzer.lifecycle.build.units import UnitSteps


class Builder(UnitSteps, MessageSteps, LaunchSteps, ProbeSteps, KillSteps, ComposeSteps, TaskSteps):
    """Walks a session's events into its ``World``: facts, instances, states and edges. The unit
    step comes first: it reads process managers' commands and hands the rest to the steps it extends."""

    def run(self) -> None:
        for ev in self.w.session.events:
            self.feed(ev)

    def feed(self, ev: Event) -> None:
        """One event of the walk; the live guard feeds a growing session this way."""
        if isinstance(ev, UserEvent):
            if ev.origin == "prompt":
                self.on_user(ev)
        elif isinstance(ev, AssistantEvent):
            self.on_agent(ev)
        elif isinstance(ev, ToolEvent):
            if ev.command is not None:
                self.on_shell(ev)
            elif ev.category == "task_output" and ev.task_id:
                self.heard_from_task(ev)
                self.on_task_poll(ev)
            elif ev.category == "task_stop" and ev.task_id:
                self.on_task_stop(ev)
        elif isinstance(ev, SystemEvent) and ev.task_id:
            self.heard_from_task(ev)
            self.on_task_note(ev)
