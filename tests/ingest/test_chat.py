from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.events import AssistantEvent, Level, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest import IngestError, chat, load, load_all
from analyzer.ingest.chat import exit_code_in

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "chat"


def tools(session_events: list[object]) -> list[ToolEvent]:
    return [e for e in session_events if isinstance(e, ToolEvent)]


def test_openai_tool_calls_pair_with_tool_messages_by_id() -> None:
    s = load(FIXTURES / "openai-uvicorn-lifecycle.json")
    assert s.format == "chat" and s.agent is None
    assert [e.kind for e in s.events] == [
        "system", "user", "assistant", "tool", "tool", "tool", "assistant", "user", "tool", "tool", "assistant"]
    assert s.counts.records == 14 and s.counts.skipped == 0 and not s.diagnostics
    system = s.events[0]
    assert isinstance(system, SystemEvent) and system.subtype == "prompt" and "Never leave" in system.text
    launch, curl, tail, kill, check = tools(s.events)
    assert launch.command == "nohup uvicorn app:app --host 0.0.0.0 --port 8000 > uvicorn.log 2>&1 &"
    assert (launch.ref, launch.line, launch.result_line, launch.output) == ("call_Q1aT7mLxw2", 3, 4, "[1] 48211")
    # parallel calls keep their call order; each gets the tool message with its id, not the next one
    assert (curl.ref, curl.line, curl.result_line, curl.output) == ("call_Hc81pZ0vRe", 5, 7, '{"status":"ok"}')
    assert (tail.ref, tail.result_line) == ("call_Lg4kNw93Ud", 6)
    assert "Uvicorn running on http://0.0.0.0:8000" in (tail.output or "")
    assert kill.command == "kill 48211" and kill.output == "" and kill.exit_code is None
    # legacy function_call / function message: no id, paired by order and name
    assert check.ref is None and (check.line, check.result_line) == (12, 13)
    assert check.command == "curl -s http://localhost:8000/health" and check.exit_code == 7
    assert all(t.category == "shell" and t.name == "bash" and t.ts is None for t in tools(s.events))
    assert [e.index for e in s.events] == list(range(len(s.events)))


def test_anthropic_tool_use_pairs_with_tool_result_blocks() -> None:
    s = load(FIXTURES / "anthropic-vllm-restart.json")
    assert s.model == "claude-sonnet-4-5"
    kinds = [e.kind for e in s.events]
    assert kinds == ["system", "user", "assistant", "tool", "assistant", "tool", "tool", "tool", "user", "tool",
                     "assistant"]
    prompt, first_said = s.events[0], s.events[2]
    assert isinstance(prompt, SystemEvent) and prompt.line is None and prompt.text == "You operate the team's GPU box."
    assert isinstance(first_said, AssistantEvent) and first_said.model == "claude-sonnet-4-5"
    assert first_said.thinking == "Find the running server first, then stop it and relaunch."
    pgrep, restart, view, probe, wait = tools(s.events)
    assert (pgrep.ref, pgrep.line, pgrep.result_line, pgrep.is_error) == ("toolu_01A9fKq2", 2, 3, False)
    assert restart.command is not None and restart.command.startswith("kill 73110 && sleep 5 && nohup vllm serve")
    # results arrive in the other order in one user message: matched by tool_use_id
    assert restart.output == "" and view.output == "VLLM_GPU_MEMORY_UTILIZATION=0.9"
    assert view.category == "file" and view.command is None and view.input["path"] == "/etc/vllm/serve.env"
    assert (probe.is_error, probe.exit_code, probe.result_line) == (True, 7, 7)
    told = s.events[8]
    assert isinstance(told, UserEvent) and told.line == 7 and told.text.startswith("It takes a minute")
    assert wait.output is not None and "Qwen/Qwen2.5-7B-Instruct" in wait.output


def write(tmp_path: Path, value: object, name: str = "dump.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(value))
    return p


def test_bad_messages_become_diagnostics_and_the_rest_loads(tmp_path: Path) -> None:
    p = write(tmp_path, [
        {"role": "user", "content": "start it"},
        "not a message",
        {"role": "narrator", "content": "meanwhile"},
        {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\": [\"ls\", \"-la\"]}"}},
            {"id": "c2", "type": "function", "function": {"name": "bash", "arguments": "{not json"}}]},
        {"role": "tool", "tool_call_id": "c9", "content": "stray"},
        {"role": "tool", "tool_call_id": "c1", "content": "total 0"},
    ])
    s = load(p)
    assert [(d.level, d.line) for d in s.diagnostics] == [
        (Level.error, 2), (Level.warning, 3), (Level.warning, 4), (Level.warning, 5)]
    assert "not an object" in s.diagnostics[0].message and "c9" in s.diagnostics[3].message
    ls, broken = tools(s.events)
    assert ls.command == "ls -la" and ls.output == "total 0" and ls.result_line == 6
    assert broken.input == {"arguments": "{not json"} and broken.command is None and broken.output is None
    assert s.counts.records == 6 and s.counts.skipped == 1


