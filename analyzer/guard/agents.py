"""The agent protocols the guard answers, one module each; ``AGENTS`` is the registry.

Each module turns its agent's hook JSON into a ``HookCall``, a ``Verdict`` into the agent's reply,
and names the hook entries ``guard install`` merges into the agent's config. Stdlib only: the hook
client imports this on every call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from analyzer.guard import claude_code, codex, cursor, gemini
from analyzer.guard.verdict import HookCall, Reply, Verdict


class AgentProtocol(Protocol):
    NAME: str
    DOCS: str
    """The documentation the module was checked against, with its version or date."""

    def parse(self, payload: dict[str, Any]) -> HookCall:
        """The hook JSON as a ``HookCall``; a payload of the wrong shape is an ``other`` call."""
        ...

    def answer(self, verdict: Verdict, call: HookCall) -> Reply:
        """The verdict in the agent's protocol (stdout JSON, stderr, exit code)."""
        ...

    def config_path(self, scope: str, root: Path, home: Path) -> Path:
        """The config file ``guard install`` edits: ``scope`` is ``project`` (under ``root``) or ``user``."""
        ...

    def hook_entries(self, command: str) -> dict[str, list[dict[str, Any]]]:
        """Event name → the entries to add under the config's ``hooks`` table."""
        ...


AGENTS: dict[str, AgentProtocol] = {m.NAME: m for m in (claude_code, codex, gemini, cursor)}

__all__ = ["AGENTS", "AgentProtocol"]
