from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from analyzer.events import AssistantEvent, Level, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest import codex
from analyzer.ingest.base import read_head
from tests.conftest import FIXTURES

UNIFIED = FIXTURES / "codex" / "rollout-unified-exec-uvicorn.jsonl"
CODE_MODE = FIXTURES / "codex" / "rollout-code-mode-vllm-sglang.jsonl"
FLAT = FIXTURES / "codex" / "rollout-flat-legacy-sglang.jsonl"
STRUCTURED = FIXTURES / "codex" / "rollout-shell-command-tgi.jsonl"


def tools(path: Path) -> list[ToolEvent]:
    return codex.load(path).tools()


def write_lines(tmp_path: Path, rows: list[Any], name: str = "rollout.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join((r if isinstance(r, str) else json.dumps(r, separators=(",", ":"))) + "\n" for r in rows))
    return p


def env(kind: str, payload: dict[str, Any], ts: str = "2026-01-05T10:00:00Z") -> dict[str, Any]:
    return {"timestamp": ts, "type": kind, "payload": payload}


# ------------------------------------------------------------------------- unified exec (envelope)

def test_unified_exec_timeline_kinds_order_and_session_fields() -> None:
    s = codex.load(UNIFIED)
    assert (s.format, s.agent, s.session_id) == ("codex", "codex", "019a7c2e-5b1d-7f30-9c41-2f6e8d0a1b77")
    assert (s.cwd, s.model) == ("/home/dev/api", "gpt-5.1-codex")
    assert [e.kind for e in s.events] == [
        "user", "user", "tool", "tool", "assistant", "user", "tool", "tool", "tool", "tool", "assistant",
        "tool", "user", "tool", "user", "user",
    ]
    assert [e.index for e in s.events] == list(range(len(s.events)))
    env_ctx, prompt = s.events[0], s.events[1]
    assert isinstance(env_ctx, UserEvent) and env_ctx.origin == "meta" and env_ctx.line == 3
    assert isinstance(prompt, UserEvent) and prompt.origin == "prompt" and prompt.line == 4
    assert prompt.text == "Start the API with uvicorn on port 8000 and check that it answers."
    assert not s.diagnostics


def test_user_and_agent_messages_written_twice_are_one_event() -> None:
    s = codex.load(UNIFIED)
    users = [e.text for e in s.events if isinstance(e, UserEvent) and e.origin == "prompt"]
    assert users == [
        "Start the API with uvicorn on port 8000 and check that it answers.",
        "Ready. Now restart it with --reload so it picks up my edits.",
        "Stop it for now.",
    ]
    said = [e for e in s.events if isinstance(e, AssistantEvent)]
    assert [e.line for e in said] == [14, 29]  # the event_msg copy came first
    assert said[0].model == "gpt-5.1-codex" and "session 41187" in said[0].text


def test_exec_command_background_launch_probe_and_kill() -> None:
    launch, curl, ctrl_c, pkill, relaunch, poll, user_ss, kill = tools(UNIFIED)
    assert launch.name == "exec_command" and launch.category == "shell"
    assert launch.command == "uvicorn app.main:api --host 0.0.0.0 --port 8000"
    assert launch.background and launch.task_id == "41187" and launch.exit_code is None
    assert launch.ref == "call_Xk2mQe7rVd1n8bTzLc0aHs4P" and (launch.line, launch.result_line) == (9, 10)
    assert launch.output is not None and launch.output.startswith("INFO:     Started server process")
    assert launch.cwd == "/home/dev/api"
    assert (curl.command, curl.exit_code, curl.output, curl.background) == (
        "curl -sf http://127.0.0.1:8000/health", 0, '{"status":"ok"}', False)
    # Ctrl-C written to the running session stops it; its exit code is the server's
    assert ctrl_c.name == "write_stdin" and ctrl_c.category == "task_stop"
    assert (ctrl_c.task_id, ctrl_c.exit_code, ctrl_c.command) == ("41187", 130, None)
    assert (pkill.command, pkill.exit_code, pkill.is_error) == ("pkill -f 'uvicorn app.main:api' || true", 0, False)
    assert relaunch.background and relaunch.task_id == "52011"
    assert poll.category == "task_output" and poll.task_id == "52011" and poll.exit_code is None
    assert poll.output is not None and "Application startup complete" in poll.output
    assert user_ss.by_user and (user_ss.command, user_ss.exit_code) == ("ss -ltnp | grep 8000", 0)
    assert user_ss.output is not None and user_ss.output.startswith("LISTEN")
    # the user interrupted the turn while `kill` ran: no result, marked interrupted
    assert kill.command == "kill 52014" and kill.output is None and kill.interrupted
    interrupt = codex.load(UNIFIED).events[-2]
    assert isinstance(interrupt, UserEvent) and interrupt.origin == "interrupt"


# ------------------------------------------------------------------------- code mode + CommandExecution

def test_code_mode_calls_take_command_exit_and_output_from_command_execution() -> None:
    s = codex.load(CODE_MODE)
    assert (s.session_id, s.model, s.cwd) == ("01a0d9f4-3c2b-7e85-a1f0-6b7c8d9e0f12", "gpt-5.5", "/srv/models")
    shell = s.shell_calls()
    # five CommandExecution items, three exec scripts: no item became a second event
    assert [t.ref for t in shell] == ["call_7Gm2Qw9eRt4yUi1oPa8sDf3H", "call_Lk5Jh8Gf2Ds6Az0Xc4Vb7Nm1",
                                      "call_Qa1Ws2Ed3Rf4Tg5Yh6Uj7Ik8", "call_Zx9Cv8Bn7Mm6Ll5Kk4Jj3Hh2"]
    assert all(t.name == "exec" for t in shell)
    vllm, poll_loop, sglang, pkill = shell
    assert vllm.command == "nohup vllm serve Qwen/Qwen3-8B --port 8001 > /tmp/vllm.log 2>&1 &"
    assert (vllm.exit_code, vllm.output, vllm.cwd, vllm.background) == (0, "", "/srv/models", False)
    assert (vllm.result_line, vllm.result_ref) == (12, "ctco_7Gm2Qw9eRt4yUi1o")
    # a polling loop: three curl runs, the last one answered
    assert poll_loop.command == "curl -sf http://127.0.0.1:8001/v1/models" and poll_loop.exit_code == 0
    assert poll_loop.output is not None and poll_loop.output.count("curl: (7)") == 2
    assert '"id":"Qwen/Qwen3-8B"' in poll_loop.output
    # startup finished with the process alive: a background server
    assert sglang.background and sglang.task_id == "9120" and sglang.exit_code is None
    assert pkill.command == "pkill -f sglang.launch_server; sleep 2; pgrep -af sglang || echo stopped"
    assert pkill.exit_code == 0


def test_end_of_background_process_is_a_task_notification() -> None:
    s = codex.load(CODE_MODE)
    pkill_at = next(e.index for e in s.events if e.ref == "call_Zx9Cv8Bn7Mm6Ll5Kk4Jj3Hh2")
    note = s.events[pkill_at + 1]
    assert isinstance(note, SystemEvent) and note.subtype == "task-notification"
    assert (note.task_id, note.exit_code, note.line) == ("9120", 143, 30)
    compacted = s.events[pkill_at + 2]
    assert isinstance(compacted, SystemEvent) and compacted.subtype == "compacted"
    assert "vLLM" in compacted.text


def test_agent_message_written_as_item_and_response_item_is_one_event_with_its_id() -> None:
    said = [e for e in codex.load(CODE_MODE).events if isinstance(e, AssistantEvent)]
    assert [e.ref for e in said] == ["msg_0a9e77c1d2e3f4051", "msg_0a9e77c1d2e3f4052", "msg_0a9e77c1d2e3f4053"]


def test_command_execution_without_its_call_becomes_its_own_event(tmp_path: Path) -> None:
    lines = CODE_MODE.read_text().splitlines()
    broken = next(i for i, ln in enumerate(lines) if "call_7Gm2Qw9eRt4yUi1oPa8sDf3H" in ln)
    lines[broken] = lines[broken][:120]  # the call line was cut
    s = codex.load(write_lines(tmp_path, lines))
    assert [(d.level, d.line) for d in s.diagnostics if d.level != Level.info] == [
        (Level.error, broken + 1), (Level.warning, broken + 4)]
    launches = [t for t in s.shell_calls() if t.command and "vllm serve" in t.command]
    assert len(launches) == 1
    own = launches[0]
    assert own.name == "CommandExecution" and own.ref == "exec-1b2c3d4e-5f60-4718-92a3-b4c5d6e7f809"
    assert (own.exit_code, own.cwd, own.line) == (0, "/srv/models", broken + 3)
    assert len(s.shell_calls()) == 4  # the rest is unchanged


# ------------------------------------------------------------------------- early flat layout

def test_flat_layout_shell_and_local_shell_calls_with_legacy_json_exit_codes() -> None:
    s = codex.load(FLAT)
    assert (s.session_id, s.cwd, s.model) == ("5f1c9a2e-7d4b-4e8a-b0c3-9e2f1a6d7c58", "/home/dev/llm", None)
    assert [e.kind for e in s.events] == [
        "user", "user", "tool", "tool", "tool", "assistant", "user", "tool", "tool", "assistant"]
    assert all(e.ts is None for e in s.events)  # bare items carry no time
    shell = s.shell_calls()
    assert [t.command for t in shell] == [
        "nohup python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --port 30000"
        " > sglang.log 2>&1 &",
        "curl -sf http://127.0.0.1:30000/health",
        "sleep 30 && curl -sf http://127.0.0.1:30000/health && tail -n 2 sglang.log",
        "pgrep -af sglang.launch_server",
        "pkill -f sglang.launch_server; sleep 3; nohup python -m sglang.launch_server --model-path "
        "meta-llama/Llama-3.1-8B-Instruct --port 30000 --tp 2 > sglang.log 2>&1 &",
    ]
    assert [t.exit_code for t in shell] == [0, 7, 0, 0, 0]
    assert [t.is_error for t in shell] == [False, True, False, False, False]
    curl = shell[1]
    assert curl.name == "local_shell_call" and curl.ref == "call_Yt6pL0sD4fG8hJ1k"
    assert (curl.line, curl.result_line) == (9, 10)
    assert curl.output is not None and curl.output.startswith("curl: (7) Failed to connect")
    assert s.counts.skipped == 5  # header, 3 state markers, 1 reasoning


def test_shell_command_structured_text_output() -> None:
    s = codex.load(STRUCTURED)
    assert s.model == "gpt-5-codex"
    run, ps, rerun, health = s.shell_calls()
    assert (run.exit_code, run.is_error) == (125, True)
    assert run.output is not None and run.output.startswith("docker: Error response from daemon")
    assert (ps.exit_code, ps.output) == (0, "tgi-old 0.0.0.0:8080->80/tcp\n")
    assert rerun.command is not None and rerun.command.startswith("docker rm -f tgi-old tgi && docker run -d")
    assert (health.exit_code, health.output) == (0, "healthy\n")
    assert [e.text for e in s.events if isinstance(e, UserEvent) and e.origin == "prompt"] == [
        "bring up TGI for mistral 7b on port 8080 in docker"]


# ------------------------------------------------------------------------- dedupe and matching rules

def test_the_same_prompt_typed_twice_stays_two_events(tmp_path: Path) -> None:
    msg = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "continue"}]}
    event = {"type": "user_message", "message": "continue"}
    p = write_lines(tmp_path, [
        env("session_meta", {"id": "s1", "cwd": "/w"}),
        env("response_item", msg), env("event_msg", event),
        env("response_item", msg), env("event_msg", event),
    ])
    s = codex.load(p)
    assert [(e.kind, e.line) for e in s.events] == [("user", 2), ("user", 4)]
    assert s.counts.skipped == 3


