"""Kill semantics: given a parsed command and the processes known at that moment, which processes
would each kill in it hit, and why, as procps, psmisc, systemd, docker, tmux and bash behave.

This is how the analyzer proves "your pkill also killed the new server and the shell running it"
(shell-semantics §5-§11, decision procedure §10):

* ``pkill``/``pgrep`` match an unanchored glibc ERE against the command line (``-f``) or the
  15-byte process name, and exclude only themselves on Linux: the calling ``bash -c`` shell, the
  agent's wrapper shell, sshd's ``$SHELL -c``, ``sudo`` are hit when the pattern matches their
  text, unless ``-A``, unless bash ``exec``ed the kill (``kill_chain``). BSD/macOS pkill spares
  ancestors unless ``-a``.
* ``kill $(pgrep …)``: the builtin kill signals the PIDs in order and stops at its own shell.
* ``killall`` matches the process name exactly (15-char rule, ``-r`` ERE), ``fuser -k`` every
  holder of a port or file (``/dev/nvidia*``: every GPU process), ``systemctl``/``docker``/``tmux``
  by unit, container and session.

Entry points: :func:`evaluate`, :func:`task_stop`, :func:`harness_frame`, :func:`agent_process`.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from analyzer.shell.ere import ere_span
from analyzer.shell.kill_chain import (
    ChainLink,
    build_chain,
    host_key,
    is_builtin_step,
    script_launches,
    siblings_of,
)
from analyzer.shell.kill_harness import agent_process, harness_frame, harness_process, harness_wraps_command
from analyzer.shell.kill_match import (
    Candidate,
    GrepFilter,
    Match,
    PgrepOptions,
    PgrepResult,
    cmdline_subject,
    is_generic_pattern,
    match_killall,
    match_pgrep,
    parse_grep,
    parse_killall,
    parse_pgrep,
)
from analyzer.shell.kill_model import (
    STOPPING,
    KillVerdict,
    Mechanism,
    Process,
    Victim,
    is_fatal,
    parse_signal,
)
from analyzer.shell.kill_windows import windows_kill
from analyzer.shell.model import ShellFrame, ShellScript, SimpleCommand
from analyzer.shell.platform import is_bsd_like, normalize_platform

__all__ = [
    "KillVerdict",
    "Process",
    "Victim",
    "agent_process",
    "evaluate",
    "harness_frame",
    "harness_process",
    "may_kill",
    "task_stop",
]

_GPU_GLOB = "/dev/nvidia*"
_INTERACTIVE_IGNORES = frozenset({"TERM", "INT", "QUIT"})
_DYNAMIC = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*|[0-9!$#?@*-])\}?")


_JUDGED = frozenset({"pkill", "kill", "killall", "fuser", "systemctl", "service", "launchctl", "docker", "podman",
                     "docker-compose", "podman-compose", "tmux", "screen", "xargs", "taskkill", "taskkill.exe",
                     "Stop-Process", "stop-process", "spps"})
"""The programs ``_dispatch`` judges (``xargs``: whatever it runs); keep the two in step."""


def may_kill(script: ShellScript) -> bool:
    """Whether ``evaluate`` could return a verdict for ``script``: False when no command of it is
    one that ``evaluate`` judges, so a caller need not build the process list (most commands)."""
    return any(c.name in _JUDGED for c in script.commands)


def evaluate(
    script: ShellScript,
    processes: Sequence[Process],
    *,
    harness: ShellFrame | None = None,
    platform: str = "linux",
    platforms: Mapping[str | None, str] | None = None,
    include_script_launches: bool = True,
) -> list[KillVerdict]:
    """One verdict for every kill-ish command of ``script``, in script order.

    ``processes`` are the processes known to exist when the command runs, on every host (a
    command only sees those of its own host). ``harness`` is the agent's wrapper shell around the
    whole command (:func:`harness_frame`): the outermost local frame. ``platform`` is the local
    machine's (``linux``, ``macos``); ``platforms`` maps ssh targets (and None) to theirs; remote
    hosts default to Linux. ``include_script_launches`` treats commands this script put in the
    background earlier (``server & … pkill``) as running processes."""
    procs = list(processes)
    wraps = harness is not None and harness_wraps_command(harness, script.source)
    out: list[KillVerdict] = []
    for cmd in script.commands:
        plat, plat_note = _platform_for(cmd.host, platform, platforms)
        ctx = _Ctx(cmd, script, procs, harness, wraps, plat, include_script_launches)
        verdict = _dispatch(ctx)
        if verdict is None:
            continue
        verdict.platform = plat
        if plat_note:
            verdict.notes.append(plat_note)
        if ctx.notes:
            verdict.notes.extend(n for n in ctx.notes if n not in verdict.notes)
        stopper = next((v for v in out if v.reached and v.skips(cmd)), None)
        if stopper is not None:
            verdict.reached = False
            verdict.notes.insert(0, f"this never runs: `{_as_written(stopper.command.argv, 50)}` took down the "
                                    "shell that would run it; the victims are what it would have hit")
        elif verdict.signal_name == "KILL":
            # SIGKILL is immediate: later commands no longer see these processes
            gone = {id(x.process) for x in verdict.victims}
            procs = [p for p in procs if id(p) not in gone]
        out.append(verdict)
    return out


def task_stop(
    task_id: str, processes: Sequence[Process], *, tool: str = "TaskStop", signal: str = "TERM",
) -> KillVerdict:
    """An agent's own "stop background task" tool call (Claude Code ``TaskStop``/``KillShell``/
    ``KillBash``): it kills the task's shell and its process tree, i.e. every process started in
    that task."""
    cmd = SimpleCommand(argv=[tool, task_id], name=tool, effective_argv=[tool, task_id])
    num, name = parse_signal(signal) or (15, "TERM")
    verdict = KillVerdict(command=cmd, mechanism="task-stop", signal=num, signal_name=name, targets=[task_id])
    for p in processes:
        if p.task_id is not None and p.task_id == task_id:
            verdict.victims.append(Victim(process=p, reason=f"{tool} {task_id} stops the background task that started it"))
    if not verdict.victims:
        verdict.notes.append(f"no known process belongs to task {task_id}")
    return verdict


# ---------------------------------------------------------------- context


@dataclass(slots=True)
class _Ctx:
    cmd: SimpleCommand
    script: ShellScript
    processes: list[Process]
    harness: ShellFrame | None
    harness_wraps: bool
    platform: str
    include_launches: bool
    notes: list[str] = field(default_factory=list)
    _chain: list[ChainLink] | None = None
    _cands: list[Candidate] | None = None

    @property
    def bsd(self) -> bool:
        return is_bsd_like(self.platform)

    def chain(self) -> list[ChainLink]:
        if self._chain is None:
            self._chain = build_chain(self.cmd, self.script, self.harness, self.harness_wraps, self.platform)
        return self._chain

    def candidates(self) -> list[Candidate]:
        """Everything the kill can see on its host: known processes (oldest first), then its own
        chain and this script's background launches by start position."""
        if self._cands is not None:
            return self._cands
        cmd = self.cmd
        hk = host_key(cmd.host)
        local_top = cmd.host is None and cmd.container is None
        known = [
            p for p in self.processes
            if host_key(p.host) == hk and (cmd.container is None or p.container == cmd.container)
        ]
        if known and all(p.pid is not None for p in known):
            known.sort(key=lambda p: p.pid or 0)
        cands = [Candidate(p, ancestor=p.kind == "agent" and local_top, order=i) for i, p in enumerate(known)]
        chain = self.chain()
        later: list[tuple[int, int, Candidate]] = []
        for idx, link in enumerate(chain):
            if link.alive:
                later.append((link.birth, 0, Candidate(link.process, ancestor=True, link_index=idx)))
        if self.include_launches:
            for launch in script_launches(cmd, self.script, self.processes, chain):
                later.append((launch.birth, 1, Candidate(launch.process)))
        later.sort(key=lambda t: (t[0], t[1]))
        for n, (_, _, cand) in enumerate(later, start=len(cands)):
            cand.order = n
            cands.append(cand)
        self._cands = cands
        return cands

    def link(self, cand: Candidate) -> ChainLink | None:
        return self.chain()[cand.link_index] if cand.link_index is not None else None


