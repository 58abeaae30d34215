"""What the guard answers about one hook call: stdlib only, and plain classes (no dataclasses:
their import costs the hook a few milliseconds on every call), so the hook client and the warm
server share them without importing the pipeline."""

from __future__ import annotations

from typing import Any, Literal

Decision = Literal["allow", "deny", "ask", "warn"]
DECISIONS: tuple[Decision, ...] = ("allow", "warn", "ask", "deny")
"""Weakest first: several findings on one command answer with the strongest."""


class _Record:
    """Fields in ``__slots__``; ``to_dict`` / ``from_dict`` for the wire (unknown keys ignored)."""

    __slots__: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.to_dict().items())})"


class HookCall(_Record):
    """One hook invocation, whatever the agent: what the guard needs from its JSON.

    ``event``: ``pre`` (a shell command about to run: judge it), ``post`` (one that ran),
    ``prompt`` (the user's message), ``other`` (a hook the guard does not use)."""

    __slots__ = (
        "agent",
        "background",
        "command",
        "cwd",
        "event",
        "exit_code",
        "output",
        "prompt",
        "session_id",
        "tool_use_id",
        "transcript_path",
    )

    def __init__(self, agent: str, event: Literal["pre", "post", "prompt", "other"], session_id: str | None = None,
                 transcript_path: str | None = None, cwd: str | None = None, command: str | None = None,
                 tool_use_id: str | None = None, background: bool = False, prompt: str | None = None,
                 output: str | None = None, exit_code: int | None = None) -> None:
        self.agent, self.event, self.session_id, self.transcript_path, self.cwd = (
            agent, event, session_id, transcript_path, cwd)
        self.command, self.tool_use_id, self.background = command, tool_use_id, background
        self.prompt, self.output, self.exit_code = prompt, output, exit_code

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HookCall:
        return cls(**{k: data[k] for k in cls.__slots__ if k in data})


class Verdict(_Record):
    """The guard's answer about one command: the decision, the rule behind it (the strongest when
    several fired), the reason the agent and the user read (the victims and a precise
    alternative), every rule that fired, and why the guard failed open when it did."""

    __slots__ = ("decision", "error", "reason", "rule", "rules")

    def __init__(self, decision: Decision = "allow", rule: str | None = None, reason: str = "",
                 rules: list[str] | None = None, error: str | None = None) -> None:
        self.decision, self.rule, self.reason, self.rules, self.error = decision, rule, reason, rules or [], error

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        return cls(**{k: data[k] for k in cls.__slots__ if k in data})

    @property
    def blocks(self) -> bool:
        return self.decision in ("deny", "ask")


class Reply(_Record):
    """What the hook process writes and how it exits, in the agent's protocol."""

    __slots__ = ("exit_code", "stderr", "stdout")

    def __init__(self, stdout: str = "", stderr: str = "", exit_code: int = 0) -> None:
        self.stdout, self.stderr, self.exit_code = stdout, stderr, exit_code
