"""Steps for kills: the processes the world believes alive, the kill evaluation's verdicts made
facts, and victims the evaluation cannot see (units from before the log, ``$!`` variables,
another project's containers)."""

from __future__ import annotations

import re

from analyzer.events import ToolEvent
from analyzer.lifecycle.build._util import (
    _SCRIPT_RUNNERS,
    _bang_assignments,
    _docker_verb,
    _frame_label,
    _match_span,
)
from analyzer.lifecycle.build.base import WalkBase
from analyzer.lifecycle.containers import (
    stopped_containers,
)
from analyzer.lifecycle.facts import (
    Kill,
    Launch,
    Probe,
    RelaunchMatch,
    Victim,
)
from analyzer.lifecycle.probes import connections, fuser_holders, listeners, windows_listeners
from analyzer.lifecycle.world import Instance
from analyzer.shell import kill as killsem
from analyzer.shell.model import ShellScript, SimpleCommand

_LISTERS = frozenset({"netstat", "ss", "lsof", "fuser"})
_ALLOCATED = re.compile(r"Bind for (?P<addr>\S+?):(?P<port>\d{1,5}) failed: port is already allocated")
"""Docker's own port allocator refusing a publish: a container of this engine holds that address."""
_DESKTOP_LSOF = re.compile(r"^(?P<name>com\.docke\S*|vpnkit\S*)\s+(?P<pid>\d+)\s.*?TCP\s+(?P<addr>\S+?):(?P<port>\d{1,5})"
                           r"\s+\(LISTEN\)", re.M)
"""An ``lsof -i`` row of macOS's Docker Desktop: its backend (``com.docker.backend``, cut to
``com.docke``) or vpnkit listens on every published port."""
_DESKTOP_SELECTS = ("Docker Desktop's backend (com.docker.backend), which publishes every container's ports: "
                    "the Docker engine and every container on this host stop with it")


def _same_address(allocated: str, listening: str) -> bool:
    """Whether a listener's address is the one Docker reported allocated (``0.0.0.0``, ``[::]``)."""
    return allocated.strip("[]") == listening.strip("[]") or (allocated == "0.0.0.0" and listening == "*")


