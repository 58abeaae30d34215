"""Each agent's recorded hook inputs and the exact replies.

The inputs are shaped exactly as each agent's own schema says (no field it does not send, every
field it does): Claude Code's hooks reference (``PreToolUse``/``PostToolUse``/``UserPromptSubmit``
input); Codex's generated hook schemas and ``PreToolUseCommandInput`` (openai/codex
``codex-rs/hooks``, ``schema.rs`` and ``schema/generated/*.command.input.schema.json``: ``turn_id``,
``model``, ``permission_mode``, a nullable ``transcript_path``); Gemini CLI's ``BeforeToolInput``,
``AfterToolInput`` and ``BeforeAgentInput`` (google-gemini/gemini-cli ``packages/core/src/hooks/types.ts``,
``docs/hooks/reference.md``); Cursor's ``beforeShellExecution``, ``afterShellExecution`` and
``beforeSubmitPrompt`` payloads (cursor.com/docs/agent/hooks, with the common fields Cursor 2.0
sends). Versions in each protocol module's ``DOCS``.
"""

from __future__ import annotations

import json

import pytest

from analyzer.guard import client, decide
from analyzer.guard.agents import AGENTS
from analyzer.guard.verdict import Decision, HookCall, Verdict

CMD = "pkill -f uvicorn; nohup uvicorn app:api --port 8000 &"
REASON = "[analyzer guard: over-broad-kill] … Instead: kill 51234 (the uvicorn on local:8000)."

CLAUDE_PRE = {
    "session_id": "abc123", "transcript_path": "/home/u/.claude/projects/p/abc123.jsonl", "cwd": "/home/u/p",
    "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
    "tool_input": {"command": CMD, "description": "Restart the API", "timeout": 120000, "run_in_background": True},
    "tool_use_id": "toolu_01ABC",
}
CODEX_COMMON = {
    "session_id": "0199a213-81c0-7800-8aa1-bbab2a035a53", "turn_id": "0199a213-8fa4-7ce1-9f10-4c3e1b5d2a11",
    "transcript_path": "/home/u/.codex/sessions/2026/10/01/rollout-2026-10-01T10-00-00-0199a213.jsonl",
    "cwd": "/home/u/p", "model": "gpt-5.1-codex", "permission_mode": "default",
}
CODEX_PRE = {**CODEX_COMMON, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": CMD},
             "tool_use_id": "call_77"}
GEMINI_COMMON = {
    "session_id": "g-1", "transcript_path": "/home/u/.gemini/tmp/5f0c/chats/session-2026-10-01T10-00-g1.json",
    "cwd": "/home/u/p", "timestamp": "2026-10-01T10:00:00.000Z",
}
GEMINI_PRE = {**GEMINI_COMMON, "hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
              "tool_input": {"command": CMD, "description": "restart the API"}}
CURSOR_COMMON = {
    "conversation_id": "c-9", "generation_id": "g-2", "model": "claude-4.5-sonnet", "cursor_version": "2.0.77",
    "workspace_roots": ["/home/u/p"], "user_email": "u@example.com",
}
CURSOR_PRE = {**CURSOR_COMMON, "hook_event_name": "beforeShellExecution", "command": CMD, "cwd": "/home/u/p"}
PRE = {"claude-code": CLAUDE_PRE, "codex": CODEX_PRE, "gemini": GEMINI_PRE, "cursor": CURSOR_PRE}
SESSION = {"claude-code": "abc123", "codex": CODEX_COMMON["session_id"], "gemini": "g-1", "cursor": "c-9"}


@pytest.mark.parametrize("agent", sorted(PRE))
def test_pre_tool_input_becomes_a_call_to_judge(agent: str) -> None:
    call = AGENTS[agent].parse(PRE[agent])
    assert (call.event, call.command, call.session_id, call.cwd) == ("pre", CMD, SESSION[agent], "/home/u/p")


def test_claude_code_keeps_the_tool_use_id_and_background_flag() -> None:
    call = AGENTS["claude-code"].parse(CLAUDE_PRE)
    assert (call.tool_use_id, call.background, call.transcript_path) == (
        "toolu_01ABC", True, "/home/u/.claude/projects/p/abc123.jsonl")


EXPECTED_DENY = {
    "claude-code": (json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                                       "permissionDecisionReason": REASON}}), "", 0),
    "codex": ("", REASON, 2),
    "gemini": (json.dumps({"decision": "deny", "reason": REASON}), "", 0),
    "cursor": (json.dumps({"permission": "deny", "user_message": REASON, "agent_message": REASON}), "", 0),
}


ASK_NOTE = "\n(Blocked until the user agrees: ask them, then run it again if they say so.)"
EXPECTED_ASK = {
    "claude-code": (json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                                                       "permissionDecisionReason": REASON}}), "", 0),
    # no "ask" in these protocols: the call is blocked and the reason says to ask the user
    "codex": ("", REASON + ASK_NOTE, 2),
    "gemini": (json.dumps({"decision": "deny", "reason": REASON + ASK_NOTE}), "", 0),
    "cursor": (json.dumps({"permission": "ask", "user_message": REASON, "agent_message": REASON}), "", 0),
}


@pytest.mark.parametrize("agent", sorted(PRE))
@pytest.mark.parametrize(("decision", "expected"), [("deny", EXPECTED_DENY), ("ask", EXPECTED_ASK)])
def test_block_in_each_protocol(agent: str, decision: Decision, expected: dict[str, tuple[str, str, int]]) -> None:
    call = AGENTS[agent].parse(PRE[agent])
    reply = AGENTS[agent].answer(Verdict(decision, "over-broad-kill", REASON), call)
    assert (reply.stdout, reply.stderr, reply.exit_code) == expected[agent]


