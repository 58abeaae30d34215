"""killall (psmisc 23, FreeBSD/macOS): exact process names, the 15-character rule, ``-r`` regexes.

psmisc ``src/killall.c`` (match_process_name, load_proc_cmdline) and the BSD killall(1) page
(shell-semantics §6). A word ``-SIGNAL`` (an upper-case letter or a digit after the dash) is the
signal, as psmisc reads it; the other options are read with stdlib ``getopt``.
"""

from __future__ import annotations

import getopt
import os
import re
from dataclasses import dataclass, field

from analyzer.shell.ere import ere_span, pattern_bound
from analyzer.shell.kill.context import KillContext, as_written
from analyzer.shell.kill.hits import add_matches, note_exec_spared_names
from analyzer.shell.kill.match import Candidate, Match, MatchResult, cmdline_subject, is_generic_pattern
from analyzer.shell.kill.model import COMM_LEN_BSD, COMM_LEN_LINUX, Hit, HitReason, KillVerdict, comm_of
from analyzer.shell.kill.pkill import usage_error
from analyzer.shell.kill.signals import parse_signal

__all__ = ["KillallOptions", "judge_killall", "match_killall", "parse_killall"]

_LINUX_SHORT = "rIegiqvwlVz" + "".join(f"{c}:" for c in "sunyoZtc")
_LINUX_LONG = ["signal=", "regexp", "ignore-case", "exact", "process-group", "interactive", "user=", "quiet",
               "verbose", "wait", "ns=", "older-than=", "younger-than=", "context="]
_BSD_SHORT = "megisdqvwlVz" + "".join(f"{c}:" for c in "utc")


@dataclass(slots=True)
class KillallOptions:
    signal: tuple[int, str] | None = None
    names: list[str] = field(default_factory=list)
    regex: bool = False
    icase: bool = False
    exact: bool = False
    pgroup: bool = False
    interactive: bool = False
    dry_run: bool = False
    users: list[str] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)


def _signal_words(args: list[str], bsd: bool) -> tuple[list[str], tuple[int, str] | None]:
    """psmisc: an option word starting with an upper-case letter or a digit that names a signal."""
    rest: list[str] = []
    sig: tuple[int, str] | None = None
    for k, a in enumerate(args):
        if a == "--":
            rest.extend(args[k:])
            break
        if a.startswith("-") and len(a) > 1 and (a[1].isupper() or a[1].isdigit()):
            got = parse_signal(a[1:], bsd)
            if got is not None:
                sig = got
                continue
        rest.append(a)
    return rest, sig


def parse_killall(argv: list[str], *, bsd: bool = False) -> KillallOptions:
    """Parse ``killall`` argv (``argv[0]`` is the program)."""
    opts = KillallOptions()
    args, opts.signal = _signal_words(list(argv[1:]), bsd)
    try:
        pairs, operands = getopt.gnu_getopt(args, _BSD_SHORT if bsd else _LINUX_SHORT, [] if bsd else _LINUX_LONG)
    except getopt.GetoptError as err:
        opts.error = usage_error(err, bsd)
        return opts
    for opt, value in pairs:
        key = opt.lstrip("-")
        if key in ("signal",) or (key == "s" and not bsd):
            opts.signal = parse_signal(value, bsd)
        elif key in ("user", "u"):
            opts.users.append(value)
        elif key in ("y", "o"):
            opts.notes.append(f"-{key} {value} (age filter) is not modelled")
        elif key == "c" and bsd:
            opts.names.append(value)
        elif key in ("regexp",) or (key == "r" and not bsd) or (key == "m" and bsd):
            opts.regex = True
        elif key in ("ignore-case", "I"):
            opts.icase = True
        elif key in ("exact", "e"):
            opts.exact = True
        elif key in ("process-group", "g"):
            opts.pgroup = True
        elif key in ("interactive", "i"):
            opts.interactive = True
        elif key in ("s", "d"):  # BSD: show what would be signalled
            opts.dry_run = True
    opts.names.extend(operands)
    if not opts.names:
        opts.error = "no process names given"
    return opts


