"""The Claude Code reader on the real third-party sessions in ../shared/corpus/claude-code/
(skipped when the corpus is absent)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from analyzer.events import Session, SystemEvent, ToolEvent
from analyzer.ingest import IngestError, detect, load
from analyzer.ingest import claude_code as cc
from analyzer.ingest.base import read_head

from ..conftest import CORPUS

pytestmark = pytest.mark.corpus

NOT_NATIVE = "trade-arena-sanitized.jsonl"  # a flattened derivative (MANIFEST): not Claude Code's format
SPOTTER = "spotter-v2.1.39/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
SHELL_TOOLS = {"Bash", "Monitor"}  # Monitor runs its `command` as a background task


def session_files() -> list[str]:
    folder = CORPUS / "claude-code"
    if not folder.is_dir():
        return []
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*.jsonl") if p.name != NOT_NATIVE)


def walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from walk(v)


def raw_shell_call_ids(path: Path) -> set[str]:
    """tool_use blocks of a shell tool anywhere in the raw JSON of the file and of its sub-agent
    files, nested copies included, counted once per id."""
    files = [path, *sorted((path.parent / path.stem / "subagents").glob("agent-*.jsonl"))]
    ids: set[str] = set()
    for f in files:
        for raw in f.read_bytes().splitlines():
            for node in walk(orjson.loads(raw)):
                if node.get("type") == "tool_use" and node.get("name") in SHELL_TOOLS:
                    ids.add(node["id"])
    return ids


@pytest.fixture(scope="module")
def sessions() -> dict[str, Session]:
    if not (CORPUS / "claude-code").is_dir():
        pytest.skip("../shared/corpus is absent")
    return {name: load(CORPUS / "claude-code" / name) for name in session_files()}


@pytest.mark.parametrize("name", session_files() or ["(corpus absent)"])
def test_corpus_file_loads_without_errors_and_counts_every_shell_call(
    corpus: Path, sessions: dict[str, Session], name: str
) -> None:
    path = corpus / "claude-code" / name
    fmt, _ = detect(path)
    assert fmt.NAME == "claude-code"
    s = sessions[name]
    assert [d for d in s.diagnostics if d.level == "error"] == []
    assert s.session_id and s.counts.events == len(s.events) > 0
    calls = [e for e in s.tools() if e.command is not None and not e.by_user]
    assert len(calls) == len({e.ref for e in calls})
    assert {e.ref for e in calls} == raw_shell_call_ids(path)


def test_posthog_background_tasks_kills_and_notifications(sessions: dict[str, Session]) -> None:
    s = sessions["posthog-dashboard-pkill-v2.1.112.jsonl"]
    launches = [(e.name, e.task_id) for e in s.tools() if e.background]
    assert launches == [("Bash", "bkzv7ang6"), ("Bash", "bnyxbxdis"), ("Bash", "bomjc7gus"),
                        ("Monitor", "byo17lgri"), ("Monitor", "btkze6lgq")]
    (stop,) = [e for e in s.tools() if e.category == "task_stop"]
    assert (stop.name, stop.task_id) == ("TaskStop", "byo17lgri")
    notes = [(e.task_id, e.status, e.exit_code) for e in s.events
             if isinstance(e, SystemEvent) and e.subtype == "task-notification"]
    # each was written as a queue-operation and an attachment (some also as a user entry)
    assert notes == [("bkzv7ang6", "completed", 0), ("bnyxbxdis", "completed", 0),
                     ("bomjc7gus", "failed", 144), ("btkze6lgq", "completed", None)]
    over_broad = [e for e in s.shell_calls() if e.command == "pkill -9 zsh 2>/dev/null; sleep 2; "
                  "pgrep -fa 'python|gh ' | grep -v claude | head -5 || echo none"]
    assert len(over_broad) == 1 and over_broad[0].ref == "toolu_01CUGFyLwzcPFex4gZUFKtac"
    failed = [(e.exit_code, e.line) for e in s.shell_calls() if e.exit_code is not None]
    assert failed[:2] == [(47, 1247), (47, 1254)]


def test_todo_app_v1_dev_servers_and_inline_sidechains(sessions: dict[str, Session]) -> None:
    s = sessions["todo-app-nextjs-dev-server.jsonl"]
    assert [(e.command, e.task_id) for e in s.tools() if e.background] == [
        ("pnpm dev --port 3001", "bash_1"), ("npm run dev", "bash_2"), ("npx next dev --port 3000", "bash_3"),
    ]
    assert [e.task_id for e in s.tools() if e.name == "KillBash"] == ["bash_1", "bash_2", "bash_3"]
    assert all(e.task_id for e in s.tools() if e.name == "BashOutput")
    tasks = {f"task-{e.ref[-7:]}" for e in s.tools() if e.name == "Task" and e.ref}
    agents = {e.agent for e in s.events} - {"main"}
    assert agents == tasks and len(agents) == 5  # every sidechain traced to the Task that spawned it


def test_spotter_subagent_files_are_merged(corpus: Path, sessions: dict[str, Session]) -> None:
    s = sessions[SPOTTER]
    folder = corpus / "claude-code" / SPOTTER.removesuffix(".jsonl") / "subagents"
    assert s.sources[1:] == [str(folder / "agent-a7be2f0.jsonl"), str(folder / "agent-acompact-f46190.jsonl")]
    explore = [e for e in s.events if e.agent == "a7be2f0"]
    assert explore and all(e.source == s.sources[1] for e in explore)
    assert sum(isinstance(e, ToolEvent) and e.command is not None for e in explore) == 11
    polls = [e for e in s.tools() if e.name == "TaskOutput"]
    assert [(e.category, e.task_id) for e in polls] == [("task_output", "be613ab")] * 3
    (launch,) = [e for e in s.tools() if e.background]
    assert launch.task_id == "be613ab" and launch.index < polls[0].index
    (note,) = [e for e in s.events if isinstance(e, SystemEvent) and e.subtype == "task-notification"]
    assert (note.task_id, note.status, note.exit_code) == ("be613ab", "completed", 0)


def test_trade_arena_derivative_is_not_read_as_claude_code(corpus: Path) -> None:
    path = corpus / "claude-code" / NOT_NATIVE
    assert cc.detect(path, read_head(path)) is None
    try:
        fmt, _ = detect(path)
    except IngestError as exc:
        assert exc.line == 1 and "not a session log" in exc.reason
    else:
        assert fmt.NAME != "claude-code"
