"""The ``analyzer`` command line. One module per command; ``COMMANDS`` is the registry.

Commands are imported only when run, so ``analyzer --help`` stays fast and a heavy dependency of
one command (spaCy, Jinja) never slows another.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
import threading
from types import FrameType
from typing import Any

from analyzer._memory import paused_gc

with paused_gc():  # click's modules and classes live as long as the process: no collection passes
    import click  # while they load (~4 ms of every call), none over them later

    from analyzer import __version__
    from analyzer.cli._exit import EXIT_CRASH, EXIT_TABLE

    gc.freeze()

COMMANDS: dict[str, tuple[str, str]] = {
    # name: (module, one-line help shown in `analyzer --help`)
    "check": ("analyzer.cli.check", "Analyze sessions and report coordination failures (text, json, sarif)."),
    "rules": ("analyzer.cli.rules", "List, explain, test and scaffold rules."),
    "timeline": ("analyzer.cli.timeline", "List a session's events: who did what, when."),
    "detect": ("analyzer.cli.detect", "Say which log format a file is in, and why."),
    "formats": ("analyzer.cli.formats", "List the supported log formats."),
    "shell": ("analyzer.cli.shell", "Show how a shell command is parsed and what a kill in it would hit."),
    "graph": ("analyzer.cli.graph", "Show every server instance, its states and the evidence."),
    "report": ("analyzer.cli.report", "Write a self-contained HTML postmortem of a session."),
    "batch": ("analyzer.cli.batch", "Analyze every session under folders: reports, index.html, findings.jsonl."),
    "guard": ("analyzer.cli.guard", "Judge a shell command before an agent runs it (pre-tool hook), and install it."),
}


QUICK_EXIT = frozenset(COMMANDS) - {"batch", "guard"}
"""Commands whose process ends without the interpreter's teardown (``LazyGroup.__call__``): the
one-shot ones; ``batch`` and ``guard`` run pools, threads and servers and end as usual."""


def _exit_now(exc: SystemExit) -> None:
    """End the process with ``exc``'s status as the interpreter would, less its teardown.

    After the exit handlers (``atexit``: the readings store is written there) and the flush of
    stdout and stderr, nothing the interpreter does at exit is seen by anyone: it only frees every
    module, class and object one by one (~10 ms of a small check, more after a large session),
    memory the process is about to give back. Returns (and the exit goes on as usual) when that
    is not so: another thread is running (the usual exit joins it before the exit handlers; a
    thread or process pool has threads too, and child processes are multiprocessing's own exit
    handler's), the status is not a plain int, or a flush failed (the usual exit then reports it
    the usual way)."""
    code = 0 if exc.code is None else exc.code
    if not isinstance(code, int) or not -(2**31) <= code < 2**31 or threading.active_count() > 1:
        return
    atexit._run_exitfuncs()  # each handler runs once: they are cleared after the run
    try:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # a closed pipe or stream: the usual exit reports it
        return
    os._exit(code)


def _outermost(caller: FrameType | None) -> bool:
    """Whether nothing but the interpreter's start-up runs the CLI (``caller`` is the frame that
    called it): the console script's module, or ``python -m analyzer``'s under runpy's two frames.
    A tool that runs the CLI inside itself (a profiler, coverage, a debugger: ``python -m cProfile
    -m analyzer``) has frames of its own below it and acts after it returns, so it gets the usual
    exit; so does a tracer or profiler set on this thread."""
    names = []
    while caller is not None:
        names.append((caller.f_code.co_name, caller.f_globals.get("__name__")))
        caller = caller.f_back
    direct = len(names) == 1 and names[0][0] == "<module>"
    module = [n for n, _ in names[1:]] == ["_run_code", "_run_module_as_main"] and names[-1][1] == "runpy"
    return (direct or module) and sys.gettrace() is None and sys.getprofile() is None


class LazyGroup(click.Group):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The process's own entry point (the console script, ``python -m analyzer``: no argv
        passed): as click's, then a one-shot command ends the process at once (``_exit_now``).
        A caller that passes its argv (a test, an embedding program) gets click's plain call."""
        if args or "args" in kwargs or not _outermost(sys._getframe(1)):
            return super().__call__(*args, **kwargs)
        # The process is the analyzer's own, and so are the models it validates: pydantic's scan
        # of every distribution for its plugins (~5 ms) finds nothing for them to watch. A value
        # the user set, empty included, is kept.
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
        try:
            return super().__call__(*args, **kwargs)
        except SystemExit as exc:
            if self._ran in QUICK_EXIT:
                _exit_now(exc)
            raise

    _ran: str | None = None
    """The command this process ran (``get_command``)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit, KeyboardInterrupt):
            raise
        except Exception:
            import traceback

            traceback.print_exc()
            click.echo(f"analyzer: internal error (exit {EXIT_CRASH}); please report it with the traceback above",
                       err=True)
            ctx.exit(EXIT_CRASH)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        name = COMMANDS[cmd_name][0]
        self._ran = cmd_name
        first = name not in sys.modules
        with paused_gc():  # a command's modules and classes live as long as the process: no garbage
            module = importlib.import_module(name)
            if first:
                # and no later collection scans them again (16 ms of a small check); frozen before
                # the collector is back on, or its first pass scans them all once (11 ms)
                gc.freeze()
        cmd: click.Command = module.command
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_TABLE)
@click.version_option(__version__, prog_name="analyzer")
def main() -> None:
    """Read coding-agent session logs, rebuild what happened to every server they launched,
    probed and killed, and point at the step that went wrong."""
    # The process ends with the command: the cycle collector's last pass over every object at
    # shutdown (spaCy's vocabulary, every model class, the kept results) only frees memory the
    # process is about to give back: 0.2-0.3 s after a large session. Objects are still released
    # at shutdown as usual; only that pass is skipped.
    atexit.register(gc.freeze)