def _platform_for(host: str | None, default: str, platforms: Mapping[str | None, str] | None) -> tuple[str, str | None]:
    where = "the local machine" if host is None else host
    if platforms:
        for key, value in platforms.items():
            if host_key(key) == host_key(host):
                plat = normalize_platform(value)
                return plat, f"{where}: {_PLATFORM_WORDS[plat]} (as inferred for this host)"
    if host is None:
        plat = normalize_platform(default)
        return plat, f"{where}: {_PLATFORM_WORDS[plat]}"
    return "linux", f"{host}: ssh target (assumed Linux)"


_PLATFORM_WORDS = {
    "linux": "Linux tools assumed (procps pkill spares only itself, psmisc killall/fuser)",
    "macos": "assumed macOS: BSD pkill spares its ancestors unless -a; killall -m, no fuser ports",
    "freebsd": "assumed FreeBSD: BSD pkill spares its ancestors unless -a",
}


# ---------------------------------------------------------------- dispatch


def _dispatch(ctx: _Ctx) -> KillVerdict | None:
    cmd = ctx.cmd
    name = cmd.name
    eff = list(cmd.effective_argv) or list(cmd.argv)
    if name == "xargs" and len(eff) > 1:  # a parser that kept xargs as the program
        eff, name = _after_xargs(eff)
    under_xargs = "xargs" in [os.path.basename(w) for w in cmd.wrappers] or cmd.name == "xargs"
    if name == "pkill":
        return _pkill(ctx, eff)
    if name == "kill":
        return _kill(ctx, eff, external=under_xargs or not is_builtin_step(cmd), piped=under_xargs)
    if name == "killall":
        return _killall(ctx, eff)
    if name == "fuser":
        return _fuser(ctx, eff)
    if name in ("systemctl", "service"):
        return _systemctl(ctx, eff)
    if name == "launchctl":
        return _launchctl(ctx, eff)
    if name in ("docker", "podman", "docker-compose", "podman-compose"):
        return _docker(ctx, eff)
    if name == "tmux":
        return _tmux(ctx, eff)
    if name == "screen":
        return _screen(ctx, eff)
    if name.lower() in ("taskkill", "taskkill.exe", "stop-process", "spps"):
        return _windows(ctx, eff)
    return None


def _windows(ctx: _Ctx, argv: list[str]) -> KillVerdict | None:
    """``taskkill /IM node.exe /F`` and ``Stop-Process -Name node`` kill by image name, like
    ``killall``; ``taskkill /PID 123`` and ``Stop-Process -Id 123`` by PID, like ``kill``."""
    how = windows_kill(argv)
    if how is None:
        return None
    force = ["-9"] if how.force else []
    if how.names:
        v = _killall(ctx, ["killall", *force, *how.names])
    else:
        found = _kill(ctx, ["kill", *force, *how.pids], external=True, piped=False)
        if found is None:
            return None
        v = found
    v.notes.append(f"{argv[0]} read as `{'killall' if how.names else 'kill'} {' '.join(force + (how.names or how.pids))}`"
                   + (" (with /T: the child processes of each too)" if how.tree else ""))
    return v


def _after_xargs(argv: list[str]) -> tuple[list[str], str]:
    i = 1
    takes = {"-n", "-L", "-P", "-s", "-d", "-E", "-I", "-a"}
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in takes else 1
    rest = argv[i:] or ["echo"]
    return rest, os.path.basename(rest[0])


# ---------------------------------------------------------------- wording


