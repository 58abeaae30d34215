"""pkill and pgrep (procps-ng 4.0, FreeBSD/macOS): which processes a pattern selects, and the kill.

Sources are the ones cited in shell-semantics §5: procps ``src/pgrep.c`` (signal_option,
do_regcomp, select_procs) and the FreeBSD/macOS pkill(1) page. Options are read with stdlib
``getopt``: GNU ``getopt_long`` (operands anywhere) on Linux, POSIX getopt (stops at the first
operand) on the BSDs, as the real tools do.
"""

from __future__ import annotations

import getopt
import os
from dataclasses import dataclass, field

from analyzer.shell.ere import ere_span, pattern_bound
from analyzer.shell.kill.context import KillContext, as_written
from analyzer.shell.kill.hits import add_matches, note_exec_spared, note_spared
from analyzer.shell.kill.match import Candidate, Match, MatchResult, cmdline_subject, is_generic_pattern
from analyzer.shell.kill.model import COMM_LEN_BSD, COMM_LEN_LINUX, KillVerdict, Matched, Process, comm_of
from analyzer.shell.kill.signals import parse_signal

__all__ = ["PgrepOptions", "judge_pkill", "match_pgrep", "parse_pgrep", "pgrep_into"]

_LINUX_SHORT = "acefhilnovwxALVHm" + "".join(f"{c}:" for c in "dgGPstuUFrOq")
_LINUX_LONG = {
    "full": "f", "exact": "x", "ignore-case": "i", "newest": "n", "oldest": "o", "inverse": "v",
    "ignore-ancestors": "A", "count": "c", "list-name": "l", "list-full": "a", "lightweight": "w",
    "echo": "e", "require-handler": "H", "logpidfile": "L",
    "euid": "u=", "uid": "U=", "parent": "P=", "pgroup": "g=", "group": "G=", "session": "s=",
    "terminal": "t=", "pidfile": "F=", "runstates": "r=", "older": "O=", "signal": "signal=",
    "delimiter": "d=", "queue": "q=", "ns": "ns=", "nslist": "nslist=", "cgroup": "cgroup=", "env": "env=",
}
"""Long option -> the short option (or key) it stands for; ``=``: it takes an argument."""
_LINUX_LONGOPTS = [name + ("=" if spec.endswith("=") else "") for name, spec in _LINUX_LONG.items()]
_BSD_SHORT = "ILSafilnoqvx" + "".join(f"{c}:" for c in "FGMNPUcdgjstu")


@dataclass(slots=True)
class PgrepOptions:
    tool: str
    signal: tuple[int, str] | None = None
    full: bool = False
    exact: bool = False
    icase: bool = False
    ignore_ancestors: bool = False
    include_ancestors: bool = False
    newest: bool = False
    oldest: bool = False
    inverse: bool = False
    users: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    pgroups: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)
    error: str | None = None
    """A usage error: pgrep/pkill exit 2 and signal nothing."""
    notes: list[str] = field(default_factory=list)


def _signal_option(args: list[str], bsd: bool) -> tuple[list[str], tuple[int, str] | None]:
    """procps ``signal_option``: the first ``-SIG`` word before ``--`` is the signal (BSD: only the
    first argument)."""
    for i, a in enumerate(args):
        if a == "--":
            break
        if a.startswith("-") and len(a) > 1 and not a.startswith("--"):
            sig = parse_signal(a[1:], bsd)
            if sig is not None:
                return args[:i] + args[i + 1 :], sig
        if bsd:
            break
    return args, None


def usage_error(err: getopt.GetoptError, bsd: bool = False) -> str:
    """getopt's complaint in the words of glibc's getopt_long (BSD: ``-`` is not an option letter)."""
    opt, msg = err.opt, err.msg
    if msg.startswith("option --"):
        if bsd:
            return "invalid option -- '-'"
        if msg.endswith("requires argument"):
            return f"option '--{opt}' requires an argument"
        if msg.endswith("must not have an argument"):
            return f"option '--{opt}' doesn't allow an argument"
        if msg.endswith("not a unique prefix"):
            return f"option '--{opt}' is ambiguous"
        return f"unrecognized option '--{opt}'"
    if msg.endswith("requires argument"):
        return f"option requires an argument -- '{opt}'"
    return f"invalid option -- '{opt}'"


