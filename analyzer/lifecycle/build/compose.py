"""Steps for declarative stacks: compose project identity, ``up`` reconcile, ``compose ps`` tables,
containers someone else made, and the stack's services.

A compose stack is one instance (``HOST/container:compose:PROJECT``) and each of its services is
an instance of its own keyed under it (``HOST/container:compose:PROJECT/SERVICE``, ``stack`` naming
the stack), with its container, its published port and its own state history. Member instances,
rather than records on the stack, because every rule and query already speaks of instances: a
kill's victims, the user's instruction targets, readiness and ``state_before`` apply to a service
unchanged, so "restart the api" that tears down web and db is the same finding as any other
restart of one server that stops three. The stack keeps its own state (the reconcile of its
``up``s); a service's state comes only from what the log shows of it:

- progress lines of the stack's commands (``Container shop-api-1  Started|Running|Recreated|
  Stopped|Removed|Exited``), ``docker compose ps`` rows (its SERVICE, STATUS and PORTS) and
  ``docker ps`` rows of its container;
- ``up -d SERVICE`` starts that service (the dependencies compose starts with it only where the
  output shows them); ``up`` of a running service changes nothing unless a ``Recreated`` line, or
  ``--force-recreate`` with output that does not list it, shows a restart; an ``up`` that printed
  nothing is no evidence of a restart;
- ``stop|kill|rm -sf|restart SERVICE…`` and whole-stack ``down|stop|kill|restart`` are kills whose
  victims are the live services they select (``KillSteps``); a restart starts them again.
"""

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
    progress_lines,
)
from analyzer.lifecycle.facts import Probe, State
from analyzer.lifecycle.world import Instance
from analyzer.shell import kill as killsem
from analyzer.shell.docker import ComposeVerb, compose_verb, docker_command, run_image
from analyzer.shell.model import ShellScript, SimpleCommand

SERVICE_KIND = "compose-service"
"""``Instance.server`` of a compose stack's service."""
_LIVE: tuple[State, ...] = ("starting", "ready")
# what a progress line's verb says of its container
_PROGRESS_STATE: dict[str, State] = {
    "Started": "starting", "Starting": "starting", "Recreated": "starting", "Restarted": "starting",
    "Restarting": "starting", "Running": "starting",
    "Stopping": "stopped", "Stopped": "stopped", "Removing": "stopped", "Removed": "stopped",
    "Killing": "stopped", "Killed": "stopped", "Exited": "stopped", "Error": "failed",
}
_RESTARTS = frozenset({"Recreated", "Restarted"})
_ONE_OFF = re.compile(r"[-_]run[-_][0-9a-f]{12}$")
"""``docker compose run``'s one-off containers (``repo-api-run-4cf0b9e13ae6``): no service's own."""


def _project_of(stack: Instance) -> str:
    """The compose project a stack instance runs (``shop`` of ``compose:shop``); "" when unnamed."""
    return stack.container.split(":", 1)[1] if stack.container and ":" in stack.container else ""


