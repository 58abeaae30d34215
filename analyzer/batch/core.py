"""``run_batch``: find every session under some folders, analyze the new and changed ones in
parallel, reuse the cache for the rest, and write reports, ``index.html``, ``findings.jsonl`` and
``summary.json`` into one output folder."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from analyzer.batch.cache import Cache
from analyzer.batch.index import render_index, templates_dir
from analyzer.batch.job import Job, JobOptions, SessionResult, html_renderer, register_engine, warm_up
from analyzer.batch.names import safe_name
from analyzer.batch.outputs import write_atomic, write_outputs
from analyzer.batch.progress import Progress
from analyzer.batch.results import BatchRun, last_activity
from analyzer.batch.runner import run_jobs
from analyzer.batch.signature import fingerprint, stat_of
from analyzer.config import Config
from analyzer.ingest.discover import Found, discover_sessions
from analyzer.pipeline import Analyzer

REPORTS_DIR = "sessions"
SAVE_EVERY = 60.0
"""Seconds between cache saves during a long run, so an interrupted run keeps most of its work."""


class BatchError(Exception):
    """A usage problem: nothing to analyze, or an output folder that cannot be used."""


@dataclass
class BatchOptions:
    paths: Sequence[str]
    out: Path
    jobs: int = 1
    since: datetime | None = None
    """Only sessions whose last event (else file mtime) is on or after this (aware) time."""
    reports: bool = True
    """Write one HTML report per session."""
    redact: bool = True
    config: Config = field(default_factory=Config)
    select: list[str] | None = None
    ignore: list[str] | None = None
    rules_dirs: list[str] = field(default_factory=list)


def _prepare_out(out: Path) -> Path:
    if out.exists() and not out.is_dir():
        raise BatchError(f"{out}: exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    reports = out / REPORTS_DIR
    if reports.is_symlink():
        raise BatchError(f"{reports}: is a symbolic link; refusing to write reports through it")
    reports.mkdir(exist_ok=True)
    return reports


def _job(found: Found) -> Job:
    abs_path = os.path.abspath(found.path)
    key = f"{abs_path}#{found.member}" if found.member else abs_path
    session = f"{found.path}#{found.member}" if found.member else str(found.path)
    name = safe_name(found.relative, key)
    return Job(session=session, key=key, path=str(found.path), member=found.member,
               report_to=f"{REPORTS_DIR}/{name}.html")


def _inside(out: Path, rel: str | None) -> Path | None:
    """``out / rel`` when it is a file inside ``out/sessions``, else None."""
    if not rel:
        return None
    p = out / rel
    try:
        if p.resolve().parent != (out / REPORTS_DIR).resolve():
            return None
    except OSError:
        return None
    return p


def _reuse(hit: SessionResult, job: Job, out: Path, reports: bool, redact: bool) -> SessionResult | None:
    """The cached result under this run's names, or None when its report must be written again."""
    hit = dataclasses.replace(hit, session=job.session, path=job.path)
    if not reports or hit.status != "ok":
        return hit
    if hit.report_error and hit.redacted == redact:
        return hit  # rendering failed with the same code and templates (the fingerprint): it would again
    old = _inside(out, hit.report)
    if old is None or not old.is_file() or hit.redacted != redact:
        return None
    if hit.report != job.report_to:  # same session found under another root: its name moved
        new = out / str(job.report_to)
        os.replace(old, new)
        hit.report = job.report_to
    return hit


def _since_by_mtime(job: Job, since: datetime) -> bool:
    """False when the file was last written before ``since``: no event in it can be later."""
    st = stat_of(job.path)
    return st is None or datetime.fromtimestamp(st[1] / 1e9, tz=UTC) >= since


