"""The processes a kill runs under: its shells, the wrappers between them, and which are alive.

A kill's own chain is the harness shell, then every shell ``cmd.shells`` lists (``bash -c``,
sshd's ``$SHELL -c``), then lingering wrappers (``sudo``, ``timeout``). A shell is gone when it
``exec``ed the command leading to the kill; whether it did is measured here for bash 5.2, zsh 5.9
and dash 0.5.12 (Debian 12):

* bash ``-c``: the last simple command of the string is exec'd when it is external, has no
  redirection, is not in a pipeline, group, loop or background, and is the right operand of the
  last top-level connection: ``a; b; K``, ``a && b && K``, ``a\\nK`` exec K, but ``a; b && K``,
  ``a & K`` and ``K >/dev/null`` do not (bash ≥ 5.1; 3.2 on macOS only execs a lone command);
* zsh ``-c``: the last simple external command is exec'd, whatever precedes it or redirects it;
* dash (Debian's ``/bin/sh``): never, not even a lone command;
* a script read from stdin (``bash -s``, ``ssh host bash <<EOF``) or a file: never.

Builtins (``kill``, ``echo``) are never exec'd, so ``bash -c 'kill $(pgrep -f X)'`` keeps its
shell alive to be listed by pgrep and signalled by itself (§11 B7).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from analyzer.shell.kill.model import Above, Process, comm_of
from analyzer.shell.model import ShellFrame, ShellScript, SimpleCommand
from analyzer.shell.platform import is_bsd_like

__all__ = ["ChainLink", "build_chain", "host_key", "is_builtin_step", "script_launches", "siblings_of"]

# bash/zsh builtins and keywords: running one never replaces the shell
_BUILTINS = frozenset({
    "kill", "echo", "printf", "cd", "pwd", "export", "unset", "set", "shift", "true", "false", ":", "test",
    "[", "[[", "read", "wait", "eval", "source", ".", "trap", "jobs", "disown", "local", "declare",
    "typeset", "let", "type", "hash", "alias", "unalias", "ulimit", "umask", "return", "exit", "break",
    "continue", "getopts", "readonly", "bg", "fg", "suspend", "history", "shopt", "setopt", "builtin",
    "command", "enable", "help", "times", "caller", "mapfile", "readarray", "pushd", "popd", "dirs",
})
# wrappers whose process stays (it forks the command and waits) and so is an ancestor of it
LINGERING = frozenset({
    "sudo", "timeout", "watch", "strace", "flock", "xargs", "su", "runuser", "script", "unbuffer",
    "parallel", "gtimeout", "ltrace", "valgrind", "perf", "screen",
})
# prefixes that do not start a process of their own
_NO_PROCESS = frozenset({"command", "builtin", "exec", "time", "noglob", "nocorrect"})


def host_key(host: str | None) -> str | None:
    """``root@10.1.2.3`` and ``10.1.2.3`` name the same machine; ports and case do not matter."""
    if host is None:
        return None
    h = host.rsplit("@", 1)[-1].strip().lower()
    if h.startswith("[") and "]" in h:
        return h[1 : h.index("]")]
    return h.split(":", 1)[0] if h.count(":") == 1 else h


_A_SHELL = Above(kind="shell")


@dataclass(slots=True)
class ChainLink:
    """One process above the kill: a shell frame or a lingering wrapper."""

    process: Process
    frame: ShellFrame | None
    """The shell frame (None for a wrapper process such as sudo)."""
    alive: bool
    """It exists when the kill runs (False: it exec'd the command that leads to the kill)."""
    gone_because: str | None = None
    harness: bool = False
    birth: int = -1
    """Position of the command that started it (-1: before this script ran): orders PIDs."""
    above: Above = _A_SHELL
    """What it is to the kill, as data (``reasons.above_words`` says it)."""


def is_builtin_step(cmd: SimpleCommand) -> bool:
    """The first process the command starts is the shell itself (a builtin such as ``kill``)."""
    first = next((w for w in cmd.wrappers if os.path.basename(w) not in _NO_PROCESS), None)
    return first is None and cmd.name in _BUILTINS


def siblings_of(cmd: SimpleCommand, script: ShellScript) -> list[SimpleCommand]:
    """Commands the same shell process runs (same frames, host and container), substitutions out."""
    return [
        c for c in script.commands
        if c.shells == cmd.shells and c.host == cmd.host and c.container == cmd.container
        and c.depth == cmd.depth and "substitution" not in c.contexts
    ]


def _flavor(frame: ShellFrame, platform: str) -> str:
    name = os.path.basename(frame.argv[0]).lstrip("-") if frame.argv else "bash"
    bsd = is_bsd_like(platform)
    if name == "sh":
        return "bash-lone" if bsd else "dash"  # macOS /bin/sh is bash 3.2; Debian's is dash
    if name == "bash":
        return "bash-lone" if bsd else "bash"
    if name == "zsh":
        return "zsh"
    if name in ("dash", "ash", "busybox"):
        return "dash"
    return "bash-lone"


def exec_replaces(frame: ShellFrame, step: SimpleCommand, siblings: list[SimpleCommand], platform: str) -> str | None:
    """Why ``frame`` no longer exists once ``step`` runs (it exec'd it), or None if it stays."""
    if "exec" in [os.path.basename(w) for w in step.wrappers]:
        return "the shell `exec`s it"
    if frame.interactive or is_builtin_step(step) or step.background or step.contexts:
        return None
    if not any(a.startswith("-") and not a.startswith("--") and "c" in a for a in frame.argv[1:3]):
        return None  # a script read from stdin or a file: the one-shot exec is for -c strings only
    flavor = _flavor(frame, platform)
    if flavor == "dash":
        return None
    later = [c for c in siblings if c.position > step.position]
    if later:
        return None
    top = [c for c in siblings if not c.contexts]
    if flavor == "zsh":
        return "zsh execs the last command of a -c string"
    if flavor == "bash-lone" or frame.execs_last:
        lone = len(siblings) == 1 and siblings[0] is step
        return "bash execs a lone simple command" if (lone or frame.execs_last) else None
    if step.redirects:
        return None
    if step.connector in (None, "\n", ";"):
        return "bash execs the last simple command of a -c string" if step.connector else "bash execs a lone simple command"
    if step.connector in ("&&", "||"):
        # the and-or list must be the whole last line: a ';' or '&' before it binds looser
        idx = next((i for i, c in enumerate(top) if c is step), None)
        if idx is None:
            return None
        for c in reversed(top[:idx]):
            if c.connector in (None, "\n"):
                return "bash execs the last command of a trailing && / || list"
            if c.connector not in ("&&", "||"):
                return None
        return "bash execs the last command of a trailing && / || list"
    return None


def _wrapper_processes(step: SimpleCommand, birth: int, as_launcher: bool = False) -> list[ChainLink]:
    """Lingering wrappers of ``step`` (``sudo``, ``timeout``…): each is a process whose argv is
    the rest of the command line from that word on. ``as_launcher``: ``step`` starts a nested
    shell, and its own program stays as that shell's parent when it forks (``su``, ``watch``)."""
    links: list[ChainLink] = []
    if as_launcher and os.path.basename(step.name) in LINGERING and step.effective_argv:
        eff = tuple(step.effective_argv)
        proc = Process(argv=eff, host=step.host, container=step.container, kind="other",
                       label=f"`{step.name}` process running `{' '.join(eff)[:50]}`")
        links.append(ChainLink(proc, None, True, birth=birth, above=Above(kind="launcher", name=step.name)))
    i = 0
    argv = step.argv
    while i < len(argv) and "=" in argv[i] and not argv[i].startswith("-"):
        i += 1  # VAR=value prefixes
    for w in step.wrappers:
        name = os.path.basename(w)
        j = next((k for k in range(i, len(argv)) if os.path.basename(argv[k]) == name), None)
        if j is None:
            continue
        i = j + 1
        if name not in LINGERING:
            continue
        proc = Process(
            argv=tuple(argv[j:]), host=step.host, container=step.container, kind="other",
            label=f"`{name}` wrapper of `{' '.join(argv[j:])[:50]}`",
        )
        links.append(ChainLink(proc, None, True, birth=birth, above=Above(kind="wrapper", name=name)))
    return links


def _frame_above(frame: ShellFrame, harness: bool) -> Above:
    if harness:
        return Above(kind="harness")
    if frame.via == "ssh":
        return Above(kind="remote-shell", host=frame.host)
    if frame.via == "su-c":
        return Above(kind="su-shell")
    if frame.via in ("tmux", "screen"):
        return Above(kind="session-shell", name=frame.via)
    return Above(kind="shell", name=" ".join(frame.argv[:2]))


def _frame_process(frame: ShellFrame, harness: bool, container: str | None) -> Process:
    argv = frame.argv or ("sh",)
    text = " ".join(argv)
    short = text if len(text) <= 60 else text[:57] + "…"
    return Process(
        argv=argv, host=frame.host, container=container, kind="shell", comm=comm_of(argv[0]),
        label=("agent wrapper shell: " if harness else "shell: ") + short,
    )


def build_chain(
    cmd: SimpleCommand, script: ShellScript, harness: ShellFrame | None, harness_wraps: bool, platform: str,
) -> list[ChainLink]:
    """The processes above ``cmd`` on its own host, outermost first, with which are alive."""
    frames = list(cmd.shells)
    # who launched each frame: walk the parent pointers (the command holding a nested script)
    launchers: list[SimpleCommand | None] = [None] * len(frames)
    node = cmd
    seen = 0
    while node.parent is not None and 0 <= node.parent < len(script.commands) and seen < 64:
        seen += 1
        par = script.commands[node.parent]
        level = len(par.shells)
        if level < len(frames) and launchers[level] is None:
            launchers[level] = par
        node = par
    links: list[ChainLink] = []
    local = cmd.host is None and cmd.container is None

    def visible(c: SimpleCommand | None) -> bool:
        return c is not None and c.host == cmd.host and c.container == cmd.container

    if harness is not None and local:
        step0 = launchers[0] if frames else cmd
        gone = None
        if step0 is not None and not harness_wraps:
            gone = exec_replaces(harness, step0, siblings_of(step0, script), platform)
        proc = _frame_process(harness, True, None)
        links.append(ChainLink(proc, harness, gone is None, gone, harness=True, birth=-1,
                               above=_frame_above(harness, True)))
    for k, frame in enumerate(frames):
        step = launchers[k + 1] if k + 1 < len(frames) else cmd
        launcher = launchers[k]
        birth = launcher.position if launcher is not None else -1
        if launcher is not None and visible(launcher):
            links.extend(_wrapper_processes(launcher, birth, as_launcher=True))
        gone = exec_replaces(frame, step, siblings_of(step, script), platform) if step is not None else (
            "bash execs a lone simple command" if frame.execs_last else None
        )
        if frame.host == cmd.host:
            proc = _frame_process(frame, False, cmd.container)
            links.append(ChainLink(proc, frame, gone is None, gone, birth=birth,
                                   above=_frame_above(frame, False)))
    links.extend(_wrapper_processes(cmd, cmd.position))
    return links


@dataclass(slots=True)
class ScriptLaunch:
    """A command this script put in the background earlier: still running when the kill runs."""

    process: Process
    birth: int
    frames: list[ShellFrame] = field(default_factory=list)


def script_launches(
    cmd: SimpleCommand, script: ShellScript, known: list[Process], chain: list[ChainLink],
) -> list[ScriptLaunch]:
    """Background commands earlier in the script on the kill's host, not already known."""
    known_argv = {(host_key(p.host), p.argv) for p in known}
    chain_argv = {link.process.argv for link in chain}
    out: list[ScriptLaunch] = []
    for c in script.commands:
        if c.position >= cmd.position or not c.background or host_key(c.host) != host_key(cmd.host):
            continue
        if cmd.container is not None and c.container != cmd.container:
            continue
        argv = tuple(c.effective_argv)
        if not argv or (host_key(c.host), argv) in known_argv or argv in chain_argv:
            continue
        kind = "ssh-client" if c.name == "ssh" else "other"
        label = f"started earlier in this command: {' '.join(argv)[:60]}"
        out.append(ScriptLaunch(Process(argv=argv, host=c.host, container=c.container, kind=kind, label=label),
                                c.position, list(c.shells)))
    return out