def test_user_shell_command_from_exec_event_and_message_is_one_event(tmp_path: Path) -> None:
    text = ("<user_shell_command>\n<command>\nnvidia-smi\n</command>\n<result>\nExit code: 0\n"
            "Duration: 0.1000 seconds\nOutput:\nNo running processes found\n\n</result>\n</user_shell_command>")
    item = {"type": "CommandExecution", "id": "exec-u1", "command": ["/bin/bash", "-lc", "nvidia-smi"],
            "cwd": "file:///w", "source": "user_shell", "status": "completed", "exit_code": 0,
            "aggregated_output": "No running processes found\n"}
    p = write_lines(tmp_path, [
        env("event_msg", {"type": "item_completed", "item": item}),
        env("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}),
    ])
    (ev,) = codex.load(p).events
    assert isinstance(ev, ToolEvent) and ev.by_user and ev.command == "nvidia-smi"
    assert (ev.exit_code, ev.cwd, ev.ref) == (0, "/w", "exec-u1")


def test_interaction_item_is_merged_into_its_write_stdin_poll(tmp_path: Path) -> None:
    call = {"type": "function_call", "name": "write_stdin", "call_id": "c1",
            "arguments": json.dumps({"session_id": 77, "chars": ""})}
    item = {"type": "CommandExecution", "id": "exec-i1", "process_id": "77", "command": ["python", "serve.py"],
            "source": "unified_exec_interaction", "status": "completed", "exit_code": 0,
            "aggregated_output": "bye\n"}
    out = {"type": "function_call_output", "call_id": "c1",
           "output": "Chunk ID: a\nWall time: 1.0 seconds\nProcess exited with code 0\nOutput:\nbye\n"}
    p = write_lines(tmp_path, [env("response_item", call), env("event_msg", {"type": "item_completed", "item": item}),
                               env("response_item", out)])
    (poll,) = codex.load(p).events
    assert isinstance(poll, ToolEvent) and poll.category == "task_output"
    assert (poll.task_id, poll.exit_code, poll.output, poll.result_line) == ("77", 0, "bye\n", 3)


@pytest.mark.parametrize(
    ("output", "text", "exit_code", "running"),
    [
        ('{"output":"ok\\n","metadata":{"exit_code":2,"duration_seconds":0.1}}', "ok\n", 2, None),
        ("Exit code: 1\nWall time: 0.2 seconds\nOutput:\nboom\n", "boom\n", 1, None),
        ("Chunk ID: 9\nWall time: 1.0 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nx",
         "x", 0, None),
        ("Chunk ID: 9\nWall time: 1.0 seconds\nProcess running with session ID 4242\nOutput:\nlistening",
         "listening", None, "4242"),
        ("Script running with cell ID cell-7", "Script running with cell ID cell-7", None, "cell-7"),
        ([{"type": "input_text", "text": "Exit code: 0\nOutput:\n"}, {"type": "input_text", "text": "a\nb"}],
         "a\nb", 0, None),
        ("Duration looks fine to me", "Duration looks fine to me", None, None),
        ('{"output":"not codex metadata"}', '{"output":"not codex metadata"}', None, None),
    ],
)
def test_read_output_formats(output: Any, text: str, exit_code: int | None, running: str | None) -> None:
    out = codex.read_output(output)
    assert (out.text, out.exit_code, out.running) == (text, exit_code, running)


def test_read_output_object_with_success_false_is_a_failure() -> None:
    out = codex.read_output({"content": "sandbox denied", "success": False})
    assert out.failed and out.text == "sandbox denied"


def test_js_exec_commands_reads_literal_cmd_strings() -> None:
    js = ('const a = await tools.exec_command({cmd:"printf \'\\\\n--\\\\n\' && echo \\"hi\\"", yield_time_ms: 1});\n'
          "await tools.exec_command({ 'cmd': 'pkill -f \\'vllm serve\\'' });\n"
          "for (const c of cmds) await tools.exec_command({cmd: c});\n")
    assert codex.js_exec_commands(js) == ["printf '\\n--\\n' && echo \"hi\"", "pkill -f 'vllm serve'"]



def test_js_exec_commands_follows_an_arguments_object_bound_before_the_call() -> None:
    # code-mode scripts often build the arguments once and run them twice (a determinism check)
    js = ('const args = {cmd: "cargo run -q -- replay", workdir: "/w", yield_time_ms: 30000};\n'
          "const a = await tools.exec_command(args); const b = await tools.exec_command(args);\n"
          "await tools.exec_command(unknown);\n")
    assert codex.js_exec_commands(js) == ["cargo run -q -- replay", "cargo run -q -- replay"]

# ------------------------------------------------------------------------- detection and bad input

@pytest.mark.parametrize("path", [UNIFIED, CODE_MODE, FLAT, STRUCTURED])
def test_detects_both_layouts(path: Path) -> None:
    assert codex.detect(path, read_head(path))


@pytest.mark.parametrize(
    "first",
    [
        {"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": "hi"}},
        {"id": 3, "timestamp": "2026-01-01T00:00:00", "source": "agent", "action": "run"},
        {"id": "x", "timestamp": "2026-01-01T00:00:00Z"},  # a bare header with nothing codex-like after it
        {"type": "thread.started", "thread_id": "t"},
    ],
)
def test_does_not_claim_other_jsonl(tmp_path: Path, first: dict[str, Any]) -> None:
    p = write_lines(tmp_path, [first, {"type": "other"}])
    assert codex.detect(p, read_head(p)) is None


