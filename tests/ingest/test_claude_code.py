"""The Claude Code reader on hand-made fixtures in real shapes (fixtures/claude-code/README.md)."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import orjson
import pytest

from analyzer.events import AssistantEvent, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest import IngestError, detect, load
from analyzer.ingest import claude_code as cc

from ..conftest import FIXTURES

CC = FIXTURES / "claude-code"
V1 = CC / "v1.0-dev-server-sidechain.jsonl"
V2_0 = CC / "v2.0-kill-shell.jsonl"
SID = "7d0c7e4e-3b1a-4c2f-8e9d-5a6b7c8d9e0f"
V2_1 = CC / "v2.1-sglang" / f"{SID}.jsonl"
AGENT_FILE = CC / "v2.1-sglang" / SID / "subagents" / "agent-a3f9c21.jsonl"
STREAM = CC / "stream-json-restart-worker.jsonl"


def raw_lines(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def line_of_tool_use(path: Path, tool_id: str) -> int:
    """1-based line of the assistant entry that holds the tool_use ``tool_id`` (read independently)."""
    for n, entry in enumerate(raw_lines(path), start=1):
        message = entry.get("message")
        if entry.get("type") == "assistant" and isinstance(message, dict) \
                and any(b.get("id") == tool_id for b in message["content"] if isinstance(b, dict)):
            return n
    raise AssertionError(tool_id)


def tools(s: Session, name: str | None = None) -> list[ToolEvent]:
    return [e for e in s.tools() if name is None or e.name == name]


def shape(s: Session) -> list[str]:
    out = []
    for e in s.events:
        if isinstance(e, ToolEvent):
            out.append(f"{e.agent}:tool:{'user$' if e.by_user else e.name}")
        elif isinstance(e, UserEvent):
            out.append(f"{e.agent}:user/{e.origin}")
        elif isinstance(e, SystemEvent):
            out.append(f"{e.agent}:system/{e.subtype}")
        else:
            out.append(f"{e.agent}:assistant")
    return out


# -- 1.0.x: bash_N ids, BashOutput / KillBash, inline sidechain --------------------------------


def test_v1_event_kinds_and_order() -> None:
    s = load(V1)
    assert s.format == "claude-code" and s.agent == "claude-code"
    assert s.session_id == "4b8f2d6e-1c3a-4e5f-9a7b-2d6c8e0f1a3b"
    assert s.cwd == "/home/dev/shop-web" and s.model == "claude-sonnet-4-20250514"
    sub = "task-" + tools(s, "Task")[0].ref[-7:]  # type: ignore[index]
    assert shape(s) == [
        "main:user/command", "main:user/meta", "main:assistant", "main:user/prompt",
        "main:assistant", "main:tool:Bash", "main:tool:BashOutput", "main:tool:Bash", "main:assistant",
        "main:tool:Task", f"{sub}:user/prompt", f"{sub}:tool:Bash", f"{sub}:assistant",
        "main:tool:user$", "main:user/prompt", "main:tool:KillBash", "main:tool:Bash", "main:tool:Bash",
        "main:tool:BashOutput", "main:assistant", "main:tool:Bash", "main:user/interrupt", "main:user/prompt",
    ]
    assert [e.index for e in s.events] == list(range(len(s.events)))
    # the summary line is title metadata: skipped, and nothing else is lost
    assert (s.counts.records, s.counts.events, s.counts.skipped, s.counts.diagnostics) == (35, 23, 1, 0)


def test_v1_background_launch_poll_kill_and_exit_codes() -> None:
    s = load(V1)
    dev, curl, env, build, sleep = (e for e in tools(s, "Bash") if e.agent == "main" and not e.by_user)
    assert dev.command == "pnpm dev --port 3001" and dev.background and dev.task_id == "bash_1"
    assert dev.output == "Command running in background with ID: bash_1"
    poll1, poll2 = tools(s, "BashOutput")
    assert (poll1.category, poll1.task_id, poll1.exit_code) == ("task_output", "bash_1", None)
    assert "Ready in 2.1s" in (poll1.output or "")
    kill = tools(s, "KillBash")[0]
    assert (kill.category, kill.task_id) == ("task_stop", "bash_1")
    assert curl.exit_code == 22 and curl.is_error is True and curl.output == "Exit code 22\n500"
    assert env.output == "" and env.exit_code is None and env.is_error is False
    assert build.background and build.task_id == "bash_2"
    # the poll reports the finished task's exit code and both streams
    assert (poll2.task_id, poll2.exit_code) == ("bash_2", 1)
    assert poll2.output is not None and poll2.output.endswith("Command failed with exit code 1.")
    assert sleep.interrupted and sleep.exit_code is None


def test_v1_inline_sidechain_gets_the_spawning_task_as_agent() -> None:
    s = load(V1)
    task = tools(s, "Task")[0]
    assert task.category == "subagent" and task.ref is not None
    agent = f"task-{task.ref[-7:]}"
    side = [e for e in s.events if e.agent == agent]
    assert [e.line for e in side] == [15, 16, 18]
    assert all(task.index < e.index for e in side) and all(e.source is None for e in side)
    grep = side[1]
    assert isinstance(grep, ToolEvent) and grep.command == 'grep -rn "process.env" app/ lib/ | head -20'
    assert grep.result_line == 17
    # the Task call's own result arrives after the sidechain, from the main chain
    assert task.result_line == 19 and task.output is not None and "DATABASE_URL" in task.output


def test_v1_user_bang_command_pairs_input_and_output() -> None:
    s = load(V1)
    (mine,) = [e for e in s.tools() if e.by_user]
    assert (mine.name, mine.category, mine.command) == ("Bash", "shell", "lsof -nP -iTCP:3001 -sTCP:LISTEN")
    assert mine.output is not None and mine.output.startswith("COMMAND   PID")
    assert "*:3001 (LISTEN)" in mine.output
    assert (mine.line, mine.result_line) == (20, 21)
    assert mine.ref != mine.result_ref and mine.result_ts is not None


def test_v1_user_origins() -> None:
    s = load(V1)
    users = [e for e in s.events if isinstance(e, UserEvent) and e.agent == "main"]
    assert [(u.origin, u.line) for u in users] == [
        ("command", 2), ("meta", 3), ("prompt", 5), ("prompt", 22), ("interrupt", 34), ("prompt", 35),
    ]
    assert "<command-name>/init</command-name>" in users[0].text  # kept as written


# -- 2.0.x: hex shell ids, KillShell, streamed message ------------------------------------------


def test_v2_0_kill_shell_and_killed_poll() -> None:
    s = load(V2_0)
    launch = tools(s, "Bash")[0]
    assert launch.background and launch.task_id == "5f1c2a" and launch.category == "shell"
    kill = tools(s, "KillShell")[0]
    assert (kill.category, kill.task_id) == ("task_stop", "5f1c2a")
    first_poll, after_kill = tools(s, "BashOutput")
    assert first_poll.exit_code is None and "Application startup complete." in (first_poll.output or "")
    assert (after_kill.task_id, after_kill.exit_code) == ("5f1c2a", 143)
    restart = tools(s, "Bash")[-1]
    assert restart.command is not None and restart.command.startswith("nohup uv run uvicorn")
    assert not restart.background  # shell `&` is the shell stage's business, not the harness's


def test_v2_0_streamed_message_merges_thinking_text_and_keeps_tool_order() -> None:
    s = load(V2_0)
    entries = raw_lines(V2_0)
    first = s.events[1]
    assert isinstance(first, AssistantEvent)
    assert first.text == "Starting uvicorn in the background."
    assert first.thinking is not None and first.thinking.startswith("The user wants uvicorn on 8000")
    # one message id over three entries: the event starts at the first, the call at the third
    assert [entries[n - 1]["message"]["id"] for n in (3, 4, 5)] == [entries[2]["message"]["id"]] * 3  # type: ignore[index]
    assert (first.line, first.ref) == (3, entries[2]["uuid"])
    assert isinstance(s.events[2], ToolEvent) and s.events[2].line == 5
    assert s.model == "claude-sonnet-4-5-20250929"  # the synthetic API-error message does not count


def test_v2_0_api_error_is_a_system_event() -> None:
    s = load(V2_0)
    (err,) = [e for e in s.events if isinstance(e, SystemEvent)]
    assert err.subtype == "api_error" and "overloaded_error" in err.text and err.line == 14


# -- 2.1.x: TaskOutput / TaskStop, notifications, progress, sub-agent files ---------------------


def test_v2_1_task_tools_and_notifications() -> None:
    s = load(V2_1)
    launch, bench = (e for e in tools(s, "Bash") if e.background)
    assert (launch.task_id, bench.task_id) == ("b7k2m9q1x", "bq4n8w2ze")
    assert launch.command == ("python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct "
                              "--host 0.0.0.0 --port 30000")
    wait = tools(s, "TaskOutput")[0]
    assert (wait.category, wait.task_id, wait.exit_code) == ("task_output", "b7k2m9q1x", None)
    assert "ready to roll" in (wait.output or "")
    stop = tools(s, "TaskStop")[0]
    assert (stop.category, stop.task_id) == ("task_stop", "b7k2m9q1x")
    # each notification is written up to three times (queue-operation, attachment, user entry)
    notes = [e for e in s.events if isinstance(e, SystemEvent)]
    assert [(n.subtype, n.task_id, n.status, n.exit_code, n.line) for n in notes] == [
        ("task-notification", "bq4n8w2ze", "failed", 1, 26),
        ("task-notification", "b7k2m9q1x", "killed", None, 36),
    ]
    assert notes[0].text == 'Background command "Run throughput benchmark" failed with exit code 1'
    assert bench.index < notes[0].index < stop.index < notes[1].index


def test_v2_1_result_written_before_its_call_is_still_paired() -> None:
    s = load(V2_1)
    health, gpu = (e for e in tools(s, "Bash") if e.line in (11, 13))
    assert health.command is not None and "health_generate" in health.command
    assert gpu.command == "nvidia-smi --query-gpu=memory.used --format=csv"
    assert (health.line, health.result_line, health.output) == (11, 14, "200")
    assert (gpu.line, gpu.result_line) == (13, 12)
    assert gpu.output == "memory.used [MiB]\n74112 MiB"
    assert not s.diagnostics


def test_v2_1_subagent_folder_is_read_and_merged_by_time() -> None:
    s = load(V2_1)
    assert s.sources == [str(V2_1), str(AGENT_FILE)]
    sub = [e for e in s.events if e.agent == "a3f9c21"]
    assert [(e.kind, e.line, e.source) for e in sub] == [
        ("user", 1, str(AGENT_FILE)), ("tool", 2, str(AGENT_FILE)), ("assistant", 4, str(AGENT_FILE)),
    ]
    grep = sub[1]
    assert isinstance(grep, ToolEvent) and grep.result_line == 3 and "cuda graph" in (grep.output or "")
    task = tools(s, "Task")[0]
    after = s.events[sub[-1].index + 1]
    assert task.index + 1 == sub[0].index and after.agent == "main" and after.line == 22
    times = [e.ts for e in s.events]
    assert all(a is not None and b is not None and a <= b for a, b in itertools.pairwise(times))
    # agent_progress mirrors in the parent are skipped because the agent's own file was read
    assert (s.counts.records, s.counts.events, s.counts.skipped, s.counts.diagnostics) == (45, 22, 14, 0)
    assert s.model == "claude-opus-4-6"  # the main agent's, not the sub-agent's haiku


def test_v2_1_progress_mirror_is_used_when_the_agent_file_is_missing(tmp_path: Path) -> None:
    alone = tmp_path / V2_1.name
    shutil.copy(V2_1, alone)
    s = load(alone)
    sub = [e for e in s.events if e.agent == "a3f9c21"]
    assert [type(e).__name__ for e in sub] == ["ToolEvent"]
    assert sub[0].source is None and sub[0].line == 19  # the progress record in the main file
    assert isinstance(sub[0], ToolEvent) and sub[0].command is not None and "grep -nE" in sub[0].command
    assert s.sources == [str(alone)]


def test_session_folder_loads_the_session_beside_it() -> None:
    folder = V2_1.parent / SID
    fmt, reason = detect(folder)
    assert fmt.NAME == "claude-code" and f"{SID}.jsonl" in reason
    s = load(folder)
    assert s.path == str(folder) and s.sources[0] == str(V2_1)
    assert [e.ref for e in s.events] == [e.ref for e in load(V2_1).events]


def test_a_folder_without_its_session_file_is_not_claimed(tmp_path: Path) -> None:
    (tmp_path / "abc" / "subagents").mkdir(parents=True)
    shutil.copy(AGENT_FILE, tmp_path / "abc" / "subagents" / AGENT_FILE.name)
    assert cc.detect(tmp_path / "abc", b"") is None
    with pytest.raises(IngestError, match=r"no abc\.jsonl beside this folder"):
        load(tmp_path / "abc", format="claude-code")


def test_agent_file_alone_is_a_session_of_that_agent() -> None:
    s = load(AGENT_FILE)
    assert {e.agent for e in s.events} == {"a3f9c21"} and s.model == "claude-haiku-4-5-20251001"
    assert all(e.source is None for e in s.events)


# -- refs, lines, detection ----------------------------------------------------------------------


@pytest.mark.parametrize("path", [V1, V2_0, V2_1], ids=["v1.0", "v2.0", "v2.1"])
def test_refs_and_lines_point_back_into_the_file(path: Path) -> None:
    s = load(path)
    entries = raw_lines(path)
    for ev in s.events:
        if ev.source is not None or ev.line is None:
            continue
        entry = entries[ev.line - 1]
        if isinstance(ev, ToolEvent) and not ev.by_user:
            assert ev.ref is not None and ev.ref.startswith("toolu_")
            assert ev.line == line_of_tool_use(path, ev.ref)
            if ev.result_line is not None:
                result = entries[ev.result_line - 1]
                assert ev.result_ref == result["uuid"]
                blocks = result["message"]["content"]  # type: ignore[index]
                assert any(b.get("tool_use_id") == ev.ref for b in blocks)
        elif ev.ref is not None:
            assert ev.ref == entry["uuid"]


def test_stream_json_output() -> None:
    fmt, reason = detect(STREAM)
    assert fmt.NAME == "claude-code" and "stream-json" in reason
    s = load(STREAM)
    assert s.session_id == "c2a81f57-0e4d-4b39-a6c1-93d5e7f20b84" and s.cwd == "/home/dev/worker"
    restart, task, logs = s.tools()
    assert restart.command is not None and restart.command.startswith("systemctl --user restart worker")
    assert restart.output == "active" and restart.ts is None
    # messages with parent_tool_use_id belong to the sub-agent that Task call started
    assert task.ref is not None and logs.agent == f"task-{task.ref[-7:]}"
    assert logs.output is not None and "connected to redis" in logs.output
    assert (s.counts.records, s.counts.skipped) == (11, 2)  # init header and result are skipped


def test_detect_reads_content_not_the_name(tmp_path: Path) -> None:
    renamed = tmp_path / "notes.txt"
    renamed.write_bytes(V1.read_bytes())
    fmt, _ = detect(renamed)
    assert fmt.NAME == "claude-code"
    # a Claude-Code-like name, but lines of another shape
    other = tmp_path / "4b8f2d6e-1c3a-4e5f-9a7b-2d6c8e0f1a3b.jsonl"
    other.write_text('{"type":"message","role":"user","timestamp":"2026-01-01T00:00:00Z","text":"hi"}\n')
    assert cc.detect(other, other.read_bytes()) is None


def test_detect_sees_a_first_line_longer_than_the_window(tmp_path: Path) -> None:
    first = raw_lines(V2_0)[1]
    first["message"] = {"role": "user", "content": "x" * 200_000}
    p = tmp_path / "s.jsonl"
    p.write_bytes(orjson.dumps(first) + b"\n" + V2_0.read_bytes())
    fmt, reason = detect(p)
    assert fmt.NAME == "claude-code" and "longer than the detection window" in reason
    assert len(load(p).events[0].text) == 200_000  # type: ignore[union-attr]


def test_unknown_entry_types_get_one_info_diagnostic_each(tmp_path: Path) -> None:
    lines = V2_0.read_bytes().splitlines()
    odd = b'{"type":"agent-color","color":"teal","sessionId":"9e3d1c7a-5b2f-4a86-b0d4-7f1e2c9a6b35"}'
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n".join([*lines[:4], odd, *lines[4:10], odd, *lines[10:]]) + b"\n")
    s = load(p)
    assert [(d.level.value, d.line, d.message) for d in s.diagnostics] == [
        ("info", 5, "2 entries of unknown type 'agent-color' ignored (first at line 5)"),
    ]
    assert len(s.events) == len(load(V2_0).events)


def test_bash_input_with_output_in_one_entry_and_stray_output(tmp_path: Path) -> None:
    base = raw_lines(V2_0)[1]

    def user(text: str, uuid: str) -> bytes:
        return orjson.dumps({**base, "uuid": uuid, "message": {"role": "user", "content": text}})

    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n".join([
        user("<bash-input>ss -ltnp 'sport = :8000'</bash-input><bash-stdout>LISTEN 0 2048 127.0.0.1:8000"
             "</bash-stdout><bash-stderr></bash-stderr>", "u1"),
        user("<bash-stdout>orphan</bash-stdout><bash-stderr></bash-stderr>", "u2"),
        user("What does <bash-input> mean in the log?", "u3"),
    ]) + b"\n")
    s = load(p)
    ss, stray, question = s.events
    assert isinstance(ss, ToolEvent) and ss.by_user and ss.command == "ss -ltnp 'sport = :8000'"
    assert ss.output == "LISTEN 0 2048 127.0.0.1:8000" and ss.result_line is None
    assert isinstance(stray, UserEvent) and stray.origin == "meta"
    assert isinstance(question, UserEvent) and question.origin == "prompt"


def test_result_for_a_call_not_in_the_file_is_a_warning(tmp_path: Path) -> None:
    lines = V2_0.read_bytes().splitlines()
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n".join(lines[:4] + lines[5:]) + b"\n")  # drop the launch call (line 5)
    s = load(p)
    (d,) = s.diagnostics
    assert d.level.value == "warning" and d.line == 5
    assert "which is not in this file" in d.message
    assert [e.name for e in s.tools()][:2] == ["BashOutput", "Bash"]
