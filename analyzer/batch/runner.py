"""Running jobs: in this process (``jobs=1``) or in a pool of worker processes.

A worker that dies (a crash in a native library, the kernel's OOM killer) breaks the whole pool
and fails every pending job with it. The runner then knows which jobs had started (each worker
reports a job's key, its pid and the time before running it), runs the jobs that never started in
a new pool, and runs each started-but-unfinished one alone; one that kills its worker alone is
listed with that error. A job running longer than the timeout has its worker killed the same way
and is listed as timed out, not run again.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.queues import SimpleQueue
from typing import Any

from analyzer.batch.job import Job, JobOptions, SessionResult, run_job

OnResult = Callable[[SessionResult], None]

Start = tuple[str, int, float]
"""A job's key, the pid of the worker that started it, and when (``time.monotonic``, which is
the same clock in every process of a machine)."""

_started: SimpleQueue[Start] | None = None
"""In a pool worker: where it reports each job it starts."""

_MAX_IN_FLIGHT_PER_WORKER = 3
"""Tasks queued per worker at a time: enough to keep workers busy, few enough that a broken pool
fails few jobs and memory does not grow with the number of sessions."""

_MAX_CHUNK = 8
"""Jobs per task at most. Each task costs the parent a round trip (pickling, pipes, futures and
the executor's threads waking): ~0.7 ms of its CPU per job, 0.7 s over 1,000 sessions, taken from
the workers on a machine with as many cores as workers. Tasks shrink to one job near the end, so
no worker is left with a queue while another is idle."""


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _init_worker(started: SimpleQueue[Start]) -> None:
    global _started
    _started = started


def _pool_jobs(jobs: Sequence[Job], options: JobOptions) -> list[SessionResult]:
    results = []
    for job in jobs:
        if _started is not None:
            # SimpleQueue writes at once: the parent sees it even if we die next
            _started.put((job.key, os.getpid(), time.monotonic()))
        results.append(run_job(job, options))
    return results


def _chunk_size(pending: int, workers: int) -> int:
    return max(1, min(_MAX_CHUNK, pending // (workers * _MAX_IN_FLIGHT_PER_WORKER * 2)))


def _died(job: Job) -> SessionResult:
    return SessionResult(session=job.session, key=job.key, path=job.path, member=job.member, status="error",
                         error="the worker process died while analyzing this session (a crash in native "
                               "code or out of memory)")


def _timed_out(job: Job, timeout: float) -> SessionResult:
    return SessionResult(session=job.session, key=job.key, path=job.path, member=job.member, status="error",
                         error=f"timed out after {timeout:g} s (its worker was stopped; --timeout sets the limit)",
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
    current: dict[int, tuple[str, float]] = {}
    """Each worker's latest job and when it started: the one it is running, unless it finished
    (a worker runs one job at a time, so its earlier ones are done even if their chunk is not)."""
    finished_keys: set[str] = set()
    overdue: set[str] = set()
    pending = list(reversed(jobs))
    running: dict[Future[list[SessionResult]], list[Job]] = {}
    lost: list[Job] = []
    progressed = False

    def drain() -> None:  # keep the pipe empty: a full one would block the workers
        while not started.empty():
            key, pid, at = started.get()
            began.add(key)
            current[pid] = (key, at)

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
        if timeout is None:
            return
        now = time.monotonic()
        for pid, (key, at) in current.items():
            if key not in finished_keys and key not in overdue and now - at > timeout:
                overdue.add(key)
                with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                    os.kill(pid, signal.SIGKILL)  # the pool breaks; the round ends as for a crash

    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(started,)) as pool:
        try:
            while (pending or running) and not lost:
                while pending and len(running) < workers * _MAX_IN_FLIGHT_PER_WORKER:
                    chunk = [pending.pop() for _ in range(min(_chunk_size(len(pending), workers), len(pending)))]
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
    ``timeout``: seconds a job may run in a pool worker before the worker is stopped and the job
    listed as timed out (``workers <= 1`` runs jobs in this process, where nothing can stop one)."""
    if workers <= 1:
        for job in jobs:
            on_result(run_job(job, options))
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
