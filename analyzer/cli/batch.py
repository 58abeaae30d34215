from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from analyzer.batch.core import DEFAULT_TIMEOUT, EXECUTORS, BatchError, BatchOptions, default_jobs, run_batch
from analyzer.batch.progress import for_stream
from analyzer.batch.results import BatchRun, short_error
from analyzer.cli._common import fail, open_in_browser, rule_names
from analyzer.cli._defaults import default_paths
from analyzer.cli._exit import EXIT_FINDINGS, EXIT_TABLE, EXIT_USAGE
from analyzer.config import ConfigError, load_config
from analyzer.ingest.remote import is_url
from analyzer.report.redact import Redactor
from analyzer.report.terminal import neutralise
from analyzer.rules.api import Severity
from analyzer.rules.engine import SelectionError

_SHOWN_FAILURES = 10


def parse_since(value: str) -> datetime:
    """``2026-03-01`` (midnight UTC) or an ISO time; without an offset it is UTC."""
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date (YYYY-MM-DD) or ISO time") from None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _since(ctx: click.Context, param: click.Parameter, value: str | None) -> datetime | None:
    return parse_since(value) if value else None


def _inputs(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """Local paths must exist; URLs (``s3://…``) are listed when the batch runs."""
    local = click.Path(exists=True)
    return tuple(v if is_url(v) else str(local.convert(v, param, ctx)) for v in values)


def summary_text(run: BatchRun, out: Path) -> str:
    sev = run.by_severity()
    total = sum(sev.values())
    twins = len(run.results) - len(run.distinct())
    lines = [
        f"analyzer batch: {len(run.results)} session(s) in {run.seconds:.1f} s "
        f"({run.analyzed} analyzed, {run.cached} from the cache), {len(run.failed)} failed"
        + (f", {run.filtered} left out by --since" if run.filtered else ""),
        f"findings: {total}" + (" (" + ", ".join(f"{s} {n}" for s, n in sev.items()) + ")" if total else "")
        + (f"; {twins} file(s) read a session another file holds too, counted once" if twins else ""),
    ]
    reports = sum(r.report is not None for r in run.results)
    wrote = [str(out / "index.html"), str(out / "findings.jsonl"), str(out / "summary.json")]
    if reports:
        wrote.append(f"{reports} report(s) in {out / 'sessions'}")
    lines.append("wrote " + ", ".join(wrote))
    if run.reports_note:
        lines.append(run.reports_note)
    unrendered = [r for r in run.results if r.report_error]
    if unrendered:
        lines.append(f"{len(unrendered)} report(s) could not be written, e.g. {unrendered[0].session}: "
                     f"{unrendered[0].report_error}")
    if run.failed:
        lines.append("failed:")
        lines += [f"  {r.session}: {short_error(r)}" for r in run.failed[:_SHOWN_FAILURES]]
        if len(run.failed) > _SHOWN_FAILURES:
            lines.append(f"  … {len(run.failed) - _SHOWN_FAILURES} more in {out / 'summary.json'}")
    return "\n".join(lines)


@click.command("batch", epilog=EXIT_TABLE)
@click.argument("dirs", nargs=-1, callback=_inputs)
@click.option("-o", "--output", "out", default="postmortems", show_default=True, type=click.Path(file_okay=False),
              help="Output folder: sessions/*.html, index.html, findings.jsonl, summary.json, .cache.json.")
@click.option("--fail-on", type=click.Choice([s.value for s in Severity]), default=None,
              help="Exit 1 when a session has a finding at or above this severity [default: exit 0 with findings].")
@click.option("--open", "open_index", is_flag=True, help="Open index.html in the web browser when done.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Worker processes of --executor local [default: the number of cores]; 1 runs in this process.")
@click.option("--since", metavar="DATE", callback=_since, default=None,
              help="Only sessions whose last event (else file time) is on or after DATE (YYYY-MM-DD or ISO time, UTC).")
@click.option("--no-redact", is_flag=True, help="Show secrets in the reports instead of [REDACTED].")
@click.option("--format-reports", type=click.Choice(["html", "none"]), default="html", show_default=True,
              help="One report per session, or none (index and findings only).")
@click.option("--select", multiple=True, metavar="RULES", help="Only these rules or groups (comma-separated).")
@click.option("--ignore", multiple=True, metavar="RULES", help="Skip these rules or groups (comma-separated).")
@click.option("--rules-dir", multiple=True, type=click.Path(file_okay=False), help="Extra folder of rules.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Config file (default: analyzer.toml or pyproject.toml found upwards).")
@click.option("--executor", type=click.Choice(EXECUTORS), default="local", show_default=True,
              help="Where sessions are analyzed: a pool of --jobs local processes, or the Dask cluster "
                   "at --scheduler.")
@click.option("--scheduler", metavar="ADDRESS", default=None,
              help="The Dask scheduler for --executor dask, e.g. tcp://scheduler:8786.")
@click.option("--scheduler-timeout", type=click.FloatRange(min=0, min_open=True), default=10.0,
              show_default=True, metavar="SECONDS",
              help="How long to wait for the Dask scheduler to answer and for a worker to join.")
@click.option("--guard-log", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The live guard's decision log (JSONL): each report shows its session's decisions.")
@click.option("--timeout", type=click.FloatRange(min=0), default=DEFAULT_TIMEOUT, show_default=True,
              metavar="SECONDS",
              help="Stop a session that takes longer than this, list it as timed out and try it again "
                   "next run; 0: no limit. Not applied by --executor dask.")
def command(dirs: tuple[str, ...], out: str, fail_on: str | None, open_index: bool, jobs: int | None, since: datetime | None, no_redact: bool,
            format_reports: str, select: tuple[str, ...], ignore: tuple[str, ...], rules_dir: tuple[str, ...],
            config_path: str | None, executor: str, scheduler: str | None, scheduler_timeout: float,
            guard_log: str | None, timeout: float) -> None:
    """Analyze every session under DIRS: one HTML report each, index.html, findings.jsonl and
    summary.json in OUT. Sessions whose files did not change since the last run into OUT are
    taken from its cache.

    Without DIRS, the agents' own session folders that exist on this machine are read
    (~/.claude/projects, ~/.codex/sessions, opencode's and Gemini CLI's storage); stderr says which.

    DIRS may be fsspec URLs (s3://bucket/sessions, gs://…; the dask extra:
    pip install 'session-analyzer[dask]'). With --executor dask the sessions are analyzed on an
    existing Dask cluster and the results gathered here.

    A batch that ran exits 0, findings and failed sessions included, unless --fail-on is given;
    it exits 2 when DIRS hold no session or no session could be read.
    """
    if scheduler and executor != "dask":
        fail("--scheduler is for --executor dask")
    if not dirs:
        dirs = tuple(default_paths("batch"))
    try:
        config = load_config(Path(config_path) if config_path else None)
        options = BatchOptions(
            paths=list(dirs), out=Path(out), jobs=jobs or default_jobs(), since=since,
            reports=format_reports == "html", redact=not no_redact, config=config,
            select=rule_names(select), ignore=rule_names(ignore), rules_dirs=list(rules_dir),
            executor=executor, scheduler=scheduler, scheduler_timeout=scheduler_timeout,
            timeout=timeout or None, guard_log=guard_log,
        )
        run = run_batch(options, for_stream(sys.stderr))
    except (BatchError, ConfigError, SelectionError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        click.echo("analyzer batch: interrupted; finished sessions are cached for the next run", err=True)
        sys.exit(130)
    # session names and their errors come from the input: redacted (unless --no-redact) and inert
    click.echo(neutralise(Redactor(enabled=run.redact)(summary_text(run, Path(out)))))
    if open_index:
        open_in_browser(Path(out) / "index.html")
    if run.results and len(run.failed) == len(run.results):  # nothing read: no verdict to give
        sys.exit(EXIT_USAGE)
    if fail_on and any(Severity(f["severity"]).rank >= Severity(fail_on).rank for _, f in run.findings()):
        sys.exit(EXIT_FINDINGS)

