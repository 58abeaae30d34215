"""The per-session job: a plain function any process pool (multiprocessing, Dask) can run."""

from __future__ import annotations

import pickle
from pathlib import Path

from analyzer.batch.job import JobOptions, SessionResult, analyze_path
from analyzer.pipeline import analyze
from analyzer.report.json_doc import finding_dict
from tests.conftest import FIXTURES

from .conftest import SGLANG, SGLANG_AGENT

SEED = FIXTURES / "seeds" / "002-restart-30001-teardown.session.yaml"


def test_findings_as_check_emits_them_in_a_small_picklable_result() -> None:
    options = pickle.loads(pickle.dumps(JobOptions(reports=False)))
    result = pickle.loads(pickle.dumps(analyze_path(str(SEED), options)))
    assert isinstance(result, SessionResult) and result.status == "ok"
    assert result.findings == [finding_dict(f) for f in analyze(SEED).findings]
    assert "over-broad-kill" in {f["rule"] for f in result.findings}  # the pkill of seed 002
    assert (result.format, result.agent, result.events) == ("fixture", "claude-code", 18)
    assert result.started is not None and result.started.startswith("2026-04-09T13:02")
    assert result.ended is not None and result.ended > result.started
    assert result.key == str(SEED) and result.main_stat is not None
    assert len(pickle.dumps(result)) < 20_000
    assert pickle.loads(pickle.dumps(analyze_path)) is analyze_path  # sent by name to any worker


def test_sub_agent_files_are_recorded_for_the_cache() -> None:
    result = analyze_path(str(SGLANG), JobOptions(reports=False))
    assert str(SGLANG_AGENT) in result.deps and str(SGLANG_AGENT.parent) in result.deps
    assert str(SGLANG.parent) not in result.deps  # other sessions written beside it do not count


def test_never_raises(tmp_path: Path) -> None:
    missing = analyze_path(str(tmp_path / "gone.jsonl"), JobOptions(reports=False))
    assert (missing.status, missing.error) == ("error", f"{tmp_path / 'gone.jsonl'}: no such file or folder")
    assert missing.main_stat is None


def test_big_sessions_go_to_workers_alone_and_small_ones_in_chunks() -> None:
    from analyzer.batch.job import Job
    from analyzer.batch.runner import _take_chunk

    sizes = [50 << 20, 8 << 20] + [10_000] * 98  # largest first, as the batch sorts them
    pending = list(reversed([Job(session=str(i), key=str(i), path=str(i), size=n) for i, n in enumerate(sizes)]))
    tasks = []
    while pending:
        tasks.append([int(j.key) for j in _take_chunk(pending, workers=2)])
    assert tasks[0] == [0] and tasks[1] == [1]  # each big one alone
    assert max(len(t) for t in tasks) == 8 and tasks[-1] == [99] and len(tasks[-2]) == 1  # small at the end
    assert [k for t in tasks for k in t] == list(range(100))
