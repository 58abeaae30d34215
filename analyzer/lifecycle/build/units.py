"""Steps for process managers' units and for the terminal sessions that host servers.

A unit is what a manager runs under a name: a pm2 app, a supervisor program, a brew service, a
launchd job. Its identity is the manager and the name on its host (``local/pm2:api``); its members
are the PIDs the manager's output shows; its states come from that output (``online`` /
``RUNNING`` / ``started``, ``stopped``, ``errored`` / ``FATAL`` / ``error``, as the catalog kind's
``states`` map them) and from the kills of its manager. Managers reconcile, and so do systemd
units: a start of a unit that runs changes nothing; a restart stops it and starts it again; ``stop
all`` reaches every unit of that manager on the host, also the ones a listing showed running that
this log never started (owned by whoever started them before it).

A tmux or screen session hosts the server started in it (``tmux new -d -s api 'uvicorn …'``,
``screen -dmS api …``) or typed into it (``send-keys -t api '…' Enter``, ``-X stuff``): the launch
remembers the session, so ``kill-session`` and ``send-keys C-c`` of it reach that server, and
``tmux capture-pane -p`` output is its log.

``UnitSteps`` comes first among the builder's steps: each method here reads its own commands and
hands every other one to the generic step it extends (``super()``).
"""

from __future__ import annotations

import os
import re

from analyzer.events import ToolEvent
from analyzer.lifecycle.build._util import _lineage, _unit
from analyzer.lifecycle.build.base import WalkBase
from analyzer.lifecycle.facts import Failure, Kill, Launch, Probe, Victim
from analyzer.lifecycle.listings import UnitRow, systemd_state, unit_rows
from analyzer.lifecycle.world import Instance
from analyzer.shell import kill as killsem
from analyzer.shell.kill.managers import ManagerCommand, manager_command
from analyzer.shell.model import ShellScript, SimpleCommand

_PROGRAMS = frozenset({"pm2", "supervisorctl", "brew", "launchctl"})
_UNIT_KILLS = frozenset({"pm2", "supervisorctl", "brew-services", "launchctl"})
"""Kill mechanisms that name units by their manager's names."""
_ALREADY = re.compile(r"Script already launched|ERROR \(already started\)|already (?:started|loaded|running|bootstrapped)")
"""A manager's answer that the unit a start names runs already."""
_LIVE = ("starting", "ready")
_INTERPRETERS = {".js": "node", ".mjs": "node", ".cjs": "node", ".ts": "node", ".py": "python3"}
"""What pm2 runs a script with, by its extension (its process's argv[0])."""


