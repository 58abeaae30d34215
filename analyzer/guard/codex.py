"""Codex CLI hooks: ``PreToolUse`` (matcher ``Bash``) judges, ``UserPromptSubmit`` and
``PostToolUse`` keep the world current.

Checked against Codex's own source (openai/codex ``codex-rs/hooks``: ``PreToolUseCommandInput`` in
``schema.rs`` and ``events/pre_tool_use.rs`` at 0082977c, ``engine/output_parser.rs`` at 0ea83813,
``HooksFile`` in ``codex-rs/config/src/hook_config.rs`` at 012d0aa0) and developers.openai.com/codex/hooks
(hooks on by default since Codex CLI 0.124.0), December 2026. The input is Claude Code's shape
(``session_id``, ``transcript_path`` (``null`` without a rollout file), ``cwd``, ``hook_event_name``,
``tool_name: "Bash"``, ``tool_input.command``, ``tool_use_id``, ``permission_mode``) plus ``turn_id``
and ``model``; ``PostToolUse`` adds ``tool_response``. Codex's ``PreToolUse`` has no "ask" (the
parser reports ``unsupported permissionDecision:ask`` and runs the call): the guard blocks with exit
2 and the reason on stderr (what Codex shows its model), and an ask says in words that the user
must be asked first. A warning is ``systemMessage`` on exit 0. ``hooks.json`` sits in ``.codex/``
(project) or ``~/.codex/`` (user), the groups of Claude Code's shape, ``timeout`` in seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzer.guard import _payload as p
from analyzer.guard import claude_code
from analyzer.guard.verdict import HookCall, Reply, Verdict

NAME = "codex"
DOCS = ("openai/codex codex-rs/hooks source (schema.rs, pre_tool_use.rs @0082977c, output_parser.rs @0ea83813) and "
        "developers.openai.com/codex/hooks, Codex CLI 0.124+, checked 2026-12-01")


def parse(payload: dict[str, Any]) -> HookCall:
    return p.tool_hook(NAME, payload, prompt="UserPromptSubmit", pre="PreToolUse", post="PostToolUse",
                       shell_tools=claude_code.SHELL_TOOLS)


def answer(verdict: Verdict, call: HookCall) -> Reply:
    return p.warn_or_block(verdict, call, lambda reason: Reply(stderr=reason, exit_code=2))


def config_path(scope: str, root: Path, home: Path) -> Path:
    return (home if scope == "user" else root) / ".codex" / "hooks.json"


hook_entries = claude_code.hook_entries  # the same events and matcher