def test_a_cut_off_document_keeps_the_messages_before_the_cut(tmp_path: Path) -> None:
    text = json.dumps({"messages": [
        {"role": "user", "content": "restart the worker"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                           "input": {"command": "systemctl restart worker"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}]},
    ]})
    p = tmp_path / "cut.json"
    p.write_text(text[: text.rindex("done") + 2])  # the writer died inside the last message
    s = load(p, format="chat")
    assert [e.kind for e in s.events] == ["user", "tool"]
    (restart,) = tools(s.events)
    assert restart.command == "systemctl restart worker" and restart.output is None
    assert len(s.diagnostics) == 1 and s.diagnostics[0].level is Level.error
    assert "cut off" in s.diagnostics[0].message and s.counts.records == 3


def test_not_json_at_all_is_one_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text("[{'role': 'user'}]")
    with pytest.raises(IngestError, match="not valid JSON"):
        load(p, format="chat")


@pytest.mark.parametrize(("head", "found"), [
    (b'[{"role": "system", "content": "You are', True),
    (b'{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}', True),
    (b'[{"info": {"role": "user"}, "parts": []}]', False),  # opencode export: role is not top-level
    (b'{"type":"user","message":{"role":"user","content":"hi"}}\n', False),  # Claude Code line
    (b'{"trajectory": [], "history": [{"role": "system", "content": ""}]}', False),  # SWE-agent
    (b'[{"id": 0, "source": "user", "action": "message"}]', False),  # OpenHands
])
def test_detect_reads_the_first_message_from_the_head(tmp_path: Path, head: bytes, found: bool) -> None:
    assert bool(chat.detect(tmp_path / "any", head)) is found


@pytest.mark.parametrize(("output", "code"), [
    ("curl: (7) Failed to connect\nexit code: 7", 7), ("Exit code: 0", 0), ("[exit_code=137]", 137),
    ("listening on 8000", None), ("the exit code 3 is mentioned in prose here", None), (None, None),
])
def test_exit_code_only_from_a_line_of_its_own(output: str | None, code: int | None) -> None:
    assert exit_code_in(output) == code


# -- chat documents converted from Claude Code / Codex / opencode sessions ------------------------------


def test_a_converted_session_reads_sub_agents_and_skips_the_compaction_agents_copies() -> None:
    s = load(FIXTURES / "claude-code-conversion-subagents.json")
    assert (s.session_id, s.cwd, s.agent) == ("6f1c2b7e-3d4a-4c55-9e0b-2a71d8c3f409", "/home/dev/shop", None)
    # line = 1-based message number counting every record, the compaction agent's copies included
    assert [(e.kind, e.line, e.agent) for e in s.events] == [
        ("user", 1, "main"), ("assistant", 3, "main"), ("tool", 3, "main"), ("tool", 7, "main"),
        ("user", 8, "a4d2e9b7c1f06a85"), ("tool", 9, "a4d2e9b7c1f06a85"), ("assistant", 11, "a4d2e9b7c1f06a85"),
        ("tool", 14, "main"), ("assistant", 15, "main"),
        ("user", 16, "acompact-5e1f0c2a9b7d4e33"), ("assistant", 17, "acompact-5e1f0c2a9b7d4e33")]
    up, task, grep, curl = tools(s.events)
    # each call is written twice per message (a tool_call block and tool_calls): read once
    assert (up.ref, up.command, up.output, up.result_line) == (
        "toolu_01UpStk7Qa", "docker compose up -d", " Container shop-db-1  Started\n Container shop-api-1  Started", 5)
    assert (task.category, task.ref, task.result_line) == ("subagent", "toolu_01ExpHlth", 12)
    assert (grep.ref, grep.agent, grep.result_line) == ("toolu_01GrpRte", "a4d2e9b7c1f06a85", 10)
    # the converter put this result (message 13) before its call (message 14)
    assert (curl.ref, curl.line, curl.result_line, curl.output) == ("toolu_01CrlHz9", 14, 13, '{"status":"ok"}')
    assert up.ts is not None and up.ts.isoformat() == "2026-03-02T09:00:04.100000+00:00"
    # a sub-agent's "user" is the agent that briefed it, not the person: never read as an instruction
    briefs = [e for e in s.events if isinstance(e, UserEvent) and e.agent != "main"]
    assert [e.origin for e in briefs] == ["meta", "meta"]
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.info, 2)]
    assert "3 records of compaction agent acompact-5e1f0c2a9b7d4e33" in s.diagnostics[0].message
    assert s.counts.records == 17 and s.counts.skipped == 3


