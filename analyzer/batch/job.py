"""The work for one session, as a plain top-level function with picklable arguments and a small
picklable result, so any pool can run it: ``multiprocessing`` here, a Dask cluster later.

``analyze_path(path, options)`` loads, analyzes, writes the HTML report (if asked) and returns a
``SessionResult``. It never raises: an unreadable file or a crash anywhere becomes
``status="error"`` with the message. Rules and catalog are loaded once per process (``_engine``).

``path`` may be an fsspec URL (``s3://…``): the session's files are copied into a temporary folder,
loaded from there, and every path in the session is shown as the URL again. On a cluster the
report comes back as a string (``JobOptions.return_reports``) for the client to write.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.batch.signature import Stat, dependencies, stat_of
from analyzer.config import Config
from analyzer.events import Session, ToolEvent, UserEvent
from analyzer.ingest import IngestError, load_all, opencode, remote
from analyzer.pipeline import Analysis, Analyzer, partial_read
from analyzer.report.json_doc import finding_dict

if TYPE_CHECKING:
    from analyzer.report.guard_log import GuardLog


@dataclass(frozen=True)
class JobOptions:
    """Everything a worker needs besides the session: picklable, the same for every job."""

    config: Config = field(default_factory=Config)
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    rules_dirs: tuple[str, ...] = ()
    out: str | None = None
    """The batch output folder; ``report_to`` paths are relative to it."""
    reports: bool = True
    """Write one HTML report per session (when ``analyzer.report.html`` is available)."""
    redact: bool = True
    """Redact secrets in the reports."""
    return_reports: bool = False
    """Put the rendered report in ``SessionResult.report_html`` instead of writing it (workers on
    other machines cannot write into the client's output folder)."""
    guard_log: str | None = None
    """The live guard's decision log: each report shows its session's decisions (``report --guard-log``)."""

    def engine_key(self) -> tuple[str, tuple[str, ...] | None, tuple[str, ...] | None, tuple[str, ...]]:
        return (self.config.model_dump_json(), self.select, self.ignore, self.rules_dirs)


@dataclass
class SessionResult:
    """What the batch keeps of one session: enough for the index, findings.jsonl, summary.json and
    the cache, never the events themselves."""

    session: str
    """The session as listed: its path as found (``db#member`` for a database member)."""
    key: str
    """Cache key: the absolute path (``#member``)."""
    path: str
    """The path as found (relative paths stay relative, as ``check`` shows them)."""
    abs_path: str = ""
    member: str | None = None
    status: str = "ok"
    """``ok`` or ``error``."""
    error: str | None = None
    format: str | None = None
    agent: str | None = None
    session_id: str | None = None
    model: str | None = None
    started: str | None = None
    """ISO time of the first timestamped event."""
    ended: str | None = None
    """ISO time of the last timestamped event."""
    mtime_ns: int | None = None
    """The main file's modification time: the session's date when its events have no time."""
    events: int = 0
    diagnostics: dict[str, int] = field(default_factory=dict)
    """Diagnostics per level."""
    findings: list[dict[str, Any]] = field(default_factory=list)
    """Each finding exactly as ``check --format json`` emits it."""
    finding_times: list[str | None] = field(default_factory=list)
    """ISO time of each finding's anchor event (same order as ``findings``), for the index."""
    suppressed: int = 0
    problems: list[str] = field(default_factory=list)
    report: str | None = None
    """The HTML report, relative to the output folder; None when none was written."""
    redacted: bool = True
    report_error: str | None = None
    report_html: str | None = None
    """The rendered report, with ``JobOptions.return_reports``, until the client writes it to ``report``."""
    main_stat: Stat = None
    deps: dict[str, Stat] = field(default_factory=dict)
    """Stats of the other files and folders the session was read from (the cache checks them)."""
    seconds: float = 0.0
    worker: int = 0
    """Process id that analyzed it."""
    loaded_engine: bool = False
    """This call loaded rules and catalog (the first session of its process)."""
    cached: bool = False
    """Taken from the cache, not analyzed in this run."""
    retry: bool = False
    """Never taken from the cache: the next run analyzes it again (a session that timed out may
    finish under a longer ``--timeout`` or on a less loaded machine)."""
    part: int | None = None
    """Which session of a file that holds several this is (``Session.part``); None for most files."""
    parts: list[SessionResult] = field(default_factory=list)
    """The file's other sessions (parts 2…), each listed on its own; this result is part 1. They
    live in the file's result because the file is what is cached and re-analyzed."""

    def to_dict(self) -> dict[str, Any]:
        """The fields as a shallow dict (lists and dicts are shared, not copied): it is only ever
        serialized. ``dataclasses.asdict`` deep-copied every finding: 0.1-0.2 s per save of 1,000."""
        d = {name: getattr(self, name) for name in self.__dataclass_fields__}
        d["parts"] = [p.to_dict() for p in self.parts]
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SessionResult:
        known = cls.__dataclass_fields__
        fields = {k: v for k, v in data.items() if k in known}
        fields["parts"] = [cls.from_dict(p) for p in fields.get("parts") or [] if isinstance(p, dict)]
        return cls(**fields)

    def listed(self) -> list[SessionResult]:
        """This result and its file's other sessions, as the index and outputs list them."""
        return [self, *self.parts]


@dataclass(frozen=True)
class Job:
    """One session to analyze."""

    session: str
    key: str
    path: str
    member: str | None = None
    report_to: str | None = None
    cwd: str | None = None
    """The folder a relative ``path`` is relative to, for workers started elsewhere (None: this one)."""
    size: int = 0
    """Bytes of its main file, when known: big sessions are sent to workers alone."""


_ENGINES: dict[object, Analyzer] = {}
"""Analyzers of this process by options: rules and catalog load once per worker, not per session."""

_ANALYZING = threading.Lock()
"""One analysis at a time per process: a Dask worker runs tasks in threads, and the parsers and
models the analyzer keeps are not made to be shared by threads (the GIL would serialize them anyway)."""


def register_engine(options: JobOptions, engine: Analyzer) -> None:
    """Reuse an analyzer already built (in-process runs; forked workers inherit it)."""
    _ENGINES[options.engine_key()] = engine


def _engine(options: JobOptions) -> tuple[Analyzer, bool]:
    key = options.engine_key()
    if key in _ENGINES:
        return _ENGINES[key], False
    engine = Analyzer(options.config, list(options.select) if options.select else None,
                      list(options.ignore) if options.ignore else None, list(options.rules_dirs))
    _ENGINES[key] = engine
    return engine, True


def warm_up(engine: Analyzer) -> None:
    """Analyze a two-event session so the lazily loaded parts (spaCy, tree-sitter, compiled
    patterns) are in memory before worker processes are forked from this one."""
    session = Session(path="<warm-up>", format="fixture", events=[
        UserEvent(index=0, text="Start the API on port 8000"),
        ToolEvent(index=1, name="Bash", category="shell", command="nohup uvicorn app:api --port 8000 &"),
    ])
    engine.analyze_session(session)


def html_available() -> bool:
    """Whether ``analyzer.report.html`` is installed, without importing it (a run that renders
    nothing, such as a re-run served from the cache, never pays for Jinja and the report code)."""
    return importlib.util.find_spec("analyzer.report.html") is not None


def load_sessions(path: str, member: str | None) -> list[Session]:
    """The sessions of one listed path: a database member, or every session in the file."""
    if member is not None:
        return [opencode.load_session(Path(path), member)]
    return load_all(path)


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {Path(last.filename).name}:{last.lineno} in {last.name})"


