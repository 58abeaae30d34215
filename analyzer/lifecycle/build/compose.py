"""Steps for declarative stacks: compose project identity, ``up`` reconcile, ``compose ps`` tables,
containers someone else made."""

from __future__ import annotations

import re

from analyzer.events import ToolEvent
from analyzer.lifecycle.build._util import (
    _detached_up,
    _docker_verb,
    _join,
)
from analyzer.lifecycle.build.base import WalkBase
from analyzer.lifecycle.catalog import flag_value
from analyzer.lifecycle.containers import (
    ContainerRow,
    made_containers,
)
from analyzer.shell.docker import docker_command, run_image
from analyzer.shell.model import ShellScript, SimpleCommand


class ComposeSteps(WalkBase):
    """Steps for declarative stacks: compose project identity, ``up`` reconcile, ``compose ps`` tables,"""

    def container_output(self, ev: ToolEvent, script: ShellScript) -> None:
        """Feed the container ledger what this call's docker commands printed: containers the
        agent's own commands made, and the ``docker ps`` / ``compose ps`` tables."""
        output = ev.output or ""
        if ev.background or not output:
            return
        for cmd in script.commands:
            verb = _docker_verb(cmd.effective_argv)
            where = cmd.host or "local"
            if verb in ("up", "create", "run", "start", "restart"):
                ran: dict[str, str] = {}
                if verb == "run" and (name := flag_value(cmd.effective_argv, ["--name"])):
                    parts = docker_command(cmd.effective_argv)
                    if parts is not None and (image := run_image(parts.args)):
                        ran[name] = image
                self.containers.agent_made(where, ev.index, output, ran or None)
                if verb == "start" and ev.exit_code in (0, None):
                    self.containers_started(ev, cmd, where)
                stack = self.w.instances.get(self.stack_key(cmd, where)) if verb != "run" else None
                if stack is not None:
                    stack.members += [m for m in made_containers(output) if m not in stack.members]
            elif verb == "ps" and (rows := self.table_rows(ev)):
                self.containers.listed(where, ev.index, rows)

    def containers_started(self, ev: ToolEvent, cmd: SimpleCommand, where: str) -> None:
        """``docker start NAME…``: a stopped container the agent ran starts again, with the command
        it was run with."""
        parts = docker_command(cmd.effective_argv)
        if parts is None or parts.compose:
            return
        names = {a for a in parts.args if not a.startswith("-")}
        for key, inst in list(self.w.instances.items()):
            if inst.container in names and inst.host == where and not self.live.get(key) \
                    and self.live_state(key, ev.index) == "stopped" and any(la.argv for la in self.w.launches(key)):
                self.start_again(ev.index, cmd.position, " ".join(cmd.argv), key)

    def compose_project(self, cmd: SimpleCommand, where: str) -> str | None:
        """The compose project a command acts on, as compose names it: ``-p``, then
        ``COMPOSE_PROJECT_NAME``, then the folder of ``--project-directory`` or ``-f``, then the
        working folder; a command that names none acts on the project the latest one named."""
        parts = docker_command(cmd.effective_argv)
        name = (parts.project if parts else None) or cmd.env.get("COMPOSE_PROJECT_NAME")
        if not name:
            folder = parts.project_directory if parts else None
            compose_file = parts.files[0] if parts and parts.files else None
            if folder is None and compose_file and ("/" in compose_file or "\\" in compose_file):
                folder = _join(self.cwd_at.get(cmd.position, ""), compose_file).rsplit("/", 1)[0]
            elif folder is not None:
                folder = _join(self.cwd_at.get(cmd.position, ""), folder)
            name = (folder or self.cwd_at.get(cmd.position, "")).rstrip("/").rsplit("/", 1)[-1]
        project = re.sub(r"[^a-z0-9_-]", "", name.lower()) if name and "$" not in name else ""
        if project:
            self.project[where] = project
            return project
        return self.project.get(where)

    def stack_key(self, cmd: SimpleCommand, where: str) -> str:
        """The instance key of the compose stack a command acts on."""
        project = self.compose_project(cmd, where)
        return f"{where}/container:compose:{project}" if project else f"{where}/container:compose"

    def compose_empty(self, ev: ToolEvent, stack: str) -> None:
        """``docker compose ps`` lists no container: an attached ``up`` of that stack is not
        running it any more, whatever the harness said of its task. (A detached ``up -d`` may still
        be pulling or building, before any container exists: it stays open.)"""
        ups = self.open_ups.get(stack, {})
        for fi in [u for u in ups if not _detached_up(self.w.facts[u].argv)]:  # type: ignore[union-attr]
            del ups[fi]

    def compose_running(self, stack: str) -> None:
        """``docker compose ps`` lists running containers: a detached ``up -d`` still believed open
        has done its work (it returns once the containers start); an attached one is now running
        them, so stopping the whole stack ends it."""
        ups = self.open_ups.get(stack, {})
        for fi in list(ups):
            if _detached_up(self.w.facts[fi].argv):  # type: ignore[union-attr]
                del ups[fi]
            else:
                self.up_running.add(fi)

    def published_over(self, ev: ToolEvent, stack: str, rows: list[ContainerRow]) -> None:
        """The stack's containers publish a port that a server this session launched outside the
        stack still held when the stack's latest ``up`` ran (``ng serve --port 4200``, then a
        compose frontend on 4200): that ``up`` launched a second server onto a live one."""
        where = stack.split("/", 1)[0]
        ups = [f for f in self.w.launches(stack) if f.ran and f.event < ev.index]
        if not ups:
            return
        up = ups[-1]
        if up.duplicate_of is not None or up.collided:
            return
        for port in sorted({p for r in rows for p in r.published}):
            for inst in self.find(host=where, port=port):
                if self.w.instances[inst].server == "compose" or self.w.instances[inst].owner != "agent":
                    continue
                rivals = [lf for lf in self.live.get(inst, []) if self.w.facts[lf].event < up.event]
                # only a server shown serving: one merely launched long ago may have died unseen
                if rivals and self.live_state(inst, up.event) == "ready":
                    up.overlaps.append((port, self.w.facts[rivals[-1]].event))
        if up.overlaps:
            up.duplicate_of = up.overlaps[0][1]
            for _, prior in up.overlaps:
                self.w.link(f"event:{up.event}", f"event:{prior}", "conflicts-with", self.w.position(up))