def match_killall(opts: KillallOptions, cands: list[Candidate], *, bsd: bool) -> MatchResult:
    """psmisc ``match_process_name``: exact comm (``strcmp``, ``strcasecmp`` with ``-I``); when comm
    is 15 long, the basename of the first argv word that starts with it; ``-r`` an unanchored ERE
    over that name. A name with ``/`` is matched by executable (approximated by argv[0])."""
    res = MatchResult()
    if opts.error:
        return res
    limit = COMM_LEN_BSD if bsd else COMM_LEN_LINUX
    if opts.regex:
        res.notes.extend(b for b in map(pattern_bound, opts.names) if b is not None)
    for cand in cands:
        p = cand.process
        if opts.users and p.user is not None and p.user not in opts.users:
            continue
        comm = comm_of(p.argv[0], limit) if (bsd and p.argv and p.comm == comm_of(p.argv[0])) else p.comm
        command = comm
        if len(comm) == limit and not bsd:
            found = next((os.path.basename(a) for a in p.argv if os.path.basename(a).startswith(comm)), None)
            if found is None and opts.exact:
                continue
            command = found or comm
        for name in opts.names:
            span: tuple[int, int] | None = None
            if opts.regex:
                got = ere_span(name, command, icase=opts.icase)
                if got is None:
                    if pattern_bound(name) is None:
                        res.notes.append(f"'{name}' is not a valid regex: killall exits with an error")
                    return MatchResult(invalid=True, notes=res.notes)
                hit = got is not False
                span = got if isinstance(got, tuple) else None
            elif "/" in name:
                hit = bool(p.argv) and (p.argv[0] == name or (
                    os.path.basename(p.argv[0]) == os.path.basename(name) and not p.argv[0].startswith("/")))
            else:
                a, b = (command.lower(), name.lower()) if opts.icase else (command, name)
                hit = a[:limit] == b[:limit] if len(command) == limit and len(name) >= limit else a == b
                span = (0, len(command)) if hit else None
            if hit:
                res.matches.append(Match(cand, command, span, "process name"))
                break
    if any("/" in n for n in opts.names) and not opts.regex:
        res.notes.append("a name with '/' is matched by executable file; approximated by argv[0]")
    return res


def judge_killall(ctx: KillContext, argv: list[str]) -> KillVerdict:
    """``killall [-SIG] [options] NAME…``."""
    opts = parse_killall(argv, bsd=ctx.bsd)
    sig = opts.signal or ctx.default_signal("TERM")
    v = ctx.verdict("killall", sig, pattern=" ".join(opts.names) or None, targets=list(opts.names))
    v.notes.extend(opts.notes)
    if opts.error:
        v.notes.append(f"killall: {opts.error}: nothing is signalled")
        return v
    if opts.dry_run:
        v.notes.append("killall -s/-d only shows what it would signal")
        return v
    if opts.interactive:
        v.notes.append("killall -i asks before each kill: these are the candidates")
    res = match_killall(opts, ctx.candidates(), bsd=ctx.bsd)
    v.notes.extend(res.notes)
    if res.invalid:
        v.invalid_pattern = True
        return v
    generic = is_generic_pattern(opts.names if opts.regex else [f"^({'|'.join(map(re.escape, opts.names))})$"],
                                 icase=opts.icase)
    if generic:
        v.mark_generic(f"every `{generic}` process")
        v.notes.append(f"killall {generic} hits every `{generic}` process on the host")
    written = as_written(argv)
    add_matches(ctx, v, res.matches, written, "killall")
    if opts.pgroup:
        v.notes.append("killall -g signals the whole process group of each match")
        groups = {m.candidate.process.pgid for m in res.matches if m.candidate.process.pgid is not None}
        have = {id(x.process) for x in v.victims}
        for cand in ctx.candidates():
            if cand.process.pgid in groups and id(cand.process) not in have:
                why = HitReason(mechanism="killall", matched="process group of a match", written=written)
                v.victims.append(Hit(process=cand.process, why=why))
    if not v.victims and not opts.regex:
        near = [c.process for c in ctx.candidates()
                if any(c.process.comm.startswith(n) or n in cmdline_subject(c.process) for n in opts.names)]
        if near:
            v.notes.append(
                "killall matches the exact process name: " + ", ".join(sorted({p.comm for p in near})[:5])
                + " do not match " + ", ".join(opts.names)
            )
    note_exec_spared_names(ctx, v, opts.names)
    return v
