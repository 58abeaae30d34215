"""Where the agents keep their sessions on this machine: what ``check`` and ``batch`` read when
no path is given."""

from __future__ import annotations

import os
from pathlib import Path

import click

from analyzer.cli._common import fail


def agent_folders() -> list[tuple[str, Path]]:
    """(agent, folder) for every agent's session store, in a fixed order; each honours the
    variable its agent reads to move it (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``XDG_DATA_HOME``)."""
    home = Path.home()
    claude = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    codex = Path(os.environ.get("CODEX_HOME") or home / ".codex")
    data = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    return [
        ("Claude Code", claude / "projects"),
        ("Codex CLI", codex / "sessions"),
        ("opencode", data / "opencode"),  # storage/ folders (until 2026) and opencode.db
        ("Gemini CLI", home / ".gemini" / "tmp"),  # tmp/<project hash>/chats/session-*.json
    ]


def existing_agent_folders() -> list[tuple[str, Path]]:
    return [(agent, folder) for agent, folder in agent_folders() if folder.is_dir()]


def describe(folders: list[tuple[str, Path]]) -> str:
    """``~/.claude/projects (Claude Code), …``: the home folder shown as ``~``."""
    home = str(Path.home())

    def short(p: Path) -> str:
        s = str(p)
        return "~" + s[len(home):] if s == home or s.startswith(home + os.sep) else s

    return ", ".join(f"{short(folder)} ({agent})" for agent, folder in folders)


def default_paths(command: str) -> list[str]:
    """The existing agent folders, announced on stderr; a usage error when there is none."""
    found = existing_agent_folders()
    if not found:
        fail(f"no PATH given, and none of the agents' session folders exists: {describe(agent_folders())}")
    click.echo(f"analyzer {command}: no PATH given; reading {describe(found)}", err=True)
    return [str(folder) for _, folder in found]
