from __future__ import annotations

import sys
from pathlib import Path

import click
import orjson

from analyzer.cli import EXIT_CRASH
from analyzer.cli._common import EXIT_USAGE, echo_diagnostics, fail
from analyzer.config import ConfigError, load_config
from analyzer.events import SystemEvent
from analyzer.ingest import IngestError, load_all
from analyzer.ingest.base import paused_gc
from analyzer.ingest.discover import discover
from analyzer.lifecycle.world import World
from analyzer.pipeline import Analysis, Analyzer, partial_read
from analyzer.report import json_doc, sarif, terminal, text
from analyzer.rules.api import Severity
from analyzer.rules.engine import BaselineError, SelectionError, apply_baseline, write_baseline

EXIT_FINDINGS = 1

def _split(values: tuple[str, ...]) -> list[str] | None:
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    return out or None


@click.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text", show_default=True,
              help="text: linter-style lines with evidence; json: the stable JSON document; sarif: SARIF 2.1.0.")
@click.option("--select", multiple=True, metavar="RULES", help="Only these rules or groups (comma-separated).")
@click.option("--ignore", multiple=True, metavar="RULES", help="Skip these rules or groups (comma-separated).")
@click.option("--fail-on", type=click.Choice([s.value for s in Severity]), default=None,
              help="Exit 1 when a finding at or above this severity is left [default: low, or config].")
@click.option("--rules-dir", multiple=True, type=click.Path(file_okay=False), help="Extra folder of rules.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Config file (default: analyzer.toml or pyproject.toml found upwards).")
@click.option("--baseline", type=click.Path(dir_okay=False), default=None,
              help="Hide findings recorded in this baseline file; report stale entries [default: config].")
@click.option("--write-baseline", "write_baseline_to", type=click.Path(dir_okay=False), default=None,
              help="Record the current findings as accepted, then exit 0.")