@pytest.mark.parametrize("agent", sorted(PRE))
def test_allow_changes_nothing(agent: str) -> None:
    call = AGENTS[agent].parse(PRE[agent])
    reply = AGENTS[agent].answer(Verdict(), call)
    expected = json.dumps({"permission": "allow"}) if agent == "cursor" else ""
    assert (reply.stdout, reply.stderr, reply.exit_code) == (expected, "", 0)


@pytest.mark.parametrize("agent", sorted(PRE))
def test_warn_lets_the_command_run(agent: str) -> None:
    call = AGENTS[agent].parse(PRE[agent])
    reply = AGENTS[agent].answer(Verdict("warn", "duplicate-launch", REASON), call)
    assert reply.exit_code == 0
    out = json.loads(reply.stdout)
    assert out == ({"permission": "allow", "user_message": REASON} if agent == "cursor"
                   else {"systemMessage": REASON})


@pytest.mark.parametrize(("agent", "payload", "event", "field", "value"), [
    ("claude-code", {"session_id": "abc123", "transcript_path": CLAUDE_PRE["transcript_path"], "cwd": "/home/u/p",
                     "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": "Ready"},
     "prompt", "prompt", "Ready"),
    ("claude-code", {**{k: v for k, v in CLAUDE_PRE.items() if k != "tool_input"}, "hook_event_name": "PostToolUse",
                     "tool_input": {"command": "curl -sf localhost:8000/health"},
                     "tool_response": {"stdout": "{\"ok\":true}", "stderr": "", "interrupted": False,
                                       "isImage": False}},
     "post", "output", "{\"ok\":true}"),
    ("codex", {**CODEX_COMMON, "hook_event_name": "UserPromptSubmit", "prompt": "Ready"}, "prompt", "prompt", "Ready"),
    ("codex", {**CODEX_COMMON, "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": "curl -sf localhost:8000/health"}, "tool_response": "{\"ok\":true}\n",
               "tool_use_id": "call_78"}, "post", "output", "{\"ok\":true}\n"),
    ("gemini", {**GEMINI_COMMON, "hook_event_name": "BeforeAgent", "prompt": "Ready"}, "prompt", "prompt", "Ready"),
    ("gemini", {**GEMINI_COMMON, "hook_event_name": "AfterTool", "tool_name": "run_shell_command",
                "tool_input": {"command": "curl -sf localhost:8000"},
                "tool_response": {"llmContent": "ok", "returnDisplay": "ok"}},
     "post", "output", "ok\nok"),
    ("cursor", {**CURSOR_COMMON, "hook_event_name": "beforeSubmitPrompt", "prompt": "Ready", "attachments": []},
     "prompt", "prompt", "Ready"),
    ("cursor", {**CURSOR_COMMON, "hook_event_name": "afterShellExecution", "command": "curl -sf :8000",
                "output": "ok", "duration": 12}, "post", "output", "ok"),
])
def test_state_keeping_hooks(agent: str, payload: dict[str, object], event: str, field: str, value: str) -> None:
    call = AGENTS[agent].parse(payload)
    assert call.event == event and getattr(call, field) == value
    # they never block
    assert AGENTS[agent].answer(Verdict("deny", "x", "no"), call).exit_code == 0


@pytest.mark.parametrize("agent", sorted(PRE))
@pytest.mark.parametrize("payload", [
    {},  # nothing
    {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "/x"}},  # not a shell
    {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": 42}},  # wrong type
    {"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": "rm"},
    {"hook_event_name": "beforeShellExecution", "command": ["ls"]},
])
def test_other_or_malformed_payloads_are_not_judged(agent: str, payload: dict[str, object]) -> None:
    call = AGENTS[agent].parse(payload)
    assert call.event == "other"
    assert isinstance(call, HookCall)


def test_codex_without_a_transcript_is_still_judged() -> None:
    """Codex sends ``transcript_path: null`` when it keeps no rollout file (``NullableString``)."""
    call = AGENTS["codex"].parse({**CODEX_PRE, "transcript_path": None})
    assert (call.event, call.command, call.transcript_path, call.tool_use_id) == ("pre", CMD, None, "call_77")


@pytest.mark.parametrize("agent", sorted(PRE))
def test_the_raw_hook_bytes_give_the_exact_reply(agent: str) -> None:
    """What the server does with the bytes on stdin: parse, then answer a deny in the agent's form."""
    call, unreadable = decide.parse(agent, json.dumps(PRE[agent]).encode())
    assert unreadable is None
    reply = decide.reply(call, Verdict("deny", "over-broad-kill", REASON))
    assert (reply.stdout, reply.stderr, reply.exit_code) == EXPECTED_DENY[agent]
    # --mode warn turns the same verdict into a message and lets the command run
    warned = decide.reply(call, Verdict("deny", "over-broad-kill", REASON), mode="warn")
    assert warned.exit_code == 0 and REASON in json.loads(warned.stdout).values()


@pytest.mark.parametrize("agent", sorted(PRE))
def test_an_error_is_never_a_block(agent: str) -> None:
    call, _ = decide.parse(agent, json.dumps(PRE[agent]).encode())
    reply = decide.reply(call, Verdict("deny", "over-broad-kill", REASON, error="boom"))
    expected = json.dumps({"permission": "allow"}) if agent == "cursor" else ""
    assert (reply.stdout, reply.stderr, reply.exit_code) == (expected, "", 0)


def test_the_hook_client_knows_every_protocol() -> None:
    assert sorted(client.AGENT_NAMES) == sorted(AGENTS)
