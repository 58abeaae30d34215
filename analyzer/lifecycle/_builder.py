"""The walk that builds a ``World``: one pass over the timeline, in order.

Per event: user/agent messages become readiness, instruction and correction facts; shell
commands become launches, probes, kills and failures; task tools and notifications become polls,
stops and exit codes. Each fact moves its instance's state and adds edges to the graph.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left
from pathlib import PurePosixPath

from analyzer.events import AssistantEvent, Event, SystemEvent, ToolEvent, UserEvent
from analyzer.lifecycle.catalog import Catalog, flag_value
from analyzer.lifecycle.containers import (
    ContainerLedger,
    ContainerRow,
    container_rows,
    made_containers,
    stopped_containers,
)
from analyzer.lifecycle.facts import (
    Correction,
    Failure,
    Instruction,
    Kill,
    Launch,
    ModelDisagreement,
    Probe,
    Ready,
    RelaunchMatch,
    State,
    Victim,
)
from analyzer.lifecycle.language import MessageReading, Target, read_message
from analyzer.lifecycle.probes import (
    PORTLESS_PROBES,
    DeadJob,
    dead_jobs,
    failure_reason,
    listeners,
    norm_host,
    pids_in,
    probe_of,
)
from analyzer.lifecycle.world import Instance, World
from analyzer.shell import kill as killsem
from analyzer.shell.model import ShellFrame, ShellScript, SimpleCommand
from analyzer.shell.parse import parse
from analyzer.shell.platform import infer_platform
from analyzer.shell.resolve import ScriptResolver

_SERVER_WORDS = re.compile(r"\b(?:server|service|endpoint|api|app|it'?s up|is up|running|serving|listening)\b", re.I)
_STATE_TALK = re.compile(r"\b(?:server|service|endpoint|api|app|site|port|process|instance|container|launch\w*|"
                         r"running|serving|listening|up|down|ready|started|stopped|restart\w*|kill\w*|"
                         r"dead|died|crash\w*|work(?:s|ed|ing)?|same process|old (?:version|behaviou?r))\b", re.I)
"""Words of a sentence about a server's state."""
_TYPED_LENGTH = 2000
"""Longer user messages are pasted documents (task prompts, specs, audit reports), not replies."""
_PASTED = re.compile(r"\s*(?:#{1,3} |\*\*[A-Z]|<[a-z_-]+>|```)")
"""A message that opens like a document: a heading, a bold title, a tag, a code fence."""
_ALIVE_ONLY = frozenset({"task-poll", "process-list", "systemctl"})
"""Probes that show a process is alive, not that it answers requests."""
_LOG_READERS = frozenset({"tail", "cat", "head", "less", "grep", "rg", "journalctl", "docker", "more"})
_SYSTEMCTL_START = frozenset({"start", "restart", "reload-or-restart", "try-restart"})
# Cheap pre-filter: a command that names no port, host, lifecycle verb, probe tool or catalog program
# cannot launch, probe or kill a server, so it is not parsed at all (most commands: ls, git, pytest).
_LIFECYCLE_WORDS = (
    "kill", "pkill", "killall", "fuser", "systemctl", "docker", "docker-compose", "nohup", "tmux", "screen",
    "setsid", "curl", "wget", "tail", "cat", "grep", "journalctl", "bash", "sh", "ssh", "pgrep", "ps", "python",
    "python3", "node", "npx", "kubectl", "taskkill", "Stop-Process", "cmd", "powershell", "pwsh",
)
@functools.cache
def _prefilter(catalog: Catalog) -> re.Pattern[str]:
    words = {*_LIFECYCLE_WORDS, *PORTLESS_PROBES, *(p for k in catalog.kinds for p in k.programs if "*" not in p),
             *(m for k in catalog.kinds for m in k.modules)}
    alternatives = "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))
    return re.compile(rf"(?<![\w.-])(?:{alternatives})(?![\w-])|:\d{{2,5}}\b|localhost")


def _unit(name: str) -> str:
    return name.removesuffix(".service")


