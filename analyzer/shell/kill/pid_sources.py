"""What a PID-producing pipeline prints, for ``kill $(…)`` and ``… | xargs kill``: pgrep, lsof -t,
nvidia-smi, ``ps | grep | awk``, pidof, jobs, explicit PIDs and process groups.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from typing import Literal

from analyzer.shell.ere import ere_span
from analyzer.shell.kill.chain import host_key, siblings_of
from analyzer.shell.kill.context import KillContext, as_written
from analyzer.shell.kill.hits import who
from analyzer.shell.kill.match import Match, cmdline_subject, is_generic_pattern
from analyzer.shell.kill.model import Mechanism, Process
from analyzer.shell.kill.pkill import match_pgrep, parse_pgrep
from analyzer.shell.model import SimpleCommand
from analyzer.shell.wrappers import scan_options

_GPU_GLOB = "/dev/nvidia*"


@dataclass(slots=True)
class PidSource:
    """The processes one PID source lists, in the order it lists them."""

    mechanism: Mechanism
    matches: list[Match]
    pattern: str | None = None
    written: str = ""
    invalid: bool = False
    generic: str | None = None
    notes: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)


def pid_source(ctx: KillContext, pipeline: list[SimpleCommand]) -> PidSource:
    """What a PID-producing pipeline outputs: pgrep, lsof -t, nvidia-smi, ps | grep | awk, pidof."""
    head = pipeline[0]
    rest = pipeline[1:]
    name = head.name
    eff = list(head.effective_argv)
    narrowing = [c for c in rest if c.name in ("head", "tail", "sed", "sort", "shuf")]
    notes = [f"`{as_written(c.effective_argv, 30)}` may keep only some PIDs: every candidate is listed"
             for c in narrowing if c.name in ("head", "tail", "sed")]
    if name == "pgrep":
        return _pgrep_source(ctx, eff, notes)
    if name == "lsof":
        return _lsof_source(ctx, eff, notes)
    if name == "nvidia-smi":
        gpu = [Match(c, cmdline_subject(c.process), None) for c in ctx.candidates() if _uses_gpu(c.process)]
        return PidSource("nvidia-smi-kill", gpu, written=as_written(eff), generic="GPU",
                         notes=[*notes, "nvidia-smi lists every process with a CUDA context on any GPU"])
    if name == "ps":
        return _ps_source(ctx, eff, rest, notes)
    if name == "pidof":
        names = [a for a in eff[1:] if not a.startswith("-")]
        ms = [Match(c, c.process.comm, None, "process name") for c in ctx.candidates()
              if c.process.comm in names or (c.process.argv and os.path.basename(c.process.argv[0]) in names)]
        return PidSource("pidof-kill", ms, pattern=" ".join(names), written=as_written(eff),
                         generic=is_generic_pattern([f"^({'|'.join(map(re.escape, names))})$"]) if names else None,
                         notes=notes)
    if name == "cat" or (head.redirects and name in ("", "cat")):
        return PidSource("kill", [], written=as_written(eff), unresolved=[f"$({' '.join(eff)})"],
                         notes=["PIDs read from a file: unknown here"])
    if name == "jobs":
        return job_source(ctx, "$(jobs -p)")
    return PidSource("kill", [], written=as_written(eff), unresolved=[f"$({' '.join(eff)})"],
                     notes=[f"PIDs come from `{as_written(eff, 40)}`, which is not modelled"])


def _pgrep_source(ctx: KillContext, eff: list[str], notes: list[str]) -> PidSource:
    opts = parse_pgrep(eff, bsd=ctx.bsd)
    tmp = ctx.verdict("kill-pgrep", (15, "TERM"))
    opts.patterns = [ctx.expand(p, tmp) for p in opts.patterns]
    src = PidSource("kill-pgrep", [], pattern=opts.patterns[0] if opts.patterns else None,
                    written=as_written(eff), notes=notes + opts.notes, unresolved=tmp.unresolved)
    if opts.error:
        src.notes.append(f"pgrep: {opts.error}: it prints nothing, so nothing is killed")
        return src
    res = match_pgrep(opts, ctx.candidates(), bsd=ctx.bsd)
    src.matches, src.invalid = res.matches, res.invalid
    src.notes.extend(res.notes)
    for m in res.spared_ancestors:
        src.notes.append(f"pgrep also matches {who(ctx, m)}, but excludes its ancestors here")
    src.generic = is_generic_pattern(opts.patterns, icase=opts.icase, exact=opts.exact)
    if not ctx.bsd and any(m.candidate.link_index is not None for m in res.matches):
        src.notes.append("pgrep excludes only itself: the calling shell is in its list")
    return src


def _uses_gpu(p: Process) -> bool:
    return p.kind == "gpu" or any(fnmatch.fnmatchcase(f, _GPU_GLOB) and f[11:12].isdigit() for f in p.open_files)


def _lsof_source(ctx: KillContext, argv: list[str], notes: list[str]) -> PidSource:
    ports: list[int] = []
    listen_only = any("LISTEN" in a for a in argv)
    for a in argv[1:]:
        m = re.search(r"(?:^-[a-zA-Z]*i|^)(?:tcp|udp|TCP|UDP)?(?:@[^:]*)?:(\d+)$", a) or re.fullmatch(r":(\d+)", a)
        if m:
            ports.append(int(m.group(1)))
    ms = [Match(c, cmdline_subject(c.process), None) for c in ctx.candidates()
          if any(p in c.process.ports for p in ports)]
    extra = [] if listen_only else [
        "lsof -i :PORT also lists clients connected to that port (not tracked here); add -sTCP:LISTEN to "
        "list only the listener",
    ]
    return PidSource("lsof-kill", ms, pattern=None, written=as_written(argv), notes=notes + extra)


# ---------------------------------------------------------------- ps | grep | awk


@dataclass(slots=True)
class GrepFilter:
    """One grep (or awk ``/re/``) of a ``ps | grep`` pipeline."""

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


# grep's options that change how a `ps | grep P` pipeline matches: option -> (field, value)
_GREP_FLAGS: dict[str, tuple[str, object]] = {
    "-v": ("invert", True), "-i": ("icase", True), "-E": ("mode", "extended"), "-F": ("mode", "fixed"),
    "-P": ("mode", "perl"), "-w": ("word", True), "-x": ("line", True),
    "--invert-match": ("invert", True), "--ignore-case": ("icase", True), "--extended-regexp": ("mode", "extended"),
    "--fixed-strings": ("mode", "fixed"), "--perl-regexp": ("mode", "perl"), "--word-regexp": ("word", True),
    "--line-regexp": ("line", True),
}


def parse_grep(argv: list[str]) -> GrepFilter:
    """``grep [options] PATTERN`` (or ``-e PATTERN``): the filter it applies to each ps line."""
    prog = os.path.basename(argv[0]) if argv else "grep"
    filt = GrepFilter(pattern="", mode={"egrep": "extended", "fgrep": "fixed"}.get(prog, "basic"))
    given: list[str] = []

    def flag(opt: str, value: str | None) -> None:
        if opt in ("-e", "--regexp"):
            given.append(value or "")
        elif opt in _GREP_FLAGS:
            setattr(filt, *_GREP_FLAGS[opt])

    _, operands = scan_options(argv, 1, "emABCf", frozenset({"--regexp"}), flag, permute=True)
    pattern = given[-1] if given else next(iter(operands), None)
    if pattern is None:
        filt.error = "grep without a pattern"
    filt.pattern = pattern or ""
    return filt


def _ps_source(ctx: KillContext, argv: list[str], rest: list[SimpleCommand], notes: list[str]) -> PidSource:
    """``ps … | grep P | grep -v grep | awk '{print $2}'``: ps lists every process with its command
    line, grep filters lines. The calling shell's own line contains the pattern too."""
    lines = [(c, cmdline_subject(c.process)) for c in ctx.candidates()]
    spans: dict[int, tuple[int, int] | None] = {}
    src = PidSource("ps-grep-kill", [], written="", notes=[
        *notes, "ps|grep is approximated on command lines (ps's other columns — user, PID, time — are "
        "not modelled)",
    ])
    filters: list[GrepFilter] = []
    for c in rest:
        if c.name in ("grep", "egrep", "fgrep"):
            filters.append(parse_grep(list(c.effective_argv)))
        elif c.name == "awk":
            prog = next((a for a in c.effective_argv[1:] if not a.startswith("-")), "")
            m = re.match(r"\s*(!?)\s*/((?:\\/|[^/])*)/", prog)
            if m:
                filters.append(GrepFilter(pattern=m.group(2).replace("\\/", "/"), mode="extended", invert=bool(m.group(1))))
    kept = []
    for cand, line in lines:
        keep = True
        for f in filters:
            if f.error:
                continue
            got = f.keeps(line)
            if got is None:
                src.invalid = True
                src.notes.append(f"grep pattern '{f.pattern}' is invalid: grep exits 2, nothing is killed")
                return src
            keep, span = got
            if not keep:
                break
            if span is not None and not f.invert:
                spans[id(cand)] = span
        if keep:
            kept.append(Match(cand, line, spans.get(id(cand))))
    positive = [f for f in filters if not f.invert]
    src.pattern = positive[0].pattern if positive else None
    src.written = " | ".join(as_written(c.effective_argv, 40) for c in rest) or as_written(argv)
    if not filters:
        src.notes.append("no grep filter: every process ps lists would be signalled")
    src.matches = kept
    src.generic = is_generic_pattern([f.pattern for f in positive if f.mode != "fixed"]) if positive else "every"
    if any(f.invert and f.pattern == "grep" for f in filters):
        src.notes.append("`grep -v grep` also drops the calling shell's own line when its text contains 'grep'")
    return src