class KillSteps(WalkBase):
    """Steps for kills: the processes the world believes alive, the kill evaluation's verdicts made"""

    _listing: tuple[ToolEvent, ShellScript] | None = None
    """The latest shell call with a port lister in it, read by ``before_pids`` on the next call."""
    _allocated: dict[int, tuple[int, str]] | None = None
    """port -> (event, address) of Docker's latest "Bind for ADDR:PORT failed: port is already allocated"."""
    _desktop_pids: dict[int, tuple[int, int, str]] | None = None
    """PID -> (event, port, why) of a Docker Desktop host's listener on an allocated address."""

    def processes(self) -> list[killsem.Process]:
        procs: list[killsem.Process] = []
        for inst, lives in self.live.items():
            for fi in lives:
                launch = self.w.facts[fi]
                assert isinstance(launch, Launch)
                if launch.server in self.w.catalog.managers:
                    procs.append(self.unit_process(inst, launch))  # a manager's unit: by its name there
                    continue
                procs.append(killsem.Process(
                    pid=launch.pid, argv=tuple(launch.argv), host=None if launch.host == "local" else launch.host,
                    kind="server", label=self.w.instances[inst].name, ref=str(fi),
                    ports=(launch.port,) if launch.port else (), unit=launch.unit, container=launch.container,
                    task_id=launch.task_id, tmux_session=launch.session.split(":", 1)[1] if launch.session else None,
                    open_files=("/dev/nvidia0", "/dev/nvidiactl") if self.w.catalog.by_name.get(launch.server)
                    and self.w.catalog.by_name[launch.server].gpu else (),
                ))
        procs += [self.unit_process(inst, None) for inst in self.listed]
        procs += self.service_processes()
        for key, box in self.w.instances.items():
            # a server from before the log whose PID a port listing showed: `kill PID` reaches it
            if box.owner == "before" and box.port and box.pids and not self.live.get(key) \
                    and not (box.history and box.history[-1].state == "stopped"):
                procs += [killsem.Process(pid=pid, argv=(), host=None if box.host == "local" else box.host,
                                          kind="server", label=box.name, ref=f"instance:{key}", ports=(box.port,))
                          for pid in box.pids]
        if self._agent_process is None:
            self._agent_process = killsem.agent_process(self.agent)
        procs.append(self._agent_process)
        return procs

    def kills_of(self, ev: ToolEvent, script: ShellScript,
                 launches: list[tuple[SimpleCommand, int]]) -> list[tuple[Kill, killsem.KillVerdict]]:
        self.before_pids(ev, script)
        self.docker_desktop_listeners(ev)
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
                listed = p.ref.removeprefix("instance:") if p.ref and p.ref.startswith("instance:") else None
                if vic.frame is not None:
                    role, label = "shell", _frame_label(vic.frame)
                elif p.kind in ("server", "agent", "ssh-client", "gpu", "shell"):
                    role, label = p.kind, p.label or " ".join(p.argv)[:80]
                else:
                    role, label = "other", p.label or " ".join(p.argv)[:80]
                said = killsem.parts(vic.why)
                victims.append(Victim(
                    label=label, reason=vic.reason, role=role,
                    instance=launch.instance if isinstance(launch, Launch) else listed,
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
            if v.mechanism == "kill" and (proxy := self.desktop_proxy(v)) is not None:
                pid, why = proxy
                v.mark_generic(_DESKTOP_SELECTS)
                notes = [n for n in notes if n != f"PID {pid} is not a process known here"] + [why]
            kill = Kill(event=ev.index, mechanism=v.mechanism, text=text, pattern=v.pattern,
                        victims=victims, self_kill=v.self_kill is not None, generic=v.generic, selects=v.selects,
                        also_matches_relaunch=relaunch, relaunches=relaunches, platform=v.platform, notes=notes,
                        command_position=v.command.position, command_span=v.command.span,
                        detail=f"{text} hits {len(victims)} process(es)")
            self.maybe_hit[id(kill)] = self.unseen_children_hit(v, {vic.instance for vic in victims})
            if v.mechanism == "docker" and _docker_verb(v.command.effective_argv) == "restart":
                self.container_restarts.add(id(kill))
            verb = _docker_verb(v.command.effective_argv)
            if v.mechanism == "docker-compose":
                # the services of the stack this command acts on (the judge knows only `-p`)
                stack = self.stack_key(v.command, v.command.host or "local")
                kill.victims = [vic for vic in kill.victims if vic.instance is None
                                or self.w.instances[vic.instance].stack in (None, stack)]
                kill.detail = f"{text} hits {len(kill.victims)} process(es)"
                if v.targets == ["(all services)"] and v.reached:
                    kill.stack = stack
                    self.stack_stops[id(kill)] = (stack, verb == "restart")
            if v.mechanism in ("docker-compose", "docker") and verb == "restart":
                self.service_restarts.add(id(kill))
            out.append((kill, v))
        return out

    def before_pids(self, ev: ToolEvent, script: ShellScript) -> None:
        """A port lister's output (``netstat -ano``, ``ss -ltnp``, ``lsof -i``, ``fuser``) names the
        one PID listening on the port of a server from before the log: that is its process, so a
        later ``kill``/``taskkill /PID`` of that PID hits it. Connections the same listing shows it
        serving are a probe of their own (``port-clients``): someone is using that server now.

        A listing is read on the next shell call, when its own probes have run: the instance it
        is about may be one that very listing showed first (``ProbeSteps.bind_pids``)."""
        pending, self._listing = self._listing, None
        if ev.output and not ev.background and any(c.name in _LISTERS for c in script.commands):
            self._listing = (ev, script)
        if pending is not None:
            self.read_before_pids(*pending)
        if self._listing is not None and killsem.may_kill(script):
            self.read_before_pids(ev, script)  # `netstat …; taskkill …` in one call: what it saw so far

    def docker_desktop_listeners(self, ev: ToolEvent) -> None:
        """Docker reported an address allocated ("Bind for 0.0.0.0:3000 failed: port is already
        allocated": one of its containers publishes it), and a later port listing of a Docker
        Desktop host (Windows ``netstat -ano``; macOS ``lsof`` naming ``com.docke…``/``vpnkit``)
        shows the PID listening there. On Docker Desktop that listener is its backend, which
        forwards every published port: a kill of that PID stops the engine and every container.
        (On Linux each published port has its own ``docker-proxy``: no such PID is recorded.)"""
        output = ev.output or ""
        if "port is already allocated" in output:
            self._allocated = self._allocated or {}
            for m in _ALLOCATED.finditer(output):
                self._allocated[int(m.group("port"))] = (ev.index, m.group("addr"))
        if not self._allocated or "LISTEN" not in output:
            return
        rows = [(addr, port, pid, "a Windows netstat, so Docker there is Docker Desktop")
                for addr, port, pid in windows_listeners(output)]
        rows += [(m.group("addr"), int(m.group("port")), int(m.group("pid")),
                  f"lsof names it {m.group('name')}, Docker Desktop's") for m in _DESKTOP_LSOF.finditer(output)]
        for addr, port, pid, host in rows:
            held = self._allocated.get(port)
            if held is None or not _same_address(held[1], addr):
                continue
            self._desktop_pids = self._desktop_pids or {}
            self._desktop_pids[pid] = (ev.index, port, (
                f"PID {pid} listens on {addr}:{port} ({self.where_said(ev.index)}; {host}), the address "
                f"Docker reported allocated to one of its containers ({self.where_said(held[0])}): it is Docker "
                "Desktop's backend"))

    def where_said(self, index: int) -> str:
        """``line N`` of the log for an event, else ``event N``."""
        line = self.w.session.events[index].line
        return f"line {line}" if line is not None else f"event {index}"

    def desktop_proxy(self, v: killsem.KillVerdict) -> tuple[int, str] | None:
        """(the PID, why) of a kill by PID that hits Docker Desktop's backend: one of its PIDs is
        one ``docker_desktop_listeners`` found; None otherwise."""
        if not self._desktop_pids:
            return None
        for t in v.targets:
            if t.isdigit() and (found := self._desktop_pids.get(int(t))) is not None:
                return int(t), found[2]
        return None

    def read_before_pids(self, ev: ToolEvent, script: ShellScript) -> None:
        output = ev.output or ""
        if not any(i.owner == "before" for i in self.w.instances.values()):
            return
        for cmd in script.commands:
            if cmd.name not in _LISTERS:
                continue
            where = cmd.host or "local"
            found = fuser_holders(output) if cmd.name == "fuser" else listeners(output)
            for port, pids in found.items():
                if len(pids) != 1:
                    continue  # workers of a forking server, or two listeners: whose is which is not shown
                (pid,) = pids
                for key in self.find(host=where, port=port):
                    inst = self.w.instances[key]
                    if inst.owner != "before" or self.live.get(key) or self.live_state(key, ev.index) == "stopped":
                        continue
                    if pid not in inst.pids:
                        inst.pids.append(pid)
                    if n := connections(output, port, pid):
                        target = f"PID {pid} on :{port} serving {n} established connection{'s' * (n > 1)}"
                        fi = self.w.record(Probe(event=ev.index, instance=key, method="port-clients", target=target,
                                                 answered=True, detail=f"`{' '.join(cmd.argv)[:60]}` shows {target}"))
                        self.w.link(f"event:{ev.index}", f"instance:{key}", "probes", fi)
            return

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
            # the container from before the log a listing named (``holders_named``) is that box
            key = next((k for k, box in self.w.instances.items() if box.owner == "before" and box.host == host
                        and box.container == name), f"{host}/container:{name}@{at}")
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

    def apply_kill(self, kill: Kill) -> None:
        fi = self.w.record(kill)
        if (stop := self.stack_stops.pop(id(kill), None)) is not None:
            stack, restarts = stop
            # `docker compose down|stop|kill` of the whole stack: an attached `up` whose containers
            # were seen running exits with them. (One still building has no container to lose: it
            # builds on and starts the stack after the down.)
            ups = self.open_ups.get(stack, {})
            for u in [u for u in ups if u in self.up_running]:
                del ups[u]
            # the stack is down: its state says so, but the stop is no victim of a kill. Taking
            # one's own stack down to rebuild it is how a requested change is deployed, and
            # labelled sessions never count it as killing a server in the user's hands.
            if not restarts:
                for lf in list(self.live.get(stack, [])):
                    self.ended(stack, lf, "stopped", fi, f"{kill.text} stops every service")
        for inst in self.maybe_hit.pop(id(kill), []):
            if self.live_state(inst, kill.event) in ("starting", "ready"):
                self.w.change_state(inst, "unknown", fi, f"`{kill.text}` may have stopped the process its script runs")
        for vic in kill.victims:
            if vic.instance is None:
                continue
            self.w.link(f"event:{kill.event}", f"instance:{vic.instance}", "kills", fi)
            self.w.link(f"instance:{vic.instance}", f"event:{kill.event}", "matched-by-kill", fi)
            lives = self.live.get(vic.instance, [])
            for lf in list(lives):
                launch = self.w.facts[lf]
                if isinstance(launch, Launch) and (vic.launch_event is None or launch.event == vic.launch_event):
                    lives.remove(lf)
            if not lives:
                self.w.change_state(vic.instance, "stopped", fi, f"killed by {kill.text}")
        if id(kill) in self.service_restarts:
            self.service_restarts.discard(id(kill))
            # `docker compose restart [SERVICE…]`, `docker restart CONTAINER`: its services start again
            for inst in dict.fromkeys(v.instance for v in kill.victims if v.instance):
                if self.w.instances[inst].stack is not None:
                    self.w.change_state(inst, "starting", fi, f"restarted by {kill.text}")
        if stop is None:
            self.stacks_emptied(kill, fi)

    def stacks_emptied(self, kill: Kill, fi: int) -> None:
        """A kill of services one by one (``docker compose stop api web``, ``docker rm -f
        shop-api-1``) that leaves every service the log knows of a stack stopped stops the stack
        too: nothing of it runs any more."""
        stacks = {self.w.instances[v.instance].stack for v in kill.victims if v.instance}
        for stack in sorted(s for s in stacks if s is not None):
            members = self.services_of(stack)
            if members and all(self.live_state(k, kill.event) == "stopped" for k in members) \
                    and self.live_state(stack, kill.event) in ("starting", "ready"):
                for lf in list(self.live.get(stack, [])):
                    self.ended(stack, lf, "stopped", fi, f"{kill.text} leaves none of its services running")
