from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from analyzer.batch import signature
from analyzer.cli import main
from tests.conftest import FIXTURES

CLAUDE = FIXTURES / "claude-code"
SGLANG_SID = "7d0c7e4e-3b1a-4c2f-8e9d-5a6b7c8d9e0f"
SGLANG = CLAUDE / "v2.1-sglang" / f"{SGLANG_SID}.jsonl"
SGLANG_AGENT = CLAUDE / "v2.1-sglang" / SGLANG_SID / "subagents" / "agent-a3f9c21.jsonl"


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    out: Path | None = None

    def summary(self) -> dict[str, Any]:
        assert self.out is not None
        doc: dict[str, Any] = orjson.loads((self.out / "summary.json").read_bytes())
        return doc

    def findings(self) -> list[dict[str, Any]]:
        assert self.out is not None
        return [orjson.loads(line) for line in (self.out / "findings.jsonl").read_bytes().splitlines()]

    def status(self) -> dict[str, dict[str, Any]]:
        """summary.json's per-session status, by session."""
        return {s["session"]: s for s in self.summary()["session_status"]}


def cli(*args: str) -> Run:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


def batch(*paths: str | Path, out: Path, jobs: int = 1, extra: tuple[str, ...] = ()) -> Run:
    run = cli("batch", *map(str, paths), "-o", str(out), "--jobs", str(jobs), *extra)
    run.out = out
    return run


def copy(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        shutil.copyfile(src, dst)
    return dst


def session_yaml(path: Path, start: str | None = None, command: str = "nohup uvicorn app:api --port 8000 &") -> Path:
    """A small fixture session: a prompt, a launch, a reply; timed from ``start`` when given."""
    head = f"start: {start}\nstep: 60\n" if start else ""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"agent: claude-code\n{head}events:\n  - user: Start the API on port 8000\n"
                    f"  - bash: {command}\n  - assistant: Started.\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True, scope="session")
def stable_code_stamp() -> Iterator[None]:
    """Other people edit the checkout while these tests run; an edit changes the code stamp and
    would empty the cache between two runs of a test. Only the version counts here."""
    import analyzer

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(signature, "code_stamp", lambda templates: {"version": analyzer.__version__})
        yield
