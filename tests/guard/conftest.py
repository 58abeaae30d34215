from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from analyzer.events import ToolEvent
from analyzer.ingest import load
from tests.conftest import FIXTURES

SEEDS = FIXTURES / "seeds"


@pytest.fixture
def guard_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private socket folder and decision log; the server a test started is stopped after it."""
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"ag-{os.getpid()}-{time.monotonic_ns() % 10**9}"
    folder.mkdir(mode=0o700)  # short: a Unix socket path has ~100 bytes
    monkeypatch.setenv("ANALYZER_GUARD_DIR", str(folder))
    monkeypatch.setenv("ANALYZER_GUARD_LOG", str(tmp_path / "guard.jsonl"))
    monkeypatch.setenv("ANALYZER_GUARD_IDLE", "30")
    yield folder
    from analyzer.guard.client import pid_path, stop_server

    stop_server(folder)
    pid_file = Path(pid_path(str(folder)))
    if pid_file.exists():  # it did not stop when asked: end it (only the one this test started)
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
    for f in folder.iterdir():
        f.unlink()
    folder.rmdir()


def transcript_before(seed: str, index: int, dest: Path) -> tuple[Path, ToolEvent]:
    """The seed's Claude Code transcript as it stood when the call at event ``index`` was proposed
    (every line before the one holding it), and that call."""
    src = SEEDS / f"{seed}.jsonl"
    ev = load(src).events[index]
    assert isinstance(ev, ToolEvent) and ev.command and ev.line
    lines = src.read_bytes().splitlines(keepends=True)
    dest.write_bytes(b"".join(lines[: ev.line - 1]))
    return dest, ev


def uvicorn_transcript(path: Path, token: str) -> str:
    """A session that launched a uvicorn (a real Claude Code line shape) and got its result."""
    launch = f"nohup uvicorn app:{token} --port 8765 > api.log 2>&1 &"
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": "e2e", "timestamp": "2026-10-01T10:00:00Z", "cwd": str(path.parent),
         "message": {"role": "user", "content": "Start the API on port 8765"}},
        {"type": "assistant", "uuid": "a1", "sessionId": "e2e", "timestamp": "2026-10-01T10:00:01Z",
         "message": {"id": "m1", "role": "assistant", "content": [
             {"type": "tool_use", "id": "toolu_launch", "name": "Bash", "input": {"command": launch}}]}},
        {"type": "user", "uuid": "u2", "sessionId": "e2e", "timestamp": "2026-10-01T10:00:02Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_launch", "content": ""}]}},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return launch
