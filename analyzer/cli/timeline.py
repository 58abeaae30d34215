from __future__ import annotations

import click
import orjson

from analyzer.cli._common import echo_diagnostics, load_or_fail, width
from analyzer.events import AssistantEvent, Event, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.report import terminal
from analyzer.report.redact import Redactor, clip, redact_tree


def describe(ev: Event) -> tuple[str, str]:
    """(who, what) for one event, ``what`` not yet cut to the width."""
    if isinstance(ev, UserEvent):
        return ("user" if ev.origin == "prompt" else f"user/{ev.origin}", ev.text)
    if isinstance(ev, AssistantEvent):
        return "agent", ev.text
    if isinstance(ev, SystemEvent):
        extra = f" task={ev.task_id}" if ev.task_id else ""
        extra += f" exit={ev.exit_code}" if ev.exit_code is not None else ""
        return f"sys/{ev.subtype}", (ev.text if not extra else f"{extra.strip()} {ev.text}")
    assert isinstance(ev, ToolEvent)
    who = "user$" if ev.by_user else ev.name
    status = ev.status_words()
    tail = f"  [{', '.join(status)}]" if status else ""
    body = ev.command if ev.command is not None else orjson.dumps(ev.input).decode()
    return who, body + tail


def render_text(session: Session, agent: str) -> str:
    cols = width()
    lines = [f"{session.path}  ({session.format}, {len(session.events)} events)"]
    idx_w = len(str(len(session.events)))
    for ev in session.events:
        if agent == "main" and ev.agent != "main":
            continue
        who, what = describe(ev)
        ts = ev.ts.strftime("%H:%M:%S") if ev.ts else "--:--:--"
        if ev.agent != "main":
            who = f"{ev.agent[:8]}:{who}"
        prefix = f"{ev.index:>{idx_w}} {ts} {who[:16]:<16} "
        room = cols - len(prefix)
        if isinstance(ev, ToolEvent) and ev.command is not None:
            # shell commands are shown whole: the point of a timeline is to see what ran
            cmd_lines = what.splitlines() or [""]
            lines.append(prefix + cmd_lines[0])
            lines.extend(" " * len(prefix) + ln for ln in cmd_lines[1:])
        else:
            lines.append(prefix + clip(what, room))  # redacted before the cut: no half secret
    return "\n".join(lines)


@click.command("timeline")
@click.argument("path", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="text: one line per event; json: the full typed events.")
@click.option("--agent", type=click.Choice(["main", "all"]), default="all", show_default=True,
              help="main: only the top-level agent; all: include sub-agents.")
@click.option("--input-format", default=None, metavar="NAME",
              help="Skip detection and read PATH as this format (see `analyzer formats`).")
def command(path: str, fmt: str, agent: str, input_format: str | None) -> None:
    """List the events of the session at PATH: index, time, who, and one line each (shell
    commands whole)."""
    terminal.install(stdout=fmt == "text")  # transcript text must not drive the terminal
    session = load_or_fail(path, input_format)
    if fmt == "json":
        doc = session.model_dump(mode="json")
        if agent == "main":
            doc["events"] = [e for e in doc["events"] if e["agent"] == "main"]
        click.echo(terminal.json_text(redact_tree(doc)))  # redacted like every output
        return
    echo_diagnostics(session)
    click.echo(Redactor()(render_text(session, agent)))  # a terminal is a report too