def command(paths: tuple[str, ...], fmt: str, select: tuple[str, ...], ignore: tuple[str, ...],
            fail_on: str | None, rules_dir: tuple[str, ...], config_path: str | None, baseline: str | None,
            write_baseline_to: str | None) -> None:
    """Analyze the sessions at PATHS (files or folders) and report coordination failures.

    Exit status: 0 nothing at or above --fail-on, 1 findings, 2 usage error or no input readable
    (a file most of whose records were lost counts as not readable: "read 1 of 87 records"),
    3 internal error (the other files are still checked; json and sarif list it under errors).
    """
    terminal.install(stdout=fmt == "text")  # transcript text must not drive the terminal
    try:
        config = load_config(Path(config_path) if config_path else None)
        analyzer = Analyzer(config, _split(select), _split(ignore), list(rules_dir))
    except (ConfigError, SelectionError) as exc:
        fail(str(exc))
    for w in analyzer.warnings:  # once, not once per session
        click.echo(f"analyzer: warning: {w}", err=True)

    analyses: list[Analysis] = []
    errors: list[dict[str, str | int | None]] = []
    partial = 0  # analyses of sessions most of whose records were lost
    crashed = False
    for p in discover(paths):
        if config.excluded(p):
            continue
        # a session's objects are made and mostly dropped again (``_reported``) before the cycle
        # collector runs: it then scans what is kept, not the whole timeline and world
        try:
            with paused_gc():
                checked = _check_file(p, analyzer, fmt, errors)
        except Exception as exc:  # a bug on one file: the rest is still checked; the exit says crash
            crashed = _crashed(p, exc, errors)
            continue
        for analysis, clean in checked:
            analyses.append(analysis)
            partial += not clean
    if not analyses:
        if crashed:  # the document still says what broke
            if fmt == "json":
                click.echo(orjson.dumps(json_doc.document([], errors), option=orjson.OPT_INDENT_2).decode())
            elif fmt == "sarif":
                rules = [lr.cls for lr in analyzer.ruleset.rules.values()]
                click.echo(orjson.dumps(sarif.document([], rules, errors), option=orjson.OPT_INDENT_2).decode())
            sys.exit(EXIT_CRASH)
        if not errors:
            click.echo(f"analyzer: no session found under {', '.join(paths)}", err=True)
        sys.exit(EXIT_USAGE)

    stale = _apply_baseline(analyses, baseline or config.baseline, required=baseline is not None,
                            writing=write_baseline_to is not None)
    if write_baseline_to:
        write_baseline(Path(write_baseline_to), [f for a in analyses for f in a.findings])
        click.echo(f"wrote {sum(len(a.findings) for a in analyses)} finding(s) to {write_baseline_to}", err=True)
        return

    if fmt == "json":
        click.echo(orjson.dumps(json_doc.document(analyses, errors), option=orjson.OPT_INDENT_2).decode())
    elif fmt == "sarif":
        rules = [lr.cls for lr in analyzer.ruleset.rules.values()]
        click.echo(orjson.dumps(sarif.document(analyses, rules, errors), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(text.render(analyses, skip_problems=set(analyzer.warnings)))
        if partial:  # the summary's "no findings" would read as a clean result
            click.echo(f"{partial} of {len(analyses)} session(s) only partly read: what was lost was not checked")
    for s in stale:
        click.echo(f"analyzer: stale baseline entry: {s}", err=True)
    if crashed:
        sys.exit(EXIT_CRASH)
    if partial == len(analyses):  # no input was read well enough for "no findings" to mean anything
        sys.exit(EXIT_USAGE)
    threshold = Severity(fail_on or config.fail_on or "low").rank
    if any(f.severity.rank >= threshold for a in analyses for f in a.findings):
        sys.exit(EXIT_FINDINGS)


def _crashed(path: Path, exc: Exception, errors: list[dict[str, str | int | None]]) -> bool:
    """An internal error on one file: its traceback on stderr and an entry in the document."""
    import traceback

    traceback.print_exception(exc)
    errors.append({"path": str(path), "line": None, "message": f"internal error: {type(exc).__name__}: {exc}"})
    click.echo(f"analyzer: {path}: internal error ({type(exc).__name__}): exit {EXIT_CRASH}", err=True)
    return True


def _check_file(path: Path, analyzer: Analyzer, fmt: str,
                errors: list[dict[str, str | int | None]]) -> list[tuple[Analysis, bool]]:
    """Load and analyze each session in one file: (analysis, read cleanly). A file nothing could be
    read from gives none (and an entry in ``errors``); a session most of whose records were lost is
    analyzed (what was read may still show findings) and also listed in ``errors``."""
    try:
        sessions = load_all(path)
    except IngestError as exc:
        errors.append({"path": exc.path, "line": exc.line, "message": exc.reason})
        click.echo(f"analyzer: {exc}", err=True)
        return []
    out: list[tuple[Analysis, bool]] = []
    for session in sessions:
        where = session.path if session.part is None else f"{session.path} (session {session.part})"
        lost = partial_read(session)
        if fmt == "text":
            echo_diagnostics(session)
        if not session.events and any(d.level == "error" for d in session.diagnostics):
            errors.append({"path": session.path, "line": None, "message": "no readable record"})
            click.echo(f"analyzer: {where}: no readable record", err=True)
            continue
        if lost is not None:
            errors.append({"path": session.path, "line": None, "message": lost})
            click.echo(f"analyzer: {where}: {lost}: most of it could not be read, so its findings are incomplete",
                       err=True)
        out.append((_reported(analyzer.analyze_session(session)), lost is None))
    return out


_ELIDED = SystemEvent(subtype="elided", text="not kept: no finding points here")


def _reported(a: Analysis) -> Analysis:
    """The analysis as this command's reports read it: the session's numbers and diagnostics and
    the events findings point at. The world and the other events (tool outputs are most of a
    log) are dropped, so checking years of sessions does not hold all of them until the end."""
    keep = {ref.index for f in [*a.findings, *(f for f, _ in a.suppressed)] for ref in (f.anchor, *f.related)}
    events = a.session.events
    session = a.session.model_copy(update={"events": [events[i] if i in keep else _ELIDED
                                                      for i in range(len(events))]})
    return Analysis(session, World(session=session, catalog=a.world.catalog), a.findings, a.suppressed, a.problems)


def _apply_baseline(analyses: list[Analysis], baseline: str | None, required: bool, writing: bool) -> list[str]:
    """Move baselined findings to ``suppressed``; return the stale entries. One budget across all
    sessions: counts are per fingerprint."""
    if not baseline or writing:
        return []
    bpath = Path(baseline)
    if not bpath.is_file():
        if required:
            fail(f"{baseline}: baseline file not found (create it with --write-baseline)")
        click.echo(f"analyzer: warning: {baseline}: baseline file from config not found "
                   "(create it with --write-baseline)", err=True)
        return []
    try:
        new, _, stale = apply_baseline(bpath, [f for a in analyses for f in a.findings])
    except BaselineError as exc:
        fail(str(exc))
    fresh = {id(f) for f in new}
    for a in analyses:
        a.suppressed += [(f, "baseline") for f in a.findings if id(f) not in fresh]
        a.findings = [f for f in a.findings if id(f) in fresh]
    return stale