def _excerpt(subject: str, span: tuple[int, int] | None, width: int = 90) -> str:
    """The subject, shortened around the match with ``…``."""
    if len(subject) <= width:
        return subject
    if span is None:
        return subject[: width - 1] + "…"
    a, b = span
    room = max(10, (width - (b - a)) // 2)
    start, end = max(0, a - room), min(len(subject), b + room)
    return ("…" if start else "") + subject[start:end] + ("…" if end < len(subject) else "")


def _as_written(argv: Sequence[str], limit: int = 80) -> str:
    text = shlex.join(argv)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _match_reason(written: str, m: Match, full: bool, link: ChainLink | None, outcome: str) -> str:
    what = "command line" if full else "process name"
    text = f"{written} matches its {what} '{_excerpt(m.subject, m.span)}'"
    if link is not None:
        text += f": it is {link.description}{outcome}"
    return text


def _relays(link: ChainLink, sig_name: str) -> bool:
    """sudo forwards catchable signals to its command instead of dying."""
    return bool(link.process.argv) and os.path.basename(link.process.argv[0]) == "sudo" and sig_name not in (
        "KILL", "STOP")


def _frame_outcome(link: ChainLink, sig_name: str, kind: str) -> tuple[bool, str]:
    """(dies, words) for a shell of the kill's own chain that receives ``sig_name``."""
    frame = link.frame
    if frame is not None and frame.interactive and sig_name in _INTERACTIVE_IGNORES:
        return False, f", an interactive shell, which ignores SIG{sig_name}"
    if sig_name in STOPPING:
        return False, f"; SIG{sig_name} stops it, so the commands after this {kind} wait until it is continued"
    if not is_fatal(sig_name):
        return False, ""
    if frame is None:
        if _relays(link, sig_name):
            return False, (f"; sudo catches SIG{sig_name} and relays it to the command it runs ({kind}), "
                           "which dies there (procps merge request 160)")
        return True, f"; it dies with SIG{sig_name}"
    return True, f"; it dies with SIG{sig_name}, so the commands after this {kind} in it never run"


# ---------------------------------------------------------------- verdict assembly


def _new_verdict(ctx: _Ctx, mechanism: Mechanism, sig: tuple[int, str], **kw: object) -> KillVerdict:
    v = KillVerdict(command=ctx.cmd, mechanism=mechanism, signal=sig[0], signal_name=sig[1], host=ctx.cmd.host)
    for key, value in kw.items():
        setattr(v, key, value)
    return v


def _default_signal(ctx: _Ctx, name: str) -> tuple[int, str]:
    got = parse_signal(name, ctx.bsd)
    assert got is not None
    return got


def _add_matches(
    ctx: _Ctx, v: KillVerdict, matches: list[Match], written: str, full: bool, kind: str,
    stop_at_own_shell: bool = False,
) -> None:
    """Turn matches (in signal order) into victims; mark the chain shells that die."""
    innermost = _innermost_alive(ctx)
    for m in sorted(matches, key=lambda m: m.candidate.order):
        link = ctx.link(m.candidate)
        if link is not None:
            dies, words = _frame_outcome(link, v.signal_name, kind)
            v.victims.append(Victim(
                process=m.candidate.process, reason=_match_reason(written, m, full, link, words),
                subject=m.subject, span=m.span, frame=link.frame, ancestor=True,
            ))
            if dies and link.frame is not None:
                v.killed_frames.append(link.frame)
                v.harness_killed = v.harness_killed or link.harness
            rest = [x for x in matches if x.candidate.order > m.candidate.order]
            names = ", ".join(x.candidate.process.describe() for x in rest)
            if stop_at_own_shell and link is innermost and dies:
                if rest:
                    v.notes.append(
                        f"kill is a shell builtin: it signalled its own shell before reaching {names}, "
                        "which it never signals"
                    )
                break
            if _relays(link, v.signal_name) and link.birth == ctx.cmd.position and not stop_at_own_shell:
                if rest:
                    v.notes.append(f"{kind} dies from the signal sudo relays before reaching {names}")
                break
            continue
        extra = ""
        if m.candidate.process.kind == "agent":
            extra = ": it is the agent's own process, so the session itself dies"
        v.victims.append(Victim(
            process=m.candidate.process, reason=_match_reason(written, m, full, None, "") + extra,
            subject=m.subject, span=m.span, ancestor=m.candidate.ancestor,
        ))
    _finish_self_kill(v)


def _innermost_alive(ctx: _Ctx) -> ChainLink | None:
    frames = [link for link in ctx.chain() if link.frame is not None and link.alive]
    return frames[-1] if frames else None


def _finish_self_kill(v: KillVerdict) -> None:
    if not v.killed_frames:
        return
    v.self_kill = v.killed_frames[-1]
    v.skipped_after = True
    remote = any(f.host is not None for f in v.killed_frames)
    v.expected_exit = 255 if remote else 128 + v.signal
    if remote:
        v.notes.append("the ssh client reports exit 255 for a remote shell killed by a signal, and none of its "
                       "later output")


def _note_spared(ctx: _Ctx, v: KillVerdict, res: PgrepResult, written: str) -> None:
    for m in res.spared_ancestors:
        link = ctx.link(m.candidate)
        who = link.description if link is not None else m.candidate.process.describe()
        why = "BSD pkill excludes its ancestors (no -a)" if ctx.bsd else "-A excludes its ancestors"
        v.notes.append(f"{written} also matches {who}, but {why}")


def _note_exec_spared(ctx: _Ctx, v: KillVerdict, opts_full: bool, patterns: list[str], icase: bool, exact: bool) -> None:
    """Say when a shell of the chain would have matched but is gone because it exec'd the kill."""
    for link in ctx.chain():
        if link.alive or link.frame is None:
            continue
        subject = cmdline_subject(link.process) if opts_full else link.process.comm
        if any(_span(p, subject, icase, exact) for p in patterns):
            v.notes.append(f"{link.description} matches too, but it is gone: {link.gone_because}")


def _span(pattern: str, subject: str, icase: bool, exact: bool) -> tuple[int, int] | None:
    got = ere_span(pattern, subject, icase=icase, exact=exact)
    return got if isinstance(got, tuple) else None


def _expand(ctx: _Ctx, word: str, v: KillVerdict) -> str:
    """Substitute ``$VAR`` from the command's known env; record what stays unknown."""
    env = ctx.cmd.env

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in env and "$" not in env[name]:
            return env[name]
        if m.group(0) not in v.unresolved:
            v.unresolved.append(m.group(0))
        return m.group(0)

    if "$" not in word or word.startswith("$(") or word.startswith("`"):
        return word
    return _DYNAMIC.sub(sub, word)


# ---------------------------------------------------------------- pkill


def _pkill(ctx: _Ctx, argv: list[str]) -> KillVerdict:
    opts = parse_pgrep(argv, bsd=ctx.bsd)
    sig = opts.signal or _default_signal(ctx, "TERM")
    v = _new_verdict(ctx, "pkill", sig, pattern=opts.patterns[0] if opts.patterns else None)
    opts.patterns = [_expand(ctx, p, v) for p in opts.patterns]
    _pgrep_into(ctx, v, opts, argv, kind="pkill", stop_at_own_shell=False)
    return v


def _pgrep_into(
    ctx: _Ctx, v: KillVerdict, opts: PgrepOptions, argv: list[str], *, kind: str, stop_at_own_shell: bool,
) -> None:
    written = _as_written(argv)
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
        v.generic = True
        v.notes.append(f"the pattern selects every `{generic}` process, not one server")
    _add_matches(ctx, v, res.matches, written, opts.full, kind, stop_at_own_shell)
    _note_spared(ctx, v, res, written)
    _note_exec_spared(ctx, v, opts.full, opts.patterns, opts.icase, opts.exact)
    for vic in v.victims:
        if vic.process.kind == "ssh-client":
            v.notes.append(
                f"{vic.process.describe()} is a local ssh client whose argv holds its remote command: killing it "
                "does not stop a nohup'd remote process"
            )


# ---------------------------------------------------------------- kill (builtin, /bin/kill, xargs)


@dataclass(slots=True)
class _PidSource:
    mechanism: Mechanism
    matches: list[Match]
    pattern: str | None = None
    full: bool = True
    written: str = ""
    invalid: bool = False
    generic: str | None = None
    notes: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)