# ---------------------------------------------------------------- jobs, -1, explicit PIDs


def job_source(ctx: KillContext, target: str) -> PidSource:
    """``kill %1`` / ``kill $!`` / ``kill $(jobs -p)``: background jobs of the same shell."""
    cmd = ctx.cmd
    jobs = [c for c in siblings_of(cmd, ctx.script) if c.background and c.position < cmd.position]
    chosen: list[SimpleCommand] = []
    if target == "$!" or target in ("%%", "%+"):
        chosen = jobs[-1:]
    elif target == "%-":
        chosen = jobs[-2:-1]
    elif target.startswith("%") and target[1:].isdigit():
        n = int(target[1:])
        chosen = jobs[n - 1 : n] if n >= 1 else []
    elif target.startswith("$(jobs"):
        chosen = jobs
    src = PidSource("kill", [], written=f"kill {target}")
    argvs = {tuple(c.effective_argv) for c in chosen}
    for cand in ctx.candidates():
        if cand.process.argv in argvs and host_key(cand.process.host) == host_key(cmd.host):
            src.matches.append(Match(cand, cmdline_subject(cand.process), None))
    if not chosen:
        src.unresolved.append(target)
        src.notes.append(f"{target} refers to a background job of this shell that is not visible here "
                         "(a new shell per tool call has no jobs from earlier calls)")
    return src


