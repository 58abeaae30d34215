"""Codex CLI hooks: ``PreToolUse`` (matcher ``Bash``) judges, ``UserPromptSubmit`` and
``PostToolUse`` keep the world current.

Checked against the Codex hooks documentation (developers.openai.com/codex/hooks; hooks on by
default since Codex CLI 0.124.0, ``[features] hooks``, October 2026). The input is Claude Code's
shape (``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``tool_name: "Bash"``,
``tool_input.command``, ``tool_use_id``) plus ``turn_id`` and ``model``. Codex's ``PreToolUse`` has
no "ask": the guard blocks with exit 2 and the reason on stderr (what Codex shows its model), and
an ask says in words that the user must be asked first. An unknown field in JSON output counts as
a failed hook and the call runs, so the guard writes no JSON to block.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzer.guard import _payload as p
from analyzer.guard import claude_code
from analyzer.guard.verdict import HookCall, Reply, Verdict

NAME = "codex"
DOCS = "Codex hooks (developers.openai.com/codex/hooks), Codex CLI 0.124+, October 2026"


def parse(payload: dict[str, Any]) -> HookCall:
    return p.tool_hook(NAME, payload, prompt="UserPromptSubmit", pre="PreToolUse", post="PostToolUse",
                       shell_tools=claude_code.SHELL_TOOLS)


def answer(verdict: Verdict, call: HookCall) -> Reply:
    return p.warn_or_block(verdict, call, lambda reason: Reply(stderr=reason, exit_code=2))


def config_path(scope: str, root: Path, home: Path) -> Path:
    return (home if scope == "user" else root) / ".codex" / "hooks.json"


hook_entries = claude_code.hook_entries  # the same events and matcher