def _time_at(session: Session, index: int) -> str | None:
    """ISO time of event ``index``: its own, else the nearest earlier one (as the report shows it)."""
    events = session.events  # walked back in place: a slice would copy a million-event list per finding
    return next((ts.isoformat() for i in range(min(index, len(events) - 1), -1, -1)
                 if (ts := events[i].ts) is not None), None)


def _index_link(report_to: str) -> str:
    """The batch index as seen from the report at ``report_to`` (relative to the output folder)."""
    return "../" * report_to.count("/") + "index.html"


def _guard(options: JobOptions, session: Session) -> GuardLog | None:
    """This session's decisions in the guard log (read per session: the log is shared by all)."""
    if options.guard_log is None:
        return None
    from analyzer.report.guard_log import read_guard_log

    return read_guard_log(Path(options.guard_log), session)


def _render(analysis: Analysis, engine: Analyzer, options: JobOptions, report_to: str) -> bytes:
    from analyzer.report.html import render_html  # only runs that write reports import the report code

    # the docs of the rules that ran, user rules included
    return render_html(analysis, redact=options.redact, rules=engine.ruleset.rules,
                       index=_index_link(report_to), guard=_guard(options, analysis.session)).encode("utf-8")


def _write_report(analysis: Analysis, engine: Analyzer, options: JobOptions, report_to: str) -> str:
    assert options.out is not None
    out = Path(options.out)
    target = out / report_to
    if out.resolve() not in target.resolve().parents:
        raise RuntimeError(f"refusing to write outside {out}: {report_to}")
    from analyzer.report.html import write_html  # only runs that write reports import the report code

    target.parent.mkdir(parents=True, exist_ok=True)
    # streamed through a temporary file, replaced at the end: a symlink planted at the target is
    # replaced, not written through, and a failed render leaves no half report
    write_html(analysis, target, redact=options.redact, rules=engine.ruleset.rules, index=_index_link(report_to),
               guard=_guard(options, analysis.session))
    return report_to