def test_a_result_whose_call_never_comes_is_reported_once(tmp_path: Path) -> None:
    p = write(tmp_path, {"messages": [
        {"role": "tool", "tool_call_id": "toolu_gone", "content": [{"type": "tool_output", "text": "ok"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]})
    s = load(p)
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.warning, 1)]
    assert "toolu_gone" in s.diagnostics[0].message and [e.kind for e in s.events] == ["assistant"]


def test_a_sub_agent_record_without_original_role_is_read_from_its_shape(tmp_path: Path) -> None:
    p = write(tmp_path, [
        {"role": "assistant-subagent-a77", "content": [{"type": "tool_use", "tool_call_id": "call_9", "name": "bash",
                                                        "arguments": "{\"command\": \"uptime\"}"}]},
        {"role": "assistant-subagent-a77", "tool_call_id": "call_9",
         "content": [{"type": "tool_output", "text": "up 3 days"}]},
    ])
    s = load(p)
    (ev,) = s.events
    assert isinstance(ev, ToolEvent) and (ev.agent, ev.command, ev.output) == ("a77", "uptime", "up 3 days")
    assert not s.diagnostics


def test_json_lines_hold_one_conversation_per_line() -> None:
    path = FIXTURES / "two-conversations.jsonl"
    assert "one chat document" in (chat.detect(path, path.read_bytes()) or "")
    s = load(path)
    assert s.format == "chat"
    serve, probe = tools(s.events)
    # both conversations use call id call_1: each pairs within its own line
    assert (serve.line, serve.result_line, serve.output) == (1, 1, "[1] 5121")
    assert (probe.line, probe.result_line, probe.exit_code) == (2, 2, 1)
    assert probe.output is not None and probe.output.startswith("State")
    assert {e.line for e in s.events} == {1, 2}
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.info, 2)]
    assert s.counts.records == 9  # the messages, not the lines as well
    # each conversation is a session of its own: one run's launch is no duplicate of another's
    first, second = load_all(path)
    assert (first.part, second.part) == (1, 2)
    assert [e.kind for e in first.events] == ["system", "user", "tool", "assistant"]
    assert [e.index for e in second.events] == [0, 1, 2, 3] and {e.line for e in second.events} == {2}
    assert (first.counts.records, second.counts.records) == (5, 4)


def test_a_bad_line_among_chat_documents_is_one_error_and_the_rest_loads(tmp_path: Path) -> None:
    good = json.dumps([{"role": "user", "content": "restart nginx"}])
    p = tmp_path / "runs.jsonl"
    p.write_text(good + "\n" + '{"note": "not a conversation"}\n' + '[{"role": "user", "con\n' + good + "\n")
    s = load(p)
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.error, 2), (Level.error, 3), (Level.info, 4)]
    assert [(e.kind, e.line) for e in s.events] == [("user", 1), ("user", 4)]
    assert [len(part.diagnostics) for part in load_all(p)] == [2, 0]  # the bad lines are the first part's


def test_one_compact_document_ending_in_a_newline_is_not_json_lines(tmp_path: Path) -> None:
    p = tmp_path / "one.json"
    p.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    s = load(p)
    assert [e.line for e in s.events] == [1] and not s.diagnostics


# -- the eaglepoint/harness conversions of ../shared/corpus/chat ---------------------------------------

CORPUS_CHAT = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "chat"


def _corpus_chat_files() -> list[Path]:
    return sorted(CORPUS_CHAT.glob("*.json")) if CORPUS_CHAT.is_dir() else []


def _labelled_calls(corpus: Path, name: str) -> list[tuple[str, int]]:
    """(call id, line) of every labelled anchor of a chat file that is a tool call."""
    yaml = pytest.importorskip("yaml")
    for item in yaml.safe_load((corpus / "labels.yaml").read_text("utf-8")):
        if item["file"] == f"chat/{name}":
            anchors = (item.get("expect") or []) + (item.get("tolerate") or [])
            return [(a["ref"], a["line"]) for a in anchors if a.get("ref_kind") == "tool_call"]
    return []