def parse_pgrep(argv: list[str], *, bsd: bool = False) -> PgrepOptions:
    """Parse ``pkill``/``pgrep`` argv (``argv[0]`` is the program)."""
    tool = os.path.basename(argv[0]) if argv else "pkill"
    opts = PgrepOptions(tool=tool)
    args = list(argv[1:])
    if tool == "pkill":
        args, opts.signal = _signal_option(args, bsd)
    try:
        if bsd:  # BSD getopt stops at the first operand: the rest are all patterns
            pairs, operands = getopt.getopt(args, _BSD_SHORT)
        else:
            pairs, operands = getopt.gnu_getopt(args, _LINUX_SHORT, _LINUX_LONGOPTS)
    except getopt.GetoptError as err:
        opts.error = usage_error(err, bsd)
        return opts
    for opt, value in pairs:
        key = _LINUX_LONG[opt[2:]].rstrip("=") if opt.startswith("--") else opt[1:]
        _apply(opts, key, value, bsd)
    opts.patterns.extend(operands)
    if not bsd and len(opts.patterns) > 1:
        opts.error = "only one pattern can be provided"
    elif not opts.patterns and not (opts.users or opts.parents or opts.pgroups):
        opts.error = "no matching criteria specified"
    return opts


_SWITCHES = {"f": "full", "x": "exact", "i": "icase", "A": "ignore_ancestors", "n": "newest", "o": "oldest",
             "v": "inverse"}
"""Options that only turn a field on; ``-a`` does too, on BSD only."""


def _apply(opts: PgrepOptions, key: str, value: str, bsd: bool) -> None:
    if key in _SWITCHES:
        setattr(opts, _SWITCHES[key], True)
    elif key == "a" and bsd:
        opts.include_ancestors = True
    elif key in ("u", "U"):
        if "$" in value:
            opts.notes.append(f"-{key} {value}: the user is unknown here, so that filter is ignored")
        else:
            opts.users.extend(v for v in value.split(",") if v)
    elif key == "P":
        opts.parents.extend(v for v in value.split(",") if v)
    elif key == "g":
        opts.pgroups.extend(v for v in value.split(",") if v)
    elif key == "signal":
        sig = parse_signal(value, bsd)
        if sig is None:
            opts.error = f"unknown signal name {value}"
        else:
            opts.signal = sig
    elif key in ("s", "t", "G", "F", "r", "O", "ns", "nslist", "cgroup", "env", "j", "c", "M", "N"):
        opts.notes.append(f"option -{key} {value} is not modelled: its filter is ignored")


def _subject(proc: Process, full: bool, bsd: bool) -> str:
    if full:
        return cmdline_subject(proc)
    if bsd and proc.argv and proc.comm == comm_of(proc.argv[0], COMM_LEN_LINUX):
        return comm_of(proc.argv[0], COMM_LEN_BSD)  # MAXCOMLEN is 16 there
    return proc.comm