def test_detects_a_first_line_longer_than_the_head(tmp_path: Path) -> None:
    meta = env("session_meta", {"id": "s", "base_instructions": {"text": "x" * 100_000}})
    p = write_lines(tmp_path, [meta])
    assert codex.detect(p, read_head(p))


def test_bad_lines_become_diagnostics_and_the_rest_loads(tmp_path: Path) -> None:
    call = {"type": "function_call", "name": "shell_command", "call_id": "c1",
            "arguments": json.dumps({"command": "ls"})}
    out = {"type": "function_call_output", "call_id": "c1", "output": "Exit code: 0\nOutput:\na\n"}
    p = write_lines(tmp_path, [
        env("session_meta", {"id": "s1"}),
        '{"timestamp":"2026-01-05T10:00:00Z","type":"response_item","payload":{"type":"func',
        "[1, 2]",
        env("response_item", call),
        env("mystery_record", {"x": 1}),
        env("event_msg", {"type": "brand_new_event"}),
        env("response_item", out),
    ])
    s = codex.load(p)
    (ls,) = s.tools()
    assert (ls.command, ls.exit_code, ls.output) == ("ls", 0, "a\n")
    assert [(d.level, d.line) for d in s.diagnostics] == [
        (Level.error, 2), (Level.error, 3), (Level.info, None), (Level.info, None)]
    assert "event_msg/brand_new_event" in s.diagnostics[2].message
    assert "mystery_record" in s.diagnostics[3].message


