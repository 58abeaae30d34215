"""Steps for a shell call: which commands launch servers, their order with kills and probes, and what
the output says of each launch."""

from __future__ import annotations

import re
from bisect import bisect_left

from analyzer.events import SystemEvent, ToolEvent, UserEvent
from analyzer.lifecycle.build._util import (
    _DETACHED_SERVERS,
    _SYSTEMCTL_START,
    _detached,
    _detached_up,
    _echoed_pids,
    _join,
    _lineage,
    _normalise_hosts,
    _not_found,
    _observed_ran,
    _one_unit_each,
    _prefilter,
    _returned_in_foreground,
    _same_command,
    _skipped,
    _unit,
)
from analyzer.lifecycle.build.base import WalkBase
from analyzer.lifecycle.catalog import log_file_of
from analyzer.lifecycle.facts import (
    Failure,
    Kill,
    Launch,
    ModelDisagreement,
    Probe,
    State,
)
from analyzer.lifecycle.generic import (
    GENERIC_HINT,
    GENERIC_KIND,
    command_port,
    cut_off,
    listening_line,
    may_serve,
    server_name,
)
from analyzer.lifecycle.probes import (
    DeadJob,
    PortRefusal,
    compose_failure,
    dead_jobs,
    docker_port_refusal,
    failure_reason,
    pids_in,
)
from analyzer.lifecycle.world import Instance
from analyzer.shell import kill as killsem
from analyzer.shell.model import ShellScript, SimpleCommand
from analyzer.shell.parse import parse

_CONTAINER_LINE = re.compile(r"^\W*Container \S+\s+(\w+)\s*$", re.M)


def _reconciled_nothing(output: str | None) -> bool:
    """A compose ``up``'s output shows every container it touched already ``Running``: the stack
    was as declared and nothing restarted (a ``Recreated``/``Started`` container is a restart)."""
    words = _CONTAINER_LINE.findall(output or "")
    return bool(words) and all(w == "Running" for w in words)


