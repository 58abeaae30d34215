"""Running jobs on an existing Dask cluster (``analyzer batch --executor dask --scheduler ADDRESS``).

The client submits ``run_job`` for each session, a few per worker thread at a time (memory stays
flat however many sessions there are), and hands each result to ``on_result`` as it comes back.
Workers return reports as strings (``JobOptions.return_reports``): the client writes every output.
A task that fails on a worker (the worker died repeatedly, a package missing there) lists its
session with that error, as the local pool does. ``distributed`` is imported here only.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from analyzer.batch.job import Job, JobOptions, SessionResult, run_job
from analyzer.ingest.remote import INSTALL_HINT

OnResult = Callable[[SessionResult], None]

_IN_FLIGHT_PER_THREAD = 4
"""Tasks queued per worker thread: enough to keep workers busy between round trips, few enough
that results (reports included) do not pile up in the cluster's memory."""

TASK_PREFIX = "analyze-session"
"""Task keys are ``analyze-session-<hex>``: the name the dashboard groups them under."""


class ExecutorError(Exception):
    """The cluster cannot be used: dask not installed, scheduler unreachable, no worker."""


def _distributed() -> ModuleType:
    try:
        import distributed
    except ImportError:
        raise ExecutorError(f"--executor dask needs dask.distributed: {INSTALL_HINT}") from None
    return distributed


def _probe(address: str, timeout: float) -> None:
    """Connect once and hang up. A failed ``Client()`` leaves an object whose finalizer prints a
    traceback at exit; a plain connection fails with the reason and nothing else."""
    from distributed.comm.core import connect

    async def hello() -> None:
        comm = await connect(address, timeout=timeout)  # type: ignore[no-untyped-call]
        await comm.close()

    try:
        asyncio.get_running_loop()
        return  # called from async code (a notebook): Client() reports the failure itself
    except RuntimeError:
        pass
    try:
        asyncio.run(hello())
    except (OSError, TimeoutError, ValueError) as exc:
        raise ExecutorError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


class DaskCluster:
    """A connection to a running scheduler: ``connect``, ``run`` the jobs, ``close``."""

    def __init__(self, address: str, timeout: float = 10.0) -> None:
        self.address = address
        self.timeout = timeout
        self.threads = 0
        """Worker threads in the cluster when the run started."""
        self._distributed: ModuleType | None = None
        self._client: Any = None

    def connect(self) -> None:
        """Raises ``ExecutorError`` when dask is missing, the scheduler cannot be reached or has no
        worker within the timeout."""
        distributed = self._distributed = _distributed()
        if "://" not in self.address or self.address.startswith("tcp://"):
            _probe(self.address, self.timeout)  # tls:// and others need the client's security settings
        try:
            client = distributed.Client(self.address, timeout=self.timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ExecutorError(f"cannot reach the Dask scheduler at {self.address}: {exc}") from None
        self._client = client
        try:
            client.wait_for_workers(1, timeout=self.timeout)
        except TimeoutError:
            self.close()
            raise ExecutorError(f"no Dask worker is connected to the scheduler at {self.address} (waited "
                                f"{self.timeout:g} s): start one with `dask worker {self.address}`") from None
        self.threads = sum(client.nthreads().values())

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> DaskCluster:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, jobs: Sequence[Job], options: JobOptions, on_result: OnResult) -> None:
        """Run every job, calling ``on_result`` in this thread as each one ends (completion order)."""
        client, distributed = self._client, self._distributed
        assert client is not None and distributed is not None, "connect() first"
        limit = max(1, self.threads) * _IN_FLIGHT_PER_THREAD
        pending = list(reversed(jobs))
        running: dict[str, Job] = {}
        done = distributed.as_completed(loop=client.loop)

        def submit() -> None:
            while pending and len(running) < limit:
                job = pending.pop()
                fut = client.submit(run_job, job, options, key=f"{TASK_PREFIX}-{uuid.uuid4().hex}", pure=False)
                running[fut.key] = job
                done.add(fut)

        submit()
        for fut in done:
            job = running.pop(fut.key)
            result = _result_of(fut, job)
            fut.release()
            on_result(result)
            submit()


def _result_of(fut: Any, job: Job) -> SessionResult:
    """The task's result; a task that failed on the cluster becomes its session's error."""
    try:
        result: SessionResult = fut.result()
        return result
    except Exception as exc:  # KilledWorker, CancelledError, an import error on the worker…
        return SessionResult(session=job.session, key=job.key, path=job.path, member=job.member, status="error",
                             error=f"the Dask task failed: {type(exc).__name__}: {exc}")
