"""Matches in signal order become hits: which shells of the kill's own chain die, and what then.

Shared by the mechanisms that select by text (pkill, kill of a PID list, killall).
"""

from __future__ import annotations

import os

from analyzer.shell.ere import ere_span
from analyzer.shell.kill.chain import ChainLink
from analyzer.shell.kill.context import KillContext
from analyzer.shell.kill.match import Match, MatchResult, cmdline_subject
from analyzer.shell.kill.model import Fate, Hit, HitReason, KillVerdict
from analyzer.shell.kill.reasons import above_words
from analyzer.shell.kill.signals import STOPPING, is_fatal

_INTERACTIVE_IGNORES = frozenset({"TERM", "INT", "QUIT"})


def relays(link: ChainLink, sig_name: str) -> bool:
    """sudo forwards catchable signals to its command instead of dying."""
    return bool(link.process.argv) and os.path.basename(link.process.argv[0]) == "sudo" and sig_name not in (
        "KILL", "STOP")


def fate(link: ChainLink, sig_name: str) -> Fate:
    """What ``sig_name`` does to a process of the kill's own chain."""
    frame = link.frame
    if frame is not None and frame.interactive and sig_name in _INTERACTIVE_IGNORES:
        return "ignores"
    if sig_name in STOPPING:
        return "stops"
    if not is_fatal(sig_name):
        return "unharmed"
    if frame is None:
        return "relays" if relays(link, sig_name) else "dies"
    return "dies-with-its-commands"


def add_matches(
    ctx: KillContext, v: KillVerdict, matches: list[Match], written: str, kind: str,
    stop_at_own_shell: bool = False,
) -> None:
    """Turn matches (in signal order) into hits; mark the chain shells that die."""
    innermost = _innermost_alive(ctx)
    for m in sorted(matches, key=lambda m: m.candidate.order):
        link = ctx.link(m.candidate)
        why = HitReason(mechanism=v.mechanism, matched=m.matched, written=written, subject=m.subject, span=m.span,
                        program=kind, signal_name=v.signal_name)
        if link is not None:
            end = fate(link, v.signal_name)
            dies = end in ("dies", "dies-with-its-commands")
            v.victims.append(Hit(process=m.candidate.process, why=why.model_copy(update={"above": link.above, "fate": end}),
                                 frame=link.frame, ancestor=True))
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
            if relays(link, v.signal_name) and link.birth == ctx.cmd.position and not stop_at_own_shell:
                if rest:
                    v.notes.append(f"{kind} dies from the signal sudo relays before reaching {names}")
                break
            continue
        agent = m.candidate.process.kind == "agent"
        v.victims.append(Hit(process=m.candidate.process, why=why.model_copy(update={"agent": agent}),
                             ancestor=m.candidate.ancestor))
    _finish_self_kill(v)


def _innermost_alive(ctx: KillContext) -> ChainLink | None:
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


def who(ctx: KillContext, m: Match) -> str:
    """A matched process in words: its place above the kill, else its description."""
    link = ctx.link(m.candidate)
    return above_words(link.above) if link is not None else m.candidate.process.describe()


def note_spared(ctx: KillContext, v: KillVerdict, res: MatchResult, written: str) -> None:
    """Say which ancestors match but are spared (``-A``, BSD pkill without ``-a``)."""
    for m in res.spared_ancestors:
        why = "BSD pkill excludes its ancestors (no -a)" if ctx.bsd else "-A excludes its ancestors"
        v.notes.append(f"{written} also matches {who(ctx, m)}, but {why}")


def note_exec_spared(ctx: KillContext, v: KillVerdict, full: bool, patterns: list[str], icase: bool,
                     exact: bool) -> None:
    """Say when a shell of the chain would have matched but is gone because it exec'd the kill."""
    for link in ctx.chain():
        if link.alive or link.frame is None:
            continue
        subject = cmdline_subject(link.process) if full else link.process.comm
        if any(isinstance(ere_span(p, subject, icase=icase, exact=exact), tuple) for p in patterns):
            v.notes.append(f"{above_words(link.above)} matches too, but it is gone: {link.gone_because}")


def note_exec_spared_names(ctx: KillContext, v: KillVerdict, names: list[str]) -> None:
    """The same for killall's exact names."""
    for link in ctx.chain():
        if not link.alive and link.frame is not None and link.process.comm in names:
            v.notes.append(f"{above_words(link.above)} has that name too, but it is gone: {link.gone_because}")
