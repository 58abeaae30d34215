"""Compose stacks are identified by their project, as compose names it, and a down stops them."""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.facts import Launch
from analyzer.lifecycle.world import World


def world(tmp_path: Path, events: str, agent: str = "claude-code") -> World:
    f = tmp_path / "s.session.yaml"
    f.write_text(f"agent: {agent}\nevents:\n" + events)
    return build_world(load(f))


def stacks(w: World) -> list[str]:
    return sorted(k for k, i in w.instances.items() if i.server == "compose")


def test_the_project_comes_from_p_env_file_folder_and_working_folder(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: docker compose -p billing up -d
  - bash: COMPOSE_PROJECT_NAME=Shop_2 docker compose up -d
  - bash: docker compose -f /srv/Orders/docker-compose.yml up -d
  - bash: cd /home/me/work/crm && docker compose up -d
  - bash: docker compose --project-directory ../inventory up -d
""")
    assert stacks(w) == ["local/container:compose:billing", "local/container:compose:crm",
                         "local/container:compose:inventory", "local/container:compose:orders",
                         "local/container:compose:shop_2"]
    assert w.instances["local/container:compose:crm"].label == "docker compose (crm)"


def test_a_command_naming_no_project_acts_on_the_folder_the_shell_is_in(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: cd /home/me/work/crm && docker compose up -d
  - bash: docker compose up -d --build
""")
    assert stacks(w) == ["local/container:compose:crm"]


def test_two_projects_running_at_once_are_no_duplicates(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: docker compose -p billing up --build
    background: true
    task: b1
    output: "Command running in background with ID: b1"
  - bash: docker compose -p crm up --build
    background: true
    task: b2
    output: "Command running in background with ID: b2"
  - bash: docker compose -p crm up --build
    background: true
    task: b3
    output: "Command running in background with ID: b3"
""")
    dups = [(f.instance, f.duplicate_of) for f in w.facts if isinstance(f, Launch) and f.duplicate_of is not None]
    assert dups == [("local/container:compose:crm", 1)]


def test_down_stops_its_own_stack_only(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: docker compose -p billing up -d
  - bash: docker compose -p crm up -d
  - bash: docker compose -p crm down
    output: " Container crm-api-1 Removed"
""")
    assert w.instances["local/container:compose:crm"].state_at(2) == "stopped"
    assert w.instances["local/container:compose:billing"].state_at(2) == "starting"


def test_restart_leaves_the_stack_running(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: docker compose -p crm up -d
  - bash: docker compose -p crm restart
""")
    assert w.instances["local/container:compose:crm"].state_at(1) == "starting"
