"""What a matcher looks at and what it found: candidates, matches, the text ``pgrep -f`` sees.

Shared by the pkill/pgrep, killall, PID-list and fuser mechanisms.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.shell.ere import ere_span
from analyzer.shell.kill.model import Matched, Process

__all__ = ["Candidate", "Match", "MatchResult", "cmdline_subject", "is_generic_pattern"]


@dataclass(slots=True)
class Candidate:
    """A process a matcher looks at, with where it stands relative to the killing process."""

    process: Process
    ancestor: bool = False
    """An ancestor of the kill (its shells, sudo, the agent CLI): spared by ``-A`` / BSD pkill."""
    order: int = 0
    """Age rank: lower started earlier (PID order when PIDs are unknown)."""
    link_index: int | None = None
    """Index into the kill's chain links when it is one of them."""


@dataclass(slots=True)
class Match:
    """One candidate a kill selects, with the text it was selected by."""

    candidate: Candidate
    subject: str
    """The text the kill matched: a command line, a process name, a PID."""
    span: tuple[int, int] | None
    """Where in ``subject`` it matched."""
    matched: Matched = "command line"


@dataclass(slots=True)
class MatchResult:
    """What a pgrep or killall selection found."""

    matches: list[Match] = field(default_factory=list)
    spared_ancestors: list[Match] = field(default_factory=list)
    """Ancestors that match but are excluded (``-A``, BSD without ``-a``)."""
    invalid: bool = False
    notes: list[str] = field(default_factory=list)


def cmdline_subject(proc: Process) -> str:
    """What ``pgrep -f`` matches: argv joined by spaces, ``\\n`` as space, control bytes as ``?``;
    ``[comm]`` when the cmdline is empty (kernel threads, zombies)."""
    if not proc.argv:
        return f"[{proc.comm}]"
    text = "\0".join(proc.argv).rstrip("\0").replace("\0", " ").replace("\n", " ")
    return "".join("?" if (ord(ch) < 0x20 or ord(ch) == 0x7F) else ch for ch in text)


_GENERIC_NAMES = (
    "node", "nodejs", "python", "python3", "python3.11", "bash", "sh", "zsh", "dash", "java", "ruby",
    "perl", "php", "npm", "npx", "pnpm", "yarn", "bun", "deno", "uv", "ssh", "sshd", "tmux", "docker",
    "sleep", "go", "dotnet", "sudo",
)


_SHARED_TITLES = ("next-server", "docker compose up", "docker-compose up")
"""Command lines every project's instance of a tool shares, with nothing naming the project:
Next.js titles every server process ``next-server``, and a bare ``docker compose up`` is the same
text in every folder's compose CLI. A pattern they match whole selects all of them. (A program
name an agent kills its own one server by, ``uvicorn`` or ``vite``, is not listed: on a machine
running one such server the finding would not be one a reader agrees with at once.)"""


def is_generic_pattern(patterns: list[str], *, icase: bool = False, exact: bool = False) -> str | None:
    """The generic program name a pattern selects (``python``, ``node``…), if any: such a kill hits
    every process of that interpreter, not one server; or the shared command line of a tool
    (``next-server``) that every project's instance has."""
    for pat in patterns:
        for name in (*_GENERIC_NAMES, *_SHARED_TITLES):
            if ere_span(pat, name, icase=icase, exact=exact) not in (None, False):
                return name
    return None
