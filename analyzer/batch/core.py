"""``run_batch``: find every session under some folders (or fsspec URLs), analyze the new and
changed ones in parallel (a local process pool, or an existing Dask cluster), reuse the cache for
the rest, and write reports, ``index.html``, ``findings.jsonl`` and ``summary.json`` into one
output folder."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.batch.cache import Cache
from analyzer.batch.index import render_index
from analyzer.batch.job import Job, JobOptions, SessionResult, html_available, register_engine, warm_up
from analyzer.batch.names import safe_name
from analyzer.batch.outputs import write_atomic, write_outputs
from analyzer.batch.progress import Progress
from analyzer.batch.results import BatchRun, last_activity
from analyzer.batch.signature import Stat, as_stat, engine_signature, stat_of
from analyzer.config import Config
from analyzer.ingest.discover import Found, discover_sessions
from analyzer.ingest.remote import Listing, RemoteError, RemoteFound, discover_remote, is_url
from analyzer.pipeline import Analyzer
from analyzer.report._env import reports_dir

if TYPE_CHECKING:
    from analyzer.batch.dask_runner import DaskCluster

REPORTS_DIR = "sessions"
EXECUTORS = ("local", "dask")
DEFAULT_TIMEOUT = 600.0
"""Ten minutes: the largest sessions reported (500-750 MB) take well under a minute with reports."""
SAVE_EVERY = 60.0
"""Seconds between cache saves during a long run, so an interrupted run keeps most of its work."""


def default_jobs() -> int:
    """The cores this process may run on (its affinity), the default ``--jobs``."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


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
    executor: str = "local"
    """``local``: a process pool of ``jobs`` workers; ``dask``: the cluster at ``scheduler``."""
    scheduler: str | None = None
    """The Dask scheduler's address (``tcp://host:8786``)."""
    scheduler_timeout: float = 10.0
    """Seconds to wait for the scheduler to answer and for a worker to be there."""
    timeout: float | None = DEFAULT_TIMEOUT
    """Seconds one session may take before it is stopped and listed as timed out; None: no limit.
    Not applied on Dask, nor with ``jobs=1`` when ``run_batch`` runs off the main thread."""
    guard_log: str | None = None
    """The live guard's decision log, shown in each session's report; a log that changed since the
    last run renders every report again (any session may have new decisions)."""


@dataclass(frozen=True)
class _Folder:
    """A run's output folder, and its reports folder resolved once, after it was made."""

    root: Path
    reports: Path

    def inside(self, rel: str | None) -> Path | None:
        """``root / rel`` when it is a file inside the reports folder, else None."""
        if not rel:
            return None
        p = self.root / rel
        try:
            if p.resolve().parent != self.reports:
                return None
        except OSError:
            return None
        return p


