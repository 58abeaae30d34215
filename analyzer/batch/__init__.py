"""Batch analysis of many sessions (``analyzer batch``): discovery, a per-session job any process
pool can run, a cache of unchanged sessions, and the outputs (reports, ``index.html``,
``findings.jsonl``, ``summary.json``).

* ``job.analyze_path(path, options)``: one session → a small picklable ``SessionResult``;
* ``runner.run_jobs``: in-process or a ``multiprocessing`` pool that survives dying workers;
* ``dask_runner.DaskCluster``: the same jobs on an existing Dask cluster (``--executor dask``);
* ``core.run_batch``: the whole run.
"""

from __future__ import annotations

from analyzer.batch.core import BatchError, BatchOptions, run_batch
from analyzer.batch.job import JobOptions, SessionResult, analyze_path
from analyzer.batch.results import BatchRun

__all__ = ["BatchError", "BatchOptions", "BatchRun", "JobOptions", "SessionResult", "analyze_path", "run_batch"]