def _kill(ctx: _Ctx, argv: list[str], *, external: bool, piped: bool) -> KillVerdict | None:
    sig, targets, err = _parse_kill_args(argv[1:], ctx.bsd)
    if err == "list":
        return None
    if piped and err == "usage: no PID given":
        err = None  # xargs appends the PIDs it reads
    v = _new_verdict(ctx, "kill", sig or _default_signal(ctx, "TERM"), targets=targets)
    if err:
        v.notes.append(f"kill: {err}: nothing is signalled")
        return v
    if v.signal == 0:
        v.notes.append("signal 0 only checks that the processes exist: nothing is killed")
    sources: list[_PidSource] = []
    if piped:
        upstream = _pipeline_before(ctx)
        if upstream:
            sources.append(_pid_source(ctx, upstream))
        else:
            v.unresolved.append("stdin")
            v.notes.append("xargs kill reads PIDs from stdin, whose producer is not visible here")
    substs = _substitutions_before(ctx)
    sub_iter = iter(substs)
    pids: list[int] = []
    pgids: list[int] = []
    for t in targets:
        if t.startswith("$(") or t.startswith("`") or ("$(" in t):
            group = next(sub_iter, None)
            if group is not None:
                sources.append(_pid_source(ctx, group))
            else:
                v.unresolved.append(t)
            continue
        if t in ("%%", "%+", "%-") or t.startswith("%") or t == "$!" or t.startswith("$(jobs"):
            sources.append(_job_source(ctx, t))
            continue
        if "$" in t:
            assigned = _assigned_substitution(ctx, t)
            if assigned is not None:
                sources.append(_pid_source(ctx, assigned))
                v.notes.append(f"{t} was assigned from `$({_as_written(assigned[0].effective_argv, 40)} …)` earlier "
                               "in this command")
            else:
                v.unresolved.append(t)
            continue
        if re.fullmatch(r"-?\d+", t):
            n = int(t)
            if n == -1:
                sources.append(_everything_source(ctx))
            elif n < 0:
                pgids.append(-n)
            else:
                pids.append(n)
            continue
        v.unresolved.append(t)
    if pids or pgids:
        sources.append(_explicit_source(ctx, pids, pgids))
    main = next((s for s in sources if s.mechanism != "kill"), None)
    if main is not None:
        v.mechanism = "xargs-kill" if (piped and main.mechanism == "kill-pgrep") else main.mechanism
        v.pattern = main.pattern
    elif piped:
        v.mechanism = "xargs-kill"
    if v.unresolved:
        v.notes.append(f"PIDs from {', '.join(v.unresolved)} are unknown here")
    if v.signal == 0:
        return v
    matches: list[Match] = []
    seen: set[int] = set()
    written = ""
    full = True
    for s in sources:
        v.notes.extend(n for n in s.notes if n not in v.notes)
        v.unresolved.extend(u for u in s.unresolved if u not in v.unresolved)
        if s.invalid:
            v.invalid_pattern = True
        if s.generic:
            v.generic = True
            v.notes.append(f"the PID list selects every `{s.generic}` process, not one server")
        written = written or s.written
        full = full and s.full
        for m in s.matches:
            if id(m.candidate) not in seen:
                seen.add(id(m.candidate))
                matches.append(m)
    if not external:
        v.notes.append("kill is a bash builtin here: the shell itself signals each PID in turn")
    _add_matches(ctx, v, matches, written or _as_written(argv), full, "kill", stop_at_own_shell=not external)
    return v


def _parse_kill_args(args: list[str], bsd: bool) -> tuple[tuple[int, str] | None, list[str], str | None]:
    sig: tuple[int, str] | None = None
    i = 0
    targets: list[str] = []
    while i < len(args):
        a = args[i]
        if a == "--":
            targets.extend(args[i + 1 :])
            break
        if a in ("-l", "-L", "--list", "--table"):
            return None, [], "list"
        if a in ("-s", "-n", "--signal") and i + 1 < len(args):
            sig = parse_signal(args[i + 1], bsd)
            if sig is None:
                return None, [], f"invalid signal specification {args[i + 1]}"
            i += 2
            continue
        if a.startswith("--signal="):
            sig = parse_signal(a.split("=", 1)[1], bsd)
            i += 1
            continue
        if a.startswith("-") and len(a) > 1 and sig is None and not targets:
            got = parse_signal(a[1:], bsd)
            if got is not None:
                sig = got
                i += 1
                continue
            if a[1:].isdigit():
                targets.append(a)  # a process group
                i += 1
                continue
            return None, [], f"invalid signal specification {a}"
        targets.append(a)
        i += 1
    if not targets:
        return sig, [], "usage: no PID given"
    return sig, targets, None


def _pipeline_before(ctx: _Ctx) -> list[SimpleCommand]:
    """The pipeline members before ``cmd`` (``pgrep -f X | xargs kill``), first first."""
    cmd = ctx.cmd
    if cmd.connector not in ("|", "|&"):
        return []
    same = [c for c in ctx.script.commands
            if c.shells == cmd.shells and c.host == cmd.host and c.container == cmd.container
            and c.position < cmd.position and ("substitution" in c.contexts) == ("substitution" in cmd.contexts)]
    members: list[SimpleCommand] = []
    expect_pipe = True
    for c in reversed(same):
        if not expect_pipe:
            break
        members.append(c)
        expect_pipe = c.connector in ("|", "|&")
    return list(reversed(members))


