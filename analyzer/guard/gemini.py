"""Gemini CLI hooks: ``BeforeTool`` (matcher ``run_shell_command``) judges, ``BeforeAgent`` (the
user's prompt) and ``AfterTool`` keep the world current.

Checked against the Gemini CLI hooks reference (google-gemini/gemini-cli ``docs/hooks/reference.md``
at 06c0d810, geminicli.com/docs/hooks/reference) and its types (``packages/core/src/hooks/types.ts``
at 001a804c: ``BeforeToolInput``, ``AfterToolInput``, ``BeforeAgentInput``), December 2026. Input: ``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, ``timestamp``; ``tool_name`` and ``tool_input``
(``command``) for tool hooks; ``tool_response`` (``llmContent``, ``returnDisplay``, ``error``) after
one; ``prompt`` for ``BeforeAgent``. A block is exit 0 with ``{"decision": "deny", "reason": …}``:
the reason goes to the agent as the tool's error and the turn goes on. The reference documents
no "ask" for ``BeforeTool`` (``HookDecision`` lists one, with no documented effect): an ask blocks
and says in words that the user must be asked first. ``timeout`` is in milliseconds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analyzer.guard import _payload as p
from analyzer.guard.verdict import HookCall, Reply, Verdict

NAME = "gemini"
DOCS = ("google-gemini/gemini-cli docs/hooks/reference.md @06c0d810 and packages/core/src/hooks/types.ts @001a804c "
        "(geminicli.com/docs/hooks/reference), checked 2026-12-01")
SHELL_TOOLS = frozenset({"run_shell_command"})


def parse(payload: dict[str, Any]) -> HookCall:
    return p.tool_hook(NAME, payload, prompt="BeforeAgent", pre="BeforeTool", post="AfterTool",
                       shell_tools=SHELL_TOOLS)


def answer(verdict: Verdict, call: HookCall) -> Reply:
    return p.warn_or_block(verdict, call,
                           lambda reason: Reply(stdout=json.dumps({"decision": "deny", "reason": reason})))


def config_path(scope: str, root: Path, home: Path) -> Path:
    return (home if scope == "user" else root) / ".gemini" / "settings.json"


def hook_entries(command: str) -> dict[str, list[dict[str, Any]]]:
    return {
        "BeforeTool": [p.command_group("run_shell_command", command, 10_000)],
        "AfterTool": [p.command_group("run_shell_command", command, 10_000)],
        "BeforeAgent": [p.command_group(None, command, 10_000)],
    }