def match_pgrep(opts: PgrepOptions, cands: list[Candidate], *, bsd: bool) -> MatchResult:
    """Select processes as ``select_procs`` does: pattern (unanchored ERE, ``-x`` anchors), filters,
    ``-n``/``-o``; only the pkill itself is excluded on Linux unless ``-A``."""
    res = MatchResult()
    if opts.error:
        return res
    spare_ancestors = opts.ignore_ancestors if not bsd else not opts.include_ancestors
    res.notes.extend(b for b in map(pattern_bound, opts.patterns) if b is not None)
    matched: Matched = "command line" if opts.full else "process name"
    for cand in cands:
        p = cand.process
        if opts.users and p.user is not None and p.user not in opts.users:
            continue
        if opts.parents and (p.ppid is None or str(p.ppid) not in opts.parents):
            continue
        if opts.pgroups and (p.pgid is None or str(p.pgid) not in opts.pgroups):
            continue
        subject = _subject(p, opts.full, bsd)
        span: tuple[int, int] | None = None
        if opts.patterns:
            hit = False
            for pat in opts.patterns:
                got = ere_span(pat, subject, icase=opts.icase, exact=opts.exact)
                if got is None:
                    res.invalid = True
                    if pattern_bound(pat) is None:  # else the bound's note says why
                        res.notes.append(f"'{pat}' is not a valid POSIX extended regex: {opts.tool} exits 2")
                    return MatchResult(invalid=True, notes=res.notes)
                if got is not False:
                    hit, span = True, got
                    break
            if hit == opts.inverse:
                continue
        m = Match(cand, subject, span if not opts.inverse else None, matched)
        if cand.ancestor and spare_ancestors:
            res.spared_ancestors.append(m)
            continue
        res.matches.append(m)
    if opts.users and any(c.process.user is None for c in cands):
        res.notes.append("owners are unknown for some processes: -u is assumed to include them")
    if opts.newest or opts.oldest:
        if res.matches:
            ordered = sorted(res.matches, key=lambda m: m.candidate.order)
            res.matches = [ordered[-1] if opts.newest else ordered[0]]
        res.notes.append("-n/-o pick by start order; PIDs or launch order stand in for start times")
    if not res.matches and not opts.full and any(len(p) > COMM_LEN_LINUX for p in opts.patterns) and not bsd:
        res.notes.append(
            "the pattern is longer than 15 characters but is matched against the process name (comm, at "
            "most 15): without -f it can only match a prefix-free regex; pgrep warns about this"
        )
    return res


def judge_pkill(ctx: KillContext, argv: list[str]) -> KillVerdict:
    """``pkill [-SIG] [options] PATTERN``."""
    opts = parse_pgrep(argv, bsd=ctx.bsd)
    sig = opts.signal or ctx.default_signal("TERM")
    v = ctx.verdict("pkill", sig, pattern=opts.patterns[0] if opts.patterns else None)
    opts.patterns = [ctx.expand(p, v) for p in opts.patterns]
    pgrep_into(ctx, v, opts, argv, kind="pkill", stop_at_own_shell=False)
    return v


def pgrep_into(
    ctx: KillContext, v: KillVerdict, opts: PgrepOptions, argv: list[str], *, kind: str, stop_at_own_shell: bool,
) -> None:
    """The hits and notes of a pgrep selection, into ``v``."""
    written = as_written(argv)
    v.notes.extend(opts.notes)
    if opts.error:
        v.notes.append(f"{opts.tool}: {opts.error}: it exits 2 and signals nothing")
        if ("option" in opts.error) and "--" not in argv and any(a.startswith("--") for a in argv[1:]):
            v.notes.append("a pattern starting with '-' is read as an option; put '--' before it")
        return
    if v.unresolved:
        v.notes.append(f"the pattern holds {', '.join(v.unresolved)}, unknown here: matched as written")
    if v.signal == 0:
        v.notes.append("signal 0 only checks that the processes exist: nothing is killed")
        return
    res = match_pgrep(opts, ctx.candidates(), bsd=ctx.bsd)
    v.notes.extend(n for n in res.notes if n not in v.notes)
    if res.invalid:
        v.invalid_pattern = True
        return
    generic = is_generic_pattern(opts.patterns, icase=opts.icase, exact=opts.exact)
    if generic:
        v.mark_generic(f"every `{generic}` process")
        v.notes.append(f"the pattern selects every `{generic}` process, not one server")
    add_matches(ctx, v, res.matches, written, kind, stop_at_own_shell)
    note_spared(ctx, v, res, written)
    note_exec_spared(ctx, v, opts.full, opts.patterns, opts.icase, opts.exact)
    for vic in v.victims:
        if vic.process.kind == "ssh-client":
            v.notes.append(
                f"{vic.process.describe()} is a local ssh client whose argv holds its remote command: killing it "
                "does not stop a nohup'd remote process"
            )
