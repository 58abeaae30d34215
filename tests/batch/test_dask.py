"""``analyzer batch --executor dask`` on a LocalCluster (loopback only), and inputs read through
fsspec URLs (``memory://``, ``file://``): the same findings as the local pool, the same cache, and
clear errors for a missing extra, an unreachable scheduler and a task failing on a worker."""

from __future__ import annotations

import importlib.util
import logging
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from analyzer.batch import dask_runner
from analyzer.batch import job as job_module
from analyzer.batch.job import Job, JobOptions, SessionResult, analyze_path
from tests.conftest import FIXTURES, ROOT, put

from .conftest import SGLANG, SGLANG_AGENT, SGLANG_SID, Run, batch, session_yaml

HAS_DASK = all(importlib.util.find_spec(m) is not None for m in ("distributed", "fsspec"))
needs_dask = pytest.mark.skipif(not HAS_DASK, reason="the dask extra is not installed (pip install '.[dask]')")
INSTALL_HINT = "pip install 'session-analyzer[dask]'"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two single-threaded workers in this process (so they see ``memory://``), on loopback TCP."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1, protocol="tcp://",
                                  host="127.0.0.1", dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR) as c:
        yield c


def on_dask(cluster: Any) -> tuple[str, ...]:
    return ("--executor", "dask", "--scheduler", cluster.scheduler_address)


def put_tree(src: Path, root: str) -> str:
    for p in sorted(src.rglob("*")):
        if p.is_file():
            put(root, p.relative_to(src).as_posix(), p.read_bytes())
    return f"memory://{root}"


