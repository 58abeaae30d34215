"""Service managers: ``systemctl``/``service`` stop, restart and kill a unit's processes; ``launchctl``
stops a launchd job. With the default ``KillMode=control-group`` every process of the unit dies.
"""

from __future__ import annotations

import fnmatch
import os

from analyzer.shell.kill.chain import host_key
from analyzer.shell.kill.context import KillContext
from analyzer.shell.kill.model import Hit, HitReason, KillVerdict
from analyzer.shell.kill.signals import parse_signal
from analyzer.shell.wrappers import scan_options

__all__ = ["judge_launchctl", "judge_systemctl"]

_UNIT_SUFFIXES = (".service", ".socket", ".target", ".timer", ".scope", ".slice", ".mount", ".path", ".device",
                  ".swap", ".automount")
_SYSTEMCTL_LONG_WITH_ARG = frozenset({
    "--host", "--machine", "--signal", "--type", "--property", "--kill-whom", "--kill-who", "--lines", "--output",
    "--root", "--job-mode", "--state",
})
_RESTARTS = ("restart", "try-restart", "reload-or-restart", "try-reload-or-restart", "condrestart", "force-reload")
_KILLING = frozenset({"stop", "kill", *_RESTARTS})


def unit_name(name: str) -> str:
    """``sglang`` -> ``sglang.service`` (systemctl's own completion of a bare name)."""
    name = name.strip()
    return name if name.endswith(_UNIT_SUFFIXES) else name + ".service"


def judge_systemctl(ctx: KillContext, argv: list[str]) -> KillVerdict | None:
    """``systemctl [-H HOST] [-s SIG] stop|restart|kill UNIT…``, ``service NAME stop``."""
    prog = os.path.basename(argv[0])
    args = argv[1:]
    verb: str | None = None
    units: list[str] = []
    sig: tuple[int, str] | None = None
    remote: list[str] = []
    now = False
    if prog == "service" and len(args) >= 2:  # service NAME ACTION
        units, verb = [args[0]], args[1]
    else:
        def flag(opt: str, value: str | None) -> None:
            nonlocal sig, now
            if opt in ("-s", "--signal"):
                sig = parse_signal(value or "")
            elif opt in ("-H", "--host") and value:
                remote.append(value)
            elif opt == "--now":
                now = True

        _, operands = scan_options(list(args), 0, "HMstpno", _SYSTEMCTL_LONG_WITH_ARG, flag, permute=True)
        verb, units = (operands[0], operands[1:]) if operands else (None, [])
    if verb is None or not (verb in _KILLING or (verb in ("disable", "mask") and now)):
        return None
    v = ctx.verdict("systemctl", sig or (15, "TERM"), targets=[unit_name(u) for u in units])
    host = remote[-1] if remote else None
    if host:
        v.host = host
        v.notes.append(f"systemctl -H {host} acts on that host")
    hk = host_key(host if host else ctx.cmd.host)
    wanted = [unit_name(u) for u in units]
    for p in ctx.processes:
        if p.unit is None or host_key(p.host) != hk:
            continue
        unit = unit_name(p.unit)
        hit = next((w for w in wanted if fnmatch.fnmatchcase(unit, w)), None)
        if hit:
            why = HitReason(mechanism="systemctl", matched="unit", verb=verb, target=hit, subject=unit,
                            signal_name=v.signal_name)
            v.victims.append(Hit(process=p, why=why))
    if verb in _RESTARTS:
        v.notes.append(f"systemctl {verb}: the unit's processes die, then a new instance starts")
    elif verb == "stop":
        v.notes.append("systemctl stop sends SIGTERM, then SIGKILL after TimeoutStopSec (90 s by default)")
    if not v.victims:
        v.notes.append("no known process runs in " + ", ".join(wanted or ["that unit"]))
    return v


def judge_launchctl(ctx: KillContext, argv: list[str]) -> KillVerdict | None:
    """``launchctl stop|bootout|unload|remove|kill LABEL``, ``launchctl kickstart -k LABEL``."""
    args = argv[1:]
    if not args:
        return None
    verb = args[0]
    rest = [a for a in args[1:] if not a.startswith("-")]
    if verb not in ("stop", "kickstart", "bootout", "unload", "remove", "kill"):
        return None
    if verb == "kickstart" and "-k" not in args:
        return None
    sig: tuple[int, str] = (15, "TERM")
    if verb == "kill" and rest:
        sig = parse_signal(rest[0], bsd=True) or sig
        rest = rest[1:]
    labels = []
    for r in rest:
        base = os.path.basename(r)
        if base.endswith(".plist"):
            base = base[: -len(".plist")]
        labels.append(base.split("/")[-1])
    v = ctx.verdict("launchctl", sig, targets=labels)
    for p in ctx.processes:
        if p.unit is not None and host_key(p.host) == host_key(ctx.cmd.host) and p.unit in labels:
            why = HitReason(mechanism="launchctl", matched="launchd job", verb=verb, subject=p.unit,
                            signal_name=v.signal_name)
            v.victims.append(Hit(process=p, why=why))
    if verb == "kickstart":
        v.notes.append("launchctl kickstart -k kills the job and starts it again")
    return v
