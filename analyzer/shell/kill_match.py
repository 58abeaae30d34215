"""Which processes a pgrep/pkill, killall or ps|grep pattern selects (procps-ng 4.0, psmisc 23, BSD).

Private to ``analyzer.shell.kill``. Sources are the ones cited in shell-semantics §5-§7: procps
``src/pgrep.c`` (signal_option, do_regcomp, select_procs), psmisc ``src/killall.c``
(match_process_name, load_proc_cmdline) and the FreeBSD/macOS pkill(1) and killall(1) pages.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Literal

from analyzer.shell.ere import ere_span, pattern_bound
from analyzer.shell.kill_model import COMM_LEN_BSD, COMM_LEN_LINUX, Process, comm_of, parse_signal

__all__ = [
    "Candidate",
    "GrepFilter",
    "KillallOptions",
    "PgrepOptions",
    "cmdline_subject",
    "is_generic_pattern",
    "match_killall",
    "match_pgrep",
    "parse_grep",
    "parse_killall",
    "parse_pgrep",
]


@dataclass(slots=True)
class Candidate:
    """A process a matcher looks at, with where it stands relative to the killing process."""

    process: Process
    ancestor: bool = False
    """An ancestor of the kill (its shells, sudo, the agent CLI): spared by ``-A`` / BSD pkill."""
    order: int = 0
    """Age rank: lower started earlier (PID order when PIDs are unknown)."""
    link_index: int | None = None
    """Index into the kill's chain links when it is one of them."""


def cmdline_subject(proc: Process) -> str:
    """What ``pgrep -f`` matches: argv joined by spaces, ``\\n`` as space, control bytes as ``?``;
    ``[comm]`` when the cmdline is empty (kernel threads, zombies)."""
    if not proc.argv:
        return f"[{proc.comm}]"
    text = "\0".join(proc.argv).rstrip("\0").replace("\0", " ").replace("\n", " ")
    return "".join("?" if (ord(ch) < 0x20 or ord(ch) == 0x7F) else ch for ch in text)


# ---------------------------------------------------------------- pgrep / pkill

_LINUX_ARG_OPTS = set("dgGPstuUFrOq")
_LINUX_FLAG_OPTS = set("acefhilnovwxALVHm")
_LINUX_LONG = {
    "full": "f", "exact": "x", "ignore-case": "i", "newest": "n", "oldest": "o", "inverse": "v",
    "ignore-ancestors": "A", "count": "c", "list-name": "l", "list-full": "a", "lightweight": "w",
    "echo": "e", "require-handler": "H", "logpidfile": "L",
    "euid": "u=", "uid": "U=", "parent": "P=", "pgroup": "g=", "group": "G=", "session": "s=",
    "terminal": "t=", "pidfile": "F=", "runstates": "r=", "older": "O=", "signal": "signal=",
    "delimiter": "d=", "queue": "q=", "ns": "ns=", "nslist": "nslist=", "cgroup": "cgroup=", "env": "env=",
}
_BSD_ARG_OPTS = set("FGMNPUcdgjstu")
_BSD_FLAG_OPTS = set("ILSafilnoqvx")


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


def parse_pgrep(argv: list[str], *, bsd: bool = False) -> PgrepOptions:
    """Parse ``pkill``/``pgrep`` argv (``argv[0]`` is the program)."""
    tool = os.path.basename(argv[0]) if argv else "pkill"
    opts = PgrepOptions(tool=tool)
    args = list(argv[1:])
    if tool == "pkill":
        args, opts.signal = _signal_option(args, bsd)
    arg_opts = _BSD_ARG_OPTS if bsd else _LINUX_ARG_OPTS
    flag_opts = _BSD_FLAG_OPTS if bsd else _LINUX_FLAG_OPTS
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            opts.patterns.extend(args[i:])
            break
        if a.startswith("--") and not bsd:
            name, eq, value = a[2:].partition("=")
            spec = _LINUX_LONG.get(name)
            if spec is None:
                opts.error = f"unrecognized option '{a}'"
                return opts
            if spec.endswith("="):
                if not eq:
                    if i >= len(args):
                        opts.error = f"option '{a}' requires an argument"
                        return opts
                    value = args[i]
                    i += 1
                _apply(opts, spec[:-1], value, bsd)
            else:
                _apply(opts, spec, "", bsd)
            continue
        if a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                ch = a[j]
                if ch in arg_opts:
                    value = a[j + 1 :]
                    if not value:
                        if i >= len(args):
                            opts.error = f"option requires an argument -- '{ch}'"
                            return opts
                        value = args[i]
                        i += 1
                    _apply(opts, ch, value, bsd)
                    break
                if ch in flag_opts:
                    _apply(opts, ch, "", bsd)
                    j += 1
                    continue
                opts.error = f"invalid option -- '{ch}'"
                return opts
            continue
        if bsd:  # BSD getopt stops at the first operand: the rest are all patterns
            opts.patterns.append(a)
            opts.patterns.extend(args[i:])
            break
        opts.patterns.append(a)
    if not bsd and len(opts.patterns) > 1:
        opts.error = "only one pattern can be provided"
    elif not opts.patterns and not (opts.users or opts.parents or opts.pgroups):
        opts.error = "no matching criteria specified"
    return opts