class UnitSteps(WalkBase):
    """Steps for process managers' units (pm2, supervisor, brew services, launchd, systemd's
    reconcile) and for the tmux/screen sessions that host servers."""

    # -- launches ------------------------------------------------------------------------------

    def launch_of(self, ev: ToolEvent, cmd: SimpleCommand, where: str, script: ShellScript) -> int | None:
        mc = manager_command(cmd.effective_argv) if cmd.name in _PROGRAMS else None
        if mc is not None:
            return self.unit_launch(ev, cmd, where, mc)
        fi = super().launch_of(ev, cmd, where, script)
        if fi is not None and (session := _session_of(cmd, script)):
            launch = self.w.facts[fi]
            assert isinstance(launch, Launch) and launch.instance
            launch.session = self.w.instances[launch.instance].session = session
        return fi

    def unit_launch(self, ev: ToolEvent, cmd: SimpleCommand, where: str, mc: ManagerCommand) -> int | None:
        """``pm2 start app.js --name api``, ``supervisorctl start api worker``, ``brew services start
        redis``, ``launchctl load …/com.me.api.plist``: one launch per unit it names (a restart is its
        kill and the start after it, see ``apply_kill``)."""
        if mc.action != "start" or mc.force_restart:
            return None
        output = ev.output or ""
        names = list(mc.names) or re.findall(r"App \[([^\]]+)\] launched", output)  # an ecosystem file's apps
        if not names and mc.script:
            names = [os.path.basename(mc.script)]  # which apps the file holds is not shown: the file is the unit
        first: int | None = None
        for name in dict.fromkeys(names):
            fi = self.unit_started(ev, cmd, where, mc, name)
            if first is None:
                first = fi
            else:
                self.start(fi)  # the call's outcome is read for its first unit; the others run too
        states = self.w.catalog.managers[mc.manager].states
        for row in unit_rows(mc.manager, output):  # pm2 prints every app it runs: the others are listed
            if row.name not in names and (state := states.get(row.status)) is not None:
                self.unit_row(ev, f"{where}/{mc.manager}:{row.name}", mc.manager, row, state)
        return first

    def unit_started(self, ev: ToolEvent, cmd: SimpleCommand, where: str, mc: ManagerCommand, name: str) -> int:
        kind = self.w.catalog.managers[mc.manager]
        port = cmd.env.get("PORT", "")
        launch = Launch(
            event=ev.index, server=mc.manager, label=f"{kind.label} {name}", host=where, unit=name,
            port=int(port) if port.isdigit() and 0 < int(port) < 65536 else None,
            argv=list(cmd.effective_argv), command_position=cmd.position,
            detail=f"`{mc.verb}` of the {kind.label} {name} on {where}")
        inst = launch.instance = self.instance(launch)
        fi = self.w.record(launch)
        self.w.instances[inst].launches.append(ev.index)
        self.w.link(f"event:{ev.index}", f"instance:{inst}", "launches", fi)
        row = next((r for r in unit_rows(mc.manager, ev.output or "") if r.name == name), None)
        if row is not None:
            self.unit_shown(inst, row)
            if row.pid is not None:
                launch.pid, launch.pid_event = row.pid, ev.index
        if _ALREADY.search(ev.output or ""):
            self.already.add(fi)
        return fi

    def start(self, fi: int, still_running: bool = False) -> None:
        """A start of a unit that runs changes nothing (no new process, no duplicate): it runs on
        as it was. Anything else (``pm2 start -f`` too) starts as any launch does."""
        launch = self.w.facts[fi]
        assert isinstance(launch, Launch) and launch.instance
        inst = launch.instance
        # `pm2 start -f` runs a second copy of the app, whatever runs
        reconciles = (launch.server in self.w.catalog.managers and not {"-f", "--force"} & set(launch.argv)) or (
            launch.server == "systemd" and launch.argv[1:2] == ["start"])
        running = self.live_state(inst, launch.event) in _LIVE and bool(self.live.get(inst) or inst in self.listed)
        if not reconciles or not (running or fi in self.already):
            super().start(fi, still_running)
            return
        launch.detail += " (it was running already: the start changes nothing)"
        if not running:  # the manager says so, though this log never started it
            instance = self.w.instances[inst]
            if instance.launches == [launch.event]:
                instance.owner = "before"
            self.listed.setdefault(inst, launch.pid)
            self.w.change_state(inst, "starting", fi, "running already, as its manager says")
        self.touch(inst)

    def units_named(self, text: str) -> list[str]:
        """The process manager's units a user's words name (``the worker`` -> supervisor program
        ``worker``): the last word of the target, as the unit is named; none of another owner's."""
        words = re.findall(r"[\w@.:-]+", text.lower())
        if not words or not self.w.catalog.managers:
            return []
        return [key for key, inst in self.w.instances.items() if inst.server in self.w.catalog.managers
                and inst.unit is not None and inst.unit.lower() == words[-1] and inst.owner != "other"]

    # -- kills ---------------------------------------------------------------------------------

    def kills_of(self, ev: ToolEvent, script: ShellScript,
                 launches: list[tuple[SimpleCommand, int]]) -> list[tuple[Kill, killsem.KillVerdict]]:
        out = super().kills_of(ev, script, launches)
        for kill, v in out:
            mc = manager_command(v.command.effective_argv) if v.command.name in _PROGRAMS else None
            if mc is None or v.mechanism not in _UNIT_KILLS or not v.reached:
                continue
            if not mc.every:
                kill.victims += self.named_from_before(ev, v, mc, {vic.instance for vic in kill.victims})
                kill.detail = f"{kill.text} hits {len(kill.victims)} process(es)"
            if mc.action == "restart" or mc.force_restart:
                self.unit_restarts.add(id(kill))
        return out

    def named_from_before(self, ev: ToolEvent, v: killsem.KillVerdict, mc: ManagerCommand,
                          hit: set[str | None]) -> list[Victim]:
        """Units a stop or restart names by name that no launch of this log started: a unit that
        was running before the log (``pm2 restart api`` of the user's app), now an instance of its own."""
        host = v.command.host or "local"
        kind = self.w.catalog.managers[mc.manager]
        out = []
        for name in mc.names:
            if name.isdigit() or name.startswith("/") or any(c in name for c in "*?["):
                continue  # an id, a regex or a glob: which unit it meant is not known
            if mc.manager == "launchd" and name.startswith("homebrew.mxcl.") and \
                    f"{host}/brew:{name.removeprefix('homebrew.mxcl.')}" in {*hit, *self.w.instances}:
                continue  # the launchd job of a brew service: that service
            key = f"{host}/{mc.manager}:{name}"
            known = self.w.instances.get(key)
            # the agent's own unit was judged by the kill; one from before that is stopped is gone
            gone = known is not None and self.live_state(key, ev.index) == "stopped" and key not in self.listed
            if key in hit or (known is not None and known.owner != "before") or gone:
                continue
            if known is None:
                self.w.instances[key] = Instance(id=key, server=mc.manager, label=f"{kind.label} {name}", host=host,
                                                 unit=name, owner="before")
            out.append(Victim(label=self.w.instances[key].name, role="server", instance=key,
                              reason=f"`{' '.join(v.command.argv)}` names {name}, which this session never started"))
        return out

    def apply_kill(self, kill: Kill) -> None:
        """A kill of units; a manager's restart then starts each unit it stopped again."""
        restarts = id(kill) in self.unit_restarts
        self.unit_restarts.discard(id(kill))
        container_restarts = id(kill) in self.container_restarts
        self.container_restarts.discard(id(kill))
        super().apply_kill(kill)
        units = [v.instance for v in kill.victims if v.instance and self.w.instances[v.instance].server
                 in self.w.catalog.managers]
        for inst in dict.fromkeys(units):
            self.listed.pop(inst, None)
            if restarts:
                self.relaunch(kill, inst)
        if container_restarts:
            # `docker restart NAME`: the agent's container stops, then its processes start again
            for inst in dict.fromkeys(v.instance for v in kill.victims if v.instance):
                if self.w.instances[inst].container and any(la.argv for la in self.w.launches(inst)):
                    self.relaunch(kill, inst)

    def relaunch(self, kill: Kill, inst: str) -> None:
        self.start_again(kill.event, kill.command_position, kill.text, inst)

    def start_again(self, event: int, position: int, text: str, inst: str) -> None:
        """A launch of ``inst`` by a command that starts what it ran before (a manager's restart,
        ``docker start|restart NAME``): the same command line, at ``event``."""
        instance = self.w.instances[inst]
        earlier = next((la for la in self.w.launches(inst) if la.argv), None)
        launch = Launch(event=event, instance=inst, server=instance.server, label=instance.label,
                        host=instance.host, port=instance.port, unit=instance.unit,
                        argv=list(earlier.argv) if earlier else [], command_position=position,
                        detail=f"`{text}` starts the {instance.label} again")
        fi = self.w.record(launch)
        instance.launches.append(event)
        self.w.link(f"event:{event}", f"instance:{inst}", "launches", fi)
        super().start(fi)

    def unit_process(self, inst: str, launch: Launch | None) -> killsem.Process:
        """A unit's process as the kill evaluation sees it: its manager and name there (a brew
        service is also a launchd job, ``homebrew.mxcl.NAME``; a launchd job is its label)."""
        instance = self.w.instances[inst]
        manager = instance.server
        host = None if instance.host == "local" else instance.host
        ref = str(self.w.position(launch)) if launch is not None else f"instance:{inst}"
        pid = launch.pid if launch is not None else self.listed.get(inst)
        ports = (instance.port,) if instance.port else ()
        if manager == "launchd":
            return killsem.Process(pid=pid, host=host, kind="server", label=instance.name, ref=ref, ports=ports,
                                   unit=instance.unit)
        return killsem.Process(
            pid=pid, argv=_app_argv(launch), host=host, kind="server", label=instance.name, ref=ref, ports=ports,
            manager=manager, manager_name=instance.unit, manager_id=self.unit_ids.get(inst),
            unit=f"homebrew.mxcl.{instance.unit}" if manager == "brew" else None)

    # -- listings and output -------------------------------------------------------------------

    def probe_or_log(self, ev: ToolEvent, cmd: SimpleCommand, where: str) -> None:
        argv = cmd.effective_argv
        mc = manager_command(argv) if cmd.name in _PROGRAMS else None
        if mc is not None:
            if ev.output and not ev.truncated:
                self.unit_output(ev, where, mc)
        elif cmd.name == "systemctl" and len(argv) >= 3 and argv[1] in ("status", "is-active") and (
                units := [a for a in argv[2:] if not a.startswith("-")]):
            self.systemd_output(ev, where, _unit(units[0]))
        elif cmd.name == "tmux" and len(argv) > 1 and argv[1] in ("capture-pane", "capturep") and "-p" in argv:
            self.pane_output(ev, where, argv)
        else:
            super().probe_or_log(ev, cmd, where)

    def unit_output(self, ev: ToolEvent, where: str, mc: ManagerCommand) -> None:
        """What a manager printed: its logs of a unit (``pm2 logs api``, ``supervisorctl tail api``)
        are that unit's log; its tables and answers list units with their states."""
        output = ev.output or ""
        if mc.action == "logs":
            for name in mc.names:
                if (key := f"{where}/{mc.manager}:{name}") in self.w.instances:
                    self.log_evidence(ev, key, None, output)  # which server the unit runs is not known: any kind's lines
            return
        states = self.w.catalog.managers[mc.manager].states
        # a restart answers `api: stopped` then `api: started`: each unit ends as its last line says
        last = {r.name: r for r in unit_rows(mc.manager, output)}
        for row in last.values():
            if (state := states.get(row.status)) is not None:
                self.unit_row(ev, f"{where}/{mc.manager}:{row.name}", mc.manager, row, state)

    def unit_row(self, ev: ToolEvent, key: str, manager: str, row: UnitRow, state: str) -> None:
        """One unit of a listing: bind its PID and number, and take the state it shows. A running
        unit no launch of this log started is one from before it; a stopped one nobody here started
        is nothing to draw."""
        if key not in self.w.instances:
            if state != "running":
                return
            label = self.w.catalog.managers[manager].label
            self.w.instances[key] = Instance(id=key, server=manager, label=f"{label} {row.name}",
                                             host=key.split("/", 1)[0], unit=row.name, owner="before")
        self.unit_shown(key, row)
        self.unit_state(ev, key, manager, row.line or f"{row.name} {row.status}", state, row.pid)

    def unit_shown(self, key: str, row: UnitRow) -> None:
        inst = self.w.instances[key]
        if row.ident is not None:
            self.unit_ids[key] = row.ident
        if row.pid is not None and row.pid not in inst.pids:
            inst.pids.append(row.pid)

    def unit_state(self, ev: ToolEvent, key: str, method: str, quote: str, state: str, pid: int | None) -> None:
        """A manager's word on one unit (``running``, ``stopped``, ``failed``), as a probe of it: it
        shows the process alive, never that it serves."""
        pi = self.w.record(Probe(event=ev.index, instance=key, method=method, target=quote[:120],
                                 answered=state == "running", detail=f"{method} shows: {quote[:120]}"))
        self.w.link(f"event:{ev.index}", f"instance:{key}", "probes", pi)
        lives = list(self.live.get(key, []))
        now = self.live_state(key, ev.index)
        if self.w.instances[key].owner == "agent":
            self.touch(key)
        if state == "running":
            if lives:
                launch = self.w.facts[lives[-1]]
                assert isinstance(launch, Launch)
                if launch.pid is None and pid is not None:
                    launch.pid, launch.pid_event = pid, ev.index
            else:
                self.listed[key] = pid
                if now not in _LIVE:
                    self.w.change_state(key, "starting", pi, f"{method} shows it running")
            return
        self.listed.pop(key, None)
        if state == "stopped" and not (lives and method == "systemctl"):
            for lf in lives:
                self.ended(key, lf, "stopped", pi, f"{method} shows it stopped")
            if now in _LIVE:
                self.w.change_state(key, "stopped", pi, f"{method} shows it stopped")
            return
        if now == "failed":
            return  # the same failure listed again
        # failed, or a unit this log started that is no longer active: its process died
        xi = self.w.record(Failure(event=ev.index, instance=key, reason="exit", quote=quote,
                                   launch_event=self.w.facts[lives[-1]].event if lives else None,
                                   detail=f"{method} shows it is not running: {quote}"))
        self.w.link(f"event:{ev.index}", f"instance:{key}", "reports-failure", xi)
        for lf in lives:
            self.ended(key, lf, "failed", xi, quote)
        self.w.change_state(key, "failed", xi, quote)

    def systemd_output(self, ev: ToolEvent, where: str, unit: str) -> None:
        """``systemctl status UNIT`` / ``is-active UNIT``: its state and main PID. An active unit no
        launch of this log started was running before it."""
        read = systemd_state(ev.output or "")
        if read is None:
            return
        state, pid, line = read
        keys = self.find(host=where, unit=unit)
        if not keys and state == "running":
            keys = [f"{where}/unit:{unit}"]
            self.w.instances[keys[0]] = Instance(id=keys[0], server="systemd", label=f"{unit} (systemd)", host=where,
                                                 unit=unit, owner="before")
        for key in keys:
            if pid is not None and pid not in self.w.instances[key].pids:
                self.w.instances[key].pids.append(pid)
            self.unit_state(ev, key, "systemctl", line, state, pid)

    def pane_output(self, ev: ToolEvent, where: str, argv: list[str]) -> None:
        """``tmux capture-pane -p -t S``: the screen of session S is the log of the server it hosts."""
        target = next((argv[k + 1] for k, a in enumerate(argv) if a == "-t" and k + 1 < len(argv)), None)
        if target is None or not ev.output:
            return
        session = "tmux:" + _session_name(target)
        for key, lives in self.live.items():
            for fi in lives:
                launch = self.w.facts[fi]
                if isinstance(launch, Launch) and launch.session == session and launch.host == where:
                    self.log_evidence(ev, key, launch, ev.output)


