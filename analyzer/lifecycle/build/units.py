"""Steps for process managers' units and for the terminal sessions that host servers.

A unit is what a manager runs under a name: a pm2 app, a supervisor program, a brew service, a
launchd job. Its identity is the manager and the name on its host (``local/pm2:api``); its members
are the PIDs the manager's output shows; its states come from that output (``online`` /
``RUNNING`` / ``started``, ``stopped``, ``errored`` / ``FATAL`` / ``error``, as the catalog kind's
``states`` map them) and from the kills of its manager. Managers reconcile, and so do systemd
units: a start of a unit that runs changes nothing; a restart stops it and starts it again; ``stop
all`` reaches every unit of that manager on the host, also the ones a listing showed running that
this log never started (owned by whoever started them before it).

What a pm2 app runs is read like any launch: ``pm2 start "uvicorn app:app --port 8000"`` (pm2 runs
a command string with ``bash -c``) serves :8000 as a uvicorn server, so a probe of that port is
evidence for the unit. A stop or restart of an ecosystem file reaches the apps its output names or
that the file's start launched. pm2 and supervisord start a unit again when its process dies by a
signal from outside them (autorestart): the kill still hits it, and the unit is starting after it.

A tmux or screen session hosts the server started in it (``tmux new -d -s api 'uvicorn …'``,
``screen -dmS api …``) or typed into it (``send-keys -t api '…' Enter``, ``-X stuff``): the launch
remembers the session and, for tmux, its pane (``lifecycle.panes``), so ``kill-session`` reaches
the session's servers, ``kill-window`` and ``kill-pane`` those of one window or pane, ``send-keys
C-c`` the foreground server of the pane it targets; a hangup misses one started with nohup. ``tmux
capture-pane -p`` output is the log of the server in the pane it shows.

``UnitSteps`` comes first among the builder's steps: each method here reads its own commands and
hands every other one to the generic step it extends (``super()``).
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from dataclasses import dataclass, replace

from analyzer.events import ToolEvent
from analyzer.lifecycle.build._util import _lineage, _unit
from analyzer.lifecycle.build.base import WalkBase
from analyzer.lifecycle.facts import Failure, Kill, Launch, Probe, Victim
from analyzer.lifecycle.generic import command_port
from analyzer.lifecycle.listings import UnitRow, pm2_log_lines, systemd_state, unit_rows
from analyzer.lifecycle.panes import TmuxLayout, window_of
from analyzer.lifecycle.world import Instance, World
from analyzer.shell import kill as killsem
from analyzer.shell.kill.managers import ManagerCommand, manager_command
from analyzer.shell.model import ShellScript, SimpleCommand
from analyzer.shell.parse import parse

_PROGRAMS = frozenset({"pm2", "supervisorctl", "brew", "launchctl"})
_UNIT_KILLS = frozenset({"pm2", "supervisorctl", "brew-services", "launchctl"})
"""Kill mechanisms that name units by their manager's names."""
_ALREADY = re.compile(r"Script already launched|ERROR \(already started\)|already (?:started|loaded|running|bootstrapped)")
"""A manager's answer that the unit a start names runs already."""
_APPLYING = re.compile(r"Applying action \w+ProcessId on app \[([^\]]+)\]")
"""pm2's line for each app an action on an ecosystem file (or a name) reaches."""
_LIVE = ("starting", "ready")
_PID_QUERY = re.compile(r"(?:\$\(|`)\s*((?:pm2|supervisorctl) pid [\w.@:-]+)\s*[)`]")
"""A PID substituted from a manager's answer: ``$(pm2 pid api)``, `` `supervisorctl pid worker` ``."""
_FROM_OUTSIDE = frozenset({"pkill", "kill", "kill-pgrep", "xargs-kill", "ps-grep-kill", "lsof-kill", "pidof-kill",
                           "killall", "fuser-port", "fuser-file", "nvidia-smi-kill"})
