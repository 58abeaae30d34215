"""Terminal sessions: ``tmux kill-session|kill-server|kill-window|kill-pane`` and ``screen -X quit``
hang up the session's terminal (SIGHUP): its processes die unless started with nohup or setsid.
"""

from __future__ import annotations

import fnmatch

from analyzer.shell.kill.chain import host_key
from analyzer.shell.kill.context import KillContext
from analyzer.shell.kill.model import Hit, HitReason, KillVerdict
from analyzer.shell.wrappers import scan_options

__all__ = ["judge_screen", "judge_tmux"]

_INTERRUPT_KEYS = frozenset({"C-c", "C-C", "^C", "^c"})
"""tmux's names of Ctrl-C (``^`` is the same modifier as ``C-``)."""
_SCREEN_CTRL_C = ("^C", "^c", "\\003")
"""Ctrl-C as ``screen -X stuff`` writes it."""
_TMUX_VERBS = frozenset({"kill-session", "kill-server", "kill-window", "kill-pane", "killw", "killp"})


def _tmux_target(target: str, sessions: list[str]) -> list[str]:
    """tmux's session lookup: ``=name`` exact; else exact, else unique prefix, else fnmatch. A target
    with no session part (``:1``) names the current session: none known here."""
    target = target.split(":", 1)[0]
    if not target.lstrip("="):
        return []
    if target.startswith("="):
        return [s for s in sessions if s == target[1:]]
    if target in sessions:
        return [target]
    pre = [s for s in sessions if s.startswith(target)]
    if len(pre) == 1:
        return pre
    return [s for s in sessions if fnmatch.fnmatchcase(s, target)]


def judge_tmux(ctx: KillContext, argv: list[str]) -> KillVerdict | None:
    """``tmux [-L socket] kill-session [-a] -t TARGET``, ``tmux kill-server``…"""
    args = argv[1:]
    i = scan_options(args, 0, "LSfcT")[0]
    if i >= len(args):
        return None
    verb = args[i]
    if verb in ("send-keys", "send"):
        return _interrupt(ctx, args[i + 1 :])
    if verb not in _TMUX_VERBS:
        return None
    rest = args[i + 1 :]
    target = next((rest[k + 1] for k, a in enumerate(rest) if a == "-t" and k + 1 < len(rest)), None)
    others = "-a" in rest
    v = ctx.verdict("tmux", (1, "HUP"), targets=[target] if target else [])
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
            why = HitReason(mechanism="tmux", matched="tmux session", verb=verb, target=target or "",
                            subject=p.tmux_session, signal_name=v.signal_name)
            v.victims.append(Hit(process=p, why=why))
    v.notes.append("tmux hangs up the pane's terminal (SIGHUP): processes started with nohup or setsid survive")
    return v


def _interrupt(ctx: KillContext, rest: list[str]) -> KillVerdict | None:
    """``tmux send-keys -t TARGET C-c``: the terminal sends SIGINT to the pane's foreground process,
    the server the session was started with or typed into it (keys after it may start another)."""
    target = next((rest[k + 1] for k, a in enumerate(rest) if a == "-t" and k + 1 < len(rest)), None)
    keys = [a for k, a in enumerate(rest) if not a.startswith("-") and (k == 0 or rest[k - 1] != "-t")]
    if "-l" in rest or not _INTERRUPT_KEYS & set(keys):
        return None  # `-l` sends the words literally: no control key
    v = ctx.verdict("tmux", (2, "INT"), targets=[target] if target else [])
    if target is None:
        v.unresolved.append("current session")
        v.notes.append("tmux send-keys without -t types into the current pane: unknown here")
        return v
    if target.startswith("%"):
        v.unresolved.append(target)
        v.notes.append(f"{target} is a tmux pane id, the server's own numbering, which no command here showed: "
                       "which pane it is is not known")
    hk = host_key(ctx.cmd.host)
    procs = [p for p in ctx.processes if p.tmux_session is not None and host_key(p.host) == hk]
    chosen = _tmux_target(target, sorted({p.tmux_session for p in procs if p.tmux_session}))
    for p in procs:
        if p.tmux_session in chosen:
            why = HitReason(mechanism="tmux", matched="tmux session", verb="send-keys", target=target,
                            subject=p.tmux_session, signal_name=v.signal_name)
            v.victims.append(Hit(process=p, why=why))
    v.notes.append("C-c interrupts the pane's foreground process only: one started with `&` in it runs on")
    return v


def judge_screen(ctx: KillContext, argv: list[str]) -> KillVerdict | None:
    """``screen -S NAME -X quit`` (or ``kill``), and ``-X stuff '^C'`` (an interrupt)."""
    args = argv[1:]
    if "-X" not in args:
        return None
    cmd_words = args[args.index("-X") + 1 :]
    # `-X stuff '^C'` types Ctrl-C into the window (screen reads ^X and \003 as control characters)
    interrupt = cmd_words[:1] == ["stuff"] and any(k in w for w in cmd_words[1:] for k in _SCREEN_CTRL_C)
    if not cmd_words or (cmd_words[0] not in ("quit", "kill") and not interrupt):
        return None
    name = next((args[k + 1] for k, a in enumerate(args) if a == "-S" and k + 1 < len(args)), None)
    v = ctx.verdict("screen", (2, "INT") if interrupt else (1, "HUP"), targets=[name] if name else [])
    hk = host_key(ctx.cmd.host)
    for p in ctx.processes:
        if p.tmux_session is None or host_key(p.host) != hk:
            continue
        sess = p.tmux_session
        if name is not None and (sess == name or sess.split(".", 1)[-1] == name):
            why = HitReason(mechanism="screen", matched="screen session", verb=cmd_words[0], target=name,
                            subject=sess, signal_name=v.signal_name)
            v.victims.append(Hit(process=p, why=why))
    if name is None:
        v.unresolved.append("current session")
    if interrupt:
        v.notes.append("^C interrupts the window's foreground process only: one started with `&` in it runs on")
    return v
