"""Running jobs: in this process (``jobs=1``) or in a pool of worker processes.

A worker that dies (a crash in a native library, the kernel's OOM killer) breaks the whole pool
and fails every pending job with it. The runner then knows which jobs had started (each worker
reports a job's key, its pid and the time when it starts and ends one), runs the jobs that never
started in a new pool, and runs each started-but-unfinished one alone; one that kills its worker
alone is listed with that error.

A time limit is enforced where the job runs: an alarm interrupts it (``time_limit``) and it is
listed as timed out. A job stuck where the alarm cannot reach (native code that never returns to
Python) gets its worker killed by the parent once the limit is overrun by a grace period, and is
listed the same way. The parent never kills a worker whose job has ended: it may be sending its
results, and a message cut in the middle would leave the pool waiting forever.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.queues import SimpleQueue
from typing import Any

from analyzer.batch.job import Job, JobOptions, SessionResult, run_job

OnResult = Callable[[SessionResult], None]

Start = tuple[str, int, float, bool]
"""A job's key, the pid of its worker, when (``time.monotonic``, the same clock in every process
of a machine), and whether it ended (else it started)."""

_started: SimpleQueue[Start] | None = None
"""In a pool worker: where it reports each job it starts and ends."""
_timeout: float | None = None
"""In a pool worker: the time limit of each job."""


class JobTimeout(BaseException):
    """Raised into a job whose time is up. A BaseException: the analysis turns every Exception a
    bad session raises into an error result, and this must get past those handlers."""


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise ``JobTimeout`` in this thread after ``seconds``. Only the main thread of a process can
    take the alarm (SIGALRM, POSIX): elsewhere, or without a limit, nothing is limited."""
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: object) -> None:
        raise JobTimeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def grace(timeout: float) -> float:
    """How long past the limit a job may run before the parent kills its worker: as long again as
    the limit, at least 5 s (the alarm normally ends it first)."""
    return max(5.0, timeout)

_MAX_IN_FLIGHT_PER_WORKER = 3
"""Tasks queued per worker at a time: enough to keep workers busy, few enough that a broken pool
fails few jobs and memory does not grow with the number of sessions."""

_MAX_CHUNK = 8
"""Jobs per task at most. Each task costs the parent a round trip (pickling, pipes, futures and
the executor's threads waking): ~0.7 ms of its CPU per job, 0.7 s over 1,000 sessions, taken from
the workers on a machine with as many cores as workers. Tasks shrink to one job near the end, so
no worker is left with a queue while another is idle."""


def _init_worker(started: SimpleQueue[Start], timeout: float | None) -> None:
    global _started, _timeout
    _started, _timeout = started, timeout


def run_limited(job: Job, options: JobOptions, timeout: float | None) -> SessionResult:
    """``run_job`` under ``time_limit``: the result, or a timed-out one."""
    try:
        with time_limit(timeout):
            return run_job(job, options)
    except JobTimeout:
        return _timed_out(job, timeout or 0.0)


def _pool_jobs(jobs: Sequence[Job], options: JobOptions) -> list[SessionResult]:
    results = []
    for job in jobs:
        if _started is not None:
            # SimpleQueue writes at once: the parent sees it even if we die next
            _started.put((job.key, os.getpid(), time.monotonic(), False))
        results.append(run_limited(job, options, _timeout))
        if _started is not None:
            _started.put((job.key, os.getpid(), time.monotonic(), True))
    return results


_SMALL = 1 << 20
"""Sessions under this many bytes share a task; bigger ones (the largest, sent first) go alone."""


