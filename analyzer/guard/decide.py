"""From a hook's raw JSON to the agent's reply, and the decision log: what the server does with
every hook request, and what the hook client does when it fails open. Stdlib and the protocol
modules only (the client imports this, rarely, without ``site``)."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from analyzer.guard.agents import AGENTS
from analyzer.guard.verdict import Decision, HookCall, Reply, Verdict


def parse(agent: str, raw: bytes) -> tuple[HookCall, str | None]:
    """The hook call in ``raw``, and why it could not be read (then it is an ``other`` call)."""
    try:
        payload = json.loads(raw or b"{}")
        return AGENTS[agent].parse(payload if isinstance(payload, dict) else {}), None
    except (ValueError, TypeError) as exc:  # invalid JSON or UTF-8
        return HookCall(agent=agent, event="other"), f"unreadable hook input: {exc}"


def reply(call: HookCall, verdict: Verdict, mode: Decision | None = None) -> Reply:
    """The verdict in the agent's protocol. An error is never a block; ``mode`` (``--mode``)
    replaces every blocking decision."""
    if verdict.error:
        verdict.decision = "allow"
    elif mode is not None and verdict.decision != "allow":
        verdict.decision = mode
    return AGENTS[call.agent].answer(verdict, call)


def logged(call: HookCall, verdict: Verdict) -> bool:
    """Every judged command is logged, and every failure (the hooks that keep state are not)."""
    return call.event == "pre" or bool(verdict.error)


def record(call: HookCall, verdict: Verdict, seconds: float) -> dict[str, Any]:
    """One line of the decision log (``analyzer.report.guard_log`` reads it back)."""
    return {
        "ts": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "agent": call.agent, "session": call.session_id,
        "transcript": call.transcript_path, "tool_use_id": call.tool_use_id, "command": call.command,
        "verdict": verdict.decision, "rule": verdict.rule, "rules": verdict.rules, "reason": verdict.reason,
        "latency_ms": round(seconds * 1000, 2), "error": verdict.error,
    }


def write_log(path: str, line: dict[str, Any]) -> None:
    """Append one JSON line; a log that cannot be written never fails the hook."""
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as f:  # one write: appends of a line do not interleave
            f.write(json.dumps(line) + "\n")
    except OSError:
        pass


def encode(answer: Reply) -> bytes:
    """The server's answer on the wire: ``EXIT LEN_STDOUT LEN_STDERR\\n`` and the bytes."""
    out, err = answer.stdout.encode(), answer.stderr.encode()
    return f"{answer.exit_code} {len(out)} {len(err)}\n".encode() + out + err


def fail_open(agent: str, raw: bytes, error: str, seconds: float, log: str) -> tuple[bytes, bytes, int]:
    """The client's answer when the server gave none: allow, and log why."""
    call, unreadable = parse(agent, raw)
    verdict = Verdict(error=unreadable or error)
    answer = reply(call, verdict)
    write_log(log, record(call, verdict, seconds))
    return answer.stdout.encode(), answer.stderr.encode(), answer.exit_code
