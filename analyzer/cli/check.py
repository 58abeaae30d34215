from __future__ import annotations

import gc
import importlib
import sys
from collections import Counter
from pathlib import Path

import click
import orjson

from analyzer._memory import paused_gc
from analyzer.cli._common import echo_diagnostics, fail, rule_names, use_colour
from analyzer.cli._defaults import default_paths
from analyzer.cli._exit import EXIT_CLEAN, EXIT_CRASH, EXIT_FINDINGS, EXIT_TABLE, EXIT_USAGE
from analyzer.config import ConfigError, load_config
from analyzer.events import SystemEvent
from analyzer.ingest import IngestError, load_all
from analyzer.ingest.discover import discover
from analyzer.lifecycle.world import World
from analyzer.pipeline import Analysis, Analyzer, partial_read
from analyzer.report import terminal, text
from analyzer.rules.api import Severity
from analyzer.rules.engine import BaselineError, SelectionError, apply_baseline, write_baseline

_FORMATS = {
    "text": "linter-style lines with evidence (coloured on a terminal, unless NO_COLOR is set)",
    "json": "the stable JSON document",
    "sarif": "SARIF 2.1.0 (GitHub code scanning)",
    "github": "GitHub Actions workflow annotations (::error file=…,line=…::…)",
}


@click.command("check", epilog=EXIT_TABLE)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(list(_FORMATS)), default="text", show_default=True,
              help="; ".join(f"{k}: {v}" for k, v in _FORMATS.items()) + ".")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the report to this file instead of stdout (never coloured).")
@click.option("-q", "--quiet", is_flag=True,
              help="Findings only: no summary line, no warnings or log diagnostics (errors still go to stderr).")
@click.option("--statistics", is_flag=True,
              help="Print the number of findings per rule (text, or json with --format json) instead of the findings.")
@click.option("--exit-zero", is_flag=True,
              help="Exit 0 even when findings are reported; 2 and 3 still report errors.")
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
def command(paths: tuple[str, ...], fmt: str, output_file: str | None, quiet: bool, statistics: bool,
            exit_zero: bool, select: tuple[str, ...], ignore: tuple[str, ...], fail_on: str | None,
            rules_dir: tuple[str, ...], config_path: str | None, baseline: str | None,
            write_baseline_to: str | None) -> None:
    """Analyze the sessions at PATHS (files or folders) and report coordination failures.

    Without PATHS, the agents' own session folders that exist on this machine are read
    (~/.claude/projects, ~/.codex/sessions, opencode's and Gemini CLI's storage); stderr says which.

    A file named in PATHS that cannot be read exits 2 even when the others were checked; a file
    found in a folder that no format reads is listed under errors. A file most of whose records
    were lost counts as not readable ("read 1 of 87 records") when it is all there is. Config
    `exclude` skips files found in folders, never files named in PATHS.
    """
    if statistics and fmt in ("sarif", "github"):
        fail(f"--statistics prints text or json, not {fmt}")
    out = Output(output_file, fmt)
    terminal.install(stdout=not out.colour)  # transcript text must not drive the terminal
    try:
        with paused_gc():  # the config, rules, catalog and world builder live to the end
            config = load_config(Path(config_path) if config_path else None)
            analyzer = Analyzer(config, rule_names(select), rule_names(ignore), list(rules_dir))
            importlib.import_module("analyzer.lifecycle.build")  # what every session's world is built by
            gc.freeze()  # so no collection after a session scans them (5 ms of a small check)
    except (ConfigError, SelectionError) as exc:
        fail(str(exc))
    if not paths:
        paths = tuple(default_paths("check"))
    if not quiet:
        for w in analyzer.warnings:  # once, not once per session
            click.echo(f"analyzer: warning: {w}", err=True)

    named = {Path(p) for p in paths if not Path(p).is_dir()}
    analyses: list[Analysis] = []
    errors: list[dict[str, str | int | None]] = []
    partial = 0  # analyses of sessions most of whose records were lost
    crashed = unreadable_named = False
    for p in discover(paths):
        if p not in named and config.excluded(p):  # a file named on the command line is meant
            continue
        # a session's objects are made and mostly dropped again (``_reported``) before the cycle
        # collector runs: it then scans what is kept, not the whole timeline and world
        try:
            with paused_gc():
                checked = _check_file(p, analyzer, fmt == "text" and not quiet, errors)
        except Exception as exc:  # a bug on one file: the rest is still checked; the exit says crash
            crashed = _crashed(p, exc, errors)
            continue
        unreadable_named |= p in named and not checked
        for analysis, clean in checked:
            analyses.append(analysis)
            partial += not clean
    if not analyses:
        if fmt != "text":  # the document still says what broke
            out.write(_document(fmt, [], errors, analyzer, statistics, EXIT_CRASH if crashed else EXIT_USAGE))
        elif not errors:
            click.echo(f"analyzer: no session found under {', '.join(paths)}", err=True)
        sys.exit(EXIT_CRASH if crashed else EXIT_USAGE)

    stale = _apply_baseline(analyses, baseline or config.baseline, required=baseline is not None,
                            writing=write_baseline_to is not None)
    if write_baseline_to:
        write_baseline(Path(write_baseline_to), [f for a in analyses for f in a.findings])
        click.echo(f"wrote {sum(len(a.findings) for a in analyses)} finding(s) to {write_baseline_to}", err=True)
        return

    threshold = Severity(fail_on or config.fail_on or "low").rank
    status = (EXIT_CRASH if crashed
              else EXIT_USAGE if unreadable_named or partial == len(analyses)  # a named input, or every input, unread
              else EXIT_FINDINGS if not exit_zero and any(f.severity.rank >= threshold for a in analyses
                                                          for f in a.findings)
              else EXIT_CLEAN)
    if fmt == "text":
        body = (_statistics_text(analyses, out.colour) if statistics else
                text.render(analyses, skip_problems=set(analyzer.warnings) | _all_problems(analyses, quiet),
                            colour=out.colour, summary=not quiet))
        if partial and not quiet:  # the summary's "no findings" would read as a clean result
            body += f"\n{partial} of {len(analyses)} session(s) only partly read: what was lost was not checked"
        out.write(body)
    else:
        out.write(_document(fmt, analyses, errors, analyzer, statistics, status))
    for s in stale:
        click.echo(f"analyzer: stale baseline entry: {s}", err=True)
    if status != EXIT_CLEAN:
        sys.exit(status)


