"""Batch consistency under concurrency (issue 17): two runs on one output folder never both do the
work, and a sub-agent file written while its session is analyzed is never cached as fresh."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

from analyzer.batch import job
from analyzer.batch.core import LOCK_NAME
from tests.conftest import FIXTURES

from .conftest import SGLANG, SGLANG_AGENT, SGLANG_SID, Run, batch, copy


def _tree(root: Path) -> dict[str, Path]:
    return {
        "claude": copy(SGLANG, root / "proj" / f"{SGLANG_SID}.jsonl"),
        "agent": copy(SGLANG_AGENT, root / "proj" / SGLANG_SID / "subagents" / "agent-a3f9c21.jsonl"),
        "seed": copy(FIXTURES / "seeds" / "001-relaunch-after-ready.session.yaml", root / "seeds" / "001.session.yaml"),
    }


def _analyzed(run: Run) -> list[str]:
    return sorted(Path(name).name for name, st in run.status().items() if not st["cached"])


def test_a_second_run_on_a_busy_output_folder_stops_and_names_the_first(tmp_path: Path) -> None:
    _tree(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out / LOCK_NAME, os.O_RDWR | os.O_CREAT)  # what a running batch holds
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b"4242\n")
        busy = batch(tmp_path / "in", out=out)
        assert busy.code == 2
        assert "another batch run is writing this folder (pid 4242)" in busy.stderr
        assert not (out / "index.html").exists() and not (out / ".cache.json").exists()  # no work done
    finally:
        os.close(fd)
    run = batch(tmp_path / "in", out=out)  # once it ended, the folder is free again
    assert run.code in (0, 1) and len(_analyzed(run)) == 2
    assert _analyzed(batch(tmp_path / "in", out=out)) == []  # and a third run finds it all done


def test_a_dependency_written_during_the_analysis_is_read_again_next_run(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    files = _tree(tmp_path / "in")
    out = tmp_path / "out"
    real = job._analyze_one

    def analyze_while_the_agent_writes(result: job.SessionResult, loaded: object, *args: object) -> None:
        if str(result.path).endswith(f"{SGLANG_SID}.jsonl"):
            with files["agent"].open("a") as fh:  # the sub-agent goes on writing meanwhile
                fh.write(files["agent"].read_text(encoding="utf-8").splitlines()[-1] + "\n")
        real(result, loaded, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(job, "_analyze_one", analyze_while_the_agent_writes)
    assert _analyzed(batch(tmp_path / "in", out=out)) == ["001.session.yaml", f"{SGLANG_SID}.jsonl"]
    monkeypatch.setattr(job, "_analyze_one", real)
    # the result was made from the file as it was before that write: not fresh
    assert _analyzed(batch(tmp_path / "in", out=out)) == [f"{SGLANG_SID}.jsonl"]
    assert _analyzed(batch(tmp_path / "in", out=out)) == []


def test_a_dependency_written_while_it_is_read_is_read_again_next_run(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    files = _tree(tmp_path / "in")
    out = tmp_path / "out"
    real = job.load_sessions

    def load_while_the_agent_writes(path: str, member: str | None) -> list[object]:
        sessions = real(path, member)
        if path.endswith(f"{SGLANG_SID}.jsonl"):
            now = time.time_ns()  # written after the read began: what was read may be half old
            os.utime(files["agent"], ns=(now, now))  # (the file system's own clock lags by a tick)
        return sessions  # type: ignore[return-value]

    monkeypatch.setattr(job, "load_sessions", load_while_the_agent_writes)
    batch(tmp_path / "in", out=out)
    monkeypatch.setattr(job, "load_sessions", real)
    assert _analyzed(batch(tmp_path / "in", out=out)) == [f"{SGLANG_SID}.jsonl"]
