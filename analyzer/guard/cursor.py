"""Cursor hooks: ``beforeShellExecution`` judges, ``beforeSubmitPrompt`` and
``afterShellExecution`` keep the world current.

Checked against Cursor's hooks documentation (cursor.com/docs/agent/hooks, ``hooks.json``
``version: 1``, December 2026; Cursor is closed source, so the payload is the documented one, with
the common fields Cursor 2.0.77 sends). Input: ``conversation_id``, ``generation_id``, ``model``,
``hook_event_name``, ``cursor_version``, ``workspace_roots``, ``user_email``; ``command`` and ``cwd``
for shell hooks, ``output`` and ``duration`` after one; ``prompt`` and ``attachments`` for
``beforeSubmitPrompt`` (answered ``{"continue": true}``). The answer is ``{"permission": "allow"|"deny"|"ask", "user_message",
"agent_message"}``. Cursor hands no transcript the analyzer reads, so its world is made of the hook
calls themselves: prompts, and shell commands with their output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analyzer.guard import _payload as p
from analyzer.guard.verdict import HookCall, Reply, Verdict

NAME = "cursor"
DOCS = "Cursor hooks (cursor.com/docs/agent/hooks), hooks.json version 1, Cursor 2.0.77 payloads, checked 2026-12-01"


def parse(payload: dict[str, Any]) -> HookCall:
    event = payload.get("hook_event_name")
    roots = payload.get("workspace_roots")
    cwd = p.s(payload.get("cwd")) or (p.s(roots[0]) if isinstance(roots, list) and roots else None)
    call = HookCall(agent=NAME, event="other", session_id=p.s(payload.get("conversation_id")), cwd=cwd)
    if event == "beforeSubmitPrompt":
        call.event, call.prompt = "prompt", p.s(payload.get("prompt"))
    elif event in ("beforeShellExecution", "afterShellExecution") and p.s(payload.get("command")):
        call.event = "pre" if event == "beforeShellExecution" else "post"
        call.command = p.s(payload.get("command"))
        if call.event == "post":
            call.output = p.text(payload.get("output"))
    return call


def answer(verdict: Verdict, call: HookCall) -> Reply:
    if call.event == "prompt":
        return Reply(stdout=json.dumps({"continue": True}))
    if call.event != "pre":
        return Reply()
    if verdict.decision in ("allow", "warn"):
        out: dict[str, Any] = {"permission": "allow"}
        if verdict.decision == "warn":
            out["user_message"] = verdict.reason
        return Reply(stdout=json.dumps(out))
    return Reply(stdout=json.dumps({"permission": verdict.decision, "user_message": verdict.reason,
                                    "agent_message": verdict.reason}))


def config_path(scope: str, root: Path, home: Path) -> Path:
    return (home if scope == "user" else root) / ".cursor" / "hooks.json"


def hook_entries(command: str) -> dict[str, list[dict[str, Any]]]:
    return {event: [{"command": command}]
            for event in ("beforeShellExecution", "afterShellExecution", "beforeSubmitPrompt")}
