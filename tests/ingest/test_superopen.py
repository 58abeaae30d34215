"""superopen hook-event spans of a Cursor session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.events import AssistantEvent, Level, UserEvent
from analyzer.ingest import detect, load
from tests.ingest._new_formats import FIXTURES, corpus_files

FIXTURE = FIXTURES / "superopen" / "cursor-hook-events.jsonl"


def test_hook_spans_launch_probe_restart() -> None:
    s = load(FIXTURE)
    assert (s.format, s.agent, s.model) == ("superopen", "cursor", "claude-4.5-sonnet")
    assert (s.session_id, s.cwd) == ("7d0c5e2a-3b1f-4c9e-9a7d-2f6e8b1c4d05", "/home/dev/shop")
    assert not s.diagnostics
    calls = s.shell_calls()
    assert [(t.line, t.ref) for t in calls] == [
        (4, "b1e2c3d4-0001-4a5b-8c9d-000000000001"),
        (9, "b1e2c3d4-0002-4a5b-8c9d-000000000002"),  # two announced together: paired in order
        (10, "b1e2c3d4-0003-4a5b-8c9d-000000000003"),
        (15, "b1e2c3d4-0004-4a5b-8c9d-000000000004"),
    ]
    launch, probe, tail, restart = calls
    assert (launch.command, launch.exit_code, launch.output, launch.result_line) == (
        "nohup npm run dev -- --port 3000 > dev.log 2>&1 &", 0, "", 5)
    assert (probe.output, probe.result_line) == ("200", 11)  # joined by command: the span has no id
    assert tail.output is None  # no result recorded
    assert restart.interrupted and restart.is_error and restart.output == "Command was interrupted"
    prompts = [e.text for e in s.events if isinstance(e, UserEvent)]
    assert prompts == ["Start the shop dev server on 3000 and check it serves",
                       "Ready, thanks. Restart it with the new env"]
    (said,) = [e for e in s.events if isinstance(e, AssistantEvent)]
    assert said.text == "The dev server is up on :3000 (HTTP 200)." and said.line == 12
    assert s.counts.skipped == 3  # manifest, model change, loop stop


def test_a_broken_line_is_reported_and_the_rest_read(tmp_path: Path) -> None:
    lines = FIXTURE.read_bytes().split(b"\n")
    lines[3:3] = [b'{"name": "coding_agent.shell.requested", "attri', b"[1, 2]", b'{"other": 1}']
    p = tmp_path / "events.jsonl"
    p.write_bytes(b"\n".join(lines))
    s = load(p)
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.error, 4), (Level.error, 5), (Level.warning, 6)]
    assert len(s.shell_calls()) == 4


def _raw_shell_requests(path: Path) -> int:
    spans = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return sum(sp.get("name") == "coding_agent.shell.requested" for sp in spans)


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_files("superopen"), ids=lambda p: p.name)
def test_corpus_hook_events(corpus: Path, path: Path) -> None:
    assert detect(path)[0].NAME == "superopen"
    s = load(path)
    assert [d for d in s.diagnostics if d.level is Level.error] == []
    assert len(s.shell_calls()) == _raw_shell_requests(path)
    pkill = [t for t in s.shell_calls() if "pkill -f 'next-server'" in (t.command or "")]
    assert [t.line for t in pkill] == [149, 153, 163, 165, 167]  # labels.yaml's anchor and alt lines
    (answered,) = [t for t in s.shell_calls() if t.output]
    assert answered.line == 111 and answered.exit_code == 0 and "Ready in" in (answered.output or "")