def _apply(opts: PgrepOptions, key: str, value: str, bsd: bool) -> None:
    if key == "f":
        opts.full = True
    elif key == "x":
        opts.exact = True
    elif key == "i":
        opts.icase = True
    elif key == "A":
        opts.ignore_ancestors = True
    elif key == "a" and bsd:
        opts.include_ancestors = True
    elif key == "n":
        opts.newest = True
    elif key == "o":
        opts.oldest = True
    elif key == "v":
        opts.inverse = True
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


@dataclass(slots=True)
class Match:
    candidate: Candidate
    subject: str
    span: tuple[int, int] | None


@dataclass(slots=True)
class PgrepResult:
    matches: list[Match] = field(default_factory=list)
    spared_ancestors: list[Match] = field(default_factory=list)
    """Ancestors that match but are excluded (``-A``, BSD without ``-a``)."""
    invalid: bool = False
    notes: list[str] = field(default_factory=list)


def _subject(proc: Process, full: bool, bsd: bool) -> str:
    if full:
        return cmdline_subject(proc)
    if bsd and proc.argv and proc.comm == comm_of(proc.argv[0], COMM_LEN_LINUX):
        return comm_of(proc.argv[0], COMM_LEN_BSD)  # MAXCOMLEN is 16 there
    return proc.comm


def match_pgrep(opts: PgrepOptions, cands: list[Candidate], *, bsd: bool) -> PgrepResult:
    """Select processes as ``select_procs`` does: pattern (unanchored ERE, ``-x`` anchors), filters,
    ``-n``/``-o``; only the pkill itself is excluded on Linux unless ``-A``."""
    res = PgrepResult()
    if opts.error:
        return res
    spare_ancestors = opts.ignore_ancestors if not bsd else not opts.include_ancestors
    res.notes.extend(b for b in map(pattern_bound, opts.patterns) if b is not None)
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
                    return PgrepResult(invalid=True, notes=res.notes)
                if got is not False:
                    hit, span = True, got
                    break
            if hit == opts.inverse:
                continue
        m = Match(cand, subject, span if not opts.inverse else None)
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


_GENERIC_NAMES = (
    "node", "nodejs", "python", "python3", "python3.11", "bash", "sh", "zsh", "dash", "java", "ruby",
    "perl", "php", "npm", "npx", "pnpm", "yarn", "bun", "deno", "uv", "ssh", "sshd", "tmux", "docker",
    "sleep", "go", "dotnet", "sudo",
)


def is_generic_pattern(patterns: list[str], *, icase: bool = False, exact: bool = False) -> str | None:
    """The generic program name a pattern selects (``python``, ``node``…), if any: such a kill hits
    every process of that interpreter, not one server."""
    for pat in patterns:
        for name in _GENERIC_NAMES:
            if ere_span(pat, name, icase=icase, exact=exact) not in (None, False):
                return name
    return None


# ---------------------------------------------------------------- killall

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


def parse_killall(argv: list[str], *, bsd: bool = False) -> KillallOptions:
    opts = KillallOptions()
    args = list(argv[1:])
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            opts.names.extend(args[i:])
            break
        if a.startswith("--") and not bsd:
            name, eq, value = a[2:].partition("=")
            if name in ("signal",):
                if not eq and i < len(args):
                    value, i = args[i], i + 1
                opts.signal = parse_signal(value, bsd)
            elif name == "regexp":
                opts.regex = True
            elif name == "ignore-case":
                opts.icase = True
            elif name == "exact":
                opts.exact = True
            elif name == "process-group":
                opts.pgroup = True
            elif name == "interactive":
                opts.interactive = True
            elif name == "user":
                if not eq and i < len(args):
                    value, i = args[i], i + 1
                opts.users.append(value)
            elif name in ("quiet", "verbose", "wait", "ns", "older-than", "younger-than", "context"):
                if name in ("ns", "older-than", "younger-than", "context") and not eq:
                    i += 1
            else:
                opts.error = f"unrecognized option '{a}'"
                return opts
            continue
        if a.startswith("-") and len(a) > 1:
            # psmisc: an unknown option starting with an upper-case letter or a digit is a signal
            if (a[1].isupper() or a[1].isdigit()) and parse_signal(a[1:], bsd) is not None:
                opts.signal = parse_signal(a[1:], bsd)
                continue
            j = 1
            while j < len(a):
                ch = a[j]
                takes_arg = ch in ("s", "u", "n", "y", "o", "Z", "t", "c") if not bsd else ch in ("u", "t", "c")
                if takes_arg:
                    value = a[j + 1 :] or (args[i] if i < len(args) else "")
                    if not a[j + 1 :]:
                        i += 1
                    if ch == "s" and not bsd:
                        opts.signal = parse_signal(value, bsd)
                    elif ch == "u":
                        opts.users.append(value)
                    elif ch in ("y", "o"):
                        opts.notes.append(f"-{ch} {value} (age filter) is not modelled")
                    elif ch == "c" and bsd:
                        opts.names.append(value)
                    break
                if (ch == "r" and not bsd) or (ch == "m" and bsd):
                    opts.regex = True
                elif ch == "I" and not bsd:
                    opts.icase = True
                elif ch == "e":
                    opts.exact = True
                elif ch == "g":
                    opts.pgroup = True
                elif ch == "i":
                    opts.interactive = True
                elif ch in ("s", "d") and bsd:
                    opts.dry_run = True
                elif ch in "qvwlVz":
                    pass
                else:
                    opts.error = f"invalid option -- '{ch}'"
                    return opts
                j += 1
            continue
        opts.names.append(a)
    if not opts.names:
        opts.error = "no process names given"
    return opts


