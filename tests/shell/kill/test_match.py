"""What a kill pattern selects: an interpreter's name, or a command line every project shares."""

from __future__ import annotations

import pytest

from analyzer.shell.kill.match import is_generic_pattern


@pytest.mark.parametrize(("pattern", "selects"), [
    ("python", "python"),
    ("next-server", "next-server"),          # Next.js titles every server process so
    ("docker compose up", "docker compose up"),
])
def test_patterns_every_project_shares_are_generic(pattern: str, selects: str) -> None:
    assert is_generic_pattern([pattern]) == selects


@pytest.mark.parametrize("pattern", [
    "next-server.*4444",                     # names its own port
    "npm run start -p 4444",
    "uvicorn shop.api:app --port 8000",      # names its own app
    "docker compose -p billing up",
    "launch_server.*3000[01]",
    "uvicorn",                               # the agent's own one server, by its program name
])
def test_patterns_naming_their_own_server_are_not(pattern: str) -> None:
    assert is_generic_pattern([pattern]) is None
