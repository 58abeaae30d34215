"""What the guard answers about one hook call: stdlib only, so the hook client (which must start in
milliseconds) and the warm server share it without importing the pipeline."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Decision = Literal["allow", "deny", "ask", "warn"]
DECISIONS: tuple[Decision, ...] = ("allow", "warn", "ask", "deny")
"""Weakest first: several findings on one command answer with the strongest."""


@dataclass
class HookCall:
    """One hook invocation, whatever the agent: what the guard needs from its JSON."""

    agent: str
    event: Literal["pre", "post", "prompt", "other"]
    """``pre``: a shell command about to run (judge it); ``post``: one that ran; ``prompt``: the
    user's message; ``other``: a hook the guard does not use (a non-shell tool)."""
    session_id: str | None = None
    transcript_path: str | None = None
    cwd: str | None = None
    command: str | None = None
    tool_use_id: str | None = None
    background: bool = False
    prompt: str | None = None
    output: str | None = None
    exit_code: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HookCall:
        fields: dict[str, Any] = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**fields)


@dataclass
class Verdict:
    """The guard's answer about one command."""

    decision: Decision = "allow"
    rule: str | None = None
    """The rule behind a deny/ask/warn (the strongest one when several fired)."""
    reason: str = ""
    """What the agent (and the user) read: the victims and a precise alternative."""
    rules: list[str] = field(default_factory=list)
    """Every rule that fired on the command."""
    error: str | None = None
    """Why the guard failed open, when it did."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})

    @property
    def blocks(self) -> bool:
        return self.decision in ("deny", "ask")


@dataclass
class Reply:
    """What the hook process writes and how it exits, in the agent's protocol."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
