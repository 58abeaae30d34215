"""Process managers that run servers as named units: ``pm2``, ``supervisorctl``, ``brew services``
(and the reading of ``launchctl`` command lines; its kills are :mod:`.services`).

One reading of such a command line (:func:`manager_command`: manager, verb, what it does, the names
it acts on, whether it says ``all``) is shared by the kill judges below and the lifecycle's unit step,
so the two never disagree on what ``pm2 delete all`` names. A stop, delete or restart hits every
process the world knows in the units it names; ``all`` (``--all`` for brew) hits every unit of that
manager on the host, whoever started it, so it is a generic kill.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from typing import Literal

from analyzer.shell.kill.chain import host_key
from analyzer.shell.kill.context import KillContext
from analyzer.shell.kill.model import Hit, HitReason, KillVerdict, Matched, Mechanism
from analyzer.shell.wrappers import scan_options

__all__ = ["ManagerCommand", "judge_brew", "judge_pm2", "judge_supervisorctl", "manager_command"]

Action = Literal["start", "restart", "stop", "list", "logs", "other"]

_PM2_ACTIONS: dict[str, Action] = {
    "start": "start", "restart": "restart", "reload": "restart", "gracefulReload": "restart",
    "startOrRestart": "restart", "startOrReload": "restart", "startOrGracefulReload": "restart",
    "stop": "stop", "delete": "stop", "del": "stop", "kill": "stop",
    "list": "list", "ls": "list", "l": "list", "status": "list", "jlist": "list", "prettylist": "list",
    "describe": "list", "desc": "list", "show": "list", "info": "list", "pid": "list", "logs": "logs", "log": "logs",
}
_PM2_WITH_ARG = frozenset({
    "--name", "--instances", "--max-memory-restart", "--log", "--output", "--error", "--interpreter",
    "--interpreter-args", "--cwd", "--env", "--only", "--cron", "--cron-restart", "--node-args", "--namespace",
    "--log-date-format", "--kill-timeout", "--listen-timeout", "--restart-delay", "--exp-backoff-restart-delay",
    "--max-restarts", "--watch-delay", "--ignore-watch", "--pid", "--lines", "--user", "--uid", "--gid",
})
_SUPERVISOR_ACTIONS: dict[str, Action] = {
    "start": "start", "restart": "restart", "reload": "restart", "stop": "stop", "signal": "stop",
    "status": "list", "pid": "list", "tail": "logs",
}
_BREW_ACTIONS: dict[str, Action] = {
    "start": "start", "run": "start", "restart": "restart", "stop": "stop", "kill": "stop",
    "list": "list", "info": "list",
}
_LAUNCHCTL_ACTIONS: dict[str, Action] = {
    "load": "start", "bootstrap": "start", "start": "start", "kickstart": "start",
    "stop": "stop", "unload": "stop", "bootout": "stop", "remove": "stop", "kill": "stop", "list": "list",
}
_CONFIG_FILE = re.compile(r"^(?:ecosystem|pm2|process)(?:\.config)?\.(?:c?js|json|ya?ml)$")
"""A pm2 ecosystem file (``ecosystem.config.js``, ``pm2.json``): the apps it defines are not on the line."""
_SIGNALS: dict[str, tuple[int, str]] = {"pm2": (2, "INT"), "supervisor": (15, "TERM"), "brew": (15, "TERM")}
"""What each manager sends first: pm2 SIGINT (then SIGKILL after kill_timeout, 1.6 s), supervisord
the program's stopsignal (TERM by default), brew the service manager's stop (TERM)."""


@dataclass(frozen=True, slots=True)
class ManagerCommand:
    """One process-manager command line, as the manager reads it."""

    manager: Literal["pm2", "supervisor", "brew", "launchd"]
    """The manager (the lifecycle catalog's kind of the same name)."""
    verb: str
    """Its subcommand as written: ``start``, ``reload``, ``delete``, ``status``, ``kickstart``…"""
    action: Action
    """What the verb does to a unit."""
    names: tuple[str, ...] = ()
    """The units it names as written: names, pm2 ids and ``/regex/``, supervisor ``group:*``, launchd labels."""
    every: bool = False
    """It says ``all`` (brew: ``--all``; ``pm2 kill`` and ``supervisorctl reload`` act on every unit too)."""
    script: str | None = None
    """``pm2 start``'s script, program or command string (``"npm run dev"``) or ecosystem file; a
    launchd plist."""
    ecosystem: bool = False
    """``script`` is a pm2 ecosystem file (``ecosystem.config.js``): the apps it defines run."""
    program_args: tuple[str, ...] = ()
    """``pm2 start``'s arguments for the script or program, after ``--``."""
    force_restart: bool = False
    """``launchctl kickstart -k``: kill the running job, then start it again."""


def manager_command(argv: list[str]) -> ManagerCommand | None:
    """The reading of ``argv`` (an effective argv) when it is a pm2, supervisorctl, ``brew services``
    or launchctl command; None for any other program."""
    if not argv:
        return None
    prog = os.path.basename(argv[0])
    reader = _READERS.get(prog)
    return reader(argv[1:]) if reader is not None else None


def _pm2(args: list[str]) -> ManagerCommand | None:
    own = args[: args.index("--")] if "--" in args else args  # after `--`: the script's own arguments
    after = tuple(args[len(own) + 1 :])
    opts: dict[str, str] = {}

    def flag(opt: str, value: str | None) -> None:
        if value is not None:
            opts[{"-n": "--name"}.get(opt, opt)] = value

    _, operands = scan_options(own, 0, "niloe", _PM2_WITH_ARG, flag, permute=True)
    if not operands:
        return None
    verb, rest = operands[0], operands[1:]
    action = _PM2_ACTIONS.get(verb, "other")
    files = [r for r in rest if _CONFIG_FILE.search(os.path.basename(r))]
    if files:  # the apps are the file's, their names not on the line (but for --only)
        only = tuple(n for n in opts.get("--only", "").split(",") if n)
        return ManagerCommand("pm2", verb, action, only, script=files[0], ecosystem=True)
    if verb == "start":
        if not rest:
            return None
        script = rest[0]
        name = opts.get("--name")
        if name is None:
            # pm2 names an app after its script without the extension (`pm2 start api` starts the
            # known app api); a command string (`pm2 start "npm run dev"`) it runs with `bash -c`
            # and names after the whole string
            name = script if " " in script else os.path.splitext(os.path.basename(script))[0]
        return ManagerCommand("pm2", verb, action, (name,), script=script, program_args=after)
    return ManagerCommand("pm2", verb, action, tuple(r for r in rest if r != "all"),
                          every="all" in rest or verb == "kill")


def _supervisorctl(args: list[str]) -> ManagerCommand | None:
    i, _ = scan_options(args, 0, "csup", frozenset({"--configuration", "--serverurl", "--username", "--password"}))
    if i >= len(args):
        return None  # the interactive shell: what it is fed is not on the line
    verb, rest = args[i], args[i + 1 :]
    if verb == "signal" and rest:
        rest = rest[1:]
    names = tuple(r for r in rest if r != "all" and not r.startswith("-"))
    return ManagerCommand("supervisor", verb, _SUPERVISOR_ACTIONS.get(verb, "other"), names,
                          every="all" in rest or verb == "reload")


def _brew(args: list[str]) -> ManagerCommand | None:
    if not args or args[0] != "services":
        return None
    rest = args[1:]
    words = [r for r in rest if not r.startswith("-")]
    verb = words[0] if words else "list"  # `brew services` alone lists them
    return ManagerCommand("brew", verb, _BREW_ACTIONS.get(verb, "other"), tuple(words[1:]), every="--all" in rest)


def _launchctl(args: list[str]) -> ManagerCommand | None:
    if not args:
        return None
    verb, rest = args[0], args[1:]
    action = _LAUNCHCTL_ACTIONS.get(verb, "other")
    operands = [r for r in rest if not r.startswith("-")]
    if verb in ("bootstrap", "bootout") and operands and re.fullmatch(r"(?:gui|user|system|login)(?:/\d+)?", operands[0]):
        operands = operands[1:]  # the domain target before the plist
    if verb == "kill" and operands:
        operands = operands[1:]  # the signal before the service target
    plist = next((o for o in operands if o.endswith(".plist")), None)
    labels = tuple(_label(o) for o in operands)
    return ManagerCommand("launchd", verb, action, labels, script=plist, force_restart=verb == "kickstart" and "-k" in rest)


def _label(operand: str) -> str:
    """A launchd job's label from a plist path (by convention its file name) or a service target
    (``gui/501/com.me.api``)."""
    base = os.path.basename(operand.rstrip("/"))
    return base[: -len(".plist")] if base.endswith(".plist") else base


_READERS = {"pm2": _pm2, "supervisorctl": _supervisorctl, "brew": _brew, "launchctl": _launchctl}

_MECHANISM: dict[str, tuple[Mechanism, Matched]] = {
    "pm2": ("pm2", "pm2 app"), "supervisor": ("supervisorctl", "supervisor program"),
    "brew": ("brew-services", "brew service"),
}
_EVERY: dict[str, str] = {
    "pm2": "every app the pm2 daemon runs for this user, other projects' included",
    "supervisor": "every program supervisord runs on this host",
    "brew": "every service brew runs for this user",
}


def _selects(manager: str, wanted: str, name: str, ident: int | None) -> bool:
    """A unit named ``name`` (pm2 id ``ident``) is what ``wanted`` names: the name, a pm2 id or
    ``/regex/``, a supervisor ``group:*`` glob."""
    if manager == "pm2":
        if wanted.isdecimal():
            return ident is not None and int(wanted) == ident
        if len(wanted) > 2 and wanted.startswith("/") and wanted.endswith("/"):
            try:
                return re.search(wanted[1:-1], name) is not None
            except re.error:
                return False
    if manager == "supervisor" and ":" in wanted:
        return fnmatch.fnmatchcase(name, wanted)  # `web:*`: every process of group web
    return name == wanted


def _judge(ctx: KillContext, argv: list[str]) -> KillVerdict | None:
    """A stop, delete or restart of named units, or of ``all``: every known process in them."""
    cmd = manager_command(argv)
    if cmd is None or cmd.manager == "launchd" or cmd.action not in ("stop", "restart"):
        return None
    if not cmd.names and not cmd.every and not cmd.ecosystem:
        return None
    mechanism, matched = _MECHANISM[cmd.manager]
    if cmd.ecosystem and not cmd.names:
        # `pm2 restart ecosystem.config.js`: the apps the file defines, which only the file (or
        # the apps its start launched) says: the caller, who saw that start, names them
        v = ctx.verdict(mechanism, _SIGNALS[cmd.manager], targets=[cmd.script or ""])
        v.notes.append(f"{argv[0]} {cmd.verb} {cmd.script}: the apps the file defines")
        return v
    v = ctx.verdict(mechanism, _SIGNALS[cmd.manager], targets=[*cmd.names, *(["all"] if cmd.every else [])])
    if cmd.every:
        v.mark_generic(_EVERY[cmd.manager])
    hk = host_key(ctx.cmd.host)
    for p in ctx.processes:
        if p.manager != cmd.manager or p.manager_name is None or host_key(p.host) != hk:
            continue
        hit = "all" if cmd.every else next(
            (w for w in cmd.names if _selects(cmd.manager, w, p.manager_name, p.manager_id)), None)
        if hit is not None:
            why = HitReason(mechanism=mechanism, matched=matched, verb=cmd.verb, target=hit, subject=p.manager_name,
                            signal_name=v.signal_name)
            v.victims.append(Hit(process=p, why=why))
    if cmd.action == "restart":
        v.notes.append(f"{argv[0]} {cmd.verb}: the unit's processes are stopped, then started again")
    if not v.victims:
        v.notes.append("no known process runs in " + ", ".join(v.targets))
    return v


judge_pm2 = _judge
"""``pm2 stop|delete|restart|reload NAME|ID|/regex/|all``, ``pm2 kill`` (the daemon and every app);
``pm2 restart ecosystem.config.js`` with no victims of its own (the lifecycle knows the file's apps)."""
judge_supervisorctl = _judge
"""``supervisorctl stop|restart NAME|group:*|all``, ``supervisorctl reload`` (every program restarts)."""
judge_brew = _judge
"""``brew services stop|kill|restart FORMULA|--all``."""
