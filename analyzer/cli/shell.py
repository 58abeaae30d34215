"""``analyzer shell CMD``: how a command string is parsed, and what a kill in it would hit."""

from __future__ import annotations

import importlib
import shlex
from collections.abc import Sequence
from dataclasses import asdict, is_dataclass
from typing import Any

import click
import orjson
from pydantic import BaseModel

from analyzer.cli._common import width
from analyzer.shell.model import ShellScript, SimpleCommand
from analyzer.shell.parse import parse

KILLERS = frozenset({"kill", "pkill", "killall", "fuser", "pgrep", "systemctl", "docker", "xargs"})


def _cut(text: str, room: int) -> str:
    flat = text.replace("\n", "⏎")
    return flat if len(flat) <= room else flat[: max(0, room - 1)] + "…"


def _redirects(c: SimpleCommand) -> str:
    parts = []
    for r in c.redirects:
        fd = "" if r.fd is None else str(r.fd)
        if r.op in ("<<", "<<-"):
            parts.append(f"{fd}{r.op}heredoc({r.target.count(chr(10))} lines)")
        elif r.op == "<<<":
            parts.append(f"{fd}<<<{_cut(r.target, 20)!r}")
        else:
            parts.append(f"{fd}{r.op}{r.target}")
    return " ".join(parts)


def _tags(c: SimpleCommand) -> str:
    tags = []
    if c.host:
        tags.append(f"@{c.host}")
    if c.container:
        tags.append(f"container={c.container}")
    if c.via:
        tags.append(f"via={c.via}")
    if c.background:
        tags.append(f"bg={c.background_by}")
    if c.wrappers:
        tags.append("wrap=" + ",".join(c.wrappers))
    if c.connector and c.connector != "\n":
        tags.append(f"after {c.connector}")
    ctx = [x for x in c.contexts if x != "pipeline"] + (["pipe"] if "pipeline" in c.contexts else [])
    if ctx:
        tags.append("in " + ",".join(ctx))
    redir = _redirects(c)
    if redir:
        tags.append(redir)
    if c.stdin is not None and not any(r.op in ("<<", "<<-", "<<<") for r in c.redirects):
        tags.append("stdin=piped heredoc")
    if c.script_path:
        tags.append(f"runs {c.script_path}")
    if c.dynamic:
        tags.append("dynamic")
    return "  ".join(tags)


def render_plan(script: ShellScript, cols: int) -> list[str]:
    lines = [_cut(f"parse: {script.status} · {script.parser} · {len(script.commands)} commands", cols)]
    lines.extend(_cut(f"note: {n}", cols) for n in script.notes)
    for c in script.commands:
        head = f"{c.position:>3} {'  ' * c.depth}{c.name}"
        lines.append(_cut(f"{head}  {_tags(c)}".rstrip(), cols))
        lines.append(_cut(f"{'':>3} {'  ' * c.depth}  $ {shlex.join(c.argv)}", cols))
    if script.written_files:
        for path, content in script.written_files.items():
            lines.append(_cut(f"writes {path} ({len(content.splitlines())} lines)", cols))
    return lines


def _process(spec: str) -> tuple[int, list[str], str | None]:
    """``[host:]pid:argv`` → (pid, argv, host)."""
    head, sep, rest = spec.partition(":")
    if not sep:
        raise click.BadParameter(f"{spec!r}: expected PID:ARGV or HOST:PID:ARGV", param_hint="--process")
    host: str | None = None
    if not head.strip().isdigit():
        host = head
        head, sep, rest = rest.partition(":")
        if not sep or not head.strip().isdigit():
            raise click.BadParameter(f"{spec!r}: expected PID:ARGV or HOST:PID:ARGV", param_hint="--process")
    try:
        argv = shlex.split(rest)
    except ValueError:
        argv = rest.split()
    return int(head), argv, host