def _fill(result: SessionResult, session: Session) -> None:
    result.format = session.format
    result.agent = session.agent or session.format
    result.session_id = session.session_id
    result.model = session.model
    result.events = len(session.events)
    times = [e.ts for e in session.events if e.ts is not None]
    if times:
        result.started = min(times).isoformat()
        result.ended = max(times).isoformat()
    result.diagnostics = dict(sorted(Counter(d.level.value for d in session.diagnostics).items()))


Moved = tuple[str, str] | None
"""``(where the files were read, where they are)``: a path prefix to show as another."""


def _shown(text: str, moved: Moved) -> str:
    return text.replace(moved[0], moved[1]) if moved else text


def _relocate(session: Session, moved: tuple[str, str]) -> None:
    """Show the paths of a session read from a copy (or from an absolute path) as where it is."""
    local, shown = moved

    def move(p: str) -> str:
        return shown + p[len(local):] if p.startswith(local) else p

    session.path = move(session.path)
    session.sources = [move(s) for s in session.sources]
    for ev in session.events:
        if ev.source is not None:
            ev.source = move(ev.source)
    session.diagnostics = [d.model_copy(update={"file": move(d.file) if d.file else d.file,
                                                "message": d.message.replace(local, shown)})
                           for d in session.diagnostics]


def _analyze(result: SessionResult, options: JobOptions, report_to: str | None, fetch: Callable[[], str],
             moved: Moved, read: Callable[[list[str], str], None] | None = None) -> list[str]:
    """Load (from the path ``fetch`` returns), analyze and report into ``result``; returns the files
    the session was read from, as read. ``read`` is told those files and the format as soon as
    the session is loaded, before the analysis. Never raises."""
    sources: list[str] = []
    try:
        local = fetch()  # outside the lock: copying from a store overlaps other threads' analyses
        with _ANALYZING:
            engine, result.loaded_engine = _engine(options)
            loaded = load_sessions(local, result.member)
            sources = list(loaded[0].sources)
            if read is not None:
                read(sources, loaded[0].format)
            for session in loaded:
                if session.part is not None and session.part > 1:
                    result.parts.append(_part_result(result, session.part))
                part = result.parts[-1] if session.part and session.part > 1 else result
                part.part = session.part
                _analyze_one(part, session, engine, options, _part_name(report_to, session.part), moved)
    except IngestError as exc:
        result.status, result.error = "error", _shown(str(exc), moved)
    except Exception as exc:  # anything a bad session triggers: keep the message, never stop the batch
        result.status, result.error = "error", _shown(f"{type(exc).__name__}: {exc}{_where(exc)}", moved)
    return sources


def _part_result(first: SessionResult, n: int) -> SessionResult:
    """The result of session ``n`` of ``first``'s file: listed as ``path#n``."""
    return SessionResult(session=f"{first.session}#{n}", key=f"{first.key}#{n}", path=first.path,
                         abs_path=first.abs_path, worker=first.worker, redacted=first.redacted, part=n)


def _part_name(report_to: str | None, part: int | None) -> str | None:
    """Session ``part``'s report beside the file's: ``name-2.html`` (part 1 keeps ``name.html``)."""
    if report_to is None or part is None or part == 1:
        return report_to
    stem, dot, ext = report_to.rpartition(".")
    return f"{stem}-{part}.{ext}" if dot else f"{report_to}-{part}"


