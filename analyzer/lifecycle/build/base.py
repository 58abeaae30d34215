"""The walk's state and the lookups every step uses (instances by key, port, unit; liveness)."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from analyzer.events import AssistantEvent, Event, SystemEvent, ToolEvent, UserEvent
from analyzer.lifecycle.build._util import (
    _SCRIPT_RUNNER_PROGRAMS,
    _SLEEP,
    _join,
    _unit,
)
from analyzer.lifecycle.containers import ContainerLedger, ContainerRow, container_rows, ps_format
from analyzer.lifecycle.facts import Fact, Kill, Launch, State
from analyzer.lifecycle.world import Instance, Relation, World
from analyzer.shell import kill as killsem
from analyzer.shell.model import ShellScript, SimpleCommand
from analyzer.shell.platform import infer_platform
from analyzer.shell.resolve import ScriptResolver


class WalkBase:
    """The builder's state over the walk and the lookups its steps share."""

    def __init__(self, world: World) -> None:
        self.w = world
        self.live: dict[str, list[int]] = {}
        """instance id -> fact indexes of its launches believed running."""
        self.by_task: dict[str, str] = {}
        self.recent: list[str] = []
        """Instances in the order they were last launched or touched (latest last)."""
        self.resolver = ScriptResolver()
        self.agent = world.session.agent or world.session.format
        self.platforms: dict[str, str] = {}
        self.task_launch: dict[str, Launch] = {}
        """background task id -> its latest launch (what a scan of the facts from the end finds)."""
        self._agent_process: killsem.Process | None = None
        """The agent's own process, made once (frozen, so every kill can share it)."""
        self.task_bound: set[int] = set()
        """Launch facts run in the foreground of a background task's shell: when the task ends,
        they have ended (a ``nohup … &`` or ``up -d`` inside the task outlives it)."""
        self.guessed_port: set[int] = set()
        self.unnamed_containers: set[str] = set()
        """Boxes of containers from before the log known by a port Docker would not publish, not yet
        by name (``ComposeSteps.holders_named`` names them from a listing)."""
        """Launch facts whose port is the kind's default, not read from the command."""
        self.maybe_hit: dict[int, list[str]] = {}
        """id of a Kill -> instances it may have stopped unseen (``unseen_children_hit``)."""
        self._programs: list[str] | None = None
        self.collided: set[int] = set()
        """Still-running compose ups a later up has already been reported against."""
        self.cwd: dict[str, str] = {"local": _join("", world.session.cwd)} if world.session.cwd else {}
        """host -> the folder the agent's shell last ``cd``-ed into (harnesses keep it between calls)."""
        self.project: dict[str, str] = {}
        """host -> the compose project its latest compose command named (``-p``, folder)."""
        self.up_running: set[int] = set()
        """Open compose ups whose containers a later ``docker compose ps`` showed running."""
        self._rows: tuple[ToolEvent | None, list[ContainerRow]] = (None, [])
        """(a call, its output's container rows): ``table_rows``' memo of the last call read."""
        self.cwd_at: dict[int, str] = {}
        """command position -> the working folder it runs in, for the call being read."""
        self.call_script: ShellScript | None = None
        """The parsed script of the shell call being read (a probe's ``||`` and pipes are in it)."""
        self.port_named: dict[int, tuple[int, bool]] = {}
        """port -> (events read so far, whether a command other than a probe named it): the scan
        ``ProbeSteps.unclaimed`` makes, extended as the walk goes instead of repeated."""
        self.stack_stops: dict[int, tuple[str, bool]] = {}
        """id of a Kill that stops a whole compose stack -> (the stack's key, whether it starts again:
        ``restart``), applied in command order."""
        self.containers = ContainerLedger()
        """Which containers the agent made and which someone else did (another project)."""
        self.listed: dict[str, int | None] = {}
        """Process-manager units (instance id -> PID or None) that a listing or an "already
        started" showed running while no launch of this log runs them: a kill of their manager
        reaches them all the same."""
        self.unit_ids: dict[str, int] = {}
        """Unit instance id -> its number in its manager (pm2's ``id`` column), as a listing showed it."""
        self.already: set[int] = set()
        """Launch facts of unit starts whose manager answered that the unit runs already."""
        self.unit_restarts: set[int] = set()
        """ids of Kills that are a manager's restart (``pm2 restart``, ``kickstart -k``): each victim
        unit starts again right after."""
        self.service_restarts: set[int] = set()
        """ids of Kills that restart what they stop (``docker compose restart``, ``docker restart``):
        each compose service among the victims starts again right after."""
        self.container_restarts: set[int] = set()
        """ids of Kills that are a ``docker restart NAME…``: each of the agent's containers it stops
        starts again."""
        self.open_ups: dict[str, dict[int, str | None]] = {}
        """instance id -> compose ``up`` invocations still running (launch fact -> its task id):
        a harness-backgrounded or ``&``-backgrounded ``up`` runs on until its task ends."""
        self.pending: dict[str, tuple[ToolEvent, SimpleCommand, str]] = {}
        """background task id -> (its call, the unlisted command it runs, the host): a server once
        the task's output shows it listening (``heard_from_task``)."""

    def state_from(self, fact: Fact, state: State, reason: str, relation: Relation) -> int:
        """Record ``fact`` as the evidence that its instance is now ``state`` (``reason`` in words)
        and tie its event to the instance by ``relation``; the fact's index."""
        assert fact.instance is not None
        fi = self.w.record(fact)
        self.w.change_state(fact.instance, state, fi, reason)
        self.w.link(f"event:{fact.event}", f"instance:{fact.instance}", relation, fi)
        return fi

    def table_rows(self, ev: ToolEvent) -> list[ContainerRow]:
        """The ``docker ps`` / ``compose ps`` rows of a call's output, read once per call (the
        probe step and the container ledger both ask)."""
        if self._rows[0] is not ev:  # the event itself: the guard feeds an index again once it has output
            script = self.call_script
            formats = [f for c in script.commands if (f := ps_format(c.effective_argv)) is not None] if script else []
            self._rows = (ev, container_rows(ev.output or "", formats))
        return self._rows[1]

    def touch(self, inst: str) -> None:
        if inst in self.recent:
            self.recent.remove(inst)
        self.recent.append(inst)

    def instance(self, launch: Launch) -> str:
        if launch.unit and launch.server in self.w.catalog.managers:
            key = f"{launch.host}/{launch.server}:{launch.unit}"  # a manager's unit is its name, whatever port
        elif launch.port is not None:
            key = f"{launch.host}:{launch.port}"
        elif launch.unit:
            key = f"{launch.host}/unit:{launch.unit}"
        elif launch.container:
            key = f"{launch.host}/container:{launch.container}"
        elif launch.task_id:
            key = f"task:{launch.task_id}"
        elif script := self.script_of(launch):
            key = f"{launch.host}/{launch.server}:{script}"  # `node a.js` and `node b.js` are two servers
        else:
            key = f"{launch.host}/{launch.server}"
        inst = self.w.instances.get(key)
        if inst is None:
            inst = Instance(id=key, server=launch.server, label=launch.label, host=launch.host,
                            port=launch.port, unit=launch.unit, container=launch.container)
            self.w.instances[key] = inst
        else:
            inst.server, inst.label = launch.server, launch.label
        if launch.task_id and launch.task_id not in inst.task_ids:
            inst.task_ids.append(launch.task_id)
        return key

    def waited(self, ev: ToolEvent, inst: str) -> float:
        """Seconds known to have passed between the instance's latest launch and this probe's answer:
        the log's times, and the ``sleep N`` the probe's own command waits first. 0 when unknown."""
        launched = self.w.instances[inst].launches
        start = self.w.session.events[launched[-1]].ts if launched else None
        end = ev.result_ts or ev.ts
        seconds = (end - start).total_seconds() if start and end else 0.0
        sleeps = _SLEEP.findall(ev.command or "")
        return max(seconds, sum(float(n) for n in sleeps))

    def slow_to_listen(self, inst: str) -> bool:
        """An inference server on GPUs does not listen until its weights are loaded: minutes of
        refused connections while it is healthy."""
        kind = self.w.catalog.by_name.get(self.w.instances[inst].server)
        return bool(kind and kind.gpu)

    def apart(self, a: int, b: int) -> bool:
        """Two launches of one kind on one port that both only guessed it (the kind's default) and
        run different scripts (``npm run dev``, ``npm run preview``): nothing says they are the same
        server. Across kinds the port is all there is (``java -jar app.jar`` and ``mvn
        spring-boot:run`` both serve the app on 8080)."""
        if a not in self.guessed_port or b not in self.guessed_port:
            return False
        la, lb = self.w.facts[a], self.w.facts[b]
        assert isinstance(la, Launch) and isinstance(lb, Launch)
        return la.server == lb.server and self.script_of(la) != self.script_of(lb)

    def script_of(self, launch: Launch) -> str | None:
        """The script an interpreter kind (node) runs, as the last part of its path, or the
        subcommand a script runner runs (``run dev``)."""
        kind = self.w.catalog.by_name.get(launch.server)
        if kind is None:
            return None
        if kind.subcommand and not kind.script_globs:
            words = [a for a in launch.argv[1:] if not a.startswith("-")]
            return next((" ".join(sub) for sub in kind.subcommand if words[:len(sub)] == sub), None)
        if not kind.script_globs:
            return None
        runners = {"npx", *kind.programs}
        script = next((a for a in launch.argv if not a.startswith("-")
                       and PurePosixPath(a).name not in runners), None)
        return PurePosixPath(script.replace("\\", "/")).name if script else None

    def live_state(self, inst: str, event: int) -> str:
        return self.w.instances[inst].state_at(event, inclusive=True)

    def find(self, *, host: str | None = None, port: int | None = None, server: str | None = None,
             unit: str | None = None) -> list[str]:
        out = []
        for key, inst in self.w.instances.items():
            if port is not None and inst.port != port:
                continue
            if host is not None and inst.host != host and host != "*":
                continue
            if server is not None and server not in (inst.server, inst.label) and not inst.server.startswith(server):
                continue
            if unit is not None and (inst.unit is None or _unit(inst.unit) != _unit(unit)):
                continue
            out.append(key)
        return out

    def current(self) -> str | None:
        """The instance a bare "it"/"the server" most likely means: the latest touched live one."""
        for inst in reversed(self.recent):
            if self.live.get(inst):
                return inst
        return self.recent[-1] if self.recent else None

    def _server_programs(self) -> list[str]:
        if self._programs is None:
            self._programs = sorted({p for k in self.w.catalog.kinds if not k.manager for p in k.programs
                                     if not any(c in p for c in "*?[") and p not in _SCRIPT_RUNNER_PROGRAMS})
        return self._programs

    @property
    def platform(self) -> str:
        if "local" not in self.platforms:
            texts = [self.w.session.cwd or ""] + [e.command or "" for e in self.w.session.events[:400]
                                                  if isinstance(e, ToolEvent)]
            self.platforms["local"] = infer_platform(texts)[0]
        return self.platforms["local"]

    def remote_platforms(self, script: ShellScript) -> dict[str | None, str]:
        return {c.host: "linux" for c in script.commands if c.host}  # ssh targets: Linux unless shown

    if TYPE_CHECKING:  # the steps one module calls in another, each defined once there
        def apply_kill(self, kill: Kill) -> None:
            """Defined in ``build.kills``."""
        def compose_empty(self, ev: ToolEvent, stack: str) -> None:
            """Defined in ``build.compose``."""
        def compose_project(self, cmd: SimpleCommand, where: str) -> str | None:
            """Defined in ``build.compose``."""
        def compose_running(self, stack: str) -> None:
            """Defined in ``build.compose``."""
        def service_processes(self) -> list[killsem.Process]:
            """Defined in ``build.compose``."""
        def with_services(self, insts: list[str], port: int) -> list[str]:
            """Defined in ``build.compose``."""
        def services_of(self, stack: str) -> list[str]:
            """Defined in ``build.compose``."""
        def container_output(self, ev: ToolEvent, script: ShellScript) -> None:
            """Defined in ``build.compose``."""
        def ended(self, inst: str, fi: int, state: State, xi: int, why: str) -> None:
            """Defined in ``build.launches``."""
        def fail_launch(self, ev: ToolEvent, launch: Launch, fi: int, reason: str, quote: str) -> None:
            """Defined in ``build.launches``."""
        def generic_launches(self, ev: ToolEvent, script: ShellScript, launches: list[tuple[SimpleCommand, int]],
                             others: list[SimpleCommand]) -> list[tuple[SimpleCommand, int]]:
            """Defined in ``build.launches``."""
        def heard_from_task(self, ev: ToolEvent | SystemEvent) -> None:
            """Defined in ``build.launches``."""
        def launch_of(self, ev: ToolEvent, cmd: SimpleCommand, where: str, script: ShellScript) -> int | None:
            """Defined in ``build.launches``."""
        def start(self, fi: int, still_running: bool = False) -> None:
            """Defined in ``build.launches``."""
        def start_again(self, event: int, position: int, text: str, inst: str) -> None:
            """Defined in ``build.units``."""
        def unit_process(self, inst: str, launch: Launch | None) -> killsem.Process:
            """Defined in ``build.units``."""
        def units_named(self, text: str) -> list[str]:
            """Defined in ``build.units``."""
        def kills_of(self, ev: ToolEvent, script: ShellScript,
                     launches: list[tuple[SimpleCommand, int]]) -> list[tuple[Kill, killsem.KillVerdict]]:
            """Defined in ``build.kills``."""
        def log_evidence(self, ev: Event, inst: str, launch: Launch | None, text: str) -> None:
            """Defined in ``build.probes``."""
        def on_agent(self, ev: AssistantEvent) -> None:
            """Defined in ``build.messages``."""
        def on_shell(self, ev: ToolEvent) -> None:
            """Defined in ``build.launches``."""
        def on_task_note(self, ev: SystemEvent) -> None:
            """Defined in ``build.tasks``."""
        def on_task_poll(self, ev: ToolEvent) -> None:
            """Defined in ``build.tasks``."""
        def on_task_stop(self, ev: ToolEvent) -> None:
            """Defined in ``build.tasks``."""
        def on_user(self, ev: UserEvent) -> None:
            """Defined in ``build.messages``."""
        def probe(self, ev: ToolEvent, inst: str, method: str, target: str, answered: bool | None,
                  foreign: str | None = None) -> None:
            """Defined in ``build.probes``."""
        def before_instance(self, event: int, host: str, port: int, name: str | None, why: str) -> str:
            """Defined in ``build.probes``."""
        def probe_or_log(self, ev: ToolEvent, cmd: SimpleCommand, where: str) -> None:
            """Defined in ``build.probes``."""
        def published_over(self, ev: ToolEvent, stack: str, rows: list[ContainerRow]) -> None:
            """Defined in ``build.compose``."""
        def stack_key(self, cmd: SimpleCommand, where: str) -> str:
            """Defined in ``build.compose``."""
