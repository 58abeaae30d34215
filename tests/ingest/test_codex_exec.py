"""`codex exec --json` event streams: detection, one tool call per command item, the other items,
bad lines, and what the analysis finds in the fixture."""

from __future__ import annotations

import json
from pathlib import Path

from analyzer.events import AssistantEvent, Level, SystemEvent, ToolEvent
from analyzer.ingest import detect, load
from analyzer.pipeline import analyze

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "codex-exec" / "exec-json-vllm-restart.jsonl"


def test_detected_apart_from_codex_rollouts() -> None:
    fmt, reason = detect(FIXTURE)
    assert fmt.NAME == "codex-exec" and "thread.started" in reason
    for rollout in (ROOT / "fixtures" / "codex").glob("*.jsonl"):
        assert detect(rollout)[0].NAME == "codex"


def test_events_in_stream_order_with_the_thread_as_session() -> None:
    s = load(FIXTURE)
    assert (s.format, s.agent, s.session_id) == ("codex-exec", "codex", "0199b3c2-7a10-7d41-9e2f-4c1d2e3f4a5b")
    assert [e.kind for e in s.events] == ["assistant", "tool", "tool", "tool", "assistant", "tool", "tool", "tool",
                                          "tool", "tool"]
    # 21 lines; turn.started/.completed, the todo list's two lines and the file change's start are skipped
    assert (s.counts.records, s.counts.skipped) == (21, 5)
    thinking = s.events[0]
    assert isinstance(thinking, AssistantEvent) and thinking.text == "" and "Planning the restart" in (
        thinking.thinking or "")


def test_a_command_is_one_call_from_its_start_to_its_completion() -> None:
    s = load(FIXTURE)
    shell = [e for e in s.events if isinstance(e, ToolEvent) and e.category == "shell"]
    assert [e.ref for e in shell] == ["item_1", "item_2", "item_3", "item_5", "item_9", "item_10"]
    probe = shell[2]
    assert (probe.line, probe.result_line, probe.exit_code, probe.is_error) == (8, 9, 0, False)
    assert probe.command == "bash -lc 'sleep 60; curl -s localhost:8000/v1/models; curl -s localhost:8001/v1/models'"
    assert probe.output is not None and '"/models/qwen"' in probe.output
    failed = shell[4]
    assert (failed.exit_code, failed.is_error) == (7, True)
    running = shell[5]  # the stream ended while it ran in the foreground
    assert (running.output, running.exit_code, running.result_line) == (None, None, None)
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.info, 20)]
    assert "still running" in s.diagnostics[0].message


def test_file_changes_and_mcp_calls_are_tool_calls() -> None:
    s = load(FIXTURE)
    change, mcp = [e for e in s.events if isinstance(e, ToolEvent) and e.category != "shell"]
    assert (change.name, change.category, change.input) == (
        "file_change", "file", {"changes": [{"path": "/srv/notes/servers.md", "kind": "update"}]})
    assert (mcp.name, mcp.input, mcp.output, mcp.is_error) == ("gpu.nvidia_smi", {"host": "local"},
                                                              "GPU 0: 71% util", False)


def test_bad_lines_are_reported_and_the_rest_is_read(tmp_path: Path) -> None:
    lines = FIXTURE.read_text("utf-8").splitlines()
    broken = [*lines[:5], lines[5][:40], "\x00\x01binary", json.dumps({"no": "type"}),
              json.dumps({"type": "turn.failed", "error": {"message": "stream disconnected"}}), *lines[6:]]
    p = tmp_path / "broken.jsonl"
    p.write_text("\n".join(broken) + "\n", encoding="utf-8")
    s = load(p, format="codex-exec")
    errors = [(d.line, d.message) for d in s.diagnostics if d.level == Level.error]
    assert [line for line, _ in errors] == [6, 7, 8]
    assert "not a codex exec event" in errors[2][1]
    assert any(isinstance(e, SystemEvent) and e.text == "stream disconnected" for e in s.events)
    # the command whose start line was cut is still read from its completion
    assert [e.ref for e in s.events if isinstance(e, ToolEvent) and e.category == "shell"][:2] == ["item_1", "item_2"]


def test_the_pkill_meant_for_one_server_is_over_broad() -> None:
    analysis = analyze(FIXTURE)
    assert [(f.rule, f.anchor.ref) for f in analysis.findings] == [("over-broad-kill", "item_5")]
    assert {"local:8000", "local:8001"} <= set(analysis.world.instances)


def test_an_opencode_stream_opening_with_an_error_is_not_taken(tmp_path: Path) -> None:
    stream = ROOT / "fixtures" / "opencode" / "run-format-json-uvicorn.jsonl"
    error_line = next(line for line in stream.read_text("utf-8").splitlines() if '"type":"error"' in line)
    p = tmp_path / "run.jsonl"
    p.write_text(error_line + "\n" + stream.read_text("utf-8"), encoding="utf-8")
    assert detect(p)[0].NAME == "opencode"
