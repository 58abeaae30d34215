from __future__ import annotations

from pathlib import Path

import click

from analyzer.cli._common import echo_diagnostics, fail, load_or_fail
from analyzer.config import ConfigError, load_config
from analyzer.pipeline import Analyzer
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
def command(path: str, output: str | None, templates: str | None, no_redact: bool, rules_dir: tuple[str, ...]) -> None:
    """Write a self-contained HTML postmortem of the session at PATH: summary, impact, findings with
    their evidence, the lifecycle of every server, and the full timeline. Secrets are redacted
    unless --no-redact is given."""
    if templates is not None and not Path(templates).is_dir():
        fail(f"{templates}: templates folder not found")
    try:
        analyzer = Analyzer(load_config(), extra_rules_dirs=list(rules_dir))
    except ConfigError as exc:
        fail(str(exc))
    session = load_or_fail(path)
    echo_diagnostics(session)
    analysis = analyzer.analyze_session(session)
    for problem in analysis.problems:
        click.echo(f"analyzer: warning: {problem}", err=True)
    out = Path(output) if output else default_output(session.path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        # a regular file is replaced whole at the end; a pipe, a device or a link is written into
        direct = out.is_symlink() or (out.exists() and not out.is_file())
        write_html(analysis, out, redact=not no_redact, templates=Path(templates) if templates else None,
                   rules=analyzer.ruleset.rules, atomic=not direct)
    except Exception as exc:  # a broken user template or an unwritable output: say which, no traceback
        import jinja2

        if isinstance(exc, jinja2.TemplateError):  # before OSError: TemplateNotFound is one too
            where = f"{exc.filename}:{exc.lineno}: " if isinstance(exc, jinja2.TemplateSyntaxError) else ""
            fail(f"template error: {where}{type(exc).__name__}: {exc}")
        if isinstance(exc, OSError):
            fail(f"{out}: cannot write: {exc.strerror or exc}")
        raise
    n = len(analysis.findings)
    click.echo(f"wrote {out} ({len(session.events)} events, {n} finding{'s' if n != 1 else ''})")