class ComposeSteps(WalkBase):
    """Steps for declarative stacks: compose project identity, ``up`` reconcile, ``compose ps`` tables,"""

    def container_output(self, ev: ToolEvent, script: ShellScript) -> None:
        """Feed the container ledger what this call's docker commands printed: containers the
        agent's own commands made, and the ``docker ps`` / ``compose ps`` tables; and what they show
        of the stack's services."""
        self.service_output(ev, script)
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
                self.services_listed(ev, cmd, where, rows)
                self.holders_named(where)

    def holders_named(self, where: str) -> None:
        """A container from before the log known only by the port Docker would not publish (its
        refusal came first) is the container a listing now shows up and publishing that port: the
        box learns its name, so a later ``docker rm -f NAME`` stops that box, not a second one."""
        for key in sorted(self.unnamed_containers):
            box = self.w.instances[key]
            if box.host != where or box.port is None:
                continue
            shown = self.containers.publisher(where, box.port)
            if shown is not None and shown[2] is not None:  # someone else's, in the ledger's words
                box.container = shown[1].name
                box.label = f"container {shown[1].name} from before the log"
                self.unnamed_containers.discard(key)

    # -- the stack's services ------------------------------------------------------------------

    def service_output(self, ev: ToolEvent, script: ShellScript) -> None:
        """What this call's compose commands show of their stacks' services: progress lines (read
        once for the call, each for the stack whose project names its container), and the
        services an ``up`` names or recreates."""
        if ev.background or ev.output is None:
            return  # a harness-backgrounded call's output is the harness's note
        output = ev.output
        ups: list[tuple[str, ComposeVerb]] = []
        stacks: list[str] = []
        for cmd in script.commands:
            parts = docker_command(cmd.effective_argv)
            verb = compose_verb(parts) if parts is not None else None
            stack = self.stack_key(cmd, cmd.host or "local") if verb is not None else ""
            if verb is None or stack not in self.w.instances:
                continue  # a stack no ``up`` of this log started: its services are not known here
            stacks.append(stack)
            if verb.verb in ("up", "start"):
                ups.append((stack, verb))
        if not stacks:
            return
        shown: set[str] = set()
        for container, word, line in progress_lines(output):
            stack = next((s for s in stacks if (p := _project_of(self.w.instances[s])) and container.startswith(p)),
                         stacks[0])
            if _ONE_OFF.search(container) or self.containers.foreign(stack.split("/", 1)[0], container):
                continue  # a one-off `run`, or another project's container the same command stopped
            key = self.member(stack, self.service_of(stack, container), container)
            shown.add(key)
            state = _PROGRESS_STATE.get(word)
            if state is None or (word == "Running" and self.member_state(key) in _LIVE):
                continue  # "Running": as declared, nothing restarted
            restart = word in _RESTARTS and self.member_state(key) in _LIVE
            self.member_to(ev, key, state, line.strip() + (" (a restart)" if restart else ""), restart=restart)
        if ev.exit_code in (0, None):
            for stack, verb in ups:
                self.up_named(ev, stack, verb.services, shown, output, verb.has("--force-recreate"))

    def up_named(self, ev: ToolEvent, stack: str, services: tuple[str, ...], shown: set[str], output: str,
                 recreate: bool) -> None:
        """``up|start SERVICE…`` starts the services it names that the output did not list; with
        ``--force-recreate`` and output that lists none of them, the running ones restart. An
        ``up`` that printed nothing says nothing of a restart."""
        keys = [self.member(stack, s, None) for s in services] if services else \
            self.services_of(stack) if recreate else []
        for key in keys:
            if key in shown:
                continue
            live = self.member_state(key) in _LIVE
            if not live and key.rsplit("/", 1)[1] in services:
                self.member_to(ev, key, "starting", f"`up` names {key.rsplit('/', 1)[1]}")
            elif live and recreate and output.strip():
                self.member_to(ev, key, "starting", "`up --force-recreate` recreates it (a restart)", restart=True)

    def services_listed(self, ev: ToolEvent, cmd: SimpleCommand, where: str, rows: list[ContainerRow]) -> None:
        """A ``compose ps`` table names each service's container, its published port and status;
        a ``docker ps`` row of a service's container shows the same."""
        parts = docker_command(cmd.effective_argv)
        stack = self.stack_key(cmd, where) if parts is not None and parts.compose else None
        services = [(k, i) for k, i in self.w.instances.items()
                    if i.server == SERVICE_KIND and i.host == where and i.container]
        by_container = {i.container: k for k, i in services}
        own = {i.container: k for k, i in services if i.stack == stack}
        for row in rows:
            found = by_container.get(row.name)
            if self.containers.foreign(where, row.name) is not None:
                continue  # another project's container under this one's service name: not this stack's
            if row.service and stack in self.w.instances:
                # a service already known by its container (``container_name:``) keeps its key
                key = own.get(row.name) or self.member(stack or "", row.service, row.name)
            elif found is not None:
                key = found
            else:
                continue
            inst = self.w.instances[key]
            if row.published and inst.port is None:
                inst.port = row.published[0]
            up = row.status.startswith(("Up", "Restarting"))
            state: State | None = "starting" if up else "stopped" if row.status.startswith(("Exited", "Dead")) else None
            if state is not None and not (up and self.member_state(key) in _LIVE):
                self.member_to(ev, key, state, f"listed: {row.name} {row.status}", method="docker-ps")

    def service_of(self, stack: str, container: str) -> str:
        """The service a container of ``stack`` runs: the name a ``compose ps`` table gave it, else
        the middle of ``<project>-<service>-<n>``, else the container's own name
        (``container_name:``)."""
        for key, inst in self.w.instances.items():
            if inst.stack == stack and inst.container == container:
                return key.rsplit("/", 1)[1]
        project = _project_of(self.w.instances[stack])
        m = re.fullmatch(rf"{re.escape(project)}[-_](.+)[-_]\d+", container) if project else None
        return m.group(1) if m else container

    def services_of(self, stack: str) -> list[str]:
        """The instances of the services the log has shown of ``stack``."""
        return [k for k, i in self.w.instances.items() if i.stack == stack]

    def member(self, stack: str, service: str, container: str | None) -> str:
        """The instance of ``service`` of ``stack``, made on its first evidence."""
        key = f"{stack}/{service}"
        inst = self.w.instances.get(key)
        if inst is None:
            box = self.w.instances[stack]
            project = _project_of(box)
            inst = self.w.instances[key] = Instance(
                id=key, server=SERVICE_KIND, label=f"{service} service" + (f" ({project})" if project else ""),
                host=box.host, container=container, stack=stack, owner=box.owner, started_by=box.started_by)
        if container and inst.container != container:
            inst.container = container
        return key

    def member_state(self, key: str) -> State:
        history = self.w.instances[key].history
        return history[-1].state if history else "unknown"

    def member_to(self, ev: ToolEvent, key: str, state: State, why: str, restart: bool = False,
                  method: str = "compose-output") -> None:
        """Move a service to ``state`` on this call's evidence (a fact of its own, so the graph can
        point at it); a restart passes through ``stopped``."""
        if self.member_state(key) == state and not restart:
            return
        fi = self.w.record(Probe(event=ev.index, instance=key, method=method, target=why,
                                 answered=state in _LIVE, detail=f"{self.w.instances[key].name}: {why}"))
        self.w.link(f"event:{ev.index}", f"instance:{key}", "probes", fi)
        if restart:
            self.w.change_state(key, "stopped", fi, why)
        self.w.change_state(key, state, fi, why)

    def service_processes(self) -> list[killsem.Process]:
        """The live services as the kill evaluation sees them: compose's units, by their container."""
        out = []
        for key, inst in self.w.instances.items():
            if inst.server != SERVICE_KIND or inst.stack is None or self.member_state(key) not in _LIVE:
                continue
            project = _project_of(self.w.instances[inst.stack])
            service = key.rsplit("/", 1)[1]
            out.append(killsem.Process(host=None if inst.host == "local" else inst.host, kind="server",
                                       label=inst.name, ref=f"instance:{key}",
                                       container=inst.container or f"{project}-{service}-1",
                                       manager="compose", manager_name=f"{project}/{service}"))
        return out

    def with_services(self, insts: list[str], port: int) -> list[str]:
        """The instance a probe of ``port`` asks about (the first of ``insts``) with its compose
        relatives: a stack's probe is also that of its service publishing the port, and a
        service's is also its stack's (the stack first, as before services were known)."""
        if not insts:
            return []
        first = self.w.instances[insts[0]]
        stack = first.stack or (insts[0] if first.server == "compose" else None)
        if stack is None:
            return insts[:1]
        services = [k for k in self.services_of(stack) if self.w.instances[k].port == port]
        box = self.w.instances[stack]
        if box.port is None and first.stack is not None:
            # found through its service: a portless stack learns the port only as ``probe_or_log``
            # teaches the one portless live instance of the host
            portless = [k for k, lives in self.live.items() if lives and self.w.instances[k].host == box.host
                        and self.w.instances[k].port is None]
            if portless == [stack]:
                box.port = port
        return [stack, *services]

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
