"""Who started each instance (the main agent or a sub-agent, in one world), whether the agent
handed it to the user, and which of the user's instructions put it in scope; `analyzer graph`
shows all three."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from analyzer.cli import main
from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.world import World

SESSION = """\
events:
  - user: start the API on port 8000, and have a helper serve the docs
  - bash: nohup uvicorn shop.api:app --port 8000 > api.log 2>&1 &
  - bash: nohup python3 -m http.server 9000 --directory docs > docs.log 2>&1 &
    agent: docs-helper
  - assistant: Docs are up at http://localhost:9000/ for the main agent to check.
    agent: docs-helper
  - bash: curl -sf localhost:8000/health
    output: '{"ok": true}'
  - assistant: The API is ready at http://127.0.0.1:8000 and the docs at localhost:9000.
  - user: now restart the server on port 8000 with --reload
"""


def world(tmp_path: Path, text: str = SESSION) -> tuple[Path, World]:
    f = tmp_path / "s.session.yaml"
    f.write_text(text)
    return f, build_world(load(f))


def test_a_sub_agents_launch_is_in_the_same_world_and_knows_who_started_it(tmp_path: Path) -> None:
    _, w = world(tmp_path)
    api, docs = w.instances["local:8000"], w.instances["local:9000"]
    assert (api.owner, api.started_by) == ("agent", "main")
    assert (docs.owner, docs.started_by) == ("agent", "docs-helper")


def test_handed_over_by_the_main_agents_message_not_a_sub_agents(tmp_path: Path) -> None:
    _, w = world(tmp_path)
    assert w.instances["local:8000"].handed_at == 5
    assert w.instances["local:9000"].handed_at == 5  # the sub-agent's report at #3 went to the agent


def test_an_address_of_a_stopped_server_hands_nothing_over(tmp_path: Path) -> None:
    _, w = world(tmp_path, """\
events:
  - bash: nohup vite --port 5173 > web.log 2>&1 &
  - bash: pkill -f vite
  - assistant: I stopped the dev server that was on http://localhost:5173.
""")
    assert w.instances["local:5173"].handed_at is None


def test_the_users_instructions_put_servers_in_scope_before_and_after_they_exist(tmp_path: Path) -> None:
    _, w = world(tmp_path)
    assert w.instances["local:8000"].requested_at == [0, 6]  # "the API on port 8000", then the restart
    assert w.instances["local:9000"].requested_at == []  # "serve the docs" names neither its port nor its kind


def test_graph_shows_the_sub_agent_the_handover_and_the_requests(tmp_path: Path) -> None:
    f, _ = world(tmp_path)
    out = CliRunner().invoke(main, ["graph", str(f)]).output
    assert "owner: a sub-agent (docs-helper), in this session" in out
    assert "requested by the user: #0 (line 2), #6 (line 11)" in out
    assert "handed to the user: #5 (line 10)" in out
