"""Steps for probes and listings: HTTP and port checks, port listers and their PIDs, process
listings, a server's own log lines."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from analyzer.events import AssistantEvent, Event, ToolEvent
from analyzer.lifecycle.build._util import (
    _ALIVE_ONLY,
    _BIND_SECONDS,
    _CONNECTING,
    _LOG_READERS,
    _SERVER_PID,
    _compose_ps,
    _compose_rows,
    _unit,
)
from analyzer.lifecycle.build.base import WalkBase
from analyzer.lifecycle.containers import container_rows
from analyzer.lifecycle.facts import (
    Failure,
    Launch,
    ModelDisagreement,
    Probe,
    Ready,
)
from analyzer.lifecycle.generic import GENERIC_KIND, listening_line
from analyzer.lifecycle.probes import (
    answered_by,
    bare_pids,
    failure_reason,
    fuser_holders,
    listener_name,
    listeners,
    own_answer,
    probe_of,
    process_rows,
    terse_pids,
)
from analyzer.lifecycle.world import Instance
from analyzer.shell.ere import ere_search
from analyzer.shell.kill.model import comm_of
from analyzer.shell.kill.pkill import parse_pgrep
from analyzer.shell.model import SimpleCommand

_PROBE_TOOL = re.compile(r"\s*(?:sleep \d+\s*(?:;|&&)\s*)?(?:curl|wget|nc|ncat|lsof|ss|netstat|redis-cli|http)\b")
"""A command line that only probes or lists (its port is the thing asked about, not launched)."""
_NOT_THE_SERVER = frozenset({"grep", "egrep", "rg", "sh", "bash", "zsh", "dash", "nohup", "setsid", "timeout", "sudo",
                             "script", "/bin/sh", "tmux", "screen"})
"""First words of process rows that are not the server process itself, though its command line is in them."""


class ProbeSteps(WalkBase):
    """Steps for probes and listings: HTTP and port checks, port listers and their PIDs, process"""

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
            self.bind_listed(ev, cmd, where, ev.output)
            return
        if _compose_ps(argv) and ev.output is not None and not ev.truncated and ev.exit_code in (None, 0):
            stack = self.stack_key(cmd, where)
            rows = self.table_rows(ev)
            if not _compose_rows(ev.output, rows):
                self.compose_empty(ev, stack)
            elif running := [r for r in rows if r.status.startswith("Up")]:
                self.compose_running(stack)
                self.published_over(ev, stack, running)
            return
        if cmd.name == "fuser" and ev.output and not ev.background and not any(
                a.startswith("-") and not a.startswith("--") and "k" in a for a in argv[1:]):
            self.bind_pids(ev, cmd, where)  # `fuser 8000/tcp` names the port's holders; -k kills them
            return
        if cmd.name in ("ss", "netstat", "lsof") and ev.output and not ev.background:
            self.bind_pids(ev, cmd, where)  # `netstat -ano | findstr :8080` names the port in another command
        p = probe_of(cmd, ev.output, ev.exit_code, where, masked=self.masked_by(cmd))
        if p is not None and p.port is not None:
            insts = self.find(host=p.host, port=p.port) or self.find(host="*", port=p.port)
            # the log's own instance on the port before one from before the log
            insts.sort(key=lambda k: self.w.instances[k].owner == "before")
            if insts and all(self.w.instances[k].owner == "before" for k in insts):
                insts = self.publishers(p.host, p.port) + insts
            if not insts:
                # a unit or container whose port the launch did not show: the probe teaches it
                portless = [k for k, lives in self.live.items()
                            if lives and self.w.instances[k].host == p.host and self.w.instances[k].port is None]
                if len(portless) == 1:
                    self.w.instances[portless[0]].port = p.port
                    insts = portless
            if not insts and p.answered and p.host == where and cmd.container is None \
                    and self.unclaimed(ev, where, p.port):
                insts = [self.before_instance(ev.index, where, p.port, None,
                                              f"`{' '.join(cmd.argv)[:80]}` got an answer on :{p.port} before any "
                                              "launch of this log there")]
            for inst in self.with_services(insts, p.port):  # the first, with its compose stack or services
                kind, body = self.w.instances[inst].server, ev.output or ""
                other = answered_by(self.w.catalog, kind, body) if p.method == "http" and p.answered else None
                self.probe(ev, inst, p.method, p.target, p.answered, foreign=other.label if other else None)
                if p.method == "http" and p.answered and own_answer(self.w.catalog, kind, body):
                    self.proven_alive(ev, inst, p.port)
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

    def publishers(self, host: str, port: int) -> list[str]:
        """Containers and stacks of this log whose own launch docker refused ``port`` (it is in their
        refusal line): they publish it, so a later probe of it asks about them too."""
        held = re.compile(rf":{port}\b")
        return [k for k, i in self.w.instances.items() if i.host == host and i.port is None
                and i.server in ("compose", "docker")
                and any(la.collided and held.search(la.collided) for la in self.w.launches(k))]

    def bind_pids(self, ev: ToolEvent, cmd: SimpleCommand, where: str) -> None:
        """A port lister's output names the PID listening on a port (``netstat -ano``, ``ss -p``,
        ``lsof -i``, ``lsof -ti :PORT``): the running launch on that port is that process, so a
        later ``kill PID`` / ``taskkill /PID`` hits exactly it."""
        found = fuser_holders(ev.output or "") if cmd.name == "fuser" else listeners(ev.output)
        # a lister that names the port itself is already a probe of it (``probe_of``)
        asked = re.search(r":(\d{2,5})\b", " ".join(cmd.effective_argv))
        terse = terse_pids(cmd.name, cmd.effective_argv, ev.output or "")
        if not found and terse and asked:
            found = {int(asked.group(1)): set(terse)}
        for port, pids in found.items():
            if len(pids) != 1:
                continue  # a forking server's workers, or two listeners: which one is whose is not shown
            (pid,) = pids
            insts = self.find(host=where, port=port)
            if not insts and re.search(rf"(?<![\d.]){port}(?!\d)", ev.command or "") and self.unclaimed(ev, where, port):
                # the agent asked about this port and something no launch of this log started listens there
                name = listener_name(ev.output or "", pid)
                key = self.before_instance(ev.index, where, port, name,
                                           f"`{' '.join(cmd.argv)[:60]}` shows PID {pid}"
                                           + (f" ({name})" if name else "") + f" listening on :{port}")
                if asked is None:  # a lister that names the port is that port's probe (``probe_of``)
                    self.probe(ev, key, "port-list", f"PID {pid} listening on :{port}", True)
                continue
            for inst in insts:
                lives = self.live.get(inst, [])
                if not lives:
                    if asked is None and insts == [inst] and self.w.instances[inst].owner == "before":
                        self.probe(ev, inst, "port-list", f"PID {pid} listening on :{port}", True)  # still there
                    continue
                launch = self.w.facts[lives[-1]]
                assert isinstance(launch, Launch)
                if asked is None and launch.pid in (None, pid) and insts == [inst]:
                    self.probe(ev, inst, "port-list", f"PID {pid} listening on :{port}", True)
                if launch.pid is None or self.pid_claimed(launch):
                    launch.pid, launch.pid_event = pid, ev.index
                    launch.detail += f" (PID {launch.pid}, as `{' '.join(cmd.argv)}` at event {ev.index} shows)"

    def proven_alive(self, ev: ToolEvent, inst: str, port: int) -> None:
        """An answer only its kind gives shows the instance's latest launch still serving: it has
        run since it started, whatever an early unanswered probe made of it. A compose ``up`` since
        then whose containers a ``docker compose ps`` showed publishing this port launched onto it
        (``ng serve --port 4200`` still answering with its Vite page after the stack's frontend took
        4200): that ``up`` is a duplicate, as ``published_over`` finds for a server shown ready."""
        lives = self.live.get(inst, [])
        if not lives:
            return
        launch = self.w.facts[lives[-1]]
        assert isinstance(launch, Launch)
        for stack, s in list(self.w.instances.items()):
            if s.server != "compose" or s.host != launch.host or not s.members:
                continue
            ups = [u for u in self.w.launches(stack) if u.ran and launch.event < u.event < ev.index]
            if not ups or ups[-1].duplicate_of is not None or ups[-1].collided or ups[-1].overlaps:
                continue
            up = ups[-1]
            if self.published_between(up.event, ev.index, port, set(s.members)):
                up.overlaps.append((port, launch.event))
                up.duplicate_of = launch.event
                self.w.link(f"event:{up.event}", f"event:{launch.event}", "conflicts-with", self.w.position(up))

    def published_between(self, start: int, end: int, port: int, members: set[str]) -> bool:
        """A ``docker compose ps`` / ``docker ps`` table between two events shows one of ``members``
        up and publishing ``port``."""
        for e in self.w.session.events[start + 1 : end]:
            if isinstance(e, ToolEvent) and e.command and "ps" in e.command and e.output and "->" in e.output \
                    and any(r.name in members and r.status.startswith("Up") and port in r.published
                            for r in container_rows(e.output)):
                return True
        return False

    def pid_claimed(self, launch: Launch) -> bool:
        """The launch's PID is only the agent's word (``MessageSteps.agent_pid``): output overrides it."""
        return launch.pid_event is not None and isinstance(self.w.session.events[launch.pid_event], AssistantEvent)

    def masked_by(self, cmd: SimpleCommand) -> str | None:
        """Whether the call's exit status is not ``cmd``'s own: it pipes into another command, or an
        ``||`` later in its list runs when it fails (``curl … || true``). None: its own; ``""``:
        masked; else the literal text its ``|| echo …`` fallback prints."""
        script = self.call_script
        if script is None:
            return None
        after = [c for c in script.commands
                 if c.position > cmd.position and c.depth == cmd.depth and c.parent == cmd.parent]
        for i, c in enumerate(after):
            if c.connector == "|":
                if i == 0:
                    return ""
                continue
            if c.connector not in ("&&", "||"):
                break  # the next list: what it does is not this probe's status
            if c.connector == "||":
                literal = re.split(r"\$", " ".join(c.argv[1:]))[0].strip() if c.name in ("echo", "printf") else ""
                return literal if len(literal) >= 3 else ""
        return None

    def unclaimed(self, ev: ToolEvent, host: str, port: int) -> bool:
        """No launch of this log can be what answers on ``port``: none listens where the log does not
        know (a launch with no port or only its kind's default, a compose stack or container, an
        unlisted background command), none was ever on that port, and no earlier command other
        than a probe named the port (``rails server -p 3001 -d``: a server the walk cannot read)."""
        if self.find(host=host, port=port) or any(t[2] == host for t in self.pending.values()):
            return False
        read, named = self.port_named.get(port, (0, False))
        if not named and read < ev.index:
            word = re.compile(rf"(?<![\d.]){port}(?!\d)")
            named = any(isinstance(e, ToolEvent) and e.command and word.search(e.command)
                        and not _PROBE_TOOL.match(e.command) for e in self.w.session.events[read : ev.index])
            self.port_named[port] = (ev.index, named)
        if named:
            return False
        for key, lives in self.live.items():
            inst = self.w.instances[key]
            if inst.host != host or not lives:
                continue
            if inst.port is None or inst.server in ("compose", "docker") or any(fi in self.guessed_port for fi in lives):
                return False
        return not any(i.host == host and i.server in ("compose", "docker") for i in self.w.instances.values())

    def before_instance(self, event: int, host: str, port: int, name: str | None, why: str) -> str:
        """The instance of a server on ``host:port`` that no launch of this log started (owner
        ``before``), made on its first evidence (``event``, ``why``); its key is the port's with
        ``@before``, so a later launch of the agent on that port is a box of its own."""
        key = f"{host}:{port}@before"
        if key not in self.w.instances:
            label = f"{name} from before the log" if name else "server from before the log"
            self.w.instances[key] = Instance(id=key, server=GENERIC_KIND, label=label, host=host, port=port,
                                             owner="before", owner_evidence=event, owner_detail=why)
        return key

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
            fi = self.w.position(fact)
            lives = self.live.setdefault(inst, [])
            if fi not in lives:
                if any(f.launch_event == fact.event for f in self.w._of(Failure)):
                    continue  # that launch died on its own; a listed twin is another launch
                di = self.w.record(ModelDisagreement(
                    event=ev.index, instance=inst, predicted=f"the {fact.label} launched at event {fact.event} was killed",
                    observed="a process listing shows it still running",
                    detail=f"{self.w.instances[inst].name} is still running although a kill was predicted to hit it"))
                self.w.notes.append(f"event {ev.index}: {self.w.facts[di].detail}")
                lives.append(fi)
                before = [c.state for c in self.w.instances[inst].history if c.event < fact.event + 1]
                restored = "ready" if any(f.instance == inst and f.event > fact.event and f.event < ev.index
                                          for f in self.w._of(Ready)) else (before[-1] if before else "unknown")
                self.w.change_state(inst, restored if restored in ("ready", "starting") else "unknown", di,
                               "still running after the kill (process listing)")
            self.probe(ev, inst, "process-list", f"process {fact.pid or ''} {joined[:60]}".strip(), True)

    def bind_listed(self, ev: ToolEvent, cmd: SimpleCommand, where: str, output: str) -> None:
        """PIDs a process listing shows, bound to the live launch whose process each is, so a later
        ``kill PID`` hits exactly it: a ``ps``/``pgrep -a`` row whose command line holds one launch's
        argv (the server's own row, not the ``sh -c``/``nohup`` wrapper or the ``grep`` beside it),
        or the one PID a bare ``pgrep PATTERN`` printed when the pattern selects exactly one live
        instance. Rows matching two instances, or an instance matching two rows (a forking server's
        workers), bind nothing."""
        argv = cmd.effective_argv
        live = {}
        for key, lives in self.live.items():
            if lives and self.w.instances[key].host == where:
                launch = self.w.facts[lives[-1]]
                if isinstance(launch, Launch) and launch.argv and (launch.pid is None or self.pid_claimed(launch)):
                    live[key] = launch
        if not live:
            return
        rows = process_rows(cmd.name, argv, output)
        found: dict[str, list[int]] = {}
        if rows:
            for pid, line in rows:
                if PurePosixPath(line.split()[0]).name in _NOT_THE_SERVER:
                    continue  # grep's own row, a wrapper shell holding the whole command line
                owners = [k for k, la in live.items() if " ".join(la.argv) in line]
                if len(owners) == 1:
                    found.setdefault(owners[0], []).append(pid)
        elif (pids := bare_pids(cmd.name, argv, output)) is not None and len(pids) == 1:
            opts = parse_pgrep(argv)
            if opts.error or len(opts.patterns) != 1 or opts.users or opts.parents or opts.inverse:
                return
            selected = [k for k, la in live.items() if ere_search(
                opts.patterns[0], " ".join(la.argv) if opts.full else comm_of(PurePosixPath(la.argv[0]).name),
                icase=opts.icase, exact=opts.exact)]
            if len(selected) == 1:
                found[selected[0]] = pids
        for key, pids in found.items():
            if len(pids) != 1:
                continue
            launch = live[key]
            launch.pid, launch.pid_event = pids[0], ev.index
            launch.detail += f" (PID {launch.pid}, as `{' '.join(cmd.argv)[:60]}` at event {ev.index} shows)"

    def probe(self, ev: ToolEvent, inst: str, method: str, target: str, answered: bool | None,
              foreign: str | None = None) -> None:
        """Record a probe of ``inst`` and what its answer says of its state. ``foreign``: the answer
        is the signature response of another kind (that label), so it did not come from ``inst``
        and is no readiness of it."""
        said = {True: "answered", False: "no answer", None: "unclear"}[answered]
        if foreign:
            said = f"answered by a {foreign}, not by the {self.w.instances[inst].label} launched there"
        fi = self.w.record(Probe(event=ev.index, instance=inst, method=method, target=target, answered=answered,
                               detail=f"{method} probe of {target}: {said}"))
        self.w.link(f"event:{ev.index}", f"instance:{inst}", "probes", fi)
        self.touch(inst)
        state = self.live_state(inst, ev.index)
        if foreign:
            return
        if answered and method not in _ALIVE_ONLY and state in ("starting", "unknown", "failed"):
            self.state_from(
                Ready(event=ev.index, instance=inst, source="probe", strength="strong", quote=target, detail=f"{target} answered"),
                "ready", f"probe {target} answered", "asserts-ready")
        elif answered is False and state == "starting" and method in _CONNECTING and not self.slow_to_listen(inst) \
                and self.waited(ev, inst) >= _BIND_SECONDS:
            # nothing listens where it should, well after the launch: a dev server or API binds its
            # port within seconds, so it died unseen; a relaunch now is not known to collide with it
            self.w.change_state(inst, "unknown", fi, f"probe {target} got no answer while it was starting")
        elif answered is False and state == "ready" and method != "task-poll":
            self.state_from(
                Failure(event=ev.index, instance=inst, reason="refused", quote=target, detail=f"{target} did not answer"),
                "failed", f"probe {target} got no answer", "reports-failure")

    def log_evidence(self, ev: Event, inst: str, launch: Launch | None, text: str) -> None:
        kind = launch.server if launch else None
        if launch and launch.log_file and f"{launch.log_file}:" in text:
            # grep over several logs prefixes each line with its file: read only this log's lines
            text = "\n".join(ln for ln in text.splitlines() if ln.startswith(f"{launch.log_file}:"))
        # the regex's two literals first: it has no prefix to skip to, and task outputs are long
        if launch is not None and (launch.pid is None or self.pid_claimed(launch)) and (
                "Started server process [" in text or "Listening at: " in text) and (own := _SERVER_PID.search(text)):
            launch.pid = int(own.group(1) or own.group(2))  # the server names its own process
            launch.pid_event = ev.index
        fail = self.w.catalog.failure_line(kind, text)
        ready = self.w.catalog.ready_line(kind, text)
        if ready is None and kind == GENERIC_KIND and (heard := listening_line(text)) is not None:
            ready = heard.line  # an unlisted server's ready line is where it says it listens
        if fail and launch is not None and isinstance(ev, ToolEvent) and failure_reason(fail) == "address-in-use" \
                and self.w.position(launch) in self.live.get(inst, []):
            # a backgrounded server's bind error read from its log or task output: the same refusal
            # as in the launch's own output, so the port's holder is known the same way
            self.fail_launch(ev, launch, self.w.position(launch), "address-in-use", fail)
        elif fail:
            self.state_from(
                Failure(event=ev.index, instance=inst, reason=failure_reason(fail), quote=fail, detail=f"its log shows: {fail}"),
                "failed", f"log: {fail}", "reports-failure")
        elif ready:
            self.state_from(
                Ready(event=ev.index, instance=inst, source="log", strength="strong", quote=ready, detail=f"its log says: {ready}"),
                "ready", f"log: {ready}", "asserts-ready")
