"""The transcript tail reads a growing Claude Code transcript into the same events as ``load``."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from analyzer.events import Event, ToolEvent
from analyzer.guard.tail import ClaudeTail, CodexTail, ReloadTail, tail_for
from analyzer.ingest import load
from tests.conftest import FIXTURES
from tests.guard.conftest import SEEDS


def _shape(events: list[Event]) -> list[tuple[str, str | None, str | None, str | None]]:
    return [(e.kind, getattr(e, "text", None) or getattr(e, "command", None),
             getattr(e, "output", None), e.ref) for e in events]


@pytest.mark.parametrize("seed", ["000-kill-after-ready", "002-restart-30001-teardown"])
def test_growing_transcript_reads_like_the_whole_file(seed: str, tmp_path: Path) -> None:
    data = (SEEDS / f"{seed}.jsonl").read_bytes()
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"")
    tail = ClaudeTail(path)
    step = max(1, len(data) // 7)  # cuts fall inside lines: a half-written line waits for the rest
    for end in range(step, len(data) + step, step):
        path.write_bytes(data[:end])
        assert tail.read() is False
    assert _shape(tail.events) == _shape(load(SEEDS / f"{seed}.jsonl").events)
    assert all(tail.settled(e) for e in tail.events)


def test_a_call_without_its_result_is_not_settled(tmp_path: Path) -> None:
    src = SEEDS / "000-kill-after-ready.jsonl"
    ev = next(e for e in load(src).events if isinstance(e, ToolEvent) and e.result_line)
    assert ev.line and ev.result_line
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(src.read_bytes().splitlines(keepends=True)[: ev.result_line - 1]))
    tail = ClaudeTail(path)
    tail.read()
    last = tail.events[-1]
    assert isinstance(last, ToolEvent) and last.ref == ev.ref and not tail.settled(last)


def test_a_rewritten_transcript_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    data = (SEEDS / "000-kill-after-ready.jsonl").read_bytes()
    path.write_bytes(data)
    tail = ClaudeTail(path)
    tail.read()
    path.write_bytes(data[: len(data) // 2].rsplit(b"\n", 1)[0] + b"\n")
    assert tail.read() is True
    assert len(tail.events) < len(load(SEEDS / "000-kill-after-ready.jsonl").events)


def test_bad_lines_do_not_stop_the_tail(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = (SEEDS / "000-kill-after-ready.jsonl").read_bytes()
    path.write_bytes(b'{"type": "user", "message": 7}\n{not json\n\xff\xfe\n[1, 2]\n' + good)
    tail = ClaudeTail(path)
    tail.read()
    assert _shape(tail.events) == _shape(load(SEEDS / "000-kill-after-ready.jsonl").events)


def test_no_transcript_means_no_tail(tmp_path: Path) -> None:
    assert tail_for("claude-code", None) is None
    assert tail_for("claude-code", str(tmp_path / "missing.jsonl")) is None


@pytest.mark.parametrize("fixture", sorted(p.name for p in (FIXTURES / "codex").glob("rollout-*.jsonl")))
def test_a_growing_codex_rollout_reads_like_the_whole_file(fixture: str, tmp_path: Path) -> None:
    """Only the new bytes are read; a call's output, records later, completes the call read before."""
    data = (FIXTURES / "codex" / fixture).read_bytes()
    path = tmp_path / fixture
    path.write_bytes(b"")
    tail = tail_for("codex", str(path))
    assert isinstance(tail, CodexTail)
    step = max(1, len(data) // 9)
    for end in range(step, len(data) + step, step):
        path.write_bytes(data[:end])
        assert tail.read() is False
    assert _shape(tail.events) == _shape(load(FIXTURES / "codex" / fixture).events)
    path.write_bytes(data[: len(data) // 2].rsplit(b"\n", 1)[0] + b"\n")  # rewritten shorter
    assert tail.read() is True


def test_a_codex_call_waits_for_its_output(tmp_path: Path) -> None:
    lines = [
        {"timestamp": "2026-10-01T10:00:00Z", "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "call_id": "call_1",
            "arguments": '{"command": ["bash", "-lc", "curl -sf localhost:8000/health"]}'}},
        {"timestamp": "2026-10-01T10:00:01Z", "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "call_1", "output": '{"output": "ok", "metadata": {"exit_code": 0}}'}},
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text(orjson.dumps(lines[0]).decode() + "\n")
    tail = CodexTail(path)
    tail.read()
    (call,) = tail.events
    assert isinstance(call, ToolEvent) and not tail.settled(call)
    with path.open("a") as f:
        f.write(orjson.dumps(lines[1]).decode() + "\n")
    tail.read()
    assert tail.settled(call) and call.output == "ok"


@pytest.mark.parametrize(("agent", "fixture"), [("gemini", "gemini-cli/session-2026-03-02T09-14-5c1e2a7b.json")])
def test_other_transcripts_are_read_again_when_they_change(agent: str, fixture: str, tmp_path: Path) -> None:
    src = FIXTURES / fixture
    path = tmp_path / src.name
    path.write_bytes(src.read_bytes())
    tail = tail_for(agent, str(path))
    assert isinstance(tail, ReloadTail)
    assert tail.read() is False and tail.read() is False  # a first reading replaces nothing
    assert _shape(tail.events) == _shape(load(src).events)
    settled = [e for e in tail.events if tail.settled(e)]
    assert len(settled) >= len(tail.events) - 1  # only a last call without its result waits


@pytest.mark.parametrize("seed", ["000-kill-after-ready", "002-restart-30001-teardown"])
def test_a_first_read_aside_continues_like_a_read_here(seed: str, tmp_path: Path) -> None:
    """The forked first read hands over its whole state: the next bytes are read as if it had
    never left this process (a pending call's result pairs with its call)."""
    from analyzer.guard.tail import read_aside

    lines = (SEEDS / f"{seed}.jsonl").read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(lines[:half]))
    here, aside = ClaudeTail(path), ClaudeTail(path)
    warmed: list[bool] = []
    assert here.read() is False
    assert read_aside(aside, lambda: warmed.append(True)) is False
    assert warmed == [True] and (aside.offset, aside.line) == (here.offset, here.line)
    path.write_bytes(b"".join(lines))
    here.read(), aside.read()
    assert _shape(aside.events) == _shape(here.events) == _shape(load(SEEDS / f"{seed}.jsonl").events)


def test_a_rewritten_gemini_chat_keeps_the_world_when_it_only_grew(tmp_path: Path) -> None:
    """Gemini CLI rewrites its chat file whole: a reading that only added messages keeps what was
    read (no new world); one that changed an earlier message starts over."""
    import json

    src = FIXTURES / "gemini-cli" / "session-2026-03-02T09-14-5c1e2a7b.json"
    doc = json.loads(src.read_text("utf-8"))
    path = tmp_path / src.name
    head = {**doc, "messages": doc["messages"][:-2]}
    path.write_text(json.dumps(head))
    tail = tail_for("gemini", str(path))
    assert isinstance(tail, ReloadTail)
    tail.read()
    n = len(tail.events)
    path.write_text(json.dumps(doc))
    assert tail.read() is False and len(tail.events) > n
    edited = json.loads(json.dumps(doc))
    edited["messages"][0]["content"] = "Something else entirely"
    path.write_text(json.dumps(edited))
    assert tail.read() is True