def _take_chunk(pending: list[Job], workers: int) -> list[Job]:
    """The next task's jobs, from the end of ``pending``: one big session alone, or up to
    ``_MAX_CHUNK`` small ones, fewer as the queue runs out."""
    limit = max(1, min(_MAX_CHUNK, len(pending) // (workers * _MAX_IN_FLIGHT_PER_WORKER * 2)))
    chunk = [pending.pop()]
    while len(chunk) < limit and pending and chunk[0].size < _SMALL and pending[-1].size < _SMALL:
        chunk.append(pending.pop())
    return chunk


def _died(job: Job) -> SessionResult:
    return SessionResult(session=job.session, key=job.key, path=job.path, member=job.member, status="error",
                         error="the worker process died while analyzing this session (a crash in native "
                               "code or out of memory)")


def _timed_out(job: Job, timeout: float) -> SessionResult:
    return SessionResult(session=job.session, key=job.key, path=job.path, member=job.member, status="error",
                         error=f"timed out after {timeout:g} s (stopped; --timeout sets the limit)",
                         seconds=timeout, retry=True)


@dataclass
class _Round:
    """What one pool round left: jobs that never started, jobs that started but did not finish,
    jobs stopped for running too long, and whether any job finished."""

    unstarted: list[Job]
    suspects: list[Job]
    timed_out: list[Job]
    progressed: bool


def _context() -> Any:
    # fork: workers start at once and inherit the rules and warmed-up models the parent loaded
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _pool_round(jobs: Sequence[Job], options: JobOptions, workers: int, on_result: OnResult,
                timeout: float | None) -> _Round:
    """Run ``jobs`` in one pool until they finish or the pool breaks (a worker died or was
    stopped for running a job longer than ``timeout`` seconds)."""
    ctx = _context()
    started: SimpleQueue[Start] = ctx.SimpleQueue()
    began: set[str] = set()
    current: dict[int, tuple[str, float, bool]] = {}
    """Each worker's latest job, when it started or ended, and whether it ended (a worker runs one
    job at a time, so its earlier ones are done even if their chunk's results are not back)."""
    finished_keys: set[str] = set()
    overdue: set[str] = set()
    pending = list(reversed(jobs))
    running: dict[Future[list[SessionResult]], list[Job]] = {}
    lost: list[Job] = []
    progressed = False

    def drain() -> None:  # keep the pipe empty: a full one would block the workers
        while not started.empty():
            key, pid, at, ended = started.get()
            began.add(key)
            current[pid] = (key, at, ended)

    def collect(fut: Future[list[SessionResult]], chunk: list[Job]) -> None:
        nonlocal progressed
        try:
            results = fut.result()
        except BrokenProcessPool:
            lost.extend(chunk)
            return
        progressed = True
        for result in results:
            finished_keys.add(result.key)
            on_result(result)

    def stop_overdue() -> None:
        """Kill the worker of a job the alarm did not stop (stuck in native code)."""
        if timeout is None:
            return
        now = time.monotonic()
        for pid, (key, at, ended) in current.items():
            if not ended and key not in finished_keys and key not in overdue and now - at > timeout + grace(timeout):
                overdue.add(key)
                with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                    os.kill(pid, signal.SIGKILL)  # the pool breaks; the round ends as for a crash

    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(started, timeout)) as pool:
        try:
            while (pending or running) and not lost:
                while pending and len(running) < workers * _MAX_IN_FLIGHT_PER_WORKER:
                    chunk = _take_chunk(pending, workers)
                    try:
                        running[pool.submit(_pool_jobs, chunk, options)] = chunk
                    except BrokenProcessPool:
                        lost.extend(chunk)
                        break
                # with a timeout, wake at least every second to look for overdue jobs
                done, _ = wait(running, timeout=None if timeout is None else min(1.0, timeout),
                               return_when=FIRST_COMPLETED)
                drain()
                for fut in done:
                    collect(fut, running.pop(fut))
                stop_overdue()
            for fut, chunk in running.items():  # the pool broke: these fail with it, or finished first
                collect(fut, chunk)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    drain()
    left = [j for j in [*lost, *reversed(pending)] if j.key not in finished_keys]
    return _Round(unstarted=[j for j in left if j.key not in began],
                  suspects=[j for j in left if j.key in began and j.key not in overdue],
                  timed_out=[j for j in left if j.key in overdue], progressed=progressed)


def run_jobs(jobs: Sequence[Job], options: JobOptions, workers: int, on_result: OnResult,
             timeout: float | None = None) -> None:
    """Run every job, calling ``on_result`` in this process as each one ends (in completion order).
    ``timeout``: seconds a job may run before it is stopped and listed as timed out (in this
    process, ``workers <= 1``, only when this is the main thread)."""
    if workers <= 1:
        for job in jobs:
            on_result(run_limited(job, options, timeout))
        return

    def report_timeouts(round_: _Round) -> None:
        for job in round_.timed_out:
            on_result(_timed_out(job, timeout or 0.0))

    todo = list(jobs)
    while todo:
        round_ = _pool_round(todo, options, min(workers, len(todo)), on_result, timeout)
        report_timeouts(round_)
        todo, suspects = round_.unstarted, round_.suspects
        if not round_.progressed and not suspects and not round_.timed_out:  # broke before anything ran
            todo, suspects = [], todo
        for job in suspects:  # alone, so a crash names its session
            alone = _pool_round([job], options, 1, on_result, timeout)
            report_timeouts(alone)
            for dead in [*alone.unstarted, *alone.suspects]:
                on_result(_died(dead))