def counts(run: Run) -> tuple[int, int]:
    """Sessions analyzed and taken from the cache, read before the next run into the same folder."""
    s = run.summary()
    return s["analyzed"], s["cached"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port  # closed again: nothing listens there


# --------------------------------------------------------------------------- the cluster, local paths

@needs_dask
def test_dask_findings_are_byte_identical_to_the_local_pool(cluster: Any, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # relative paths: workers load them from the client's folder
    local = batch("fixtures", out=tmp_path / "local", jobs=1)
    dask = batch("fixtures", out=tmp_path / "dask", extra=on_dask(cluster))
    assert (local.code, dask.code) == (0, 0), dask.stderr
    data = (tmp_path / "dask" / "findings.jsonl").read_bytes()
    assert data == (tmp_path / "local" / "findings.jsonl").read_bytes()
    assert data.count(b"\n") >= local.summary()["findings"] > 0  # the summary counts a twin file's once
    assert dask.status() == local.status()  # the same sessions, formats, counts, report names, no error
    assert all(s["status"] == "ok" and s["session"].startswith("fixtures/") for s in dask.status().values())
    reports = [s["report"] for s in dask.status().values()]
    assert len(reports) == len(dask.status()) and all((tmp_path / "dask" / r).is_file() for r in reports)
    assert (tmp_path / "dask" / "index.html").is_file()
    assert dask.summary()["jobs"] == 2  # the cluster's worker threads
    assert dask_runner.TASK_PREFIX in cluster.scheduler.task_prefixes  # it really ran there


@needs_dask
def test_a_second_dask_run_takes_everything_from_the_cache(cluster: Any, tmp_path: Path) -> None:
    seeds, out = FIXTURES / "seeds", tmp_path / "out"
    first = counts(batch(seeds, out=out, extra=on_dask(cluster)))
    again = counts(batch(seeds, out=out, extra=on_dask(cluster)))
    local = counts(batch(seeds, out=out, jobs=1))  # the cache is shared with local runs
    assert [first, again, local] == [(8, 0), (0, 8), (0, 8)]


def _explode_on_seed_002(job: Job, options: JobOptions) -> SessionResult:
    if "002-" in job.path:
        raise RuntimeError("boom on the worker")
    return job_module.run_job(job, options)


@needs_dask
def test_a_task_failing_on_a_worker_lists_its_session_with_the_error(
        cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dask_runner, "run_job", _explode_on_seed_002)  # sent to the worker by name
    run = batch(FIXTURES / "seeds", out=tmp_path / "out", extra=on_dask(cluster))
    assert run.code == 0, run.stderr
    failed = {k: v["error"] for k, v in run.status().items() if v["status"] == "error"}
    assert sorted(Path(k).name for k in failed) == ["002-restart-30001-teardown.jsonl",
                                                    "002-restart-30001-teardown.session.yaml"]
    assert set(failed.values()) == {"the Dask task failed: RuntimeError: boom on the worker"}
    assert run.summary()["failed"] == 2 and len(run.status()) == 8
    assert "failed:" in run.stdout and "RuntimeError: boom on the worker" in run.stdout
    assert {f["session"] for f in run.findings()} and not any("002-" in f["session"] for f in run.findings())


# --------------------------------------------------------------------------------------- URLs

@needs_dask
def test_memory_urls_on_dask_give_the_local_findings_under_their_urls(cluster: Any, tmp_path: Path,
                                                                      memory_root: str) -> None:
    url = put_tree(FIXTURES, memory_root)
    local = batch(FIXTURES, out=tmp_path / "local", jobs=1)
    dask = batch(url, out=tmp_path / "dask", extra=on_dask(cluster))
    assert (local.code, dask.code) == (0, 0), dask.stderr
    storage = f"{FIXTURES}/opencode/storage/"
    expected = [line.replace(f"{FIXTURES}/".encode(), f"{url}/".encode())
                for line in (tmp_path / "local" / "findings.jsonl").read_bytes().splitlines(keepends=True)
                if storage.encode() not in line]
    assert (tmp_path / "dask" / "findings.jsonl").read_bytes() == b"".join(expected) and expected

    status = dask.status()
    assert sorted(status) == sorted(
        [s.replace(f"{FIXTURES}/", f"{url}/") for s in local.status() if not s.startswith(storage)]
        + [f"{url}/opencode/storage"])
    unsupported = status.pop(f"{url}/opencode/storage")
    assert unsupported["status"] == "error" and "opencode storage folders are read from local paths only" \
        in unsupported["error"]
    store = status.pop(f"{url}/openhands/file_store/sessions/5f1c2d3e4b5a69788796a5b4c3d2e1f0")
    assert store["status"] == "error" and "OpenHands event-store folders are read from local paths only" \
        in store["error"]
    assert all(s["status"] == "ok" and s["report"] for s in status.values())
    sglang = (tmp_path / "dask" / status[f"{url}/claude-code/v2.1-sglang/{SGLANG_SID}.jsonl"]["report"]).read_text()
    assert f"{url}/claude-code/v2.1-sglang/{SGLANG_SID}/subagents/agent-a3f9c21.jsonl" in sglang
    scratch = os.path.join(tempfile.gettempdir(), "analyzer-")
    assert not any(scratch in p.read_text() for p in (tmp_path / "dask" / "sessions").iterdir())


@needs_dask
def test_url_sessions_are_cached_by_url_size_and_time(tmp_path: Path, memory_root: str) -> None:
    src = tmp_path / "src"
    for name in ("a", "b"):
        session_yaml(src / f"{name}.session.yaml")
    url = put_tree(src, memory_root)
    put(memory_root, f"claude/{SGLANG.name}", SGLANG.read_bytes())
    out = tmp_path / "out"
    first = batch(url, out=out)
    before = first.status()
    assert counts(first) == (3, 0) and counts(batch(url, out=out)) == (0, 3)

    put(memory_root, "b.session.yaml", (src / "b.session.yaml").read_bytes() + b"  - user: Thanks\n")
    rel = f"claude/{SGLANG.stem}/subagents/{SGLANG_AGENT.name}"
    put(memory_root, rel, SGLANG_AGENT.read_bytes())  # a sub-agent file appears
    changed = batch(url, out=out)
    assert counts(changed) == (2, 1)
    fresh = {k for k, v in changed.status().items() if not v["cached"]}
    assert fresh == {f"{url}/b.session.yaml", f"{url}/claude/{SGLANG.name}"}
    events = {k: v["events"] for k, v in changed.status().items()}
    assert events[f"{url}/b.session.yaml"] == before[f"{url}/b.session.yaml"]["events"] + 1
    assert events[f"{url}/claude/{SGLANG.name}"] > before[f"{url}/claude/{SGLANG.name}"]["events"]


@needs_dask
def test_since_leaves_out_url_sessions_by_their_last_event(tmp_path: Path, memory_root: str) -> None:
    src = tmp_path / "src"
    session_yaml(src / "old.session.yaml", start="2025-01-01T10:00:00Z")
    session_yaml(src / "new.session.yaml", start="2026-03-02T10:00:00Z")
    url = put_tree(src, memory_root)
    run = batch(url, out=tmp_path / "out", extra=("--since", "2026-03-01"))
    assert run.code == 0 and sorted(run.status()) == [f"{url}/new.session.yaml"]
    assert run.summary()["filtered_by_since"] == 1


@needs_dask
def test_file_urls_on_a_process_cluster(tmp_path: Path) -> None:
    """Workers in other processes: tasks and results cross a real process boundary."""
    distributed = pytest.importorskip("distributed")
    seeds = FIXTURES / "seeds"
    assert batch(seeds, out=tmp_path / "local", jobs=1).code == 0
    with distributed.LocalCluster(processes=True, n_workers=1, threads_per_worker=1, host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR) as c:
        dask = batch(f"file://{seeds}", out=tmp_path / "dask", extra=on_dask(c))
    assert dask.code == 0, dask.stderr
    expected = (tmp_path / "local" / "findings.jsonl").read_bytes().replace(
        f'"session":"{seeds}/'.encode(), f'"session":"file://{seeds}/'.encode())
    assert (tmp_path / "dask" / "findings.jsonl").read_bytes() == expected and expected
    s = dask.summary()
    assert (s["workers"], s["engine_loads"], s["failed"]) == (1, 1, 0)  # the worker loaded the rules once
    assert os.getpid() not in {x["worker"] for x in _cache_entries(tmp_path / "dask")}


def _cache_entries(out: Path) -> list[dict[str, Any]]:
    import orjson

    doc: dict[str, Any] = orjson.loads((out / ".cache.json").read_bytes())
    return list(doc["entries"].values())


# --------------------------------------------------------------------------------------- errors

@needs_dask
def test_an_unreachable_scheduler_exits_2_with_a_message(tmp_path: Path) -> None:
    address = f"tcp://127.0.0.1:{free_port()}"
    run = batch(FIXTURES / "seeds", out=tmp_path / "out",
                extra=("--executor", "dask", "--scheduler", address, "--scheduler-timeout", "1"))
    assert run.code == 2
    assert run.stderr.startswith(f"analyzer: cannot reach the Dask scheduler at {address}: ")
    assert "Traceback" not in run.stderr + run.stdout
    assert not (tmp_path / "out").exists()  # nothing written before the cluster answered


def test_executor_and_scheduler_go_together(tmp_path: Path) -> None:
    no_address = batch(FIXTURES / "seeds", out=tmp_path / "out", extra=("--executor", "dask"))
    assert no_address.code == 2 and "--executor dask needs --scheduler ADDRESS" in no_address.stderr
    no_dask = batch(FIXTURES / "seeds", out=tmp_path / "out", extra=("--scheduler", "tcp://127.0.0.1:8786"))
    assert no_dask.code == 2 and "--scheduler is for --executor dask" in no_dask.stderr


def _without_dask(*args: str) -> subprocess.CompletedProcess[str]:
    """``analyzer ARGS`` in a Python where dask and fsspec cannot be imported (a subprocess: the
    cluster of these tests keeps running in this one)."""
    code = ("import sys\nfor m in ('distributed', 'dask', 'fsspec', 'fsspec.core'): sys.modules[m] = None\n"
            "from analyzer.cli import main\nmain(sys.argv[1:])")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, check=False)


def test_without_the_dask_extra_the_error_says_what_to_install(tmp_path: Path) -> None:
    on_cluster = _without_dask("batch", str(FIXTURES / "seeds"), "-o", str(tmp_path / "a"),
                               "--executor", "dask", "--scheduler", "tcp://127.0.0.1:8786")
    url = _without_dask("batch", "memory://sessions", "-o", str(tmp_path / "b"))
    for run in (on_cluster, url):
        assert run.returncode == 2 and INSTALL_HINT in run.stderr and "Traceback" not in run.stderr
    assert on_cluster.stderr == f"analyzer: --executor dask needs dask.distributed: {INSTALL_HINT}\n"
    assert url.stderr == f"analyzer: memory://sessions: reading URLs needs fsspec: {INSTALL_HINT}\n"
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@needs_dask
def test_a_url_that_is_not_there_exits_2(tmp_path: Path) -> None:
    run = batch("memory://no-such-folder-here", out=tmp_path / "out")
    assert run.code == 2 and "analyzer: memory://no-such-folder-here: no such file or folder" in run.stderr


# ------------------------------------------------------------------------------------ the job

def test_a_relative_path_is_read_from_the_given_folder_and_shown_as_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker started in another folder: ``cwd`` says where the client was; paths stay relative."""
    rel = SGLANG.relative_to(ROOT).as_posix()
    options = JobOptions(return_reports=True)
    monkeypatch.chdir(ROOT)
    here = analyze_path(rel, options, report_to="sessions/sglang.html")
    monkeypatch.chdir(tmp_path)
    elsewhere = analyze_path(rel, options, report_to="sessions/sglang.html", cwd=str(ROOT))
    assert here.status == elsewhere.status == "ok" and here.findings == elsewhere.findings
    assert elsewhere.report == "sessions/sglang.html" and not (tmp_path / "sessions").exists()
    assert elsewhere.report_html == here.report_html and elsewhere.report_html is not None
    assert f"{SGLANG_AGENT.relative_to(ROOT).as_posix()}:1" in elsewhere.report_html  # sub-agent lines
    assert str(ROOT) not in elsewhere.report_html
    assert (elsewhere.session, elsewhere.path, elsewhere.key) == (rel, rel, str(SGLANG))
    assert elsewhere.deps == here.deps and str(SGLANG_AGENT) in elsewhere.deps
    assert elsewhere.main_stat == here.main_stat and elsewhere.events == here.events > 0