def _prepare_out(out: Path, held: contextlib.ExitStack) -> _Folder:
    """The output folder, made and locked (into ``held``) before anything in it is touched."""
    if out.exists() and not out.is_dir():
        raise BatchError(f"{out}: exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    held.enter_context(_locked(out))
    reports = out / REPORTS_DIR
    if reports.is_symlink():
        raise BatchError(f"{reports}: is a symbolic link; refusing to write reports through it")
    reports.mkdir(exist_ok=True)
    for partial in reports.glob(".*.html.*.tmp"):  # a report a killed worker was writing
        with contextlib.suppress(OSError):
            partial.unlink()
    return _Folder(out, reports.resolve())


def _job(found: Found) -> Job:
    abs_path = os.path.abspath(found.path)
    key = f"{abs_path}#{found.member}" if found.member else abs_path
    session = f"{found.path}#{found.member}" if found.member else str(found.path)
    name = safe_name(found.relative, key)
    return Job(session=session, key=key, path=str(found.path), member=found.member,
               report_to=f"{REPORTS_DIR}/{name}.html")


def _remote_job(found: RemoteFound) -> Job:
    name = safe_name(found.relative, found.url)
    return Job(session=found.url, key=found.url, path=found.url, report_to=f"{REPORTS_DIR}/{name}.html")


def _unsupported(found: RemoteFound) -> SessionResult:
    return SessionResult(session=found.url, key=found.url, path=found.url, abs_path=found.url, status="error",
                         error=f"{found.url}: {found.unsupported}")


def _known(cache: Cache) -> Callable[[Path, os.stat_result], bool]:
    """Files this cache holds as one readable session each: unchanged since, they need no detecting
    again. A file that failed is looked at again: an empty opencode.db whose first sessions went to
    its write-ahead log keeps the size and time it had, yet is now a folder of sessions."""
    stats = {key: entry.get("main_stat") for key, entry in cache.entries.items()
             if not entry.get("member") and entry.get("status") == "ok"}

    def known(path: Path, st: os.stat_result) -> bool:
        was = stats.get(os.path.abspath(path))
        return was is not None and as_stat(st) == was
    return known


def _discover(options: BatchOptions, listing: Listing, cache: Cache) -> tuple[list[Found], list[RemoteFound]]:
    """Local paths as ``discover_sessions`` finds them; URLs listed through fsspec into ``listing``."""
    local = [p for p in options.paths if not is_url(p)]
    found = list(discover_sessions(local, exclude=[options.out], excluded=options.config.excluded,
                                   known=_known(cache))) if local else []
    remote: dict[str, RemoteFound] = {}
    for url in (p for p in options.paths if is_url(p)):
        try:
            for rf in discover_remote(url, listing, options.config.excluded_remote):
                remote.setdefault(rf.url, rf)
        except RemoteError as exc:
            raise BatchError(str(exc)) from None
    return found, list(remote.values())


def _stat_lookup(listing: Listing) -> Callable[[str], Stat]:
    """Stats of local files from the file system, of URLs from the listing of this run."""
    def stat(path: str) -> Stat:
        return listing.stat(path) if is_url(path) else stat_of(path)
    return stat


def _reuse(hit: SessionResult, job: Job, out: _Folder, reports: bool, redact: bool) -> SessionResult | None:
    """The cached result under this run's names, or None when its report must be written again."""
    hit = dataclasses.replace(hit, session=job.session, path=job.path)
    if not reports or hit.status != "ok":
        return hit
    if hit.report_error and hit.redacted == redact:
        return hit  # rendering failed with the same code and templates (the fingerprint): it would again
    old = out.inside(hit.report)
    if old is None or not old.is_file() or hit.redacted != redact:
        return None
    if hit.parts and (hit.report != job.report_to or not all(
            (p := out.inside(part.report)) is not None and p.is_file() for part in hit.parts if part.report)):
        return None  # a file of several sessions moved, or lost a report: analyze it again
    if hit.report != job.report_to:  # same session found under another root: its name moved
        new = out.root / str(job.report_to)
        os.replace(old, new)
        hit.report = job.report_to
    return hit


def _since_by_mtime(job: Job, since: datetime, stat: Callable[[str], Stat] = stat_of) -> bool:
    """False when the file was last written before ``since``: no event in it can be later."""
    st = stat(job.path)
    return st is None or not st[1] or datetime.fromtimestamp(st[1] / 1e9, tz=UTC) >= since


def _log_stamp(path: str | None) -> list[object] | None:
    """The guard log as the cache fingerprint sees it: which file, and its size and time."""
    return [path, stat_of(path)] if path else None


def _write_returned_report(out: _Folder, r: SessionResult) -> None:
    """Write the report a cluster worker rendered and returned."""
    html, r.report_html = r.report_html, None
    target = out.inside(r.report)
    if html is None or target is None:
        r.report, r.report_error = None, f"refusing to write a report outside {out.reports}: {r.report}"
        return
    try:
        write_atomic(target, html.encode("utf-8"))
    except OSError as exc:
        r.report, r.report_error = None, f"{type(exc).__name__}: {exc}"


def _for_cluster(jobs: list[Job], options: JobOptions) -> tuple[list[Job], JobOptions]:
    """Workers may run elsewhere: relative paths carry the folder they are relative to, and
    reports come back to be written here."""
    cwd = os.getcwd()
    jobs = [dataclasses.replace(j, cwd=cwd) if not is_url(j.path) and not os.path.isabs(j.path) else j
            for j in jobs]
    return jobs, dataclasses.replace(options, return_reports=True,
                                     rules_dirs=tuple(os.path.abspath(d) for d in options.rules_dirs))


def run_batch(options: BatchOptions, progress: Progress | None = None) -> BatchRun:
    """Run the batch; raises ``BatchError`` on usage problems (no session, unusable output folder,
    an unusable Dask cluster), ``ConfigError``/``SelectionError`` from loading the rules. Sessions
    never raise."""
    if options.executor not in EXECUTORS:
        raise BatchError(f"unknown executor {options.executor!r} (known: {', '.join(EXECUTORS)})")
    if options.executor == "local":
        return _run(options, progress, None)
    if not options.scheduler:
        raise BatchError("--executor dask needs --scheduler ADDRESS (e.g. tcp://scheduler:8786)")
    # asyncio and the Dask client: imported for dask runs only
    from analyzer.batch.dask_runner import DaskCluster, ExecutorError

    try:
        with DaskCluster(options.scheduler, options.scheduler_timeout) as cluster:
            return _run(options, progress, cluster)
    except ExecutorError as exc:
        raise BatchError(str(exc)) from None


LOCK_NAME = ".lock"


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """One run at a time per output folder: ``OUT/.lock`` is held (``flock``) until the run has
    written its outputs. A second run stops at once, naming the first one's pid, instead of doing
    all the same work and racing it on every report, the cache and the index. The lock goes with
    the process: a killed run leaves no stale lock behind. (No lock where ``fcntl`` is missing.)"""
    try:
        import fcntl
    except ImportError:
        yield
        return
    fd = os.open(out / LOCK_NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            raise BatchError(f"{out}: another batch run is writing this folder"
                             f"{f' (pid {holder})' if holder.isdigit() else ''}; wait for it to end, "
                             "or write to another folder") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def _run(options: BatchOptions, progress: Progress | None, cluster: DaskCluster | None) -> BatchRun:
    with contextlib.ExitStack() as held:
        return _run_holding(options, progress, cluster, held)


def _run_holding(options: BatchOptions, progress: Progress | None, cluster: DaskCluster | None,
                 held: contextlib.ExitStack) -> BatchRun:
    """The run; the output folder's lock is taken into ``held`` once the folder is there."""
    t0 = time.perf_counter()
    started_at = datetime.now(UTC)
    out = options.out
    if out.exists() and not out.is_dir():
        raise BatchError(f"{out}: exists and is not a folder")
    engine = Analyzer(options.config, options.select, options.ignore, list(options.rules_dirs))
    renderer_ok = html_available()
    reports = options.reports and renderer_ok
    note = None
    if options.reports and not renderer_ok:
        note = "HTML reports skipped: analyzer.report.html is not available in this installation"
    job_options = JobOptions(
        config=options.config,
        select=tuple(options.select) if options.select else None,
        ignore=tuple(options.ignore) if options.ignore else None,
        rules_dirs=tuple(options.rules_dirs), out=str(out), reports=reports, redact=options.redact,
        guard_log=str(Path(options.guard_log).resolve()) if options.guard_log else None,
    )
    register_engine(job_options, engine)
    fp = engine_signature(engine, reports_dir(), {"select": job_options.select, "ignore": job_options.ignore,
                                               "rules_dirs": job_options.rules_dirs,
                                               "guard_log": _log_stamp(job_options.guard_log)})
    cache = Cache.load(out, fp)
    listing = Listing()
    found, remote_found = _discover(options, listing, cache)
    if not found and not remote_found:
        raise BatchError(f"no session found under {', '.join(map(str, options.paths))}")
    folder = _prepare_out(out, held)
    cache = Cache.load(out, fp)  # again, under the lock: a run that just ended may have saved it
    stat = _stat_lookup(listing)

    results: dict[str, SessionResult] = {}
    carried: dict[str, dict[str, object]] = {}
    """Cache entries of sessions left out by --since before loading: kept for a later run."""
    todo: list[Job] = []
    filtered_early = 0
    names: dict[str, str] = {}
    jobs: list[tuple[Job, str]] = [(_job(f), f.relative) for f in found]
    for rf in remote_found:
        if rf.unsupported:
            results[rf.url] = _unsupported(rf)
            names[rf.url] = rf.relative
        else:
            jobs.append((_remote_job(rf), rf.relative))
    for job, relative in jobs:
        names[job.key] = relative
        hit = cache.fresh(job.key, stat)
        reused = _reuse(hit, job, folder, reports, options.redact) if hit else None
        if reused is not None:
            results[job.key] = reused
        elif options.since and not _since_by_mtime(job, options.since, stat):
            filtered_early += 1
            if job.key in cache.entries:
                carried[job.key] = cache.entries[job.key]
        else:
            todo.append(job)
    cache.carry = carried

    workers = max(1, min(options.jobs, len(todo)))
    if workers > 1 or cluster is not None:
        # Largest first: a big session started last would leave the other workers idle at the end.
        todo = [dataclasses.replace(job, size=(stat(job.path) or (0,))[0] or 0) for job in todo]
        todo.sort(key=lambda job: -job.size)
    if cluster is None and todo:
        if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
            warm_up(engine)  # forked workers inherit loaded models instead of each loading its own
        # What is loaded now (rules, parsers, models) lives as long as the process: out of the
        # collector's sight, full collections stop re-scanning it after every few sessions, and
        # forked workers stop writing to (so copying) the pages they share with this process.
        # Measured on 1,000 sessions: --jobs 2 went from 8.3 s to 4.5 s.
        gc.freeze()
    last_save = time.monotonic()

    def on_result(r: SessionResult) -> None:
        nonlocal last_save
        if is_url(r.abs_path):  # the cache compares what this run's listing said
            r.main_stat, r.mtime_ns = listing.stat(r.abs_path), listing.mtime_ns(r.abs_path)
            r.deps = dict(listing.dependencies(r.abs_path, r.format))
        for part in r.listed():  # a file of several sessions returns a report for each
            if part.report_html is not None:
                _write_returned_report(folder, part)
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
            if cluster is not None:
                cluster_jobs, cluster_options = _for_cluster(todo, job_options)
                register_engine(cluster_options, engine)  # the same rules: an in-process worker reuses it
                cluster.run(cluster_jobs, cluster_options, on_result)
            else:
                # process pools: not imported by a run the cache serves
                from analyzer.batch.runner import run_jobs

                run_jobs(todo, job_options, workers, on_result, options.timeout)
        finally:
            if progress:
                progress.stop()
            cache.save(results)  # even when interrupted: the next run resumes from here
            if cluster is None:
                gc.unfreeze()  # a process that runs batch after batch must not freeze more each time

    _remove_stale_reports(folder, cache, results)
    cache.save(results)

    listed = []
    filtered = filtered_early
    for r in (part for found_file in results.values() for part in found_file.listed()):
        if options.since and (last_activity(r) or options.since) < options.since:
            filtered += 1
            continue
        listed.append(r if reports else dataclasses.replace(r, report=None))
    for r in results.values():  # a file's other sessions are listed under its name, numbered
        names.update({p.key: f"{names.get(r.key, r.session)}#{p.part}" for p in r.parts})
    fresh = [r for r in results.values() if not r.cached]
    run = BatchRun(
        results=listed, analyzed=sum(len(r.listed()) for r in fresh),
        cached=sum(len(r.listed()) for r in results.values() if r.cached), filtered=filtered,
        engine_loads=sum(r.loaded_engine for r in fresh), workers=len({r.worker for r in fresh if r.worker}),
        jobs=cluster.threads if cluster is not None else options.jobs, since=options.since, reports="html" if options.reports else "none",
        reports_note=note, rules=sorted(r.name for r in engine.rules), started_at=started_at, names=names,
        redact=options.redact,
    )
    run.seconds = time.perf_counter() - t0
    write_outputs(run, out)
    write_atomic(out / "index.html", render_index(run, [str(p) for p in options.paths]).encode("utf-8"))
    return run


def _remove_stale_reports(out: _Folder, cache: Cache, results: dict[str, SessionResult]) -> None:
    """Reports this folder's last run wrote for sessions no longer found (deleted, renamed)."""
    keep = {p.report for r in results.values() for p in r.listed() if p.report}
    keep |= {str(e["report"]) for entry in cache.carry.values()
             for e in [entry, *(p for p in entry.get("parts") or [] if isinstance(p, dict))] if e.get("report")}
    for entry in cache.previous.values():
        rel = entry.get("report") if isinstance(entry, dict) else None
        if isinstance(rel, str) and rel not in keep:
            p = out.inside(rel)
            if p is not None and p.is_file() and not p.is_symlink():
                p.unlink()