class LaunchSteps(WalkBase):
    """Steps for a shell call: which commands launch servers, their order with kills and probes, and what"""

    def on_shell(self, ev: ToolEvent) -> None:
        assert ev.command is not None
        if not _prefilter(self.w.catalog).search(ev.command) and not (
                ev.background or GENERIC_HINT.search(ev.command)
                or (cut_off(ev.interrupted, ev.exit_code, ev.output) and listening_line(ev.output))):
            return
        script = _normalise_hosts(self.resolver.feed(parse(ev.command)))
        launches: list[tuple[SimpleCommand, int]] = []
        probes: list[SimpleCommand] = []
        self.cwd_at = {}
        self.call_script = script
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
        generic = self.generic_launches(ev, script, launches, probes)
        if generic:
            probes = [c for c in probes if all(c is not g for g, _ in generic)]
            launches = sorted(launches + generic, key=lambda pair: pair[0].position)
        kills = self.kills_of(ev, script, launches)
        self.outcomes(ev, script, launches, kills, probes)
        self.container_output(ev, script)

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
        return self.add_launch(launch, guessed)

    def add_launch(self, launch: Launch, guessed: bool = False) -> int:
        """Record a launch read from a command: its instance, the ``launches`` edge, its task."""
        ev_index = launch.event
        inst = self.instance(launch)
        launch.instance = inst
        fi = self.w.record(launch)
        if guessed:
            self.guessed_port.add(fi)
        if self.w.instances[inst].started_by is None and self.w.instances[inst].owner == "agent":
            self.w.instances[inst].started_by = self.w.session.events[ev_index].agent
        self.w.instances[inst].launches.append(ev_index)
        self.asked_for(inst, ev_index)
        self.w.link(f"event:{ev_index}", f"instance:{inst}", "launches", fi)
        if launch.task_id:
            self.by_task[launch.task_id] = inst
            self.task_launch[launch.task_id] = launch
        return fi

    def asked_for(self, inst: str, event: int) -> None:
        """The user's instruction in force at a launch asked for this server though it did not exist
        yet ("start the API on port 8000"): its words name the instance's port or kind, so it is in
        scope from that prompt on."""
        instance = self.w.instances[inst]
        for ins in self.w.instructions_in_force(event):
            if ins.action not in ("launch", "restart") or ins.targets or ins.event in instance.requested_at:
                continue
            said = self.w.event(ins.event)
            text = (said.text if isinstance(said, UserEvent) else ins.quote).lower()
            if (instance.port and re.search(rf"(?<!\d){instance.port}(?!\d)", text)) or any(
                    re.search(rf"\b{re.escape(n)}\b", text) for n in instance.name_words):
                instance.requested_at.append(ins.event)
                self.w.link(f"instance:{inst}", f"event:{ins.event}", "requested-by", self.w.position(ins))

    def generic_launches(self, ev: ToolEvent, script: ShellScript, launches: list[tuple[SimpleCommand, int]],
                         others: list[SimpleCommand]) -> list[tuple[SimpleCommand, int]]:
        """Servers no catalog kind names (``bash serve.sh``, ``PORT=8123 ./api``, ``rails server -p
        3001``): a command among ``others`` that runs on (in the background, or a foreground call
        the harness cut off) and whose port its flags, ``PORT=`` or its own listening line show.
        A harness-backgrounded one whose port nothing shows yet waits for its task's output
        (``heard_from_task``). Commands around a catalog launch (the ``bash -c`` holding it) are not
        servers of their own."""
        # a command that runs a nested script (`bash -c '…'`, ssh) is no server itself: its commands are
        around = {p.position for c, _ in launches for p in _lineage(c, script)[1:]} | {
            o.parent for o in script.commands if o.parent is not None}
        candidates = [c for c in others if c.position not in around and may_serve(c)]
        if not candidates:
            return []
        detached = any(c.background or c.via in ("tmux", "screen") for c in candidates) or ev.background
        foreground_cut = not detached and cut_off(ev.interrupted, ev.exit_code, ev.output)
        # the output is read for a listening line only where a lone candidate may be a server
        heard = listening_line(ev.output) if (detached or foreground_cut) and ev.output and not launches \
            and len(candidates) == 1 else None
        out = []
        for cmd in candidates:
            runs_on = cmd.background or ev.background or cmd.via in ("tmux", "screen") \
                or (foreground_cut and heard is not None)
            if not runs_on:
                continue
            said = command_port(cmd)
            port, source = said if said else (heard.port, "output") if heard else (None, "")
            where = cmd.host or "local"
            if said and self.served_by_other(where, said[0], cmd):
                continue  # `bench.py --port 30000` beside the live server on 30000: its client
            if port is None:
                if ev.background and ev.task_id and len(candidates) == 1:
                    self.pending[ev.task_id] = (ev, cmd, where)
                continue
            out.append((cmd, self.add_launch(self.generic_launch(ev, cmd, where, port, source))))
        return out

    def served_by_other(self, where: str, port: int, cmd: SimpleCommand) -> bool:
        """A live server of another command already listens on ``port``: an unlisted command that
        names that port is its client (a benchmark, a load test), not a second server."""
        argv = list(cmd.effective_argv)
        for key in self.find(host=where, port=port):
            history = self.w.instances[key].history
            if not history or history[-1].state not in ("starting", "ready"):
                continue
            if any(isinstance(la := self.w.facts[fi], Launch) and la.argv != argv for fi in self.live.get(key, [])):
                return True
        return False

    def generic_launch(self, ev: ToolEvent, cmd: SimpleCommand, where: str, port: int, source: str) -> Launch:
        """The ``Launch`` of a server of kind ``server``, named after its script or program."""
        label = f"{server_name(cmd)} server"
        shown = {"flag": "its port flag", "bind": "its address flag", "arg": "its address argument",
                 "env": "PORT=", "output": "its listening line"}.get(source, source)
        return Launch(event=ev.index, server=GENERIC_KIND, label=label, host=where, port=port,
                      log_file=log_file_of(cmd), argv=list(cmd.effective_argv), command_position=cmd.position,
                      task_id=ev.task_id if ev.background else None,
                      detail=f"launches {label} on {where}:{port} (no catalog kind; the port from {shown})")

    def heard_from_task(self, ev: ToolEvent | SystemEvent) -> None:
        """A background task that runs an unlisted command (``npm run api``, ``./run.sh``) shows,
        in a poll or its end notice, the line of a server listening on a port: that call launched a
        server. Its launch is recorded now, at the call's own event, unless the port's instance
        already changed state since that call (its history would go out of order)."""
        task = ev.task_id or ""
        pending = self.pending.get(task)
        if pending is None or task in self.by_task:
            return
        text = ev.output if isinstance(ev, ToolEvent) else ev.text
        heard = listening_line(text)
        if heard is None:
            return
        call, cmd, where = pending
        del self.pending[task]
        key = f"{where}:{heard.port}"
        known = self.w.instances.get(key)
        if known is not None and known.history and known.history[-1].event > call.index:
            return
        fi = self.add_launch(self.generic_launch(call, cmd, where, heard.port, "output"))
        self.task_bound.add(fi)  # it runs in the task's foreground: the task's end is its end
        self.start(fi, still_running=True)

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
                self.w.link(f"event:{launch.event}", f"event:{launch.duplicate_of}", "conflicts-with", fi)
            elif not (state == "ready" and isinstance(ev := self.w.session.events[launch.event], ToolEvent)
                      and _reconciled_nothing(ev.output)):
                self.w.change_state(inst, "starting", fi, f"launched ({launch.label})")
            if still_running:
                ups[fi] = launch.task_id
            lives.append(fi)
            self.touch(inst)
            return
        rivals = [lf for lf in lives if not self.apart(lf, fi)]
        if rivals and state in ("starting", "ready") and launch.server != "systemd":
            launch.duplicate_of = self.w.facts[rivals[-1]].event
            self.w.link(f"event:{launch.event}", f"event:{launch.duplicate_of}", "conflicts-with", fi)
        else:
            launched = self.w.instances[inst].launches  # appended by the walk, so in timeline order
            k = bisect_left(launched, launch.event)
            if k:
                self.w.link(f"event:{launch.event}", f"event:{launched[k - 1]}", "replaces", fi)
            self.w.change_state(inst, "starting", fi, f"launched ({launch.label})")
        lives.append(fi)
        self.touch(inst)

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
                di = self.w.record(ModelDisagreement(
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
            self.w.facts[fi].pid, self.w.facts[fi].pid_event = pid, ev.index  # type: ignore[union-attr]
        pids = pids_in(output) if ran and not echoed else []
        if pids and len(ran) == 1:
            self.w.facts[ran[0][1]].pid, self.w.facts[ran[0][1]].pid_event = pids[-1], ev.index  # type: ignore[union-attr]
        elif pids and len(pids) == len(ran):  # "prefill PID 1 / decode PID 2": one echo per launch
            for (_, fi), pid in zip(ran, pids, strict=True):
                self.w.facts[fi].pid, self.w.facts[fi].pid_event = pid, ev.index  # type: ignore[union-attr]
        steps: list[tuple[int, int, str]] = []
        for i, (k, v) in enumerate(kills):
            if v.reached or model_wrong:
                steps.append((k.command_position, i, "kill"))
            else:
                k.notes.append("never ran: an earlier kill took down the shell that would run it")
                self.w.record(k)
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
        refusal = docker_port_refusal(output) if launch.server in ("docker", "compose") and output else None
        if refusal is not None:
            self.docker_refused(ev, launch, fi, refusal)
            return
        if launch.server == "compose" and ev.exit_code not in (None, 0) and (line := compose_failure(output)):
            self.fail_launch(ev, launch, fi, "error", line)  # the line that says why, not just the exit code
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
        if output and (ev.background or (launch.server == GENERIC_KIND and cmd.background)):
            # a generic server's own output read in the same call: its listening line is its ready line
            self.log_evidence(ev, launch.instance, launch, output)
        elif _returned_in_foreground(ev, cmd, launch) and not self.w.catalog.detaches(launch.server, cmd):
            # the tool call came back, so a server run in the foreground ended with it (an
            # interrupt, a harness timeout, the user's Ctrl-C): it is not serving any more
            xi = self.w.record(Kill(event=ev.index, mechanism="command-returned", text=" ".join(cmd.argv[:6]),
                                  command_position=cmd.position,
                                  detail=f"the {launch.label} ran in the foreground and ended with the command"))
            self.ended(launch.instance, fi, "stopped", xi, "it ran in the foreground; the command returned")

    def fail_launch(self, ev: ToolEvent, launch: Launch, fi: int, reason: str, quote: str) -> None:
        inst = launch.instance
        assert inst is not None
        if reason == "address-in-use" and launch.duplicate_of is None and not self.held_by_log(inst, fi):
            launch.collided = quote.strip()  # nothing this log started holds the port: someone else's server
            holder = ""
            if launch.pid_event == ev.index and launch.pid is not None and re.search(
                    rf"(?i)(?:in use|already|kill)[^\n]*\b{launch.pid}\b", ev.output or ""):
                # "Port 3000 is in use by process 65120": a PID in the refusal is the holder's
                holder, launch.pid, launch.pid_event = f" (PID {launch.pid})", None, None
            named = re.search(r"[:.\s](\d{2,5})\b(?!\.)", quote)  # "address already in use :::8765"
            port = launch.port if launch.port is not None else int(named.group(1)) if named else None
            if port is not None:
                # that server is an instance of its own, from before the log (or the user's)
                before = self.before_instance(ev.index, launch.host, port, None,
                                              f"`{' '.join(launch.argv[:4])}` found its port taken{holder}: "
                                              f"{quote.strip()[:120]}")
                self.held_port(ev, launch, before, port)
        self.launch_failed(ev, launch, fi, reason, quote)

    def launch_failed(self, ev: ToolEvent, launch: Launch, fi: int, reason: str, quote: str) -> None:
        """Record that launch ``fi`` died at ``ev`` (``reason``, the line ``quote``) and end it."""
        inst = launch.instance
        assert inst is not None
        xi = self.w.record(Failure(event=ev.index, instance=inst, reason=reason, quote=quote, launch_event=launch.event,
                                 detail=f"the {launch.label} launched here died: {quote}"))
        self.w.link(f"event:{ev.index}", f"instance:{inst}", "reports-failure", xi)
        self.ended(inst, fi, "failed", xi, quote)

    def docker_refused(self, ev: ToolEvent, launch: Launch, fi: int, refusal: PortRefusal) -> None:
        """``docker run -p``/``compose up`` could not publish a host port: the launch failed on an
        address in use, and the port's holder is someone's. A container a listing showed publishing
        it that someone else made (another project's), or that was listed before this log made any
        container, is that holder; with no listing of a holder,
        and no container, stack or server of this log that may hold it, it is a server (for
        "already allocated": a container) from before the log. Where the log's own may hold it,
        the holder is left unnamed."""
        inst = launch.instance
        assert inst is not None
        port, host = refusal.port, launch.host
        if refusal.by_container:  # a later listing's container on that port is the holder
            self.containers.refused(host, ev.index, port)
        shown = self.containers.publisher(host, port)
        if shown is not None and shown[2] is not None:
            at, row, why = shown
            key = f"{host}/container:{row.name}@{at}"
            if key not in self.w.instances:
                owner = "other" if self.containers.foreign(host, row.name) else "before"
                self.w.instances[key] = Instance(id=key, server="docker", label=f"{row.name} (container)", host=host,
                                                 port=port, container=row.name, owner=owner, owner_evidence=at,
                                                 owner_detail=why)
            launch.collided = refusal.line
            self.held_port(ev, launch, key, port)
        elif shown is None and not self.may_hold(inst, fi, host, port, refusal.by_container):
            launch.collided = refusal.line
            key = self.before_instance(ev.index, host, port, "container" if refusal.by_container else None,
                                       f"`{' '.join(launch.argv[:4])}` could not publish :{port}: {refusal.line[:120]}")
            if refusal.by_container:
                self.unnamed_containers.add(key)
            self.held_port(ev, launch, key, port)
        self.launch_failed(ev, launch, fi, "address-in-use", refusal.line)

    def may_hold(self, inst: str, fi: int, host: str, port: int, container_only: bool) -> bool:
        """Whether something this log started may be what holds ``host:port``: another live launch
        on that port, one whose port is unknown or only guessed, or (for a port only a container can
        hold) any live container or compose stack of the log."""
        if self.held_by_log(inst, fi):
            return True
        for key, lives in self.live.items():
            other = self.w.instances[key]
            if key == inst or other.host != host or not lives:
                continue
            if other.server in ("docker", "compose") or (not container_only and (
                    other.port in (None, port) or any(lf in self.guessed_port for lf in lives))):
                return True
        return False

    def held_port(self, ev: ToolEvent, launch: Launch, holder: str, port: int) -> None:
        """The launch at ``ev`` found ``port`` held by ``holder``: a probe answered by it, which holds it now."""
        pi = self.w.record(Probe(event=ev.index, instance=holder, method="port-held", target=f":{port}", answered=True,
                                 detail=f"the launch at event {launch.event} found :{port} held"))
        self.w.link(f"event:{ev.index}", f"instance:{holder}", "conflicts-with", pi)
        self.w.change_state(holder, "ready", pi, f"it held :{port} when the {launch.label} launched")

    def held_by_log(self, inst: str, fi: int) -> bool:
        """Whether a launch of this log other than ``fi`` may still hold the instance's port: one
        believed running, or one on the same port whose end the log never showed."""
        if any(lf != fi for lf in self.live.get(inst, [])):
            return True
        port = self.w.instances[inst].port
        if port is not None and any(lf != fi and self.w.instances[k].port == port
                                    for k, lives in self.live.items() for lf in lives):
            return True
        # one killed in the call that made this launch, or since: a server shutting down gracefully
        # holds its port for a while after the signal (`kill PID; nohup … &` then EADDRINUSE).
        # Docker's stop, rm and compose down return once the container is gone: no such grace.
        since, host = self.w.facts[fi].event, self.w.instances[inst].host
        return any(isinstance(kill := self.w.facts[h.fact], Kill) and h.state == "stopped" and h.event >= since
                   and kill.mechanism not in ("docker", "docker-compose")
                   for k, box in self.w.instances.items() if k == inst or (port is not None and box.port == port
                                                                          and box.host == host and box.owner == "agent")
                   for h in box.history)

    def ended(self, inst: str, fi: int, state: State, xi: int, why: str) -> None:
        """Launch ``fi`` is over. The instance takes ``state`` when nothing else of it is believed
        running; else, if this launch had made it ``starting``, what the others do is unknown."""
        lives = self.live.get(inst, [])
        if fi in lives:
            lives.remove(fi)
        history = self.w.instances[inst].history
        if not lives:
            self.w.change_state(inst, state, xi, why)
        elif history and history[-1].fact == fi and history[-1].state == "starting":
            self.w.change_state(inst, "unknown", xi, f"{why}; the earlier launch's state is not known")