def match_killall(opts: KillallOptions, cands: list[Candidate], *, bsd: bool) -> PgrepResult:
    """psmisc ``match_process_name``: exact comm (``strcmp``, ``strcasecmp`` with ``-I``); when comm
    is 15 long, the basename of the first argv word that starts with it; ``-r`` an unanchored ERE
    over that name. A name with ``/`` is matched by executable (approximated by argv[0])."""
    res = PgrepResult()
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
                    return PgrepResult(invalid=True, notes=res.notes)
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
                m = Match(cand, command, span)
                res.matches.append(m)
                break
    if any("/" in n for n in opts.names) and not opts.regex:
        res.notes.append("a name with '/' is matched by executable file; approximated by argv[0]")
    return res


# ---------------------------------------------------------------- grep over ps output

@dataclass(slots=True)
class GrepFilter:
    pattern: str
    mode: str = "basic"
    """``basic`` (grep), ``extended`` (-E/egrep), ``fixed`` (-F/fgrep), ``perl`` (-P: approximated)."""
    invert: bool = False
    icase: bool = False
    word: bool = False
    line: bool = False
    error: str | None = None

    def keeps(self, line: str) -> tuple[bool, tuple[int, int] | None] | None:
        """(kept, span) for one ps line; None when the pattern is invalid."""
        pat = self.pattern
        if self.mode == "fixed":
            hay, needle = (line.lower(), pat.lower()) if self.icase else (line, pat)
            idx = hay.find(needle)
            if self.line:
                idx = 0 if hay == needle else -1
            hit: tuple[int, int] | Literal[False] | None = (idx, idx + len(pat)) if idx >= 0 else False
        else:
            basic = self.mode == "basic"
            if self.word:
                pat = rf"\<\({pat}\)\>" if basic else rf"\<({pat})\>"
            if self.mode == "perl":
                try:
                    m = re.search(pat, line, re.I if self.icase else 0)
                except re.error:
                    return None
                hit = (m.start(), m.end()) if m else False
            else:
                hit = ere_span(pat, line, icase=self.icase, exact=self.line, basic=basic)
            if hit is None:
                return None
        matched = hit is not False
        span = hit if isinstance(hit, tuple) else None
        return (matched != self.invert, span if not self.invert else None)



# grep's options that change how a `ps | grep P` pipeline matches: short flag -> (field, value)
_GREP_FLAGS: dict[str, tuple[str, object]] = {
    "v": ("invert", True), "i": ("icase", True), "E": ("mode", "extended"), "F": ("mode", "fixed"),
    "P": ("mode", "perl"), "w": ("word", True), "x": ("line", True),
}
_GREP_LONG = {"invert-match": "v", "ignore-case": "i", "extended-regexp": "E", "fixed-strings": "F",
              "perl-regexp": "P", "word-regexp": "w", "line-regexp": "x"}

def parse_grep(argv: list[str]) -> GrepFilter:
    prog = os.path.basename(argv[0]) if argv else "grep"
    mode = {"egrep": "extended", "fgrep": "fixed"}.get(prog, "basic")
    filt = GrepFilter(pattern="", mode=mode)
    pattern: str | None = None
    i = 1
    while i < len(argv):
        a = argv[i]
        i += 1
        if a == "--":
            if pattern is None and i < len(argv):
                pattern = argv[i]
            break
        if a.startswith("--"):
            name, eq, value = a[2:].partition("=")
            if name == "regexp":
                pattern = value if eq else (argv[i] if i < len(argv) else "")
                i += 0 if eq else 1
            elif name in _GREP_LONG:
                setattr(filt, *_GREP_FLAGS[_GREP_LONG[name]])
            continue
        if a.startswith("-") and len(a) > 1:
            for j, ch in enumerate(a[1:], 1):
                if ch == "e":
                    pattern = a[j + 1 :] or (argv[i] if i < len(argv) else "")
                    if not a[j + 1 :]:
                        i += 1
                    break
                if ch in "mABCf":
                    if not a[j + 1 :]:
                        i += 1
                    break
                if ch in _GREP_FLAGS:
                    setattr(filt, *_GREP_FLAGS[ch])
            continue
        if pattern is None:
            pattern = a
    if pattern is None:
        filt.error = "grep without a pattern"
    filt.pattern = pattern or ""
    return filt
