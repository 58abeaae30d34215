"""kill by PID and job: the bash builtin, ``/bin/kill``, ``… | xargs kill`` and ``kill $(…)``.

The PIDs come from the sources of :mod:`analyzer.shell.kill.pid_sources`; the builtin ``kill``
signals them in order and stops at its own shell (shell-semantics §10 step 4).
"""

from __future__ import annotations

import os
import re

from analyzer.shell.kill.chain import is_builtin_step
from analyzer.shell.kill.context import KillContext, as_written
from analyzer.shell.kill.hits import add_matches
from analyzer.shell.kill.match import Match
from analyzer.shell.kill.model import KillVerdict
from analyzer.shell.kill.pid_sources import (
    PidSource,
    everything_source,
    explicit_source,
    job_source,
    pid_source,
)
from analyzer.shell.kill.signals import parse_signal
from analyzer.shell.model import SimpleCommand

__all__ = ["judge_kill", "kill_pids"]


def judge_kill(ctx: KillContext, argv: list[str]) -> KillVerdict | None:
    """``kill [-SIG] PID…`` as the builtin, as ``/bin/kill``, or fed by ``xargs``."""
    cmd = ctx.cmd
    under_xargs = "xargs" in [os.path.basename(w) for w in cmd.wrappers] or cmd.name == "xargs"
    return kill_pids(ctx, argv, external=under_xargs or not is_builtin_step(cmd), piped=under_xargs)


def kill_pids(ctx: KillContext, argv: list[str], *, external: bool, piped: bool) -> KillVerdict | None:
    """The verdict of ``kill``; ``external``: not the shell's builtin; ``piped``: PIDs from stdin."""
    sig, targets, err = _parse_kill_args(argv[1:], ctx.bsd)
    if err == "list":
        return None
    if piped and err == "usage: no PID given":
        err = None  # xargs appends the PIDs it reads
    v = ctx.verdict("kill", sig or ctx.default_signal("TERM"), targets=targets)
    if err:
        v.notes.append(f"kill: {err}: nothing is signalled")
        return v
    if v.signal == 0:
        v.notes.append("signal 0 only checks that the processes exist: nothing is killed")
    sources: list[PidSource] = []
    if piped:
        upstream = _pipeline_before(ctx)
        if upstream:
            sources.append(pid_source(ctx, upstream))
        else:
            v.unresolved.append("stdin")
            v.notes.append("xargs kill reads PIDs from stdin, whose producer is not visible here")
    sub_iter = iter(_substitutions_before(ctx))
    pids: list[int] = []
    pgids: list[int] = []
    for t in targets:
        if t.startswith("$(") or t.startswith("`") or ("$(" in t):
            group = next(sub_iter, None)
            if group is not None:
                sources.append(pid_source(ctx, group))
            else:
                v.unresolved.append(t)
            continue
        if t in ("%%", "%+", "%-") or t.startswith("%") or t == "$!" or t.startswith("$(jobs"):
            sources.append(job_source(ctx, t))
            continue
        if "$" in t:
            assigned = _assigned_substitution(ctx, t)
            if assigned is not None:
                sources.append(pid_source(ctx, assigned))
                v.notes.append(f"{t} was assigned from `$({as_written(assigned[0].effective_argv, 40)} …)` earlier "
                               "in this command")
            else:
                v.unresolved.append(t)
            continue
        if re.fullmatch(r"-?\d+", t):
            n = int(t)
            if n == -1:
                sources.append(everything_source(ctx))
            elif n < 0:
                pgids.append(-n)
            else:
                pids.append(n)
            continue
        v.unresolved.append(t)
    if pids or pgids:
        sources.append(explicit_source(ctx, pids, pgids))
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
    for s in sources:
        v.notes.extend(n for n in s.notes if n not in v.notes)
        v.unresolved.extend(u for u in s.unresolved if u not in v.unresolved)
        if s.invalid:
            v.invalid_pattern = True
        if s.generic:
            v.mark_generic("every process using a GPU" if s.generic == "GPU" else f"every `{s.generic}` process")
            v.notes.append(f"the PID list selects every `{s.generic}` process, not one server")
        written = written or s.written
        for m in s.matches:
            if id(m.candidate) not in seen:
                seen.add(id(m.candidate))
                matches.append(m)
    if not external:
        v.notes.append("kill is a bash builtin here: the shell itself signals each PID in turn")
    add_matches(ctx, v, matches, written or as_written(argv), "kill", stop_at_own_shell=not external)
    return v


def _parse_kill_args(args: list[str], bsd: bool) -> tuple[tuple[int, str] | None, list[str], str | None]:
    """(signal, targets, error); the error ``list`` is ``kill -l``, which signals nothing."""
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


def _pipeline_before(ctx: KillContext) -> list[SimpleCommand]:
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


def _substitutions_before(ctx: KillContext) -> list[list[SimpleCommand]]:
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


def _assigned_substitution(ctx: KillContext, word: str) -> list[SimpleCommand] | None:
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
