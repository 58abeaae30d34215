"""Claude Code hooks: ``PreToolUse`` (matcher ``Bash``) judges, ``UserPromptSubmit`` and
``PostToolUse`` keep the session's world current.

Checked against the Claude Code hooks reference (code.claude.com/docs/en/hooks, as of Claude Code
2.1.x, October 2026). Input: ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``,
``tool_name``, ``tool_input.command`` (and ``run_in_background``), ``tool_use_id``; ``prompt`` for
``UserPromptSubmit``; ``tool_response`` for ``PostToolUse``. A deny or ask is exit 0 with
``hookSpecificOutput.permissionDecision`` (``deny``: the reason goes to Claude; ``ask``: it is shown
in the user's prompt) and ``permissionDecisionReason``. A hook that exits non-zero other than 2
does not block: the guard's fail-open is the protocol's own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analyzer.guard import _payload as p
from analyzer.guard.verdict import HookCall, Reply, Verdict

NAME = "claude-code"
DOCS = "Claude Code hooks reference (code.claude.com/docs/en/hooks), Claude Code 2.1.x, October 2026"
SHELL_TOOLS = frozenset({"Bash"})


def parse(payload: dict[str, Any]) -> HookCall:
    return p.tool_hook(NAME, payload, prompt="UserPromptSubmit", pre="PreToolUse", post="PostToolUse",
                       shell_tools=SHELL_TOOLS)


def answer(verdict: Verdict, call: HookCall) -> Reply:
    if call.event == "pre" and verdict.decision == "ask":  # Claude Code asks the user itself
        return _decision(verdict.reason, "ask")
    return p.warn_or_block(verdict, call, lambda reason: _decision(reason, "deny"))


def _decision(reason: str, decision: str) -> Reply:
    return Reply(stdout=json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }}))


def config_path(scope: str, root: Path, home: Path) -> Path:
    return (home if scope == "user" else root) / ".claude" / "settings.json"


def hook_entries(command: str) -> dict[str, list[dict[str, Any]]]:
    return {
        "PreToolUse": [p.command_group("Bash", command, 10)],
        "PostToolUse": [p.command_group("Bash", command, 10)],
        "UserPromptSubmit": [p.command_group(None, command, 10)],
    }
