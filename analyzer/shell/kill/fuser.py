"""fuser -k (psmisc; BSD/macOS take files only): every holder of a port or a file dies.

``fuser -k PORT/tcp`` hits every process with a socket on that local port (forked workers too),
``fuser -k /dev/nvidia*`` every process using a GPU, ``-m`` everything on the filesystem
(shell-semantics §7). The default signal is KILL.
"""

from __future__ import annotations

import fnmatch
import re

from analyzer.shell.kill.context import KillContext
from analyzer.shell.kill.model import Hit, HitReason, KillVerdict, Mechanism
from analyzer.shell.kill.signals import parse_signal

__all__ = ["judge_fuser"]


def _read(argv: list[str], bsd: bool) -> tuple[bool, tuple[int, str] | None, str | None, bool, list[str]]:
    """(kill, signal, namespace, mount, names) of ``fuser`` argv: ``-KILL``/``-9`` name the signal,
    option letters cluster (``-km``), ``-n tcp`` sets the name space, BSD ``-s SIG``."""
    kill = False
    sig: tuple[int, str] | None = None
    space: str | None = None
    mount = False
    names: list[str] = []
    args = argv[1:]
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            names.extend(args[i:])
            break
        if a in ("-n", "--namespace") and i < len(args):
            space = args[i]
            i += 1
            continue
        if a == "--kill":
            kill = True
            continue
        if a.startswith("--"):
            continue
        if a.startswith("-") and len(a) > 1:
            got = parse_signal(a[1:], bsd) if (a[1].isupper() or a[1:].isdigit()) else None
            if got is not None:
                sig = got
                continue
            kill = kill or "k" in a[1:]
            mount = mount or "m" in a[1:] or "M" in a[1:]
            if a[1:] == "s" and bsd and i < len(args):
                sig = parse_signal(args[i], bsd)
                i += 1
            continue
        names.append(a)
    return kill, sig, space, mount, names


def judge_fuser(ctx: KillContext, argv: list[str]) -> KillVerdict | None:
    """``fuser -k [-SIG] NAME…``; None without ``-k`` (it only lists)."""
    kill, sig, space, mount, names = _read(argv, ctx.bsd)
    if not kill:
        return None
    sig = sig or ctx.default_signal("KILL")
    ports: list[int] = []
    files: list[str] = []
    for n in names:
        m = re.fullmatch(r"(\d*)(?:,[^,/]*)?(?:,(\d*))?/(tcp|udp)", n)
        if m or (space in ("tcp", "udp") and n.isdigit()):
            port = m.group(1) if m else n
            if port:
                ports.append(int(port))
        else:
            files.append(n)
    mech: Mechanism = "fuser-port" if ports and not files else "fuser-file"
    v = ctx.verdict(mech, sig, targets=list(names))
    if ctx.bsd and ports:
        v.notes.append("BSD/macOS fuser takes only files: PORT/tcp names no socket there")
        ports = []
    seen: set[int] = set()
    for cand in ctx.candidates():
        p = cand.process
        hit_ports = [port for port in ports if port in p.ports]
        if hit_ports:
            why = HitReason(mechanism=mech, matched="port", written="fuser -k", target=str(hit_ports[0]),
                            signal_name=v.signal_name)
            v.victims.append(Hit(process=p, why=why, ancestor=cand.ancestor))
            seen.add(id(p))
            continue
        for f in files:
            held = [o for o in p.open_files if (fnmatch.fnmatchcase(o, f) if _is_glob(f) else o == f or (mount and o.startswith(f.rstrip("/") + "/")))]
            if held and id(p) not in seen:
                why = HitReason(mechanism=mech, matched="open file", written="fuser -k", target=f, subject=held[0],
                                signal_name=v.signal_name)
                v.victims.append(Hit(process=p, why=why, ancestor=cand.ancestor))
                seen.add(id(p))
                break
    if any(fnmatch.fnmatchcase("/dev/nvidia0", f) or f.startswith("/dev/nvidia") for f in files):
        v.mark_generic("every process using a GPU")
        v.notes.append("fuser -k /dev/nvidia* hits every process using any GPU (CUDA jobs of every user, "
                       "nvidia-persistenced, exporters, Xorg), not one server")
    if mount:
        v.mark_generic("every process using the whole filesystem")
        v.notes.append("fuser -m hits every process using the whole filesystem")
    if ports:
        v.notes.append("fuser -k PORT/tcp hits every process holding a socket on that local port (forked workers "
                       "too), not clients; inside Docker the host port is held by docker-proxy")
    if files and not ctx.bsd:
        v.notes.append("fuser also matches by cwd, executable and mmap, which are not tracked here")
    return v


def _is_glob(s: str) -> bool:
    return any(ch in s for ch in "*?[")
