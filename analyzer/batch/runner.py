"""Running jobs: in this process (``jobs=1``) or in a pool of worker processes.

A worker that dies (a crash in a native library, the kernel's OOM killer) breaks the whole pool
and fails every pending job with it. The runner then knows which jobs had started (each worker
reports a job's key before running it), runs the jobs that never started in a new pool, and runs
each started-but-unfinished one alone; one that kills its worker alone is listed with that error.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.queues import SimpleQueue
from typing import Any

from analyzer.batch.job import Job, JobOptions, SessionResult, run_job

OnResult = Callable[[SessionResult], None]

_started: SimpleQueue[str] | None = None
"""In a pool worker: where it reports the key of each job it starts."""

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


def _init_worker(started: SimpleQueue[str]) -> None:
    global _started
    _started = started


def _pool_jobs(jobs: Sequence[Job], options: JobOptions) -> list[SessionResult]:
    results = []
    for job in jobs:
        if _started is not None:
            _started.put(job.key)  # SimpleQueue writes at once: the parent sees it even if we die next
        results.append(run_job(job, options))
    return results


def _chunk_size(pending: int, workers: int) -> int:
    return max(1, min(_MAX_CHUNK, pending // (workers * _MAX_IN_FLIGHT_PER_WORKER * 2)))


def _died(job: Job) -> SessionResult:
    return SessionResult(session=job.session, key=job.key, path=job.path, member=job.member, status="error",
                         error="the worker process died while analyzing this session (a crash in native "
                               "code or out of memory)")


def _context() -> Any:
    # fork: workers start at once and inherit the rules and warmed-up models the parent loaded
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _pool_round(jobs: Sequence[Job], options: JobOptions, workers: int,
                on_result: OnResult) -> tuple[list[Job], list[Job], bool]:
    """Run ``jobs`` in one pool. When it breaks, returns the jobs that never started, those that
    started but did not finish, and whether any job finished in this round."""
    ctx = _context()
    started: SimpleQueue[str] = ctx.SimpleQueue()
    began: set[str] = set()
    pending = list(reversed(jobs))
    running: dict[Future[list[SessionResult]], list[Job]] = {}
    lost: list[Job] = []
    progressed = False

    def drain() -> None:  # keep the pipe empty: a full one would block the workers
        while not started.empty():
            began.add(started.get())

    def collect(fut: Future[list[SessionResult]], chunk: list[Job]) -> None:
        nonlocal progressed
        try:
            results = fut.result()
        except BrokenProcessPool:
            lost.extend(chunk)
            return
        progressed = True
        for result in results:
            on_result(result)

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
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                drain()
                for fut in finished:
                    collect(fut, running.pop(fut))
            for fut, chunk in running.items():  # the pool broke: these fail with it, or finished first
                collect(fut, chunk)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    drain()
    if not lost:
        return [], [], progressed
    left = [*lost, *reversed(pending)]
    return [j for j in left if j.key not in began], [j for j in left if j.key in began], progressed


def run_jobs(jobs: Sequence[Job], options: JobOptions, workers: int, on_result: OnResult) -> None:
    """Run every job, calling ``on_result`` in this process as each one ends (in completion order)."""
    if workers <= 1:
        for job in jobs:
            on_result(run_job(job, options))
        return
    todo = list(jobs)
    while todo:
        todo, suspects, progressed = _pool_round(todo, options, min(workers, len(todo)), on_result)
        if not progressed and not suspects:  # broke before anything ran: isolate them all
            todo, suspects = [], todo
        for job in suspects:  # alone, so a crash names its session
            left, again, _ = _pool_round([job], options, 1, on_result)
            for dead in [*left, *again]:
                on_result(_died(dead))
