from __future__ import annotations

import gc
from pathlib import Path

import click

from analyzer._memory import paused_gc
from analyzer.cli._common import echo_diagnostics, fail, load_or_fail, open_in_browser
from analyzer.config import ConfigError, load_config
from analyzer.events import Session
from analyzer.pipeline import Analyzer
from analyzer.report import terminal
from analyzer.report.guard_log import GuardLog, read_guard_log
from analyzer.report.html import TEMPLATE, write_html

_SUFFIXES = (".session.yaml", ".session.yml", ".jsonl", ".json", ".traj", ".cast", ".md", ".yaml", ".yml")


def default_output(session_path: str) -> Path:
    """``<session-name>.report.html`` in the current folder."""
    name = Path(session_path.rstrip("/\\")).name or "session"
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            break
    return Path.cwd() / f"{name}.report.html"


@click.command("report")
@click.argument("path", type=click.Path())
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Where to write the HTML [default: ./<session-name>.report.html].")
@click.option("--templates", type=click.Path(file_okay=False), default=None,
              help=f"Folder of templates that override the built-in ones by name (e.g. {TEMPLATE}).")
@click.option("--no-redact", is_flag=True, help="Show secrets (API keys, tokens, passwords) instead of hiding them.")
@click.option("--rules-dir", multiple=True, type=click.Path(file_okay=False), help="Extra folder of rules.")
@click.option("--guard-log", type=click.Path(dir_okay=False), default=None,
              help="The live guard's decision log (JSONL): its decisions on this session are shown on the "
                   "timeline and counted in the summary.")
@click.option("--open", "open_report", is_flag=True, help="Open the report in the web browser when written.")
def command(path: str, output: str | None, templates: str | None, no_redact: bool, rules_dir: tuple[str, ...],
            guard_log: str | None, open_report: bool) -> None:
    """Write a self-contained HTML postmortem of the session at PATH (a file, or a folder holding
    one session; for a folder of many, use `analyzer batch`): summary, impact, findings with
    their evidence, the lifecycle of every server, and the full timeline. Secrets are redacted
    unless --no-redact is given. With --guard-log, the guard's decisions (deny, ask, allowed with a
    warning) appear on the shell calls they were about."""
    terminal.install(stdout=False)  # the diagnostics on stderr quote the log: redacted, inert
    if templates is not None and not Path(templates).is_dir():
        fail(f"{templates}: templates folder not found")
    if Path(path).is_dir():
        path = _one_session(path)
    try:
        analyzer = Analyzer(load_config(), extra_rules_dirs=list(rules_dir))
    except ConfigError as exc:
        fail(str(exc))
    with paused_gc():  # the session and its world live to the end: no collection, then none rescans them
        session = load_or_fail(path)
        echo_diagnostics(session)
        analysis = analyzer.analyze_session(session)
        gc.freeze()
    for problem in analysis.problems:
        click.echo(f"analyzer: warning: {problem}", err=True)
    guard = _guard(guard_log, session) if guard_log else None
    out = Path(output) if output else default_output(session.path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        # a regular file is replaced whole at the end; a pipe, a device or a link is written into
        direct = out.is_symlink() or (out.exists() and not out.is_file())
        write_html(analysis, out, redact=not no_redact, templates=Path(templates) if templates else None,
                   rules=analyzer.ruleset.rules, atomic=not direct, guard=guard, keep_markdown=True)
    except Exception as exc:  # a broken user template or an unwritable output: say which, no traceback
        import jinja2

        if isinstance(exc, jinja2.TemplateError):  # before OSError: TemplateNotFound is one too
            where = f"{exc.filename}:{exc.lineno}: " if isinstance(exc, jinja2.TemplateSyntaxError) else ""
            fail(f"template error: {where}{type(exc).__name__}: {exc}")
        if isinstance(exc, OSError):
            fail(f"{out}: cannot write: {exc.strerror or exc}")
        raise
    n = len(analysis.findings)
    judged = f", {sum(r.command is not None for r in guard.records)} guard decisions" if guard else ""
    click.echo(f"wrote {out} ({len(session.events)} events, {n} finding{'s' if n != 1 else ''}{judged})")
    if open_report:
        open_in_browser(out)


def _one_session(folder: str) -> str:
    """The session a folder holds (a Claude Code session folder, a folder with one log); a
    folder of several is a usage error that names them and points at ``batch``."""
    from analyzer.ingest.discover import discover_sessions

    found = list(discover_sessions([folder]))
    if not found:
        fail(f"{folder}: no session found in this folder")
    if len(found) == 1 and found[0].member is None:
        return str(found[0].path)
    names = ", ".join(f.relative for f in found[:3]) + (", …" if len(found) > 3 else "")
    fail(f"{folder}: holds {len(found)} sessions ({names}): name one, or write a report for each "
         f"with an index: analyzer batch {folder} -o postmortems")


def _guard(path: str, session: Session) -> GuardLog:
    """The log's decisions on ``session``; its bad lines go to stderr like a session's diagnostics."""
    try:
        guard = read_guard_log(Path(path), session)
    except OSError as exc:
        fail(f"{path}: cannot read the guard log: {exc.strerror or exc}")
    for d in guard.diagnostics:
        click.echo(f"{d.file}:{d.line}: {d.level.value}: {d.message}" if d.line is not None
                   else f"{d.file}: {d.level.value}: {d.message}", err=True)
    return guard
