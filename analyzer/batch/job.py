"""The work for one session, as a plain top-level function with picklable arguments and a small
picklable result, so any pool can run it: ``multiprocessing`` here, a Dask cluster later.

``analyze_path(path, options)`` loads, analyzes, writes the HTML report (if asked) and returns a
``SessionResult``. It never raises: an unreadable file or a crash anywhere becomes
``status="error"`` with the message. Rules and catalog are loaded once per process (``_engine``).
"""

from __future__ import annotations

import inspect
import os
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from analyzer.batch.signature import Stat, dependencies, stat_of
from analyzer.config import Config
from analyzer.events import Session, ToolEvent, UserEvent
from analyzer.ingest import IngestError, load, opencode
from analyzer.pipeline import Analysis, Analyzer
from analyzer.report.json_doc import finding_dict


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
    suppressed: int = 0
    problems: list[str] = field(default_factory=list)
    report: str | None = None
    """The HTML report, relative to the output folder; None when none was written."""
    redacted: bool = True
    report_error: str | None = None
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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SessionResult:
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class Job:
    """One session to analyze."""

    session: str
    key: str
    path: str
    member: str | None = None
    report_to: str | None = None


_ENGINES: dict[object, Analyzer] = {}
"""Analyzers of this process by options: rules and catalog load once per worker, not per session."""


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


def html_renderer() -> Callable[..., Any] | None:
    """``analyzer.report.html.render_html``, or None while that module is not there."""
    try:
        from analyzer.report import html
    except ImportError:
        return None
    render: Callable[..., Any] | None = getattr(html, "render_html", None)
    return render


def load_session(path: str, member: str | None) -> Session:
    if member is not None:
        return opencode.load_session(Path(path), member)
    return load(path)


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {Path(last.filename).name}:{last.lineno} in {last.name})"


def _write_report(analysis: Analysis, engine: Analyzer, options: JobOptions, report_to: str) -> str:
    render = html_renderer()
    if render is None:
        raise RuntimeError("HTML reports are not available (analyzer.report.html is missing)")
    assert options.out is not None
    out = Path(options.out)
    target = out / report_to
    if out.resolve() not in target.resolve().parents:
        raise RuntimeError(f"refusing to write outside {out}: {report_to}")
    extra: dict[str, Any] = {}
    if "rules" in inspect.signature(render).parameters:
        extra["rules"] = engine.ruleset.rules  # the docs of the rules that ran, user rules included
    doc = render(analysis, redact=options.redact, **extra)
    data = doc.encode("utf-8") if isinstance(doc, str) else bytes(doc)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)  # replaces a symlink planted at the target instead of writing through it
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


def analyze_path(path: str, options: JobOptions, member: str | None = None, report_to: str | None = None,
                 session: str | None = None, key: str | None = None) -> SessionResult:
    """Load and analyze the session at ``path`` (``member``: a session id inside a database);
    write its report to ``options.out / report_to`` when given. Never raises."""
    t0 = time.perf_counter()
    abs_path = os.path.abspath(path)
    result = SessionResult(session=session or (f"{path}#{member}" if member else path),
                           key=key or (f"{abs_path}#{member}" if member else abs_path), path=path,
                           abs_path=abs_path, member=member, worker=os.getpid(), redacted=options.redact)
    result.main_stat = stat_of(abs_path)
    result.mtime_ns = result.main_stat[1] if result.main_stat else None
    sources: list[str] = []
    try:
        engine, result.loaded_engine = _engine(options)
        loaded = load_session(path, member)
        sources = loaded.sources
        _fill(result, loaded)
        analysis = engine.analyze_session(loaded)
        result.findings = [finding_dict(f) for f in analysis.findings]
        result.suppressed = len(analysis.suppressed)
        result.problems = list(analysis.problems)
        if report_to and options.reports and options.out:
            try:
                result.report = _write_report(analysis, engine, options, report_to)
            except Exception as exc:  # a report that fails to render must not lose the findings
                result.report_error = f"{type(exc).__name__}: {exc}{_where(exc)}"
    except IngestError as exc:
        result.status, result.error = "error", str(exc)
    except Exception as exc:  # anything a bad session triggers: keep the message, never stop the batch
        result.status, result.error = "error", f"{type(exc).__name__}: {exc}{_where(exc)}"
    result.deps = dependencies(abs_path, [os.path.abspath(s) for s in sources], result.format, member)
    result.seconds = round(time.perf_counter() - t0, 4)
    return result


def run_job(job: Job, options: JobOptions) -> SessionResult:
    return analyze_path(job.path, options, member=job.member, report_to=job.report_to,
                        session=job.session, key=job.key)