def _plain(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    if isinstance(obj, (list, tuple)):
        return [_plain(x) for x in obj]
    return obj


def evaluate_kills(cmd: str, script: ShellScript, specs: Sequence[str], platform: str,
                   agent: str) -> tuple[list[Any] | None, str | None]:
    """(verdicts, None), or (None, why) when the kill semantics module is not there."""
    try:
        kill = importlib.import_module("analyzer.shell.kill")
        evaluate, process_cls, frame_of = kill.evaluate, kill.Process, kill.harness_frame
    except (ImportError, AttributeError) as exc:
        return None, f"kill semantics unavailable ({exc})"
    procs = []
    for spec in specs:
        pid, argv, host = _process(spec)
        procs.append(process_cls(pid=pid, argv=tuple(argv), host=host))
    harness = frame_of(agent, cmd)
    return list(evaluate(script, procs, harness=harness, platform=platform)), None


def _frame_text(frame: Any) -> str:
    argv = getattr(frame, "argv", None)
    where = f"@{frame.host} " if getattr(frame, "host", None) else ""
    return where + (shlex.join(argv) if isinstance(argv, (list, tuple)) else str(frame))


def render_verdicts(verdicts: list[Any], cols: int) -> list[str]:
    lines: list[str] = []
    for v in verdicts:
        cmd = getattr(v, "command", None)
        head = f"{cmd.position}: {shlex.join(cmd.argv)}" if isinstance(cmd, SimpleCommand) else "kill"
        signal = getattr(v, "signal_name", "")
        lines.append(_cut(f"kill {head}" + (f"  (SIG{signal})" if signal else ""), cols))
        if getattr(v, "reached", True) is False:
            lines.append("    never runs: an earlier kill took down its shell")
        victims = list(getattr(v, "victims", []) or [])
        if not victims:
            lines.append("    hits nothing among the given processes")
        for victim in victims:
            proc = getattr(victim, "process", victim)
            argv = getattr(proc, "argv", None)
            shown = shlex.join(argv) if isinstance(argv, (list, tuple)) and argv else str(getattr(proc, "label", ""))
            pid = getattr(proc, "pid", None)
            host = getattr(proc, "host", None)
            who = (f"@{host} " if host else "") + (f"pid {pid} " if pid is not None else "")
            lines.append(_cut(f"    hits {who}{shown}", cols))
            reason = getattr(victim, "reason", "")
            if reason:
                lines.append(_cut(f"      because {reason}", cols))
        if getattr(v, "self_kill", None) is not None:
            exit_code = getattr(v, "expected_exit", None)
            tail = f"; the caller sees exit {exit_code}" if exit_code is not None else ""
            lines.append(_cut(f"    kills its own shell {_frame_text(v.self_kill)}: later commands there never run"
                              f"{tail}", cols))
        lines.extend(_cut(f"    note: {n}", cols) for n in getattr(v, "notes", []) or [])
    return lines


@click.command("shell")
@click.argument("cmd")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: the plan, one command per line pair; json: the parsed ShellScript.")
@click.option("--process", "processes", multiple=True, metavar="[HOST:]PID:ARGV",
              help="A running process the kills are evaluated against (repeatable).")
@click.option("--host-platform", type=click.Choice(["linux", "macos"]), default="linux", show_default=True,
              help="procps (linux) or BSD (macos) pkill/pgrep semantics.")
@click.option("--agent", default="generic", show_default=True, metavar="NAME",
              help="Whose harness runs CMD (claude-code, codex, …; generic: `bash -c CMD`; none: no "
                   "wrapper shell): that shell can be hit by the kills too.")
def command(cmd: str, fmt: str, processes: tuple[str, ...], host_platform: str, agent: str) -> None:
    """Parse CMD as an agent's shell tool would run it: every simple command at every depth with
    its host, background, wrappers, redirects and nesting; with --process, what each kill in it
    would hit.

    \b
    Bounds (hostile input; a bound hit shows as "parse: truncated" and a note):
      text over 1,000,000 characters: cut there
      over 1,500 pipes: tree-sitter runs in a child capped at 512 MB / 5 s,
        else the commands are read flat
      lists nested deeper than 60: read flat; nested scripts deeper than 4: not followed
      patterns expanding past 100,000 states: not compiled (pgrep cannot either)
      back-references in a pattern: each match gets 1 s, then counts as no match"""
    script = parse(cmd)
    verdicts: list[Any] | None = None
    why: str | None = None
    if processes:
        try:
            verdicts, why = evaluate_kills(cmd, script, processes, host_platform, agent)
        except click.BadParameter:
            raise
        except Exception as exc:  # the other stage's bug must not hide the parse
            why = f"kill evaluation failed: {type(exc).__name__}: {exc}"
    if fmt == "json":
        doc: dict[str, Any] = script.model_dump(mode="json")
        if processes:
            doc["kills"] = _plain(verdicts) if verdicts is not None else None
            if why:
                doc["kills_note"] = why
        click.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
        return
    cols = width()
    lines = render_plan(script, cols)
    if processes:
        lines.append("")
        lines.extend(render_verdicts(verdicts, cols) if verdicts is not None else [f"note: {why}"])
    elif any(c.name in KILLERS for c in script.commands):
        lines.append(_cut("(give --process PID:ARGV to see what the kills would hit)", cols))
    click.echo("\n".join(lines))

