"""``analyzer guard``: the live guard's hook command, its installer, and a stop for its server.

The hook path (``analyzer guard --agent NAME``) runs only the light client (``analyzer.guard.client``):
the warm server does the heavy work.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from analyzer.guard.client import AGENT_NAMES, DEFAULT_TIMEOUT, MODES, run

_AGENT = click.Choice(AGENT_NAMES)


@click.group(invoke_without_command=True)
@click.option("--agent", type=_AGENT, help="The agent whose hook JSON arrives on stdin.")
@click.option("--mode", type=click.Choice(MODES), default=None,
              help="Answer every blocking verdict this way (default: per rule, [tool.analyzer.guard.mode]).")
@click.option("--timeout", type=float, default=DEFAULT_TIMEOUT, show_default=True,
              help="Seconds to wait for a verdict; past it the command is allowed (fail open).")
@click.pass_context
def command(ctx: click.Context, agent: str | None, mode: str | None, timeout: float) -> None:
    """Judge a shell command before the agent runs it (a pre-tool hook).

    Reads the agent's hook JSON on stdin and answers in its protocol: deny or ask with a reason
    naming the victims and a precise alternative, or allow. Fails open on any error."""
    if ctx.invoked_subcommand is not None:
        return
    if agent is None:
        raise click.UsageError("--agent is required (claude-code, codex, gemini, cursor)")
    out, err, code = run(agent, sys.stdin.buffer.read(), timeout, mode)
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    sys.stdout.flush()
    ctx.exit(code)


_SCOPE = click.Choice(["project", "user"])


@command.command("install")
@click.option("--agent", type=_AGENT, required=True)
@click.option("--scope", type=_SCOPE, default="project", show_default=True)
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=".",
              help="The project folder (for --scope project).")
@click.option("--timeout", type=float, default=None, help="A time budget written into the hook command.")
def install_cmd(agent: str, scope: str, root: Path, timeout: float | None) -> None:
    """Add the guard's hooks to the agent's config (idempotent)."""
    from analyzer.guard.install import InstallError, install

    try:
        path = install(agent, scope, root.resolve(), Path.home(), timeout)
    except InstallError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"installed the guard's {agent} hooks in {path}")


@command.command("uninstall")
@click.option("--agent", type=_AGENT, required=True)
@click.option("--scope", type=_SCOPE, default="project", show_default=True)
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=".")
def uninstall_cmd(agent: str, scope: str, root: Path) -> None:
    """Remove exactly the guard's hooks from the agent's config."""
    from analyzer.guard.install import InstallError, uninstall

    try:
        path, removed = uninstall(agent, scope, root.resolve(), Path.home())
    except InstallError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"removed {removed} guard hook(s) from {path}" if removed else f"no guard hooks in {path}")


@command.command("stop")
def stop_cmd() -> None:
    """Stop the warm server (the next hook call starts it again)."""
    from analyzer.guard.client import stop_server

    click.echo("stopped the guard server" if stop_server() else "no guard server was running")