def everything_source(ctx: KillContext) -> PidSource:
    """``kill -1``: every process the caller may signal."""
    ms = [Match(c, cmdline_subject(c.process), None) for c in ctx.candidates()]
    return PidSource("kill", ms, written="kill -1", generic="every",
                     notes=["kill -1 signals every process the caller may signal (all of them as root)"])


def explicit_source(ctx: KillContext, pids: list[int], pgids: list[int]) -> PidSource:
    """PIDs and ``-PGID`` process groups written out."""
    src = PidSource("kill", [], written="")
    by_pid = {c.process.pid: c for c in ctx.candidates() if c.process.pid is not None}
    for pid in pids:
        cand = by_pid.get(pid)
        if cand is None:
            src.notes.append(f"PID {pid} is not a process known here")
            continue
        src.matches.append(Match(cand, str(pid), (0, len(str(pid))), "pid"))
    for pgid in pgids:
        members = [c for c in ctx.candidates() if c.process.pgid == pgid]
        if not members:
            leader = by_pid.get(pgid)
            if leader is not None:
                members = [leader, *(c for c in ctx.candidates() if c.process.ppid == pgid)]
                src.notes.append(f"process group {pgid}: its leader and children stand in for the group "
                                 "(group ids unknown)")
        for cand in members:
            src.matches.append(Match(cand, f"-{pgid}", (0, len(str(pgid)) + 1), "process group"))
        if not members:
            src.notes.append(f"process group {pgid} has no process known here")
    return src