def _substitutions_before(ctx: _Ctx) -> list[list[SimpleCommand]]:
    """The ``$(…)`` pipelines run just before ``cmd`` for its arguments, in order."""
    cmd = ctx.cmd
    run: list[SimpleCommand] = []
    for c in reversed([c for c in ctx.script.commands if c.position < cmd.position]):
        if "substitution" not in c.contexts or c.host != cmd.host or c.shells != cmd.shells:
            break
        run.append(c)
    run.reverse()
    groups: list[list[SimpleCommand]] = []
    for c in run:
        if groups and c.connector in ("|", "|&"):
            groups[-1].append(c)
        else:
            groups.append([c])
    return groups


def _assigned_substitution(ctx: _Ctx, word: str) -> list[SimpleCommand] | None:
    """``PID=$(pgrep -f x); kill $PID``: the substitution pipeline assigned to the variable.

    The parser has no assignment-only statements, so we find ``NAME=$(`` in the text and pair it
    with the substitution pipelines, of the same shell, that no command consumed."""
    m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", word.strip('"'))
    if m is None:
        return None
    name = m.group(1)
    hits = [a.end() for a in re.finditer(rf"(?<![\w$]){name}=(?:\$\(|`)", ctx.script.source)]
    if not hits:
        return None
    cmd = ctx.cmd
    before = [c for c in ctx.script.commands if c.position < cmd.position and c.shells == cmd.shells
              and c.host == cmd.host and c.container == cmd.container]
    orphans: list[list[SimpleCommand]] = []
    for i, c in enumerate(before):
        if "substitution" not in c.contexts:
            continue
        if orphans and c.connector in ("|", "|&") and orphans[-1][-1] is before[i - 1]:
            orphans[-1].append(c)
            continue
        nxt = next((d for d in before[i + 1 :] if "substitution" not in d.contexts), cmd)
        if not any("$(" in a or "`" in a for a in nxt.argv):
            orphans.append([c])
    for group in reversed(orphans):
        head = group[0].argv[0] if group[0].argv else ""
        if any(ctx.script.source.startswith(head, h) or ctx.script.source[h : h + 40].lstrip().startswith(head)
               for h in hits):
            return group
    return None


def _pid_source(ctx: _Ctx, pipeline: list[SimpleCommand]) -> _PidSource:
    """What a PID-producing pipeline outputs: pgrep, lsof -t, nvidia-smi, ps | grep | awk, pidof."""
    head = pipeline[0]
    rest = pipeline[1:]
    name = head.name
    eff = list(head.effective_argv)
    narrowing = [c for c in rest if c.name in ("head", "tail", "sed", "sort", "shuf")]
    notes = [f"`{_as_written(c.effective_argv, 30)}` may keep only some PIDs: every candidate is listed"
             for c in narrowing if c.name in ("head", "tail", "sed")]
    if name == "pgrep":
        opts = parse_pgrep(eff, bsd=ctx.bsd)
        tmp = _new_verdict(ctx, "kill-pgrep", (15, "TERM"))
        opts.patterns = [_expand(ctx, p, tmp) for p in opts.patterns]
        src = _PidSource("kill-pgrep", [], pattern=opts.patterns[0] if opts.patterns else None, full=opts.full,
                         written=_as_written(eff), notes=notes + opts.notes, unresolved=tmp.unresolved)
        if opts.error:
            src.notes.append(f"pgrep: {opts.error}: it prints nothing, so nothing is killed")
            return src
        res = match_pgrep(opts, ctx.candidates(), bsd=ctx.bsd)
        src.matches, src.invalid = res.matches, res.invalid
        src.notes.extend(res.notes)
        for m in res.spared_ancestors:
            link = ctx.link(m.candidate)
            who = link.description if link is not None else m.candidate.process.describe()
            src.notes.append(f"pgrep also matches {who}, but excludes its ancestors here")
        src.generic = is_generic_pattern(opts.patterns, icase=opts.icase, exact=opts.exact)
        if not ctx.bsd and any(m.candidate.link_index is not None for m in res.matches):
            src.notes.append("pgrep excludes only itself: the calling shell is in its list")
        return src
    if name == "lsof":
        return _lsof_source(ctx, eff, notes)
    if name == "nvidia-smi":
        gpu = [Match(c, cmdline_subject(c.process), None) for c in ctx.candidates() if _uses_gpu(c.process)]
        return _PidSource("nvidia-smi-kill", gpu, written=_as_written(eff), generic="GPU",
                          notes=[*notes, "nvidia-smi lists every process with a CUDA context on any GPU"])
    if name == "ps":
        return _ps_source(ctx, eff, rest, notes)
    if name == "pidof":
        names = [a for a in eff[1:] if not a.startswith("-")]
        ms = [Match(c, c.process.comm, None) for c in ctx.candidates()
              if c.process.comm in names or (c.process.argv and os.path.basename(c.process.argv[0]) in names)]
        return _PidSource("pidof-kill", ms, pattern=" ".join(names), full=False, written=_as_written(eff),
                          generic=is_generic_pattern([f"^({'|'.join(map(re.escape, names))})$"]) if names else None,
                          notes=notes)
    if name == "cat" or (head.redirects and name in ("", "cat")):
        return _PidSource("kill", [], written=_as_written(eff), unresolved=[f"$({' '.join(eff)})"],
                          notes=["PIDs read from a file: unknown here"])
    if name == "jobs":
        return _job_source(ctx, "$(jobs -p)")
    return _PidSource("kill", [], written=_as_written(eff), unresolved=[f"$({' '.join(eff)})"],
                      notes=[f"PIDs come from `{_as_written(eff, 40)}`, which is not modelled"])


def _uses_gpu(p: Process) -> bool:
    return p.kind == "gpu" or any(fnmatch.fnmatchcase(f, _GPU_GLOB) and f[11:12].isdigit() for f in p.open_files)


def _lsof_source(ctx: _Ctx, argv: list[str], notes: list[str]) -> _PidSource:
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
    return _PidSource("lsof-kill", ms, pattern=None, written=_as_written(argv), notes=notes + extra)