@pytest.mark.corpus
@pytest.mark.parametrize("path", _corpus_chat_files(), ids=lambda p: p.name)
def test_corpus_conversion_pairs_every_call_once_at_the_labelled_lines(corpus: Path, path: Path) -> None:
    s = load(path)
    assert [d for d in s.diagnostics if d.level is not Level.info] == []
    doc = json.loads(path.read_text("utf-8"))
    messages = doc["messages"] if isinstance(doc, dict) else doc
    answered = {m["tool_call_id"] for m in messages if m.get("tool_call_id")}
    calls = tools(s.events)
    refs = [t.ref for t in calls if t.ref]
    assert len(refs) == len(set(refs))  # a compaction agent's copy is not a second call
    assert [t.ref for t in calls if t.ref in answered and t.output is None] == []
    by_ref = {t.ref: t for t in calls}
    for ref, line in _labelled_calls(corpus, path.name):
        assert (by_ref[ref].line, by_ref[ref].agent) == (line, "main"), ref
    # sub-agents are agents of the session: their events carry the id the converter listed
    listed = {a["agent_id"] for a in (doc.get("meta", {}).get("subagents") or [])} if isinstance(doc, dict) else set()
    assert {e.agent for e in s.events} - {"main"} <= listed


@pytest.mark.corpus
def test_corpus_compaction_copies_are_counted_not_read_twice(corpus: Path) -> None:
    s = load(corpus / "chat" / "w2t129-develop2-compose.json")
    assert s.counts.records == 1660 and s.counts.skipped == 224 + 407
    infos = [d for d in s.diagnostics if d.level is Level.info]
    assert [d.line for d in infos] == [2, 453]
    own = [e for e in s.events if e.agent.startswith("acompact")]
    # what the compaction agents wrote themselves: the harness's request and their summaries
    assert {e.kind for e in own} == {"user", "assistant"}
    assert all(e.origin == "meta" for e in own if isinstance(e, UserEvent))
    explore = load(corpus / "chat" / "w1t21-develop10.json")
    assert {e.agent for e in explore.events} == {"main", "a7886680bda69a7bb", "a5834323e9d5643a1",
                                                 "a29b80e5dbd69c767", "a4fc783d050d4743f"}
    assert explore.counts.skipped == 0


def test_wrong_types_in_converted_records_do_not_stop_the_reader(tmp_path: Path) -> None:
    p = write(tmp_path, {"messages": [
        {"role": ["user"], "content": "a role that is a list"},
        {"role": "assistant", "content": [{"type": ["tool_call"], "text": "a block type that is a list"}],
         "tool_calls": {"id": "x"}, "_metadata": "not an object"},
        {"role": "assistant-subagent-acompact-1", "content": 5, "_metadata": {"original_role": ["user"]}},
        {"role": "tool", "tool_call_id": {"id": 1}, "content": [{"type": "tool_output", "text": 7}],
         "metadata": [1]},
    ], "meta": {"session_meta": "not an object"}})
    s = load(p, format="chat")
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.warning, 1), (Level.warning, 4)]
    assert [(e.kind, e.agent) for e in s.events] == [("assistant", "main"), ("assistant", "acompact-1")]


def test_a_claude_code_conversion_keeps_its_background_tasks_and_their_notifications(tmp_path: Path) -> None:
    # the converter keeps Claude Code's result text and <task-notification> turns, not its structured fields
    doc = {"messages": [
        {"role": "assistant", "content": [{"type": "tool_call", "tool_call_id": "toolu_1", "name": "Bash",
                                           "arguments": '{"command": "docker compose up --build -d"}'}]},
        {"role": "tool", "tool_call_id": "toolu_1",
         "content": [{"type": "tool_output", "text": "Command running in background with ID: b5mgqr888. "
                                                     "Output is being written to: /tmp/b5mgqr888.output"}]},
        {"role": "assistant", "content": [{"type": "tool_call", "tool_call_id": "toolu_2", "name": "TaskOutput",
                                           "arguments": '{"task_id": "b5mgqr888"}'}]},
        {"role": "tool", "tool_call_id": "toolu_2", "content": [{"type": "tool_output", "text": "running"}]},
        {"role": "user", "content": [{"type": "text", "text": (
            "<task-notification>\n<task-id>b5mgqr888</task-id>\n<status>completed</status>\n"
            "<summary>Background command \"Start stack\" completed (exit code 0)</summary>\n</task-notification>")}]},
    ]}
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(doc))
    s = chat.load(path)
    launch, poll = s.tools()
    assert (launch.background, launch.task_id) == (True, "b5mgqr888")
    assert (poll.category, poll.task_id) == ("task_output", "b5mgqr888")
    (note,) = [e for e in s.events if isinstance(e, SystemEvent)]
    assert (note.subtype, note.task_id, note.status, note.exit_code) == ("task-notification", "b5mgqr888",
                                                                         "completed", 0)
    assert not [e for e in s.events if isinstance(e, UserEvent)]