def run_batch(options: BatchOptions, progress: Progress | None = None) -> BatchRun:
    """Run the batch; raises ``BatchError`` on usage problems (no session, unusable output folder),
    ``ConfigError``/``SelectionError`` from loading the rules. Sessions never raise."""
    t0 = time.perf_counter()
    started_at = datetime.now(UTC)
    out = options.out
    if out.exists() and not out.is_dir():
        raise BatchError(f"{out}: exists and is not a folder")
    found = list(discover_sessions(options.paths, exclude=[out], exclude_globs=options.config.exclude))
    if not found:
        raise BatchError(f"no session found under {', '.join(map(str, options.paths))}")
    _prepare_out(out)

    engine = Analyzer(options.config, options.select, options.ignore, list(options.rules_dirs))
    renderer_ok = html_renderer() is not None
    reports = options.reports and renderer_ok
    note = None
    if options.reports and not renderer_ok:
        note = "HTML reports skipped: analyzer.report.html is not available in this installation"
    job_options = JobOptions(
        config=options.config,
        select=tuple(options.select) if options.select else None,
        ignore=tuple(options.ignore) if options.ignore else None,
        rules_dirs=tuple(options.rules_dirs), out=str(out), reports=reports, redact=options.redact,
    )
    register_engine(job_options, engine)
    fp = fingerprint(engine, templates_dir(), {"select": job_options.select, "ignore": job_options.ignore,
                                               "rules_dirs": job_options.rules_dirs})
    cache = Cache.load(out, fp)

    results: dict[str, SessionResult] = {}
    carried: dict[str, dict[str, object]] = {}
    """Cache entries of sessions left out by --since before loading: kept for a later run."""
    todo: list[Job] = []
    filtered_early = 0
    names: dict[str, str] = {}
    for f in found:
        job = _job(f)
        names[job.key] = f.relative
        hit = cache.fresh(job.key)
        reused = _reuse(hit, job, out, reports, options.redact) if hit else None
        if reused is not None:
            results[job.key] = reused
        elif options.since and not _since_by_mtime(job, options.since):
            filtered_early += 1
            if job.key in cache.entries:
                carried[job.key] = cache.entries[job.key]
        else:
            todo.append(job)
    cache.carry = carried

    workers = max(1, min(options.jobs, len(todo)))
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        warm_up(engine)  # forked workers inherit loaded models instead of each loading its own
    last_save = time.monotonic()

    def on_result(r: SessionResult) -> None:
        nonlocal last_save
        results[r.key] = r
        if progress:
            progress.advance(r)
        if time.monotonic() - last_save > SAVE_EVERY:
            cache.save(results)
            last_save = time.monotonic()

    if todo:
        if progress:
            progress.start(len(todo))
        try:
            run_jobs(todo, job_options, workers, on_result)
        finally:
            if progress:
                progress.stop()
            cache.save(results)  # even when interrupted: the next run resumes from here

    _remove_stale_reports(out, cache, results)
    cache.save(results)

    listed = []
    filtered = filtered_early
    for r in results.values():
        if options.since and (last_activity(r) or options.since) < options.since:
            filtered += 1
            continue
        listed.append(r if reports else dataclasses.replace(r, report=None))
    fresh = [r for r in results.values() if not r.cached]
    run = BatchRun(
        results=listed, analyzed=len(fresh), cached=len(results) - len(fresh), filtered=filtered,
        engine_loads=sum(r.loaded_engine for r in fresh), workers=len({r.worker for r in fresh}),
        jobs=options.jobs, since=options.since, reports="html" if options.reports else "none",
        reports_note=note, rules=sorted(r.name for r in engine.rules), started_at=started_at, names=names,
        redact=options.redact,
    )
    run.seconds = time.perf_counter() - t0
    write_outputs(run, out)
    write_atomic(out / "index.html", render_index(run, [str(p) for p in options.paths]).encode("utf-8"))
    return run


def _remove_stale_reports(out: Path, cache: Cache, results: dict[str, SessionResult]) -> None:
    """Reports this folder's last run wrote for sessions no longer found (deleted, renamed)."""
    keep = {r.report for r in results.values() if r.report}
    keep |= {str(e["report"]) for e in cache.carry.values() if e.get("report")}
    for entry in cache.previous.values():
        rel = entry.get("report") if isinstance(entry, dict) else None
        if isinstance(rel, str) and rel not in keep:
            p = _inside(out, rel)
            if p is not None and p.is_file() and not p.is_symlink():
                p.unlink()
