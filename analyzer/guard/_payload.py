"""Reading hook JSON the way every protocol module needs: fields of the wrong type are absent,
never an exception (the payload comes from another program and may change shape)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from analyzer.guard.verdict import HookCall, Reply, Verdict

ASK_NOTE = "\n(Blocked until the user agrees: ask them, then run it again if they say so.)"
"""Said to the agent where the protocol has no "ask": the call is blocked instead."""


def s(value: Any) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def text(value: Any) -> str | None:
    """A tool result as text: a string, or the stdout/stderr/output parts of an object."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        parts = [value[k] for k in ("stdout", "output", "llmContent", "returnDisplay", "stderr", "error")
                 if isinstance(value.get(k), str) and value[k]]
        return "\n".join(parts) if parts else None
    return None


def exit_code(value: Any) -> int | None:
    if isinstance(value, dict):
        for k in ("exit_code", "exitCode", "returncode"):
            if isinstance(value.get(k), int) and not isinstance(value.get(k), bool):
                return int(value[k])
    return None


def command_group(matcher: str | None, command: str, timeout: float) -> dict[str, Any]:
    """A ``{matcher, hooks: [{type: command, …}]}`` group, the shape Claude Code, Codex and
    Gemini CLI share (Gemini counts ``timeout`` in milliseconds: its module converts)."""
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
    if matcher is not None:
        group = {"matcher": matcher, **group}
    return group


def tool_hook(agent: str, payload: dict[str, Any], *, prompt: str, pre: str, post: str,
              shell_tools: frozenset[str]) -> HookCall:
    """A hook of the ``session_id``/``tool_name``/``tool_input.command`` family (Claude Code,
    Codex, Gemini CLI), given the agent's event names and shell tool names."""
    event = payload.get("hook_event_name")
    tool_input = d(payload.get("tool_input"))
    call = HookCall(agent=agent, event="other", session_id=s(payload.get("session_id")),
                    transcript_path=s(payload.get("transcript_path")), cwd=s(payload.get("cwd")))
    if event == prompt:
        call.event, call.prompt = "prompt", s(payload.get("prompt"))
    elif event in (pre, post) and payload.get("tool_name") in shell_tools and s(tool_input.get("command")):
        call.event = "pre" if event == pre else "post"
        call.command = s(tool_input.get("command"))
        call.tool_use_id = s(payload.get("tool_use_id"))
        call.background = tool_input.get("run_in_background") is True
        if call.event == "post":
            call.output = text(payload.get("tool_response"))
            call.exit_code = exit_code(payload.get("tool_response"))
    return call


def warn_or_block(verdict: Verdict, call: HookCall, block: Callable[[str], Reply]) -> Reply:
    """Allow silently, warn with a ``systemMessage``, or ``block(reason)``: a deny, or an ask
    blocked with ``ASK_NOTE`` (for protocols without "ask")."""
    if call.event != "pre" or verdict.decision == "allow":
        return Reply()
    if verdict.decision == "warn":
        return Reply(stdout=json.dumps({"systemMessage": verdict.reason}))
    return block(verdict.reason + (ASK_NOTE if verdict.decision == "ask" else ""))
