"""The corpus sessions that mention pm2, supervisorctl, tmux, brew services or launchctl, read as a
careful reader reads them: none runs a process manager or hosts a server in a terminal session.

- posthog-dashboard-pkill-v2.1.112: the agent reads (Read tool, event 2) a README whose
  "Management" section shows `launchctl list | grep …`, `launchctl unload …plist`, `launchctl load
  …plist`; no shell call runs launchctl.
- spotter-v2.1.39 (and its sub-agent, and spotter-tool-heavy-v2.1.38): the project is a tmux
  frontend written in Elixir; the agent greps `lib/spotter/services/tmux.ex` and reads code that
  calls tmux; it never runs tmux itself.

So their worlds hold no manager unit, no hosted session and no kill by a manager, as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.ingest import load
from analyzer.lifecycle.build import build_world

SESSIONS = [
    "claude-code/posthog-dashboard-pkill-v2.1.112.jsonl",
    "claude-code/spotter-v2.1.39/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
    "claude-code/spotter-tool-heavy-v2.1.38.jsonl",
]
MANAGER_KILLS = {"pm2", "supervisorctl", "brew-services", "launchctl", "tmux", "screen"}


@pytest.mark.corpus
@pytest.mark.parametrize("name", SESSIONS)
def test_no_manager_unit_or_hosted_session_where_none_was_run(corpus: Path, name: str) -> None:
    world = build_world(load(corpus / name))
    assert not [i.id for i in world.instances.values() if i.server in world.catalog.managers]
    assert not [i.id for i in world.instances.values() if i.session]
    assert not [k.text for k in world.kills() if k.mechanism in MANAGER_KILLS]


@pytest.mark.corpus
def test_the_launchctl_lines_of_a_readme_read_are_no_commands(corpus: Path) -> None:
    session = load(corpus / SESSIONS[0])
    read = [e.index for e in session.events if "launchctl unload" in (getattr(e, "output", None) or "")]
    assert read == [2], "the README the agent reads shows launchctl commands"
    assert not any("launchctl" in (getattr(e, "command", None) or "") for e in session.events)