"""Kills that signal a unit's process directly, not through its manager: to the manager it died."""
_PANE_VERBS = {"send-keys": "keys", "send": "keys", "kill-pane": "pane", "killp": "pane", "kill-window": "window",
               "killw": "window", "kill-session": "session", "kill-server": "session"}
"""tmux commands that reach a session's processes, and how many of them: one pane's (its
foreground process for keys), one window's, or the whole session's."""


@dataclass(frozen=True, slots=True)
class _Seat:
    """Where in a tmux session a launch runs."""

    pane: str | None
    """Its pane, ``SESSION:WINDOW.PANE``; None when not known."""
    foreground: bool
    """It runs in the pane's foreground (not started with ``&`` there): C-c reaches it."""
    immune: bool
    """Started with nohup or setsid: a hangup of its terminal does not reach it."""


_INTERPRETERS = {".js": "node", ".mjs": "node", ".cjs": "node", ".ts": "node", ".py": "python3"}
"""What pm2 runs a script with, by its extension (its process's argv[0])."""


class UnitSteps(WalkBase):
    """Steps for process managers' units (pm2, supervisor, brew services, launchd, systemd's
    reconcile) and for the tmux/screen sessions that host servers."""

    def __init__(self, world: World) -> None:
        super().__init__(world)
        self.tmux = TmuxLayout()
        """The windows and panes of the log's tmux sessions, as its commands made them."""
        self.tmux_at: tuple[int, dict[int, str | None]] = (-1, {})
        """(the call being read, its tmux commands' positions -> the pane each acts on or types into)."""
        self.unit_cwd: dict[str, str] = {}
        """Unit instance id -> the folder its latest start ran in (pm2 resolves a script from it)."""
        self.panes: dict[int, _Seat] = {}
        """Launch facts run in a tmux session -> where in it and how."""

    # -- launches ------------------------------------------------------------------------------

    def launch_of(self, ev: ToolEvent, cmd: SimpleCommand, where: str, script: ShellScript) -> int | None:
        mc = manager_command(cmd.effective_argv) if cmd.name in _PROGRAMS else None
        if mc is not None:
            return self.unit_launch(ev, cmd, where, mc)
        if cmd.name == "tmux":
            if self.tmux_at[0] != ev.index:
                self.tmux_at = (ev.index, {})
            self.tmux_at[1][cmd.position] = self.tmux.apply(where, cmd.effective_argv)
        fi = super().launch_of(ev, cmd, where, script)
        if fi is not None:
            self.hosted(ev, cmd, script, fi)
        return fi

    def generic_launches(self, ev: ToolEvent, script: ShellScript, launches: list[tuple[SimpleCommand, int]],
                         others: list[SimpleCommand]) -> list[tuple[SimpleCommand, int]]:
        found = super().generic_launches(ev, script, launches, others)
        for cmd, fi in found:
            self.hosted(ev, cmd, script, fi)  # `tmux new -d -s gw './gateway --listen :9090'` hosts it too
        return found

    def hosted(self, ev: ToolEvent, cmd: SimpleCommand, script: ShellScript, fi: int) -> None:
        """Launch ``fi`` (of ``cmd``) runs in the tmux or screen session it was started with or
        typed into: remember the session, and for tmux the pane that command named."""
        typed = next((script.commands[c.parent] for c in _lineage(cmd, script)
                      if c.via == "tmux" and c.parent is not None), None)
        pane = self.tmux_at[1].get(typed.position) if typed is not None and self.tmux_at[0] == ev.index else None
        session = f"tmux:{pane.split(':', 1)[0]}" if pane else _session_of(cmd, script)
        if session is None:
            return
        launch = self.w.facts[fi]
        assert isinstance(launch, Launch) and launch.instance
        launch.session = self.w.instances[launch.instance].session = session
        self.panes[fi] = _Seat(pane, foreground=cmd.background_by != "&",
                               immune=bool({"nohup", "setsid"} & set(cmd.wrappers)))
        if pane is not None:
            launch.detail += f" (in tmux pane {pane})"

    def unit_launch(self, ev: ToolEvent, cmd: SimpleCommand, where: str, mc: ManagerCommand) -> int | None:
        """``pm2 start app.js --name api``, ``supervisorctl start api worker``, ``brew services start
        redis``, ``launchctl load …/com.me.api.plist``: one launch per unit it names (a restart is its
        kill and the start after it, see ``apply_kill``)."""
        output = ev.output or ""
        launched = re.findall(r"App \[([^\]]+)\] launched", output)  # an ecosystem file's apps
        if mc.action == "restart" and mc.ecosystem and launched:
            mc = replace(mc, names=tuple(launched))  # the file's apps that did not run start now
        elif mc.action != "start" or mc.force_restart:
            return None
        names = list(mc.names) or launched
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
        app, port, guessed = self.app_server(mc, cmd)
        launch = Launch(
            event=ev.index, server=mc.manager, label=f"{kind.label} {name}", host=where, unit=name, port=port, app=app,
            argv=list(cmd.effective_argv), command_position=cmd.position,
            detail=f"`{mc.verb}` of the {kind.label} {name} on {where}" + (f" (it serves :{port})" if port else ""))
        inst = launch.instance = self.instance(launch)
        self.unit_cwd[inst] = self.cwd_at.get(cmd.position, self.cwd.get(where, ""))
        if port is not None and self.w.instances[inst].port in (None, port):
            self.w.instances[inst].port = port  # a probe of that port asks about this unit
        fi = self.w.record(launch)
        if guessed:
            self.guessed_port.add(fi)
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

    def app_server(self, mc: ManagerCommand, cmd: SimpleCommand) -> tuple[str | None, int | None, bool]:
        """What a pm2 app runs, read from its command like any launch: (the catalog kind of its
        program, its port, whether that port is only the kind's default). ``pm2 start "uvicorn
        app:app --port 8000"`` serves :8000; pm2 hands its own environment (``PORT=``) to the app."""
        found = None
        for sub in _app_commands(mc):
            sub = sub.model_copy(update={"env": {**cmd.env, **sub.env}})
            if (match := self.w.catalog.match(sub)) is not None:
                return match.kind.name, match.port, match.port_source == "default"
            found = found or command_port(sub)
        port = cmd.env.get("PORT", "")
        if found is None and port.isdecimal() and 0 < int(port) < 65536:
            found = (int(port), "env")
        return None, found[0] if found else None, False

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
            if v.mechanism in ("tmux", "screen") and v.reached and kill.victims:
                self.pane_victims(ev, kill, v)
            if v.mechanism == "kill" and v.unresolved and v.reached and (
                    found := self.pid_query_victims(v, {vic.instance for vic in kill.victims})):
                kill.victims += found
                kill.notes = [n for n in kill.notes if not any(f"`{q}`" in n for q in _PID_QUERY.findall(kill.text))]
                kill.detail = f"{kill.text} hits {len(kill.victims)} process(es)"
            mc = manager_command(v.command.effective_argv) if v.command.name in _PROGRAMS else None
            if mc is None or v.mechanism not in _UNIT_KILLS or not v.reached:
                continue
            if mc.ecosystem and not mc.names:
                kill.victims += self.ecosystem_apps(ev, v, mc)
                kill.detail = f"{kill.text} hits {len(kill.victims)} process(es)"
            elif not mc.every:
                kill.victims += self.named_from_before(ev, v, mc, {vic.instance for vic in kill.victims})
                kill.detail = f"{kill.text} hits {len(kill.victims)} process(es)"
            if mc.action == "restart" or mc.force_restart:
                self.unit_restarts.add(id(kill))
        return out

    def running(self, key: str) -> Launch | None:
        """The latest launch of instance ``key`` still believed running (None: none is)."""
        lives = self.live.get(key, [])
        launch = self.w.facts[lives[-1]] if lives else None
        return launch if isinstance(launch, Launch) else None

    def pid_query_victims(self, v: killsem.KillVerdict, hit: set[str | None]) -> list[Victim]:
        """``kill $(pm2 pid api)``, ``kill `supervisorctl pid worker` ``: the PID the manager prints
        for a unit is that unit's process, so the kill hits exactly the unit it names (when it runs)."""
        host = v.command.host or "local"
        out = []
        for word in v.unresolved:
            m = _PID_QUERY.fullmatch(word.strip('"'))
            query = m.group(1).split() if m else []
            mc = manager_command(query)
            if mc is None or mc.verb != "pid" or len(mc.names) != 1:
                continue
            key = f"{host}/{mc.manager}:{mc.names[0]}"
            launch = self.running(key)
            if key in hit or not (launch or key in self.listed):
                continue
            out.append(Victim(label=self.w.instances[key].name, role="server", instance=key,
                              launch_event=launch.event if launch else None,
                              reason=f"{word} is the PID {query[0]} shows for {mc.names[0]}"))
        return out

    def pane_victims(self, ev: ToolEvent, kill: Kill, v: killsem.KillVerdict) -> None:
        """tmux's keys and its ``kill-pane`` reach one pane, ``kill-window`` one window: of the
        session's processes (all of them the kill evaluation lists, as it knows no windows) keep
        those the target's pane or window runs, and of a ``send-keys C-c`` only the pane's
        foreground process (one started there with ``&`` runs on). A closed pane, window or
        session hangs up its terminal: a server started there with nohup or setsid runs on. A
        server whose pane is not known stays; so do all when the target's pane is not (``%3``)."""
        verb = next((a for a in v.command.effective_argv[1:] if a in _PANE_VERBS), None)
        if v.mechanism == "screen":
            # `screen -X stuff ^C` is keys into the window; `-X quit|kill` hangs up the session's terminal
            verb = "send-keys" if v.signal_name == "INT" else "kill-session"
        if verb is None:
            return
        scope = _PANE_VERBS[verb]
        address = self.tmux_at[1].get(v.command.position) if self.tmux_at[0] == ev.index \
            and v.mechanism == "tmux" else None
        if address is None and scope in ("pane", "window"):
            return
        keep, notes = [], []
        for vic in kill.victims:
            lives = self.live.get(vic.instance or "", [])
            fi = next((f for f in lives if self.w.facts[f].event == vic.launch_event), None)
            seat = self.panes.get(fi) if fi is not None else None
            where = seat.pane if seat is not None else None
            if seat is not None and scope != "keys" and seat.immune:
                notes.append(f"{vic.label} was started with nohup or setsid: the hangup does not reach it")
            elif seat is not None and scope == "keys" and not seat.foreground and where in (None, address):
                notes.append(f"{vic.label} was started with `&` in its pane: C-c does not reach it")
            elif where is None or address is None:
                keep.append(vic)
            elif scope == "window" and window_of(where) != window_of(address):
                notes.append(f"{vic.label} runs in window {window_of(where)}, not in {window_of(address)}")
            elif scope in ("keys", "pane") and where != address:
                notes.append(f"{vic.label} runs in pane {where}, not in {address}")
            else:
                keep.append(vic)
        kill.victims = keep
        if address is not None:
            kill.notes = [n for n in kill.notes if "every process of the session is listed" not in n] + \
                [f"`{kill.text}` targets tmux pane {address}"]
        kill.notes += notes
        kill.detail = f"{kill.text} hits {len(kill.victims)} process(es)"

    def ecosystem_apps(self, ev: ToolEvent, v: killsem.KillVerdict, mc: ManagerCommand) -> list[Victim]:
        """The apps a stop or restart of an ecosystem file reaches: the ones its output names
        (``Applying action restartProcessId on app [api](ids: [ 0 ])``), else the running ones a
        start of that file launched in this log. An app the output names that this log never
        started was running before it."""
        host = v.command.host or "local"
        text = " ".join(v.command.argv)
        named = [f"{host}/pm2:{n}" for n in dict.fromkeys(_APPLYING.findall(ev.output or ""))]
        base = os.path.basename(mc.script or "")
        keys = named or [k for k, lives in self.live.items() if k.startswith(f"{host}/pm2:")
                         and any(self.started_from(fi, base) for fi in lives)]
        out = []
        for key in keys:
            name = key.split(":", 1)[1]
            if key not in self.w.instances:
                self.w.instances[key] = Instance(id=key, server="pm2", label=f"pm2 app {name}", host=host,
                                                 unit=name, owner="before")
            launch = self.running(key)
            started = f"which it started at event {launch.event}" if launch else "which this session never started"
            out.append(Victim(label=self.w.instances[key].name, role="server", instance=key,
                              launch_event=launch.event if launch else None,
                              reason=f"`{text}` {mc.verb}s the app {name} of {base}, {started}"))
        return out

    def started_from(self, fi: int, ecosystem: str) -> bool:
        """Launch fact ``fi`` is a pm2 start of the ecosystem file named ``ecosystem``."""
        launch = self.w.facts[fi]
        mc = manager_command(launch.argv) if isinstance(launch, Launch) else None
        return mc is not None and mc.ecosystem and os.path.basename(mc.script or "") == ecosystem

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
        """A kill of units; a manager's restart then starts each unit it stopped again, and so does a
        manager that restarts what dies (``respawns``) when a signal from outside killed its process."""
        outside = kill.mechanism in _FROM_OUTSIDE
        restarts = id(kill) in self.unit_restarts
        self.unit_restarts.discard(id(kill))
        container_restarts = id(kill) in self.container_restarts
        self.container_restarts.discard(id(kill))
        super().apply_kill(kill)
        units = [v.instance for v in kill.victims if v.instance and self.w.instances[v.instance].server
                 in self.w.catalog.managers]
        for inst in dict.fromkeys(v.instance for v in kill.victims if v.instance):
            self.listed.pop(inst, None)  # a listed unit (a systemd one too) the kill reached runs no more
        for inst in dict.fromkeys(units):
            if restarts:
                self.relaunch(kill, inst)
            elif outside and self.respawns(inst) and self.live_state(inst, kill.event) == "stopped":
                manager = self.w.catalog.managers[self.w.instances[inst].server].label.split()[0]
                self.start_again(kill.event, kill.command_position, kill.text, inst,
                                 why=f"{manager} starts it again (autorestart): `{kill.text}` killed its "
                                     "process from outside its manager")
        if container_restarts:
            # `docker restart NAME`: the agent's container stops, then its processes start again
            for inst in dict.fromkeys(v.instance for v in kill.victims if v.instance):
                if self.w.instances[inst].container and any(la.argv for la in self.w.launches(inst)):
                    self.relaunch(kill, inst)

    def respawns(self, inst: str) -> bool:
        """Whether the unit's manager starts its process again when it dies unasked: pm2 does for
        every app (``autorestart`` is on unless ``--no-autorestart``); supervisord's default
        ``autorestart=unexpected`` does for an exit by a signal from outside. A systemd unit's
        ``Restart=``, launchd's ``KeepAlive`` and brew's plists are not in the log: they do not."""
        instance = self.w.instances[inst]
        if instance.server == "pm2":
            return not any("--no-autorestart" in la.argv for la in self.w.launches(inst)[-1:])
        return instance.server == "supervisor"

    def relaunch(self, kill: Kill, inst: str) -> None:
        self.start_again(kill.event, kill.command_position, kill.text, inst)

    def start_again(self, event: int, position: int, text: str, inst: str, why: str | None = None) -> None:
        """A launch of ``inst`` by a command that starts what it ran before (a manager's restart,
        ``docker start|restart NAME``; ``why`` says so when the manager itself does it): the same
        command line, at ``event``."""
        instance = self.w.instances[inst]
        earlier = next((la for la in self.w.launches(inst) if la.argv), None)
        launch = Launch(event=event, instance=inst, server=instance.server, label=instance.label,
                        host=instance.host, port=instance.port, unit=instance.unit,
                        app=earlier.app if earlier else None,
                        argv=list(earlier.argv) if earlier else [], command_position=position,
                        detail=why or f"`{text}` starts the {instance.label} again")
        fi = self.w.record(launch)
        instance.launches.append(event)
        self.w.link(f"event:{event}", f"instance:{inst}", "launches", fi)
        super().start(fi)
        if why and instance.history and instance.history[-1].fact == fi:
            instance.history[-1].reason = why  # the manager started it, not a command of the agent

    def unit_process(self, inst: str, launch: Launch | None) -> killsem.Process:
        """A unit's process as the kill evaluation sees it: its manager and name there (a brew
        service is also a launchd job, ``homebrew.mxcl.NAME``; a launchd job is its label; a
        systemd unit a ``systemctl status`` showed active is its unit)."""
        instance = self.w.instances[inst]
        manager = instance.server
        host = None if instance.host == "local" else instance.host
        ref = str(self.w.position(launch)) if launch is not None else f"instance:{inst}"
        pid = launch.pid if launch is not None else self.listed.get(inst)
        ports = (instance.port,) if instance.port else ()
        if manager in ("launchd", "systemd"):
            return killsem.Process(pid=pid, host=host, kind="server", label=instance.name, ref=ref, ports=ports,
                                   unit=instance.unit)
        return killsem.Process(
            pid=pid, argv=_app_argv(launch, self.unit_cwd.get(inst, "")), host=host, kind="server",
            label=instance.name, ref=ref, ports=ports, manager=manager, manager_name=instance.unit, manager_id=self.unit_ids.get(inst),
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
            self.pane_output(ev, where, cmd)
        else:
            super().probe_or_log(ev, cmd, where)

    def unit_output(self, ev: ToolEvent, where: str, mc: ManagerCommand) -> None:
        """What a manager printed: its logs of a unit (``pm2 logs api``, ``supervisorctl tail api``)
        are that unit's log; its tables and answers list units with their states; ``pm2 pid api`` /
        ``supervisorctl pid api`` print the PID of the unit's process."""
        output = ev.output or ""
        if mc.verb == "pid":
            self.unit_pid(ev, where, mc, output)
            return
        if mc.action == "logs":
            # pm2 marks each app's lines; a log of one named unit is all that unit's
            by_app = {n: "\n".join(lines) for n, lines in pm2_log_lines(output).items()} \
                if mc.manager == "pm2" else {}
            if not by_app and len(mc.names) == 1:
                by_app = {mc.names[0]: output}
            for name, text in by_app.items():
                if (key := f"{where}/{mc.manager}:{name}") in self.w.instances:
                    self.unit_log(ev, key, text)
            return
        states = self.w.catalog.managers[mc.manager].states
        # a restart answers `api: stopped` then `api: started`: each unit ends as its last line says
        last = {r.name: r for r in unit_rows(mc.manager, output)}
        for row in last.values():
            if (state := states.get(row.status)) is not None:
                self.unit_row(ev, f"{where}/{mc.manager}:{row.name}", mc.manager, row, state)

    def unit_log(self, ev: ToolEvent, key: str, text: str) -> None:
        """Lines of a unit's own log, read with the ready and failure lines of the program it runs
        (``pm2 start "uvicorn …"``: uvicorn's) when that is known, else with any kind's."""
        launch = self.running(key)
        if launch is None or launch.app is None:
            self.log_evidence(ev, key, None, text)
            return
        view = launch.model_copy(update={"server": launch.app})  # read as a launch of its program
        self.log_evidence(ev, key, view, text)
        launch.pid, launch.pid_event = view.pid, view.pid_event

    def unit_pid(self, ev: ToolEvent, where: str, mc: ManagerCommand, output: str) -> None:
        """The one PID a ``pid`` query of one unit printed (0 or nothing: it does not run), bound to
        the unit's running launch, so a later ``kill PID`` hits exactly it."""
        key = f"{where}/{mc.manager}:{mc.names[0]}" if len(mc.names) == 1 else ""
        words = output.split()
        if key not in self.w.instances or len(words) != 1 or not words[0].isdecimal() or words[0] == "0":
            return
        pid = int(words[0])
        if pid not in self.w.instances[key].pids:
            self.w.instances[key].pids.append(pid)
        if (launch := self.running(key)) is not None:
            launch.pid, launch.pid_event = pid, ev.index
        elif key in self.listed:
            self.listed[key] = pid

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

    def pane_output(self, ev: ToolEvent, where: str, cmd: SimpleCommand) -> None:
        """``tmux capture-pane -p -t TARGET``: the screen of the pane it names is the log of the
        server that runs there (of each server of the session whose pane is not known)."""
        argv = cmd.effective_argv
        target = next((argv[k + 1] for k, a in enumerate(argv) if a == "-t" and k + 1 < len(argv)), None)
        if target is None or not ev.output:
            return
        session = "tmux:" + _session_name(target)
        shown = self.tmux_at[1].get(cmd.position) if self.tmux_at[0] == ev.index else None
        for key, lives in self.live.items():
            for fi in lives:
                launch = self.w.facts[fi]
                seat = self.panes.get(fi)
                if seat is not None and seat.pane is not None and shown is not None and seat.pane != shown:
                    continue  # another pane's server: this screen is not its output
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


def _app_argv(launch: Launch | None, cwd: str = "") -> tuple[str, ...]:
    """The argv of the process pm2 runs for the ``pm2 start`` of ``launch`` in folder ``cwd`` (see
    ``_pm2_argv``); unknown (empty) for other managers."""
    mc = manager_command(launch.argv) if launch is not None else None
    return _pm2_argv(mc, cwd) if mc is not None else ()


def _pm2_argv(mc: ManagerCommand, cwd: str = "") -> tuple[str, ...]:
    """The argv of the process ``pm2 start SCRIPT`` runs: the interpreter and the script's absolute
    path (pm2 resolves it from the folder it was started in, ``cwd`` when known, and names a node
    app's process ``node /abs/server.js``), or the program, with the arguments after ``--``; a
    command string runs as ``bash -c STRING`` (pm2's own rule for a script with spaces). Empty for
    an ecosystem file (its apps are not on the line)."""
    if mc.manager != "pm2" or mc.script is None or mc.ecosystem:
        return ()
    if " " in mc.script:
        return "bash", "-c", " ".join((mc.script, *mc.program_args))
    interpreter = _INTERPRETERS.get(os.path.splitext(mc.script)[1])
    if interpreter is None:
        return mc.script, *mc.program_args
    script = posixpath.normpath(posixpath.join(cwd, mc.script)) if cwd.startswith("/") else mc.script
    return interpreter, script, *mc.program_args


def _app_commands(mc: ManagerCommand) -> list[SimpleCommand]:
    """The commands a pm2 app runs, parsed: its command string's (``"cd web && npm run dev"``), or
    its program with the arguments after ``--``, or the interpreter and its script."""
    argv = _pm2_argv(mc) if mc.action == "start" else ()
    if not argv:
        return []
    text = argv[2] if argv[:2] == ("bash", "-c") else shlex.join(argv)
    return [c for c in parse(text).commands if c.argv]
