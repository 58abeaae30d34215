from __future__ import annotations

import click

from analyzer.cli._common import config_catalog, echo_diagnostics, load_or_fail, width
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.world import Instance, World, node_link
from analyzer.report import terminal
from analyzer.report.redact import Redactor, redact_tree


def render_text(world: World) -> str:
    cols = width()
    red = Redactor()  # before a line is cut: a secret cut in half is not found
    out = [f"{world.session.path}: {len(world.instances)} server instance(s), {len(world.facts)} facts"]
    for inst in world.instances.values():
        out.append("")
        out.append(f"{inst.id}  {inst.name}  [{inst.state_at(len(world.session.events))}]")
        for about in _identity(world, inst):
            line = f"  {red(about)}"
            out.append(line if len(line) <= cols else line[: cols - 1] + "…")
        for ch in inst.history:
            ev = world.event(ch.event)
            ts = ev.ts.strftime("%H:%M:%S") if ev.ts else "--:--:--"
            where = f"L{ev.line}" if ev.line is not None else ""
            line = f"  #{ch.event:<5} {where:<6} {ts} {ch.state:<9} {red(ch.reason)}"
            out.append(line if len(line) <= cols else line[: cols - 1] + "…")
    kills = world.kills()
    if kills:
        out.append("")
        out.append("kills:")
        for k in kills:
            out.append(f"  #{k.event:<5} {k.text}" + ("  (kills its own shell)" if k.self_kill else ""))
            for v in k.victims:
                line = f"          → {v.label}: {red(v.reason)}"
                out.append(line if len(line) <= cols else line[: cols - 1] + "…")
    for note in world.notes:
        out.append(f"note: {note}")
    return "\n".join(out)


def _identity(world: World, inst: Instance) -> list[str]:
    """What identifies an instance beyond its key: who started it (and the evidence), the user's
    instructions that named it and the message that handed it to the user, its unit (and
    the process manager running it), the tmux/screen session hosting it, container or stack members,
    the PIDs bound to its launches or shown by its manager, and its background tasks."""
    owner = {"agent": "the agent, in this session", "before": "someone before the log began",
             "other": "someone else during the session"}[inst.owner]
    if inst.owner == "agent" and inst.started_by not in (None, "main"):
        owner = f"a sub-agent ({inst.started_by}), in this session"
    seen = world.event(inst.owner_evidence).line if inst.owner_evidence is not None else None
    lines = [f"owner: {owner}" + (f" (line {seen})" if seen is not None else "")
             + (f": {inst.owner_detail}" if inst.owner_detail else "")]
    if inst.requested_at:
        lines.append("requested by the user: " + ", ".join(_at(world, e) for e in inst.requested_at))
    if inst.handed_at is not None:
        lines.append(f"handed to the user: {_at(world, inst.handed_at)}")
    if inst.unit:
        manager = inst.server if inst.server in world.catalog.managers else None
        lines.append(f"unit: {inst.unit}" + (f" ({manager})" if manager else ""))
    if inst.session:
        lines.append(f"session: {inst.session}")
    if inst.stack:
        lines.append(f"stack: {inst.stack}")
    if inst.members:
        lines.append(f"members: {', '.join(inst.members)}")
    elif inst.container and not inst.container.startswith("compose"):
        lines.append(f"container: {inst.container}")
    pids = [f"{la.pid} (launch #{la.event})" for la in world.launches(inst.id) if la.pid]
    pids += [f"{pid} (listed)" for pid in inst.pids if not any(la.pid == pid for la in world.launches(inst.id))]
    if pids:
        lines.append(f"pid: {', '.join(pids)}")
    if inst.task_ids:
        lines.append(f"tasks: {', '.join(inst.task_ids)}")
    return lines


def _at(world: World, event: int) -> str:
    """An event as the graph names it: ``#12 (line 40)``."""
    line = world.event(event).line
    return f"#{event}" + (f" (line {line})" if line is not None else "")


def render_dot(world: World) -> str:
    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = ["digraph world {", "  rankdir=LR;"]
    for node, attrs in world.graph.nodes(data=True):
        shape = "box" if attrs.get("type") == "instance" else "ellipse"
        lines.append(f"  {q(node)} [shape={shape}];")
    for s, t, d in world.graph.edges(data=True):
        lines.append(f"  {q(s)} -> {q(t)} [label={q(str(d.get('relation')))}];")
    lines.append("}")
    return "\n".join(lines)


@click.command("graph")
@click.argument("path", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json", "dot"]), default="text", show_default=True,
              help="text: instances and their state histories; json: instances, facts and the graph "
                   "(node-link); dot: the graph for Graphviz.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Config file whose [catalog] server kinds apply, as in `check` (default: analyzer.toml "
                   "or pyproject.toml found upwards).")
def command(path: str, fmt: str, config_path: str | None) -> None:
    """Rebuild the server lifecycle world of the session at PATH: every server instance with its
    state history and the evidence behind each change. Server kinds of the config's catalog are
    known, as in `check`."""
    terminal.install(stdout=fmt != "json")  # transcript text must not drive the terminal (json: escaped)
    catalog = config_catalog(config_path)
    session = load_or_fail(path)
    world = build_world(session, catalog)
    if fmt == "json":
        doc = {
            "path": session.path,
            "instances": [i.model_dump(mode="json") for i in world.instances.values()],
            "facts": [f.model_dump(mode="json") for f in world.facts],
            "notes": world.notes,
            "graph": node_link(world),
        }
        click.echo(terminal.json_text(redact_tree(doc)))  # redacted like every output
    elif fmt == "dot":
        click.echo(Redactor()(render_dot(world)))
    else:
        echo_diagnostics(session)
        click.echo(Redactor()(render_text(world)))  # a terminal is a report too