class Builder:
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
        self.cwd_at: dict[int, str] = {}
        """command position -> the working folder it runs in, for the call being read."""
        self.stack_stops: dict[int, str] = {}
        """id of a Kill that stops a whole compose stack -> the stack's key (applied in command order)."""
        self.containers = ContainerLedger()
        """Which containers the agent made and which someone else did (another project)."""
        self.open_ups: dict[str, dict[int, str | None]] = {}
        """instance id -> compose ``up`` invocations still running (launch fact -> its task id):
        a harness-backgrounded or ``&``-backgrounded ``up`` runs on until its task ends."""

    # -- helpers -------------------------------------------------------------------------------

    def touch(self, inst: str) -> None:
        if inst in self.recent:
            self.recent.remove(inst)
        self.recent.append(inst)

    def instance(self, launch: Launch) -> str:
        if launch.port is not None:
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

    # -- the walk ------------------------------------------------------------------------------

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
                self.on_task_poll(ev)
            elif ev.category == "task_stop" and ev.task_id:
                self.on_task_stop(ev)
        elif isinstance(ev, SystemEvent) and ev.task_id:
            self.on_task_note(ev)

    # -- messages ------------------------------------------------------------------------------

    def targets(self, targets: tuple[Target, ...], r: MessageReading, entity_fallback: bool = True) -> list[str]:
        """Instances the targets of one intent refer to. A bare "it"/"the server" is the instance
        most recently touched; a target naming nothing falls back to the message's own entities."""
        found: list[str] = []
        for t in targets or (Target(),):
            ports, hosts, kinds, units = t.ports, t.hosts, t.kinds, t.units
            if t.unspecified:
                # a bare "it" in a message that names a port elsewhere means that port; kinds are
                # weaker ("Streamlit Cloud" is not the local streamlit), so only users' count
                ports, hosts, units = r.ports, r.hosts, r.units
                kinds = r.kinds if entity_fallback else ()
            if not (ports or hosts or kinds or units):
                cur = self.current()
                matches = [cur] if cur else []
            else:
                # another project's container is not what "the docker"/"the db" of this session means
                matches = [key for key, inst in self.w.instances.items() if inst.owner != "other"
                           and (not ports or inst.port in ports)
                           and (not hosts or any(norm_host(h, "local") == inst.host for h in hosts))
                           and (not kinds or any(_kind_matches(k, inst) for k in kinds))
                           and (not units or (inst.unit is not None and _unit(inst.unit) in map(_unit, units)))]
            found += [m for m in matches if m not in found]
        return found

    def on_user(self, ev: UserEvent) -> None:
        r = read_message(ev.text)
        if not r.intents:
            return
        if r.has("ready") and not r.has("question"):
            quote = r.quote("ready")
            for inst in self.targets(r.targets.get("ready", ()), r):  # type: ignore[call-overload]
                fi = self.w._add(Ready(event=ev.index, instance=inst, source="user", strength="medium",
                                       quote=quote, detail=f"the user says it is ready: {quote!r}"))
                self.w._change(inst, "ready", fi, "the user said it is ready")
                self.w._edge(f"event:{ev.index}", f"instance:{inst}", "asserts-ready", fi)
        for action in ("launch", "stop", "restart", "hold"):
            if not r.has(action):
                continue
            targets = r.targets.get(action, ())  # type: ignore[call-overload]
            named = any(not t.unspecified for t in targets)
            insts = self.targets(targets, r) if named or r.ports or r.kinds or r.units else []
            text = ", ".join(t.text for t in targets if t.text) or "unspecified"
            fi = self.w._add(Instruction(event=ev.index, action=action, targets=insts, target_text=text,
                                         quote=r.quote(action), detail=f"the user asks to {action} {text}"))
            for inst in insts:
                self.w._edge(f"instance:{inst}", f"event:{ev.index}", "requested-by", fi)
        if r.has("correction") and self.about_server_state(ev.text, r):
            corrected = self.last_action(ev.index)
            quote = r.quote("correction") or ev.text.strip()[:200]
            fi = self.w._add(Correction(event=ev.index, quote=quote, corrects=corrected,
                                        instance=self.current(), detail=f"the user corrects the agent: {quote!r}"))
            if corrected is not None:
                self.w._edge(f"event:{ev.index}", f"event:{corrected}", "corrects", fi)

    def about_server_state(self, text: str, r: MessageReading) -> bool:
        """Whether a correction can be about what the agent believes of a server: the agent has
        launched, killed or announced one; the message is no pasted prompt, spec or report; and it
        names a server or speaks of one's state ("already running", "you killed it")."""
        if not self.w.instances:
            return False  # nothing the agent did to a server yet: the first message, a task prompt
        if r.truncated or len(text) > _TYPED_LENGTH or _PASTED.match(text):
            return False  # a pasted document: its "don't …" and "why …" are the document's
        if r.ports or r.kinds or r.units or r.hosts:
            return True
        return _STATE_TALK.search(text) is not None

    def last_action(self, before: int) -> int | None:
        acts = [f.event for f in self.w.facts if isinstance(f, Launch | Kill) and f.event < before]
        return acts[-1] if acts else None

    def on_agent(self, ev: AssistantEvent) -> None:
        if not ev.text or len(ev.text) > 4000:
            return  # long write-ups mix plans, history and claims; their readiness words mislead
        r = read_message(ev.text, documents=False)  # its lists are its claims, not a pasted spec
        if not r.has("ready") or r.has("question") or r.has("not_ready"):
            return
        quote = r.quote("ready")
        targets = r.targets.get("ready", ())  # type: ignore[call-overload]
        # agents write long messages about many things: only the claim's own words count
        if not any(not t.unspecified for t in targets) and not _SERVER_WORDS.search(quote):
            return  # "reviewers can access it": a claim about something, not clearly a server here
        for inst in self.targets(targets, r, entity_fallback=False):
            fi = self.w._add(Ready(event=ev.index, instance=inst, source="agent", strength="weak",
                                   quote=quote, detail=f"the agent says it is up: {quote!r}"))
            if self.live_state(inst, ev.index) in ("starting", "unknown"):
                self.w._change(inst, "ready", fi, "the agent said it is up")
            self.w._edge(f"event:{ev.index}", f"instance:{inst}", "asserts-ready", fi)

    # -- shell ---------------------------------------------------------------------------------

    def on_shell(self, ev: ToolEvent) -> None:
        assert ev.command is not None
        if not _prefilter(self.w.catalog).search(ev.command):
            return
        script = _normalise_hosts(self.resolver.feed(parse(ev.command)))
        launches: list[tuple[SimpleCommand, int]] = []
        probes: list[SimpleCommand] = []
        self.cwd_at = {}
        for cmd in script.commands:
            where = cmd.host or "local"
            if cmd.name == "cd" and len(cmd.effective_argv) == 2 and not cmd.dynamic:
                self.cwd[where] = _join(self.cwd.get(where, ""), cmd.effective_argv[1])
            self.cwd_at[cmd.position] = self.cwd.get(where, "")
        for cmd in script.commands:
            if "substitution" in cmd.contexts:
                continue
            found = [(c, fi) for c in _one_unit_each(cmd)
                     if (fi := self.launch_of(ev, c, cmd.host or "local", script)) is not None]
            if found:
                launches += found
            else:
                probes.append(cmd)
        kills = self.kills_of(ev, script, launches)
        self.outcomes(ev, script, launches, kills, probes)
        self.container_output(ev, script)

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
                ran = {}
                if verb == "run" and (name := flag_value(cmd.effective_argv, ["--name"])):
                    ran[name] = _run_image(cmd.effective_argv) or ""
                self.containers.agent_made(where, ev.index, output, {k: v for k, v in ran.items() if v} or None)
                stack = self.w.instances.get(self.stack_key(cmd, where)) if verb != "run" else None
                if stack is not None:
                    stack.members += [m for m in made_containers(output) if m not in stack.members]
            elif verb == "ps" and (rows := container_rows(output)):
                self.containers.listed(where, ev.index, rows)

    def launch_of(self, ev: ToolEvent, cmd: SimpleCommand, where: str, script: ShellScript) -> int | None:
        argv = cmd.effective_argv
        server = label = None
        port: int | None = None
        guessed = False  # the port is the kind's default, not read from the command
        bind = gpus = log = unit = container = None
        if cmd.name == "systemctl" and len(argv) >= 3 and argv[1] in _SYSTEMCTL_START:
            unit = _unit(argv[-1])
            server, label = "systemd", f"{unit} (systemd)"
        elif cmd.name == "docker" and len(argv) > 1 and argv[1] == "run":
            container = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--name"), None)
            ports = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-p", "--publish")]
            if ports:
                m = re.match(r"(?:[\d.]+:)?(\d+):\d+", ports[0])
                port = int(m.group(1)) if m else None
            if not ports and container is None:
                return None
            server, label = "docker", f"container {container or argv[-1]}"
        elif (cmd.name == "docker" and "compose" in argv and "up" in argv[argv.index("compose"):]) or (
                cmd.name == "docker-compose" and "up" in argv):
            project = self.compose_project(cmd, where)
            server, container = "compose", f"compose:{project}" if project else "compose"
            label = f"docker compose ({project})" if project else "docker compose"
        else:
            found = self.w.catalog.match(cmd)
            if found is None:
                return None
            server, label, port = found.kind.name, found.kind.label, found.port
            bind, gpus, log = found.bind, found.gpus, found.log_file
            guessed = found.port_source == "default"
        launch = Launch(
            event=ev.index, server=server, label=label, host=where, port=port, bind=bind, gpus=gpus,
            log_file=log, unit=unit, container=container, argv=list(argv), command_position=cmd.position,
            task_id=ev.task_id if ev.background else None,
            detail=f"launches {label}" + (f" on {where}:{port}" if port else f" on {where}"),
        )
        inst = self.instance(launch)
        launch.instance = inst
        fi = self.w._add(launch)
        if guessed:
            self.guessed_port.add(fi)
        self.w.instances[inst].launches.append(ev.index)
        self.w._edge(f"event:{ev.index}", f"instance:{inst}", "launches", fi)
        if launch.task_id:
            self.by_task[launch.task_id] = inst
            self.task_launch[launch.task_id] = launch
        return fi

    def start(self, fi: int, still_running: bool = False) -> None:
        """A launch that ran: its process is live. Launched over a live starting or ready process
        of the same identity, it is a duplicate; else the instance is starting.

        Declarative launches reconcile: ``systemctl start`` of an active unit and ``docker compose
        up`` of a running stack change nothing (or recreate what changed), so they are duplicates
        only while an earlier ``up`` of the stack is itself still running (``still_running``: this
        call's ``up`` goes on in the background)."""
        launch = self.w.facts[fi]
        assert isinstance(launch, Launch) and launch.instance
        inst = launch.instance
        lives = self.live.setdefault(inst, [])
        state = self.live_state(inst, launch.event)
        if launch.server == "compose":
            ups = self.open_ups.setdefault(inst, {})
            # one collision per still-running up: later ups that meet only ups already collided
            # with repeat that failure, they are not new ones
            # an attached up still running is the stack in the foreground: a detached `up -d`
            # reconciles against it (recreates a service); a second attached up fights it
            detached = _detached_up(launch.argv)
            fresh = [u for u in ups if u not in self.collided
                     and not (detached and not _detached_up(self.w.facts[u].argv))]  # type: ignore[union-attr]
            if fresh:
                self.collided.add(max(fresh))
                launch.duplicate_of = self.w.facts[max(fresh)].event
                self.w._edge(f"event:{launch.event}", f"event:{launch.duplicate_of}", "conflicts-with", fi)
            else:
                self.w._change(inst, "starting", fi, f"launched ({launch.label})")
            if still_running:
                ups[fi] = launch.task_id
            lives.append(fi)
            self.touch(inst)
            return
        rivals = [lf for lf in lives if not self.apart(lf, fi)]
        if rivals and state in ("starting", "ready") and launch.server != "systemd":
            launch.duplicate_of = self.w.facts[rivals[-1]].event
            self.w._edge(f"event:{launch.event}", f"event:{launch.duplicate_of}", "conflicts-with", fi)
        else:
            launched = self.w.instances[inst].launches  # appended by the walk, so in timeline order
            k = bisect_left(launched, launch.event)
            if k:
                self.w._edge(f"event:{launch.event}", f"event:{launched[k - 1]}", "replaces", fi)
            self.w._change(inst, "starting", fi, f"launched ({launch.label})")
        lives.append(fi)
        self.touch(inst)

    def probe_or_log(self, ev: ToolEvent, cmd: SimpleCommand, where: str) -> None:
        argv = cmd.effective_argv
        if cmd.name == "systemctl" and len(argv) >= 3 and argv[1] in ("status", "is-active"):
            unit = _unit(argv[-1])
            out = ev.output or ""
            answered = True if re.search(r"active \(running\)|^active$", out, re.M) else (
                False if re.search(r"inactive|failed|dead", out) else None)
            for inst in self.find(host=where, unit=unit):
                self.probe(ev, inst, "systemctl", unit, answered)
            return
        if cmd.name in ("pgrep", "ps") and ev.output:
            self.process_listing(ev, where, ev.output)
            return
        if _compose_ps(argv) and ev.output is not None and not ev.truncated and ev.exit_code in (None, 0):
            stack = self.stack_key(cmd, where)
            if not _compose_rows(ev.output):
                self.compose_empty(ev, stack)
            elif running := [r for r in container_rows(ev.output) if r.status.startswith("Up")]:
                self.compose_running(stack)
                self.published_over(ev, stack, running)
            return
        if cmd.name in ("ss", "netstat", "lsof") and ev.output and not ev.background:
            self.bind_pids(ev, cmd, where)  # `netstat -ano | findstr :8080` names the port in another command
        p = probe_of(cmd, ev.output, ev.exit_code, where)
        if p is not None and p.port is not None:
            insts = self.find(host=p.host, port=p.port) or self.find(host="*", port=p.port)
            if not insts:
                # a unit or container whose port the launch did not show: the probe teaches it
                portless = [k for k, lives in self.live.items()
                            if lives and self.w.instances[k].host == p.host and self.w.instances[k].port is None]
                if len(portless) == 1:
                    self.w.instances[portless[0]].port = p.port
                    insts = portless
            for inst in insts[:1]:
                self.probe(ev, inst, p.method, p.target, p.answered)
            return
        if cmd.name in _LOG_READERS and ev.output:
            files = {a for a in argv[1:] if "/" in a or a.endswith(".log") or a.endswith(".txt")}
            for key, lives in self.live.items():
                for fi in lives:
                    launch = self.w.facts[fi]
                    assert isinstance(launch, Launch)
                    if launch.log_file and launch.host == where and (
                        launch.log_file in files or PurePosixPath(launch.log_file).name in
                        {PurePosixPath(f).name for f in files}
                    ):
                        self.log_evidence(ev, key, launch, ev.output)

    def bind_pids(self, ev: ToolEvent, cmd: SimpleCommand, where: str) -> None:
        """A port lister's output names the PID listening on a port (``netstat -ano``, ``ss -p``,
        ``lsof -i``, ``lsof -ti :PORT``): the running launch on that port is that process, so a
        later ``kill PID`` / ``taskkill /PID`` hits exactly it."""
        found = listeners(ev.output)
        out = (ev.output or "").split()
        # a lister that names the port itself is already a probe of it (``probe_of``)
        named = re.search(r":\d{2,5}\b", " ".join(cmd.effective_argv)) is not None
        if not found and cmd.name == "lsof" and any(a.startswith("-") and not a.startswith("--") and "t" in a
                                                    for a in cmd.effective_argv[1:]) and out and all(w.isdigit() for w in out):
            asked = re.search(r":(\d{2,5})\b", " ".join(cmd.effective_argv))
            found = {int(asked.group(1)): {int(w) for w in out}} if asked else {}
        for port, pids in found.items():
            if len(pids) != 1:
                continue  # a forking server's workers, or two listeners: which one is whose is not shown
            for inst in self.find(host=where, port=port):
                lives = self.live.get(inst, [])
                if not lives:
                    continue
                launch = self.w.facts[lives[-1]]
                assert isinstance(launch, Launch)
                pid = next(iter(pids))
                if not named and launch.pid in (None, pid) and self.find(host=where, port=port) == [inst]:
                    self.probe(ev, inst, "port-list", f"PID {pid} listening on :{port}", True)
                if launch.pid is None:
                    launch.pid = next(iter(pids))
                    launch.detail += f" (PID {launch.pid}, as `{' '.join(cmd.argv)}` at event {ev.index} shows)"

    def process_listing(self, ev: ToolEvent, where: str, output: str) -> None:
        """``pgrep -af``/``ps aux`` output names the server processes that are alive. One the world
        thought killed is the process model being wrong: observation wins, and it is recorded."""
        lines = output.splitlines()
        listed: dict[tuple[str, int | None], bool] = {}  # relaunches repeat the same argv and port
        launches: list[Launch] = list(self.w._of(Launch))
        for fact in launches:
            if fact.host != where or not fact.ran or not fact.argv:
                continue
            joined = " ".join(fact.argv)
            shown = listed.get((joined, fact.port))
            if shown is None:
                port = re.compile(rf"[ =:]{fact.port}\b") if fact.port else None
                shown = listed[(joined, fact.port)] = any(
                    joined in ln or (port and joined[:60] in ln and port.search(ln)) for ln in lines)
            if not shown:
                continue
            inst = fact.instance
            assert inst is not None
            fi = self.w._position(fact)
            lives = self.live.setdefault(inst, [])
            if fi not in lives:
                if any(f.launch_event == fact.event for f in self.w._of(Failure)):
                    continue  # that launch died on its own; a listed twin is another launch
                di = self.w._add(ModelDisagreement(
                    event=ev.index, instance=inst, predicted=f"the {fact.label} launched at event {fact.event} was killed",
                    observed="a process listing shows it still running",
                    detail=f"{self.w.instances[inst].name} is still running although a kill was predicted to hit it"))
                self.w.notes.append(f"event {ev.index}: {self.w.facts[di].detail}")
                lives.append(fi)
                before = [c.state for c in self.w.instances[inst].history if c.event < fact.event + 1]
                restored = "ready" if any(f.instance == inst and f.event > fact.event and f.event < ev.index
                                          for f in self.w._of(Ready)) else (before[-1] if before else "unknown")
                self.w._change(inst, restored if restored in ("ready", "starting") else "unknown", di,
                               "still running after the kill (process listing)")
            self.probe(ev, inst, "process-list", f"process {fact.pid or ''} {joined[:60]}".strip(), True)

    def probe(self, ev: ToolEvent, inst: str, method: str, target: str, answered: bool | None) -> None:
        fi = self.w._add(Probe(event=ev.index, instance=inst, method=method, target=target, answered=answered,
                               detail=f"{method} probe of {target}: "
                                      + {True: "answered", False: "no answer", None: "unclear"}[answered]))
        self.w._edge(f"event:{ev.index}", f"instance:{inst}", "probes", fi)
        self.touch(inst)
        state = self.live_state(inst, ev.index)
        if answered and method not in _ALIVE_ONLY and state in ("starting", "unknown", "failed"):
            ri = self.w._add(Ready(event=ev.index, instance=inst, source="probe", strength="strong", quote=target,
                                   detail=f"{target} answered"))
            self.w._change(inst, "ready", ri, f"probe {target} answered")
            self.w._edge(f"event:{ev.index}", f"instance:{inst}", "asserts-ready", ri)
        elif answered is False and state == "starting" and method in _CONNECTING and not self.slow_to_listen(inst) \
                and self.waited(ev, inst) >= _BIND_SECONDS:
            # nothing listens where it should, well after the launch: a dev server or API binds its
            # port within seconds, so it died unseen; a relaunch now is not known to collide with it
            self.w._change(inst, "unknown", fi, f"probe {target} got no answer while it was starting")
        elif answered is False and state == "ready" and method != "task-poll":
            xi = self.w._add(Failure(event=ev.index, instance=inst, reason="refused", quote=target,
                                     detail=f"{target} did not answer"))
            self.w._change(inst, "failed", xi, f"probe {target} got no answer")
            self.w._edge(f"event:{ev.index}", f"instance:{inst}", "reports-failure", xi)

    def log_evidence(self, ev: Event, inst: str, launch: Launch | None, text: str) -> None:
        kind = launch.server if launch else None
        if launch and launch.log_file and f"{launch.log_file}:" in text:
            # grep over several logs prefixes each line with its file: read only this log's lines
            text = "\n".join(ln for ln in text.splitlines() if ln.startswith(f"{launch.log_file}:"))
        if launch is not None and launch.pid is None and (own := _SERVER_PID.search(text)):
            launch.pid = int(own.group(1) or own.group(2))  # the server names its own process
        fail = self.w.catalog.failure_line(kind, text)
        ready = self.w.catalog.ready_line(kind, text)
        if fail:
            fi = self.w._add(Failure(event=ev.index, instance=inst, reason=failure_reason(fail), quote=fail,
                                     detail=f"its log shows: {fail}"))
            self.w._change(inst, "failed", fi, f"log: {fail}")
            self.w._edge(f"event:{ev.index}", f"instance:{inst}", "reports-failure", fi)
        elif ready:
            fi = self.w._add(Ready(event=ev.index, instance=inst, source="log", strength="strong", quote=ready,
                                   detail=f"its log says: {ready}"))
            self.w._change(inst, "ready", fi, f"log: {ready}")
            self.w._edge(f"event:{ev.index}", f"instance:{inst}", "asserts-ready", fi)

    # -- kills ---------------------------------------------------------------------------------

    def processes(self) -> list[killsem.Process]:
        procs: list[killsem.Process] = []
        for inst, lives in self.live.items():
            for fi in lives:
                launch = self.w.facts[fi]
                assert isinstance(launch, Launch)
                procs.append(killsem.Process(
                    pid=launch.pid, argv=tuple(launch.argv), host=None if launch.host == "local" else launch.host,
                    kind="server", label=self.w.instances[inst].name, ref=str(fi),
                    ports=(launch.port,) if launch.port else (), unit=launch.unit, container=launch.container,
                    task_id=launch.task_id,
                    open_files=("/dev/nvidia0", "/dev/nvidiactl") if self.w.catalog.by_name.get(launch.server)
                    and self.w.catalog.by_name[launch.server].gpu else (),
                ))
        if self._agent_process is None:
            self._agent_process = killsem.agent_process(self.agent)
        procs.append(self._agent_process)
        return procs

    def kills_of(self, ev: ToolEvent, script: ShellScript,
                 launches: list[tuple[SimpleCommand, int]]) -> list[tuple[Kill, killsem.KillVerdict]]:
        if not killsem.may_kill(script):
            return []  # no kill-ish command: no verdict, whatever the processes
        # the harness runs commands in the user's login shell: zsh on macOS since Catalina
        shell = "/bin/zsh" if self.platform == "macos" else None
        harness = killsem.harness_frame(self.agent, ev.command or "", shell=shell)
        verdicts = killsem.evaluate(script, self.processes(), harness=harness, platform=self.platform,
                                    platforms=self.remote_platforms(script))
        out: list[tuple[Kill, killsem.KillVerdict]] = []
        for v in verdicts:
            if v.signal == 0:
                continue  # kill -0 / pgrep: an existence check, nothing dies
            victims: list[Victim] = []
            for vic in v.victims:
                p = vic.process
                launch_fi = int(p.ref) if p.ref and p.ref.isdigit() else None
                launch = self.w.facts[launch_fi] if launch_fi is not None else None
                if vic.frame is not None:
                    role, label = "shell", _frame_label(vic.frame)
                elif p.kind in ("server", "agent", "ssh-client", "gpu", "shell"):
                    role, label = p.kind, p.label or " ".join(p.argv)[:80]
                else:
                    role, label = "other", p.label or " ".join(p.argv)[:80]
                said = killsem.parts(vic.why)
                victims.append(Victim(
                    label=label, reason=vic.reason, role=role,
                    instance=launch.instance if isinstance(launch, Launch) else None,
                    launch_event=launch.event if isinstance(launch, Launch) else None,
                    matched=vic.why.matched, subject=said.quote, match_span=said.quote_span, lead=said.lead,
                    consequence=said.consequence,
                ))
            if v.mechanism == "systemctl" and v.reached:
                victims += self.units_from_before(v, {vic.instance for vic in victims})
            if v.mechanism == "kill" and v.unresolved:
                victims += self.bang_victims(ev, v, launches, {vic.instance for vic in victims})
            if v.mechanism in ("docker-compose", "docker") and v.reached:
                victims += self.foreign_containers_hit(ev, v)
            relaunches = [RelaunchMatch(event=self.w.facts[fi].event, text=line, span=span) for c, fi in launches
                          if c.position > v.command.position and v.pattern
                          and (span := _match_span(v.pattern, line := " ".join(c.effective_argv)))]
            relaunch = [r.event for r in relaunches]
            text = " ".join(v.command.argv)
            notes = list(v.notes)
            if v.invalid_pattern:
                notes.append("the pattern is not a valid POSIX ERE: pkill exits 2 and kills nothing")
            kill = Kill(event=ev.index, mechanism=v.mechanism, text=text, pattern=v.pattern,
                        victims=victims, self_kill=v.self_kill is not None, generic=v.generic, selects=v.selects,
                        also_matches_relaunch=relaunch, relaunches=relaunches, platform=v.platform, notes=notes,
                        command_position=v.command.position, command_span=v.command.span,
                        detail=f"{text} hits {len(victims)} process(es)")
            self.maybe_hit[id(kill)] = self.unseen_children_hit(v, {vic.instance for vic in victims})
            if v.mechanism == "docker-compose" and v.targets == ["(all services)"] and v.reached:
                stack = self.stack_key(v.command, v.command.host or "local")
                self.stack_stops[id(kill)] = stack
            out.append((kill, v))
        return out

    def units_from_before(self, v: killsem.KillVerdict, hit: set[str | None]) -> list[Victim]:
        """Units a ``systemctl stop|restart`` names that no launch of this session started: a
        service that was there before the log (the host's PostgreSQL), now an instance of its own."""
        out = []
        host = v.host or v.command.host or "local"
        verb = next((a for a in v.command.effective_argv[1:] if not a.startswith("-")), "stop")
        for unit in v.targets:
            if any(c in unit for c in "*?["):
                continue  # a glob: which units it meant is not known
            key = f"{host}/unit:{unit}"
            if key in hit or self.find(host=host, unit=unit):
                continue
            self.w.instances[key] = Instance(id=key, server="systemd", label=f"{unit} (systemd)", host=host,
                                             unit=unit, owner="before")
            out.append(Victim(label=f"{unit} (systemd)", role="server", instance=key,
                              reason=f"systemctl {verb} of {unit}, which this session never started"))
        return out

    def bang_victims(self, ev: ToolEvent, v: killsem.KillVerdict, launches: list[tuple[SimpleCommand, int]],
                     hit: set[str | None]) -> list[Victim]:
        """``X=$!`` right after a background launch holds that launch's PID, so a ``kill $X`` later
        in the same command hits exactly it (the kill evaluation sees only an unknown word)."""
        held = _bang_assignments(ev.command or "", launches)
        out = []
        for word in v.unresolved:
            m = re.fullmatch(r"\$\{?(\w+)\}?", word.strip('"'))
            fi = held.get(m.group(1)) if m else None
            launch = self.w.facts[fi] if fi is not None else None
            if not isinstance(launch, Launch) or launch.instance in hit or launch.event != ev.index:
                continue
            out.append(Victim(label=self.w.instances[launch.instance or ""].name, role="server",
                              instance=launch.instance, launch_event=launch.event,
                              reason=f"{word} holds the PID of `{' '.join(launch.argv[:4])}`, started in the "
                                     "background just before it was assigned (`$!`)"))
        return out

    def foreign_containers_hit(self, ev: ToolEvent, v: killsem.KillVerdict) -> list[Victim]:
        """Containers someone else made (``ContainerLedger``) that this docker or compose command
        stopped: its own progress lines show them stopping or removed, or it names them."""
        host = v.command.host or "local"
        output = ev.output or ""
        shown = stopped_containers(output)
        if v.mechanism == "docker" and ev.exit_code in (0, None) and "No such container" not in output:
            shown += [t for t in v.targets if not t.startswith(("$", "`", "-"))]
        out = []
        for name in dict.fromkeys(shown):
            seen = self.containers.foreign(host, name)
            if seen is None:
                continue
            at, why = seen
            key = f"{host}/container:{name}@{at}"
            if key not in self.w.instances:
                self.w.instances[key] = Instance(id=key, server="docker", label=f"{name} (container)", host=host,
                                                 container=name, owner="other", owner_evidence=at,
                                                 owner_detail=why)
            out.append(Victim(label=f"{name} (container)", role="server", instance=key,
                              reason=f"`{' '.join(v.command.argv)}` stopped {name}, which someone else made: {why} "
                                     f"(event {at})"))
        return out

    def unseen_children_hit(self, v: killsem.KillVerdict, hit: set[str | None]) -> list[str]:
        """Live script-runner launches (``npm run dev``) a by-name kill may have stopped through the
        child it runs: ``pkill -f "astro dev"`` names a server program, and the command lines of the
        script's children are not in the log."""
        if not v.pattern or v.signal == 0 or not v.reached:
            return []
        named = [prog for prog in self._server_programs() if re.search(rf"(?<![\w-]){re.escape(prog)}(?![\w-])", v.pattern)]
        if not named:
            return []
        out = []
        for inst, lives in self.live.items():
            if inst in hit or not lives:
                continue
            if any(self.w.facts[fi].server in _SCRIPT_RUNNERS for fi in lives):  # type: ignore[union-attr]
                out.append(inst)
        return out

    def _server_programs(self) -> list[str]:
        if self._programs is None:
            self._programs = sorted({p for k in self.w.catalog.kinds for p in k.programs
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

    # -- outcomes of one shell call ------------------------------------------------------------

    def outcomes(self, ev: ToolEvent, script: ShellScript, launches: list[tuple[SimpleCommand, int]],
                 kills: list[tuple[Kill, killsem.KillVerdict]], probes: list[SimpleCommand]) -> None:
        """Apply one shell call in command order: which launches ran, kills, launches and their own
        failures, then probes; what the output observed outranks what the process model predicts."""
        output = ev.output or ""
        # the output is read for jobs and PIDs only when a launch or a self-kill needs them
        dead = dead_jobs(output) if launches or kills else []
        stopper = next((v for _, v in kills if v.self_kill is not None and v.reached), None)
        model_wrong = False
        if stopper is not None:
            later = [c for c in script.commands if _skipped(stopper, c, script)]
            # a shell killed by a signal cannot exit 0: the exit status is an observation too
            # …and so is a status other than the signal's when the kill was the last command
            survived = not later and ev.exit_code is not None and stopper.expected_exit is not None \
                and ev.exit_code != stopper.expected_exit
            shown = bool(later) and _observed_ran(later, output, dead)
            if shown or (later and ev.exit_code == 0) or survived:
                model_wrong = True
                di = self.w._add(ModelDisagreement(
                    event=ev.index,
                    predicted=f"`{' '.join(stopper.command.argv)}` hits its own shell, so the commands "
                              "after it never run",
                    observed="the output shows commands after it ran" if shown else f"the command exited {ev.exit_code}",
                    shown_by_output=shown,
                    detail="the process model predicted a self-kill, but the output shows later commands "
                           "ran; the observed outcome is used"))
                self.w.notes.append(f"event {ev.index}: {self.w.facts[di].detail}")
        for cmd, fi in launches:
            launch = self.w.facts[fi]
            assert isinstance(launch, Launch)
            if stopper is not None and not model_wrong and _skipped(stopper, cmd, script):
                launch.ran = False
            elif _not_found(cmd, script, output):
                launch.ran = False
                launch.detail += " (never ran: command not found)"
        ran = [(c, fi) for c, fi in launches if self.w.facts[fi].ran]  # type: ignore[union-attr]
        echoed = _echoed_pids(script, ran, output) if ran else {}
        for fi, pid in echoed.items():
            self.w.facts[fi].pid = pid  # type: ignore[union-attr]
        pids = pids_in(output) if ran and not echoed else []
        if pids and len(ran) == 1:
            self.w.facts[ran[0][1]].pid = pids[-1]  # type: ignore[union-attr]
        elif pids and len(pids) == len(ran):  # "prefill PID 1 / decode PID 2": one echo per launch
            for (_, fi), pid in zip(ran, pids, strict=True):
                self.w.facts[fi].pid = pid  # type: ignore[union-attr]
        steps: list[tuple[int, int, str]] = []
        for i, (k, v) in enumerate(kills):
            if v.reached or model_wrong:
                steps.append((k.command_position, i, "kill"))
            else:
                k.notes.append("never ran: an earlier kill took down the shell that would run it")
                self.w._add(k)
        steps += [(c.position, i, "launch") for i, (c, _) in enumerate(ran)]
        if not ev.background:  # a harness-backgrounded call's output is the harness's note, not the probe's answer
            steps += [(c.position, i, "probe") for i, c in enumerate(probes)]
        for _, ref, what in sorted(steps):
            if what == "kill":
                self.apply_kill(kills[ref][0])
            elif what == "launch":
                cmd, fi = ran[ref]
                self.start(fi, still_running=ev.background or (cmd.background and not any(
                    k.command_position > cmd.position for k, _ in kills)))
                self.launch_outcome(ev, script, cmd, fi, dead)
            else:
                self.probe_or_log(ev, probes[ref], probes[ref].host or "local")

    def launch_outcome(self, ev: ToolEvent, script: ShellScript, cmd: SimpleCommand, fi: int,
                       dead: list[DeadJob]) -> None:
        """What this call's output says about one of its launches: killed at once, a failure
        line, a foreground exit code, or (for a background tool call) its first log lines."""
        launch = self.w.facts[fi]
        assert isinstance(launch, Launch) and launch.instance
        output = ev.output or ""
        job = next((d for d in dead if any(_same_command(d.command, c) for c in _lineage(cmd, script))), None)
        if job is not None:
            self.fail_launch(ev, launch, fi, "killed", f"{job.pid} {job.how}  {job.command}")
            return
        fail = self.w.catalog.failure_line(launch.server, output) if ev.output is not None else None
        if fail and not dead_jobs(fail):
            self.fail_launch(ev, launch, fi, failure_reason(fail), fail)
            return
        if not cmd.background and ev.output is not None and ev.exit_code not in (None, 0):
            self.fail_launch(ev, launch, fi, "exit", f"exit code {ev.exit_code}")
            return
        if ev.background and not cmd.background and not self.w.catalog.detaches(launch.server, cmd) and not (
                launch.server in _DETACHED_SERVERS and _detached(cmd, launch)):
            self.task_bound.add(fi)
        if ev.background and output:
            self.log_evidence(ev, launch.instance, launch, output)
        elif _returned_in_foreground(ev, cmd, launch) and not self.w.catalog.detaches(launch.server, cmd):
            # the tool call came back, so a server run in the foreground ended with it (an
            # interrupt, a harness timeout, the user's Ctrl-C): it is not serving any more
            xi = self.w._add(Kill(event=ev.index, mechanism="command-returned", text=" ".join(cmd.argv[:6]),
                                  command_position=cmd.position,
                                  detail=f"the {launch.label} ran in the foreground and ended with the command"))
            self.ended(launch.instance, fi, "stopped", xi, "it ran in the foreground; the command returned")

    def fail_launch(self, ev: ToolEvent, launch: Launch, fi: int, reason: str, quote: str) -> None:
        inst = launch.instance
        assert inst is not None
        if reason == "address-in-use" and launch.duplicate_of is None and not self.held_by_log(inst, fi):
            launch.collided = quote.strip()  # nothing this log started holds the port: someone else's server
        xi = self.w._add(Failure(event=ev.index, instance=inst, reason=reason, quote=quote, launch_event=launch.event,
                                 detail=f"the {launch.label} launched here died: {quote}"))
        self.w._edge(f"event:{ev.index}", f"instance:{inst}", "reports-failure", xi)
        self.ended(inst, fi, "failed", xi, quote)

    def held_by_log(self, inst: str, fi: int) -> bool:
        """Whether a launch of this log other than ``fi`` may still hold the instance's port: one
        believed running, or one on the same port whose end the log never showed."""
        if any(lf != fi for lf in self.live.get(inst, [])):
            return True
        port = self.w.instances[inst].port
        return port is not None and any(lf != fi and self.w.instances[k].port == port
                                        for k, lives in self.live.items() for lf in lives)

    def ended(self, inst: str, fi: int, state: State, xi: int, why: str) -> None:
        """Launch ``fi`` is over. The instance takes ``state`` when nothing else of it is believed
        running; else, if this launch had made it ``starting``, what the others do is unknown."""
        lives = self.live.get(inst, [])
        if fi in lives:
            lives.remove(fi)
        history = self.w.instances[inst].history
        if not lives:
            self.w._change(inst, state, xi, why)
        elif history and history[-1].fact == fi and history[-1].state == "starting":
            self.w._change(inst, "unknown", xi, f"{why}; the earlier launch's state is not known")

    def apply_kill(self, kill: Kill) -> None:
        fi = self.w._add(kill)
        if (stack := self.stack_stops.pop(id(kill), None)) is not None:
            # `docker compose down|stop|kill` of the whole stack: an attached `up` whose containers
            # were seen running exits with them. (One still building has no container to lose: it
            # builds on and starts the stack after the down.)
            ups = self.open_ups.get(stack, {})
            for u in [u for u in ups if u in self.up_running]:
                del ups[u]
            # the stack is down: its state says so, but the stop is no victim of a kill. Taking
            # one's own stack down to rebuild it is how a requested change is deployed, and
            # labelled sessions never count it as killing a server in the user's hands.
            if _docker_verb(kill.text.split()) != "restart":
                for lf in list(self.live.get(stack, [])):
                    self.ended(stack, lf, "stopped", fi, f"{kill.text} stops every service")
        for inst in self.maybe_hit.pop(id(kill), []):
            if self.live_state(inst, kill.event) in ("starting", "ready"):
                self.w._change(inst, "unknown", fi, f"`{kill.text}` may have stopped the process its script runs")
        for vic in kill.victims:
            if vic.instance is None:
                continue
            self.w._edge(f"event:{kill.event}", f"instance:{vic.instance}", "kills", fi)
            self.w._edge(f"instance:{vic.instance}", f"event:{kill.event}", "matched-by-kill", fi)
            lives = self.live.get(vic.instance, [])
            for lf in list(lives):
                launch = self.w.facts[lf]
                if isinstance(launch, Launch) and (vic.launch_event is None or launch.event == vic.launch_event):
                    lives.remove(lf)
            if not lives:
                self.w._change(vic.instance, "stopped", fi, f"killed by {kill.text}")

    # -- background tasks ----------------------------------------------------------------------

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
            self.fail_launch(ev, launch, self.w._position(launch), "exit", f"exit code {ev.exit_code}")

    def launch_of_task(self, task_id: str) -> Launch | None:
        return self.task_launch.get(task_id)  # Launch facts are only made by ``launch_of``

    def compose_project(self, cmd: SimpleCommand, where: str) -> str | None:
        """The compose project a command acts on, as compose names it: ``-p``, then
        ``COMPOSE_PROJECT_NAME``, then the folder of ``--project-directory`` or ``-f``, then the
        working folder; a command that names none acts on the project the latest one named."""
        argv = cmd.effective_argv
        name = flag_value(argv, ["-p", "--project-name"]) or cmd.env.get("COMPOSE_PROJECT_NAME")
        if not name:
            folder = flag_value(argv, ["--project-directory"])
            compose_file = flag_value(argv, ["-f", "--file"])
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
        ups = [f for f in self.w._of(Launch) if f.instance == stack and f.ran and f.event < ev.index]
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
                self.w._edge(f"event:{up.event}", f"event:{prior}", "conflicts-with", self.w._position(up))

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
        fi = self.w._position(launch)
        if fi not in lives:
            return  # already stopped by the agent: the notification is the echo of that kill
        if (ev.status or "") == "killed":
            # stopped from outside the agent's calls (the harness restarting, the user): not a crash
            xi = self.w._add(Kill(event=ev.index, mechanism="task-killed", text=f"task {ev.task_id}",
                                  detail=f"background task {ev.task_id} running the {launch.label} was stopped"))
            lives.remove(fi)
            if not lives:
                self.w._change(inst, "stopped", xi, f"task {ev.task_id} was stopped")
        elif ev.exit_code not in (None, 0) or (ev.status or "") == "failed":
            xi = self.w._add(Failure(event=ev.index, instance=inst, reason="exit", launch_event=launch.event,
                                     quote=ev.text[:200] or f"exit code {ev.exit_code}",
                                     detail=f"background task {ev.task_id} ended with exit code {ev.exit_code}"))
            lives.remove(fi)
            self.w._edge(f"event:{ev.index}", f"instance:{inst}", "reports-failure", xi)
            if not lives:
                self.w._change(inst, "failed", xi, f"task {ev.task_id} exited {ev.exit_code}")
        elif fi in self.task_bound and (ev.status or "") in ("completed", "") and ev.exit_code is not None:
            # the task's shell ran the server in its foreground: the task is over, so is the server
            xi = self.w._add(Kill(event=ev.index, mechanism="task-ended", text=f"task {ev.task_id}",
                                  detail=f"background task {ev.task_id} running the {launch.label} completed"))
            lives.remove(fi)
            if not lives:
                self.w._change(inst, "stopped", xi, f"task {ev.task_id} completed")


_KIND_FAMILY: dict[str, tuple[str, ...]] = {
    "llama.cpp": ("llama-cpp",), "http.server": ("http-server",), "fastapi": ("uvicorn", "gunicorn"),
    "node": ("node", "npm-script", "next", "vite"), "dev-server": ("npm-script", "next", "vite", "node"),
    "docker": ("docker", "compose"),
}


def _kind_matches(kind: str, inst: Instance) -> bool:
    """A kind the user named (language reader's canonical names) against an instance."""
    if inst.server in _KIND_FAMILY.get(kind, (kind,)):
        return True
    return kind in (inst.unit or "") or kind in inst.label.lower()


def _frame_label(frame: ShellFrame) -> str:
    if frame.via == "ssh":
        return f"the remote shell on {frame.host} running this command"
    if frame.via == "harness":
        return "the agent's own shell running this tool call"
    return f"the shell `{' '.join(frame.argv[:2])} …` running this command"


def _normalise_hosts(script: ShellScript) -> ShellScript:
    """Hosts as the world keys them (``root@h`` and ``h`` are one machine)."""
    if not any(c.host for c in script.commands):
        return script

    def nh(h: str | None) -> str | None:
        n = None if h is None else norm_host(h, "local")
        return None if n == "local" else n

    cmds = [c.model_copy(update={"host": nh(c.host), "shells": [
        s.model_copy(update={"host": nh(s.host)}) for s in c.shells]}) for c in script.commands]
    return script.model_copy(update={"commands": cmds})


def _match_span(pattern: str, subject: str) -> tuple[int, int] | None:
    from analyzer.shell.ere import ere_span

    got = ere_span(pattern, subject)
    return got if isinstance(got, tuple) else None


def _same_command(reported: str, cmd: SimpleCommand) -> bool:
    """bash's job line quotes the command (cut with ``...`` in logs); compare on the first words."""
    words = reported.rstrip(". ").removesuffix("...").split()
    if not words:
        return False
    head = " ".join(words[: min(len(words), 4)])
    return head in " ".join(cmd.argv) or " ".join(cmd.effective_argv).startswith(head)


# zsh: "command not found: timeout"; bash: "bash: timeout: command not found"; sh: "timeout: not found"
_NOT_FOUND = re.compile(r"command not found: (\S+)|(?:^|\s)([^\s:]+): (?:command )?not found", re.M)


def _not_found(cmd: SimpleCommand, script: ShellScript, output: str) -> bool:
    """The shell says the launch's program (or a wrapper in front of it) does not exist."""
    names = {w.rsplit("/", 1)[-1] for w in cmd.wrappers} | {c.name for c in _lineage(cmd, script)}
    for m in _NOT_FOUND.finditer(output):
        if (m.group(1) or m.group(2) or "").rsplit("/", 1)[-1] in names:
            return True
    return False


_DETACHED_SERVERS = frozenset({"systemd", "compose", "docker"})
def _bang_assignments(text: str, launches: list[tuple[SimpleCommand, int]]) -> dict[str, int]:
    """``NAME=$!`` assignments of a command line -> the launch fact of the background command
    right before each (``$!`` is the PID of the latest background job)."""
    out: dict[str, int] = {}
    spans = sorted((c.span[0], fi) for c, fi in launches if c.background and c.span and _own_job(c))
    for m in re.finditer(r"(?<![\w$])(\w+)=\$!", text):
        before = [fi for start, fi in spans if start < m.start()]
        if before:
            out[m.group(1)] = before[-1]
    return out


def _own_job(cmd: SimpleCommand) -> bool:
    """A background command that is its own job, so ``$!`` is its PID: not one inside a
    backgrounded ``( … )`` subshell or pipeline, whose ``$!`` is the subshell or the last stage
    (killing that leaves the server running)."""
    return "subshell" not in cmd.contexts and "pipeline" not in cmd.contexts


def _echoed_pids(script: ShellScript, ran: list[tuple[SimpleCommand, int]], output: str) -> dict[int, int]:
    """``cmd & echo $!``: each ``echo $!`` prints the PID of the background launch before it, as a
    line holding only that number; matched in order when every echo printed one."""
    echoes = [c for c in script.commands if c.name == "echo" and any("$!" in a for a in c.argv[1:])]
    if not echoes:
        return {}
    numbers = [int(n) for n in re.findall(r"^\s*(\d{2,8})\s*$", output, re.M)]
    if len(numbers) != len(echoes):
        return {}
    out: dict[int, int] = {}
    for echo, pid in zip(echoes, numbers, strict=True):
        before = [fi for c, fi in ran if c.background and _own_job(c) and c.position < echo.position]
        if before:
            out[before[-1]] = pid
    return out


def _join(cwd: str, path: str) -> str:
    """``cd``'s target from ``cwd``, with ``/`` separators (Windows paths and drives kept)."""
    path = path.replace("\\", "/")
    if path.startswith(("/", "~")) or re.match(r"^[A-Za-z]:/", path) or not cwd:
        joined = path
    else:
        joined = f"{cwd.rstrip('/')}/{path}"
    parts: list[str] = []
    for part in joined.split("/"):
        if part == "..":
            if parts and parts[-1] not in ("", ".."):
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def _docker_verb(argv: list[str]) -> str | None:
    """The verb of a ``docker``/``docker compose``/``docker-compose`` command (``up``, ``ps``,
    ``run``…); ``container ls`` and ``compose ls`` are ``ps`` too. None for other programs."""
    if not argv:
        return None
    prog = PurePosixPath(argv[0]).name
    if prog not in ("docker", "podman", "docker-compose", "podman-compose"):
        return None
    takes = {"-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "-f", "--file", "-p",
             "--project-name", "--env-file", "--profile", "--project-directory"}
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("compose", "container"):
            i += 1
        elif a.startswith("-"):
            i += 2 if a in takes else 1
        else:
            return "ps" if a in ("ps", "ls") else a
    return None


def _run_image(argv: list[str]) -> str | None:
    """The image of ``docker run [OPTIONS] IMAGE [COMMAND]``: the first word after the options
    (an option that takes a value is given with ``=`` or is one of the common ones)."""
    takes = {"--name", "-p", "--publish", "-e", "--env", "-v", "--volume", "--network", "--net", "-w", "--workdir",
             "--env-file", "--entrypoint", "-u", "--user", "--restart", "-l", "--label", "--platform", "--gpus",
             "-m", "--memory", "--cpus", "--mount", "--add-host", "--hostname", "-h"}
    i = argv.index("run") + 1 if "run" in argv else len(argv)
    while i < len(argv):
        a = argv[i]
        if a.startswith("-"):
            i += 2 if a in takes else 1
            continue
        return a
    return None


def _compose_ps(argv: list[str]) -> bool:
    """``docker compose [-f FILE] ps`` / ``docker-compose ps`` (running containers only: no ``-a``)."""
    if not argv or "-a" in argv or "--all" in argv:
        return False
    if argv[0].endswith("docker-compose"):
        return "ps" in argv[1:]
    return argv[0].endswith("docker") and "compose" in argv and "ps" in argv[argv.index("compose"):]


def _compose_rows(output: str) -> list[str]:
    """The container rows of a ``docker compose ps`` table (its header and warnings left out).
    Where the table's header is printed, only the rows under it count: the same call may go on
    to print a ``docker ps`` table of every project's containers."""
    if re.search(r"^NAME\s+IMAGE\s+.*\bSERVICE\b", output, re.M):
        return [r.name for r in container_rows(output) if r.service]
    return [ln for ln in output.splitlines() if ln.strip() and not ln.lstrip().startswith(("NAME", "time=", "WARN"))
            and "level=warning" not in ln]


_SERVER_PID = re.compile(r"Started server process \[(\d+)\]|Listening at: \S+ \((\d+)\)")
"""A server's own line naming its (master) process: uvicorn's, gunicorn's."""
_BIND_SECONDS = 10.0
"""A server that is not listening this long after its launch is not merely starting (GPU kinds aside)."""
_SLEEP = re.compile(r"(?:^|[;&|(]\s*)sleep\s+(\d+(?:\.\d+)?)\b")
_SCRIPT_RUNNERS = frozenset({"npm-script"})
"""Kinds whose launch runs the server as a child with a command line the log does not show."""
_SCRIPT_RUNNER_PROGRAMS = frozenset({"npm", "pnpm", "yarn", "bun"})
_CONNECTING = frozenset({"http", "port-check", "redis-ping"})
"""Probes that connect to the server's port: no answer means nothing listens there."""


def _returned_in_foreground(ev: ToolEvent, cmd: SimpleCommand, launch: Launch) -> bool:
    """The launch ran in the foreground of a tool call that has returned."""
    if cmd.background or ev.background or cmd.via in ("tmux", "screen"):
        return False
    if launch.server in _DETACHED_SERVERS and _detached(cmd, launch):
        return False
    return ev.output is not None or ev.exit_code is not None or ev.interrupted or ev.by_user


def _detached(cmd: SimpleCommand, launch: Launch) -> bool:
    """systemctl returns while the unit runs on; docker run -d / compose up -d return at once."""
    if launch.server == "systemd":
        return True
    return _detach_flag(cmd.effective_argv[1:8])


def _detached_up(argv: list[str]) -> bool:
    """``docker compose up -d`` / ``--detach`` (``-d`` after ``up``)."""
    return _detach_flag(argv[argv.index("up") + 1:] if "up" in argv else [])


def _detach_flag(words: list[str]) -> bool:
    """``-d``, ``--detach`` or a bundle of short flags holding ``d`` (``-itd``)."""
    return any(a in ("-d", "--detach") or (a.startswith("-") and not a.startswith("--") and "d" in a[1:])
               for a in words)


def _one_unit_each(cmd: SimpleCommand) -> list[SimpleCommand]:
    """``systemctl start a b`` starts two units: one command per unit, else the command itself."""
    argv = cmd.effective_argv
    if cmd.name != "systemctl" or len(argv) < 4 or argv[1] not in _SYSTEMCTL_START:
        return [cmd]
    units = [a for a in argv[2:] if not a.startswith("-")]
    return [cmd.model_copy(update={"effective_argv": [argv[0], argv[1], u]}) for u in units] or [cmd]


def _lineage(cmd: SimpleCommand, script: ShellScript) -> list[SimpleCommand]:
    """``cmd`` and the commands that start its nesting levels (``bash serve.sh`` around the
    server the script execs), innermost first."""
    out = [cmd]
    while out[-1].parent is not None and len(out) < 8:
        out.append(script.commands[out[-1].parent])
    return out


def _skipped(stopper: killsem.KillVerdict, cmd: SimpleCommand, script: ShellScript) -> bool:
    """``cmd`` never runs because ``stopper`` took down its shell: it, or the command that would
    start its nested level (the ``bash serve.sh`` around a script's commands), is skipped."""
    seen: set[int] = set()
    node: SimpleCommand | None = cmd
    while node is not None and node.position not in seen:
        seen.add(node.position)
        if node.position > stopper.command.position and stopper.skips(node):
            return True
        node = script.commands[node.parent] if node.parent is not None else None
    return False


def _observed_ran(later: list[SimpleCommand], output: str, dead: list[DeadJob]) -> bool:
    """The output shows some of ``later`` ran: bash reports one of them as a job, or the literal
    text of an ``echo``/``printf`` among them is in the output."""
    for c in later:
        if any(_same_command(d.command, c) for d in dead):
            return True
        if c.name in ("echo", "printf") and len(c.argv) > 1:
            literal = re.split(r"\$", " ".join(c.argv[1:]))[0].strip()
            if len(literal) >= 3 and literal in output:
                return True
        if c.name == "curl" and (fmt := flag_value(c.argv[1:], ["-w", "--write-out"])):
            literal = fmt.split("%", 1)[0].strip()  # `-w "server: %{http_code}"` prints "server: "
            if len(literal) >= 3 and literal in output:
                return True
    return False