def _ps_source(ctx: _Ctx, argv: list[str], rest: list[SimpleCommand], notes: list[str]) -> _PidSource:
    """``ps … | grep P | grep -v grep | awk '{print $2}'``: ps lists every process with its command
    line, grep filters lines. The calling shell's own line contains the pattern too."""
    lines = [(c, cmdline_subject(c.process)) for c in ctx.candidates()]
    spans: dict[int, tuple[int, int] | None] = {}
    src = _PidSource("ps-grep-kill", [], written="", full=True, notes=[
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
    src.written = " | ".join(_as_written(c.effective_argv, 40) for c in rest) or _as_written(argv)
    if not filters:
        src.notes.append("no grep filter: every process ps lists would be signalled")
    src.matches = kept
    src.generic = is_generic_pattern([f.pattern for f in positive if f.mode != "fixed"]) if positive else "every"
    if any(f.invert and f.pattern == "grep" for f in filters):
        src.notes.append("`grep -v grep` also drops the calling shell's own line when its text contains 'grep'")
    return src


def _job_source(ctx: _Ctx, target: str) -> _PidSource:
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
    src = _PidSource("kill", [], written=f"kill {target}")
    argvs = {tuple(c.effective_argv) for c in chosen}
    for cand in ctx.candidates():
        if cand.process.argv in argvs and host_key(cand.process.host) == host_key(cmd.host):
            src.matches.append(Match(cand, cmdline_subject(cand.process), None))
    if not chosen:
        src.unresolved.append(target)
        src.notes.append(f"{target} refers to a background job of this shell that is not visible here "
                         "(a new shell per tool call has no jobs from earlier calls)")
    return src


def _everything_source(ctx: _Ctx) -> _PidSource:
    ms = [Match(c, cmdline_subject(c.process), None) for c in ctx.candidates()]
    return _PidSource("kill", ms, written="kill -1", generic="every",
                      notes=["kill -1 signals every process the caller may signal (all of them as root)"])


def _explicit_source(ctx: _Ctx, pids: list[int], pgids: list[int]) -> _PidSource:
    src = _PidSource("kill", [], written="")
    by_pid = {c.process.pid: c for c in ctx.candidates() if c.process.pid is not None}
    for pid in pids:
        cand = by_pid.get(pid)
        if cand is None:
            src.notes.append(f"PID {pid} is not a process known here")
            continue
        src.matches.append(Match(cand, str(pid), None))
    for pgid in pgids:
        members = [c for c in ctx.candidates() if c.process.pgid == pgid]
        if not members:
            leader = by_pid.get(pgid)
            if leader is not None:
                members = [leader, *(c for c in ctx.candidates() if c.process.ppid == pgid)]
                src.notes.append(f"process group {pgid}: its leader and children stand in for the group "
                                 "(group ids unknown)")
        for cand in members:
            src.matches.append(Match(cand, f"-{pgid}", None))
        if not members:
            src.notes.append(f"process group {pgid} has no process known here")
    return src


# ---------------------------------------------------------------- killall


def _killall(ctx: _Ctx, argv: list[str]) -> KillVerdict:
    opts = parse_killall(argv, bsd=ctx.bsd)
    sig = opts.signal or _default_signal(ctx, "TERM")
    v = _new_verdict(ctx, "killall", sig, pattern=" ".join(opts.names) or None, targets=list(opts.names))
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
        v.generic = True
        v.notes.append(f"killall {generic} hits every `{generic}` process on the host")
    written = _as_written(argv)
    _add_matches(ctx, v, res.matches, written, False, "killall")
    if opts.pgroup:
        v.notes.append("killall -g signals the whole process group of each match")
        groups = {m.candidate.process.pgid for m in res.matches if m.candidate.process.pgid is not None}
        have = {id(x.process) for x in v.victims}
        for cand in ctx.candidates():
            if cand.process.pgid in groups and id(cand.process) not in have:
                v.victims.append(Victim(process=cand.process, reason=f"{written} -g: same process group as a match"))
    if not v.victims and not opts.regex:
        near = [c.process for c in ctx.candidates()
                if any(c.process.comm.startswith(n) or n in cmdline_subject(c.process) for n in opts.names)]
        if near:
            v.notes.append(
                "killall matches the exact process name: " + ", ".join(sorted({p.comm for p in near})[:5])
                + " do not match " + ", ".join(opts.names)
            )
    _note_exec_spared_names(ctx, v, opts.names)
    return v


def _note_exec_spared_names(ctx: _Ctx, v: KillVerdict, names: list[str]) -> None:
    for link in ctx.chain():
        if not link.alive and link.frame is not None and link.process.comm in names:
            v.notes.append(f"{link.description} has that name too, but it is gone: {link.gone_because}")


# ---------------------------------------------------------------- fuser


def _fuser(ctx: _Ctx, argv: list[str]) -> KillVerdict | None:
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
            got = parse_signal(a[1:], ctx.bsd) if (a[1].isupper() or a[1:].isdigit()) else None
            if got is not None:
                sig = got
                continue
            kill = kill or "k" in a[1:]
            mount = mount or "m" in a[1:] or "M" in a[1:]
            if a[1:] == "s" and ctx.bsd and i < len(args):
                sig = parse_signal(args[i], ctx.bsd)
                i += 1
            continue
        names.append(a)
    if not kill:
        return None
    sig = sig or _default_signal(ctx, "KILL")
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
    v = _new_verdict(ctx, mech, sig, targets=list(names))
    if ctx.bsd and ports:
        v.notes.append("BSD/macOS fuser takes only files: PORT/tcp names no socket there")
        ports = []
    seen: set[int] = set()
    for cand in ctx.candidates():
        p = cand.process
        hit_ports = [port for port in ports if port in p.ports]
        if hit_ports:
            v.victims.append(Victim(process=p, reason=f"fuser -k {hit_ports[0]}/tcp: it holds a socket on local port {hit_ports[0]}",
                                    ancestor=cand.ancestor))
            seen.add(id(p))
            continue
        for f in files:
            held = [o for o in p.open_files if (fnmatch.fnmatchcase(o, f) if _is_glob(f) else o == f or (mount and o.startswith(f.rstrip("/") + "/")))]
            if held and id(p) not in seen:
                v.victims.append(Victim(process=p, reason=f"fuser -k {f}: it has {held[0]} open", ancestor=cand.ancestor))
                seen.add(id(p))
                break
    if any(fnmatch.fnmatchcase("/dev/nvidia0", f) or f.startswith("/dev/nvidia") for f in files):
        v.generic = True
        v.notes.append("fuser -k /dev/nvidia* hits every process using any GPU (CUDA jobs of every user, "
                       "nvidia-persistenced, exporters, Xorg), not one server")
    if mount:
        v.generic = True
        v.notes.append("fuser -m hits every process using the whole filesystem")
    if ports:
        v.notes.append("fuser -k PORT/tcp hits every process holding a socket on that local port (forked workers "
                       "too), not clients; inside Docker the host port is held by docker-proxy")
    if files and not ctx.bsd:
        v.notes.append("fuser also matches by cwd, executable and mmap, which are not tracked here")
    return v


def _is_glob(s: str) -> bool:
    return any(ch in s for ch in "*?[")


# ---------------------------------------------------------------- systemd, launchd


_UNIT_SUFFIXES = (".service", ".socket", ".target", ".timer", ".scope", ".slice", ".mount", ".path", ".device", ".swap", ".automount")


def _unit_name(name: str) -> str:
    """``sglang`` -> ``sglang.service`` (systemctl's own completion of a bare name)."""
    name = name.strip()
    return name if name.endswith(_UNIT_SUFFIXES) else name + ".service"


def _systemctl(ctx: _Ctx, argv: list[str]) -> KillVerdict | None:
    prog = os.path.basename(argv[0])
    args = argv[1:]
    verb: str | None = None
    units: list[str] = []
    sig: tuple[int, str] | None = None
    remote: str | None = None
    now = False
    takes = {"-H", "--host", "-M", "--machine", "-s", "--signal", "-t", "--type", "-p", "--property",
             "--kill-whom", "--kill-who", "-n", "--lines", "-o", "--output", "--root", "--job-mode", "--state"}
    if prog == "service" and len(args) >= 2:  # service NAME ACTION
        units, verb = [args[0]], args[1]
    else:
        i = 0
        while i < len(args):
            a = args[i]
            i += 1
            if a in takes and i < len(args):
                if a in ("-s", "--signal"):
                    sig = parse_signal(args[i])
                if a in ("-H", "--host"):
                    remote = args[i]
                i += 1
                continue
            if a.startswith("--signal="):
                sig = parse_signal(a.split("=", 1)[1])
                continue
            if a.startswith("--host="):
                remote = a.split("=", 1)[1]
                continue
            if a == "--now":
                now = True
                continue
            if a.startswith("-"):
                continue
            if verb is None:
                verb = a
            else:
                units.append(a)
    killing = {"stop", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart", "kill",
               "condrestart", "force-reload"}
    if verb is None or not (verb in killing or (verb in ("disable", "mask") and now)):
        return None
    if verb == "kill":
        sig = sig or (15, "TERM")
    v = _new_verdict(ctx, "systemctl", sig or (15, "TERM"), targets=[_unit_name(u) for u in units])
    if remote:
        v.host = remote
        v.notes.append(f"systemctl -H {remote} acts on that host")
    hk = host_key(remote if remote else ctx.cmd.host)
    wanted = [_unit_name(u) for u in units]
    for p in ctx.processes:
        if p.unit is None or host_key(p.host) != hk:
            continue
        unit = _unit_name(p.unit)
        hit = next((w for w in wanted if fnmatch.fnmatchcase(unit, w)), None)
        if hit:
            how = "kills every process in" if verb == "kill" else "stops"
            v.victims.append(Victim(process=p, reason=f"systemctl {verb} {hit} {how} its unit ({unit}); with the "
                                    "default KillMode=control-group every process of the unit dies"))
    if verb in ("restart", "try-restart", "reload-or-restart", "try-reload-or-restart", "condrestart", "force-reload"):
        v.notes.append(f"systemctl {verb}: the unit's processes die, then a new instance starts")
    elif verb == "stop":
        v.notes.append("systemctl stop sends SIGTERM, then SIGKILL after TimeoutStopSec (90 s by default)")
    if not v.victims:
        v.notes.append("no known process runs in " + ", ".join(wanted or ["that unit"]))
    return v


def _launchctl(ctx: _Ctx, argv: list[str]) -> KillVerdict | None:
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
    v = _new_verdict(ctx, "launchctl", sig, targets=labels)
    for p in ctx.processes:
        if p.unit is not None and host_key(p.host) == host_key(ctx.cmd.host) and p.unit in labels:
            v.victims.append(Victim(process=p, reason=f"launchctl {verb} {p.unit} stops the launchd job running it"))
    if verb == "kickstart":
        v.notes.append("launchctl kickstart -k kills the job and starts it again")
    return v


# ---------------------------------------------------------------- docker, tmux, screen


def _docker(ctx: _Ctx, argv: list[str]) -> KillVerdict | None:
    prog = os.path.basename(argv[0])
    args = argv[1:]
    global_takes = {"-H", "--host", "--context", "-c", "--config", "-l", "--log-level"}
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in global_takes else 1
    compose = prog in ("docker-compose", "podman-compose")
    if not compose and i < len(args) and args[i] == "compose":
        compose = True
        i += 1
    if compose:
        return _compose(ctx, argv, args[i:])
    if i < len(args) and args[i] in ("container", "containers"):
        i += 1
    if i >= len(args):
        return None
    verb = args[i]
    rest = args[i + 1 :]
    if verb not in ("stop", "kill", "rm", "restart"):
        return None
    names: list[str] = []
    force = False
    sig: tuple[int, str] | None = None
    j = 0
    while j < len(rest):
        a = rest[j]
        j += 1
        if a in ("-t", "--time", "--timeout"):
            j += 1
            continue
        if a in ("-s", "--signal") and j < len(rest):
            sig = parse_signal(rest[j])
            j += 1
            continue
        if a.startswith("--signal="):
            sig = parse_signal(a.split("=", 1)[1])
            continue
        if a.startswith("-"):
            force = force or a in ("-f", "--force") or (a.startswith("-") and not a.startswith("--") and "f" in a)
            continue
        names.append(a)
    default = {"stop": "TERM", "kill": "KILL", "rm": "KILL", "restart": "TERM"}[verb]
    v = _new_verdict(ctx, "docker", sig or _default_signal(ctx, default), targets=names)
    if verb == "rm" and not force:
        v.notes.append("docker rm without -f refuses to remove a running container: nothing is killed")
        return v
    wanted: list[str] = []
    for n in names:
        if n.startswith("$(") or n.startswith("`"):
            wanted.extend(_docker_ps_filter(ctx, v, n))
        elif "$" in n:
            v.unresolved.append(n)
        else:
            wanted.append(n.lstrip("/"))
    hk = host_key(ctx.cmd.host)
    for p in ctx.processes:
        if p.container is None or host_key(p.host) != hk:
            continue
        ctr = p.container.lstrip("/")
        hit = next((w for w in wanted if _container_matches(ctr, w)), None)
        if hit is not None:
            v.victims.append(Victim(process=p, reason=f"docker {verb} {hit or 'every container'}: it runs in "
                                    f"container {ctr}"))
    if verb == "stop":
        v.notes.append("docker stop sends SIGTERM to the container's PID 1, then SIGKILL after 10 s")
    if verb == "restart":
        v.notes.append("docker restart: the container's processes die, then it starts again")
    return v


def _container_matches(container: str, wanted: str) -> bool:
    if wanted == "*":
        return True
    if wanted.startswith("~"):  # a name filter from `docker ps --filter name=X`
        return re.search(wanted[1:], container) is not None
    return container == wanted or (len(wanted) >= 3 and re.fullmatch(r"[0-9a-f]+", wanted) is not None
                                   and container.startswith(wanted))


def _docker_ps_filter(ctx: _Ctx, v: KillVerdict, word: str) -> list[str]:
    """``$(docker ps -q --filter name=X)`` -> every container whose name matches X."""
    m = re.search(r"(?:--filter|-f)[ =]name=([^\s)`'\"]+)", word)
    if "docker ps" not in word and "docker container ls" not in word:
        v.unresolved.append(word)
        return []
    if m:
        v.notes.append(f"containers from `{word}`: every container whose name matches {m.group(1)}")
        return ["~" + m.group(1)]
    v.generic = True
    v.notes.append(f"`{word}` lists every running container")
    return ["*"]


def _compose(ctx: _Ctx, argv: list[str], args: list[str]) -> KillVerdict | None:
    project: str | None = None
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-p", "--project-name") and i + 1 < len(args):
            project = args[i + 1]
        i += 2 if args[i] in ("-f", "--file", "-p", "--project-name", "--env-file", "--profile",
                              "--project-directory") else 1
    if i >= len(args):
        return None
    verb = args[i]
    if verb not in ("down", "stop", "kill", "restart", "rm"):
        return None
    rest = args[i + 1 :]
    if verb == "rm" and not any(a in ("-s", "--stop") or (a.startswith("-") and "s" in a and not a.startswith("--"))
                                for a in rest):
        return None
    services = [a for a in rest if not a.startswith("-")]
    v = _new_verdict(ctx, "docker-compose", (9, "KILL") if verb == "kill" else (15, "TERM"),
                     targets=services or ["(all services)"])
    hk = host_key(ctx.cmd.host)
    rx = re.compile(r"^(?P<project>.+?)[-_](?P<service>.+)[-_](?P<n>\d+)$")
    for p in ctx.processes:
        if p.container is None or host_key(p.host) != hk:
            continue
        m = rx.match(p.container.lstrip("/"))
        if not m or (project and m.group("project") != project):
            continue
        if services and m.group("service") not in services:
            continue
        v.victims.append(Victim(process=p, reason=f"docker compose {verb}: it runs in compose container "
                                f"{p.container} (service {m.group('service')})"))
    if project is None:
        v.notes.append("the compose project is not named (-p): containers are matched by their "
                       "<project>-<service>-<n> names, so other projects' services of the same name are listed too")
    return v


def _tmux_target(target: str, sessions: list[str]) -> list[str]:
    """tmux's session lookup: ``=name`` exact; else exact, else unique prefix, else fnmatch."""
    target = target.split(":", 1)[0]
    if target.startswith("="):
        return [s for s in sessions if s == target[1:]]
    if target in sessions:
        return [target]
    pre = [s for s in sessions if s.startswith(target)]
    if len(pre) == 1:
        return pre
    return [s for s in sessions if fnmatch.fnmatchcase(s, target)]


def _tmux(ctx: _Ctx, argv: list[str]) -> KillVerdict | None:
    args = argv[1:]
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-L", "-S", "-f", "-c", "-T") else 1
    if i >= len(args):
        return None
    verb = args[i]
    verbs = {"kill-session", "kill-server", "kill-window", "kill-pane", "killw", "killp"}
    if verb not in verbs:
        return None
    rest = args[i + 1 :]
    target = next((rest[k + 1] for k, a in enumerate(rest) if a == "-t" and k + 1 < len(rest)), None)
    others = "-a" in rest
    v = _new_verdict(ctx, "tmux", (1, "HUP"), targets=[target] if target else [])
    hk = host_key(ctx.cmd.host)
    procs = [p for p in ctx.processes if p.tmux_session is not None and host_key(p.host) == hk]
    sessions = sorted({p.tmux_session for p in procs if p.tmux_session})
    if verb == "kill-server":
        chosen = sessions
    elif target is None:
        v.unresolved.append("current session")
        v.notes.append(f"tmux {verb} without -t acts on the current (or most recent) session: unknown here")
        chosen = []
    else:
        chosen = _tmux_target(target, sessions)
        if others:
            chosen = [s for s in sessions if s not in chosen]
    if verb not in ("kill-session", "kill-server"):
        v.notes.append(f"tmux {verb} closes one window/pane: every process of the session is listed")
    for p in procs:
        if p.tmux_session in chosen:
            v.victims.append(Victim(process=p, reason=f"tmux {verb} closes session {p.tmux_session}, which runs it"))
    v.notes.append("tmux hangs up the pane's terminal (SIGHUP): processes started with nohup or setsid survive")
    return v


def _screen(ctx: _Ctx, argv: list[str]) -> KillVerdict | None:
    args = argv[1:]
    if "-X" not in args:
        return None
    cmd_words = args[args.index("-X") + 1 :]
    if not cmd_words or cmd_words[0] not in ("quit", "kill"):
        return None
    name = next((args[k + 1] for k, a in enumerate(args) if a == "-S" and k + 1 < len(args)), None)
    v = _new_verdict(ctx, "screen", (1, "HUP"), targets=[name] if name else [])
    hk = host_key(ctx.cmd.host)
    for p in ctx.processes:
        if p.tmux_session is None or host_key(p.host) != hk:
            continue
        sess = p.tmux_session
        if name is not None and (sess == name or sess.split(".", 1)[-1] == name):
            v.victims.append(Victim(process=p, reason=f"screen -S {name} -X {cmd_words[0]} ends the session running it"))
    if name is None:
        v.unresolved.append("current session")
    return v
