"""The entry point: one verdict per kill-ish command of a script, through the mechanism registry.

:data:`MECHANISMS` maps a program name to the function that judges it; :func:`may_kill` and the
dispatch read the same table, so there is no second list to keep in step. The table is lazy
(:class:`~analyzer._lazy.LazyTable`): a judge's module is imported when a command it judges is
met, so a session whose commands are a ``systemctl`` or nothing kill-ish does not import the other
judges (~15 ms of a small ``check``); ``may_kill`` only tests names and imports none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from analyzer._lazy import LazyTable
from analyzer.shell.kill.context import KillContext, as_written
from analyzer.shell.kill.harness import harness_wraps_command
from analyzer.shell.kill.model import KillVerdict, Process
from analyzer.shell.kill.platform import platform_for
from analyzer.shell.model import ShellFrame, ShellScript
from analyzer.shell.wrappers import basename, strip

__all__ = ["MECHANISMS", "evaluate", "may_kill"]

Judge = Callable[[KillContext, list[str]], KillVerdict | None]
"""Judges one command (its effective argv) in its context; None when it kills nothing."""


def _judge_xargs(ctx: KillContext, argv: list[str]) -> KillVerdict | None:
    """A parser that kept ``xargs`` as the program: judge what it runs."""
    rest = argv[strip(argv).start :]
    judge = MECHANISMS.get(basename(rest[0])) if rest else None
    return judge(ctx, rest) if judge is not None and judge is not _judge_xargs else None


MECHANISMS: Mapping[str, Judge] = LazyTable("analyzer.shell.kill", {
    "pkill": ".pkill:judge_pkill",
    "kill": ".pid:judge_kill",
    "killall": ".killall:judge_killall",
    "fuser": ".fuser:judge_fuser",
    "systemctl": ".services:judge_systemctl",
    "service": ".services:judge_systemctl",
    "launchctl": ".services:judge_launchctl",
    "docker": ".containers:judge_docker",
    "podman": ".containers:judge_docker",
    "docker-compose": ".containers:judge_docker",
    "podman-compose": ".containers:judge_docker",
    "pm2": ".managers:judge_pm2",
    "supervisorctl": ".managers:judge_supervisorctl",
    "brew": ".managers:judge_brew",
    "tmux": ".sessions:judge_tmux",
    "screen": ".sessions:judge_screen",
    "taskkill": ".windows:judge_windows",
    "taskkill.exe": ".windows:judge_windows",
    "Stop-Process": ".windows:judge_windows",
    "stop-process": ".windows:judge_windows",
    "spps": ".windows:judge_windows",
    "xargs": ".evaluate:_judge_xargs",
})
"""Program name -> the mechanism that judges it (``"module:function"``, relative to this package)."""


def may_kill(script: ShellScript) -> bool:
    """Whether ``evaluate`` could return a verdict for ``script``: False when no command of it is
    one that ``evaluate`` judges, so a caller need not build the process list (most commands)."""
    return any(c.name in MECHANISMS for c in script.commands)


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
    whole command (:func:`~analyzer.shell.kill.harness.harness_frame`): the outermost local frame.
    ``platform`` is the local machine's (``linux``, ``macos``); ``platforms`` maps ssh targets (and
    None) to theirs; remote hosts default to Linux. ``include_script_launches`` treats commands this
    script put in the background earlier (``server & … pkill``) as running processes."""
    procs = list(processes)
    wraps = harness is not None and harness_wraps_command(harness, script.source)
    out: list[KillVerdict] = []
    for cmd in script.commands:
        judge = MECHANISMS.get(cmd.name)
        if judge is None:
            continue
        plat, plat_note = platform_for(cmd.host, platform, platforms)
        ctx = KillContext(cmd, script, procs, harness, wraps, plat, include_script_launches)
        verdict = judge(ctx, list(cmd.effective_argv) or list(cmd.argv))
        if verdict is None:
            continue
        verdict.platform = plat
        verdict.notes.append(plat_note)
        if ctx.notes:
            verdict.notes.extend(n for n in ctx.notes if n not in verdict.notes)
        stopper = next((v for v in out if v.reached and v.skips(cmd)), None)
        if stopper is not None:
            verdict.reached = False
            verdict.notes.insert(0, f"this never runs: `{as_written(stopper.command.argv, 50)}` took down the "
                                    "shell that would run it; the victims are what it would have hit")
        elif verdict.signal_name == "KILL":
            # SIGKILL is immediate: later commands no longer see these processes
            gone = {id(x.process) for x in verdict.victims}
            procs = [p for p in procs if id(p) not in gone]
        out.append(verdict)
    return out