class Output:
    """Where the report goes: stdout (coloured on a terminal unless ``NO_COLOR``) or a file."""

    def __init__(self, path: str | None, fmt: str) -> None:
        self.path = Path(path) if path else None
        self.colour = fmt == "text" and self.path is None and use_colour(sys.stdout)

    def write(self, body: str) -> None:
        """``body`` and a newline; nothing at all for an empty body (``--quiet`` and clean)."""
        end = "\n" if body else ""
        if self.path is None:
            click.echo(body + end, color=self.colour, nl=False)
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)  # reports/analyzer.sarif in a fresh checkout
            self.path.write_text(body + end, "utf-8")
        except OSError as exc:
            fail(f"{self.path}: cannot write: {exc.strerror or exc}")


def _all_problems(analyses: list[Analysis], quiet: bool) -> set[str]:
    return {p for a in analyses for p in a.problems} if quiet else set()


def _document(fmt: str, analyses: list[Analysis], errors: list[dict[str, str | int | None]],
              analyzer: Analyzer, statistics: bool, status: int) -> str:
    """The json, sarif or github output (``--statistics``: the per-rule counts as JSON); ``status``
    is the exit status the run ends with (SARIF's invocation records it)."""
    if statistics:
        return orjson.dumps(rule_counts(analyses), option=orjson.OPT_INDENT_2).decode()
    from analyzer.report import github, json_doc, sarif  # only the output asked for: text needs none

    if fmt == "github":
        return github.render(analyses, errors)
    if fmt == "sarif":
        rules = [lr.cls for lr in analyzer.ruleset.rules.values()]
        return terminal.json_text(sarif.document(analyses, rules, errors, exit_code=status))
    return terminal.json_text(json_doc.document(analyses, errors))  # C1/bidi escaped: inert on a screen


def rule_counts(analyses: list[Analysis]) -> list[dict[str, str | int]]:
    """Findings per rule, most first (then by severity and name): ``--statistics``."""
    counts = Counter((f.rule, f.severity) for a in analyses for f in a.findings)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], -kv[0][1].rank, kv[0][0]))
    return [{"rule": rule, "severity": sev.value, "count": n} for (rule, sev), n in rows]


def _statistics_text(analyses: list[Analysis], colour: bool) -> str:
    rows = rule_counts(analyses)
    if not rows:
        return f"no findings in {len(analyses)} session(s)"
    pad = max(len(str(r["count"])) for r in rows)
    sev_pad = max(len(str(r["severity"])) for r in rows)
    lines = []
    for r in rows:
        sev, rule = str(r["severity"]), str(r["rule"])
        gap = " " * (sev_pad - len(sev))
        if colour:
            sev, rule = text.styled_severity(sev), text.styled_rule(rule)
        lines.append(f"{r['count']:>{pad}}  {sev}{gap}  {rule}")
    return "\n".join(lines)


def _crashed(path: Path, exc: Exception, errors: list[dict[str, str | int | None]]) -> bool:
    """An internal error on one file: its traceback on stderr and an entry in the document."""
    import traceback

    traceback.print_exception(exc)
    errors.append({"path": str(path), "line": None, "message": f"internal error: {type(exc).__name__}: {exc}"})
    click.echo(f"analyzer: {path}: internal error ({type(exc).__name__}): exit {EXIT_CRASH}", err=True)
    return True


def _check_file(path: Path, analyzer: Analyzer, diagnostics: bool,
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
        if diagnostics:
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