def _session_of(cmd: SimpleCommand, script: ShellScript) -> str | None:
    """The tmux or screen session a command runs in: started with it (``tmux new -s api '…'``,
    ``screen -dmS api …``) or typed into it (``send-keys -t api``, ``screen -S api -X stuff``)."""
    for c in _lineage(cmd, script):
        if "screen" in c.wrappers and (name := _screen_name(c.argv)):
            return f"screen:{name}"
        if c.via in ("tmux", "screen") and c.parent is not None:
            parent = script.commands[c.parent].effective_argv
            if c.via == "screen":
                name = _screen_name(parent)
                return f"screen:{name}" if name else None
            flag = next((parent[k + 1] for k, a in enumerate(parent) if a in ("-s", "-t") and k + 1 < len(parent)), None)
            return f"tmux:{_session_name(flag)}" if flag else None
    return None


def _session_name(target: str) -> str:
    """tmux's session of a target (``api:0.1`` -> ``api``, ``=api`` -> ``api``)."""
    return target.split(":", 1)[0].lstrip("=") or target


def _screen_name(argv: list[str]) -> str | None:
    """``screen -S NAME`` or a bundle ending in S (``-dmS NAME``)."""
    for k, a in enumerate(argv[:-1]):
        if a.startswith("-") and not a.startswith("--") and a.endswith("S"):
            return argv[k + 1]
    return None


def _app_argv(launch: Launch | None) -> tuple[str, ...]:
    """The argv of the process pm2 runs for ``pm2 start SCRIPT``: the interpreter and the script, or
    the program with the arguments after ``--``; unknown (empty) for other managers."""
    mc = manager_command(launch.argv) if launch is not None else None
    if mc is None or mc.manager != "pm2" or mc.script is None or " " in mc.script:
        return ()
    interpreter = _INTERPRETERS.get(os.path.splitext(mc.script)[1])
    if interpreter:
        return interpreter, mc.script
    assert launch is not None
    rest = launch.argv[launch.argv.index("--") + 1 :] if "--" in launch.argv else []
    return mc.script, *rest