def _analyze_one(result: SessionResult, loaded: Session, engine: Analyzer, options: JobOptions,
                 report_to: str | None, moved: Moved) -> None:
    """Analyze one loaded session and report it into ``result``; a session most of whose records
    were lost is listed as failed (``status="error"``), with what was found in the rest."""
    if moved:
        _relocate(loaded, moved)
    lost = partial_read(loaded)
    _fill(result, loaded)
    if not loaded.events and any(d.level == "error" for d in loaded.diagnostics):
        result.status, result.error = "error", f"{loaded.path}: no readable record"
        return
    if lost is not None:
        result.status, result.error = "error", f"{loaded.path}: {lost}"
    analysis = engine.analyze_session(loaded)
    result.findings = [finding_dict(f) for f in analysis.findings]
    result.finding_times = [_time_at(loaded, f.anchor.index) for f in analysis.findings]
    result.suppressed = len(analysis.suppressed)
    result.problems = list(analysis.problems)
    if report_to and options.reports and (options.out or options.return_reports):
        try:
            if options.return_reports:
                result.report_html = _render(analysis, engine, options, report_to).decode("utf-8")
                result.report = report_to
            else:
                result.report = _write_report(analysis, engine, options, report_to)
        except Exception as exc:  # a report that fails to render must not lose the findings
            result.report_error = _shown(f"{type(exc).__name__}: {exc}{_where(exc)}", moved)


def _fetch_url(url: str, member: str | None, dest: str) -> str:
    if member is not None:
        raise IngestError(url, remote.DATABASE_UNSUPPORTED)
    return str(remote.fetch(url, Path(dest)))


def analyze_path(path: str, options: JobOptions, member: str | None = None, report_to: str | None = None,
                 session: str | None = None, key: str | None = None, cwd: str | None = None) -> SessionResult:
    """Load and analyze the session at ``path`` (``member``: a session id inside a database; a
    relative ``path`` is relative to ``cwd`` when given); write its report to
    ``options.out / report_to`` when given (or return it, ``options.return_reports``). A URL is
    read through fsspec. Never raises."""
    t0 = time.perf_counter()
    is_url = remote.is_url(path)
    local = path if is_url or cwd is None else os.path.join(cwd, path)
    abs_path = path if is_url else os.path.abspath(local)
    result = SessionResult(session=session or (f"{path}#{member}" if member else path),
                           key=key or (f"{abs_path}#{member}" if member else abs_path), path=path,
                           abs_path=abs_path, member=member, worker=os.getpid(), redacted=options.redact)
    if is_url:  # stats come from the client's listing (``Listing``), which the cache compares
        with tempfile.TemporaryDirectory(prefix="analyzer-") as tmp:
            _analyze(result, options, report_to, lambda: _fetch_url(path, member, tmp),
                     (os.path.join(tmp, ""), remote.parent_url(path) + "/"))
    else:
        result.main_stat = stat_of(abs_path)  # before it is read: a change while it is read shows next run
        result.mtime_ns = result.main_stat[1] if result.main_stat else None
        moved = (os.path.join(str(cwd), ""), "") if local != path else None
        started = _file_clock_ns()
        stamped = False

        def stamp(sources: list[str], fmt: str) -> None:
            # the files' stats as the session was read, before the (long) analysis: a sub-agent file
            # written meanwhile no longer reads as fresh next run with this run's old content
            nonlocal stamped
            stamped = True
            result.deps = dependencies(abs_path, [os.path.abspath(s) for s in sources], fmt, member)
            # written while it was being read (its time not before the read began): what was read may
            # be half old, half new; read it again next run
            result.retry = any(st is not None and st[1] >= started for st in result.deps.values())

        _analyze(result, options, report_to, lambda: local, moved, stamp)
        if not stamped:  # nothing loaded: the folders a session could appear in, as before
            result.deps = dependencies(abs_path, [], result.format, member)
    result.seconds = round(time.perf_counter() - t0, 4)
    return result


def _file_clock_ns() -> int:
    """Now, on the coarse clock Linux stamps file times from (``time.time_ns()`` runs ahead of it).
    File times still lag it by a few milliseconds on some file systems: a write that close to the
    start of a read is not seen as during it (the next change of the file is)."""
    coarse = getattr(time, "CLOCK_REALTIME_COARSE", None)
    return time.clock_gettime_ns(coarse) if coarse is not None else time.time_ns()


def run_job(job: Job, options: JobOptions) -> SessionResult:
    return analyze_path(job.path, options, member=job.member, report_to=job.report_to,
                        session=job.session, key=job.key, cwd=job.cwd)