def test_fields_of_the_wrong_type_never_raise(tmp_path: Path) -> None:
    p = write_lines(tmp_path, [
        env("session_meta", {"id": ["not", "a", "string"], "cwd": 5}),
        env("turn_context", {"model": {"x": 1}}),
        env("response_item", {"type": "function_call", "name": "exec_command", "call_id": [1],
                              "arguments": "[1, 2]"}),
        env("response_item", {"type": "function_call_output", "call_id": {"a": 1}, "output": 42}),
        env("response_item", {"type": "message", "role": "assistant", "content": "plain string answer"}),
        env("event_msg", {"type": "item_completed", "item": {"type": "CommandExecution", "command": 7,
                                                             "cwd": ["x"], "exit_code": "0"}}),
        env("response_item", {"type": "function_call", "name": "shell_command", "call_id": "ok",
                              "arguments": json.dumps({"command": "echo fine"})}),
    ])
    s = codex.load(p)
    assert s.session_id is None and s.cwd == "5"
    assert [e.kind for e in s.events] == ["tool", "assistant", "tool", "tool"]
    assert s.shell_calls()[-1].command == "echo fine"
    assert [d.level for d in s.diagnostics] == [Level.warning]  # the output of an unknown call


def test_startup_item_after_the_running_output_is_merged_not_a_process_end(tmp_path: Path) -> None:
    call = {"type": "function_call", "name": "exec_command", "call_id": "c1",
            "arguments": json.dumps({"cmd": "python -m http.server 9000"})}
    out = {"type": "function_call_output", "call_id": "c1",
           "output": "Chunk ID: a\nWall time: 1.0 seconds\nProcess running with session ID 5150\nOutput:\nServing\n"}
    item = {"type": "CommandExecution", "id": "exec-1", "process_id": "5150",
            "command": ["/bin/bash", "-lc", "python -m http.server 9000"], "source": "unified_exec_startup",
            "status": "completed", "exit_code": None, "aggregated_output": "Serving HTTP on 0.0.0.0 port 9000\n"}
    end = {**item, "exit_code": -15, "status": "failed"}
    p = write_lines(tmp_path, [env("response_item", call), env("response_item", out),
                               env("event_msg", {"type": "item_completed", "item": item}),
                               env("event_msg", {"type": "item_completed", "item": end})])
    launch, note = codex.load(p).events
    assert isinstance(launch, ToolEvent) and launch.background and launch.task_id == "5150"
    assert launch.exit_code is None and launch.output == "Serving HTTP on 0.0.0.0 port 9000\n"
    assert isinstance(note, SystemEvent) and (note.subtype, note.task_id, note.exit_code) == (
        "task-notification", "5150", -15)
