"""``docker restart NAME`` stops the agent's container and starts it again: the world shows it
starting after the restart, not stopped (commands written from docker's documented output)."""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.facts import Launch

EVENTS = """\
agent: claude-code
events:
  - user: run the api in docker on 8000
  - bash: docker run -d --name api -p 8000:8000 myorg/api:1.4
    output: 4c1d2e3f4a5b
  - bash: curl -sf localhost:8000/health
    output: '{"status":"ok"}'
  - user: restart the api container, it picked up the old config
  - bash: {restart}
    output: api
"""


def _world(tmp_path: Path, restart: str):  # type: ignore[no-untyped-def]
    f = tmp_path / "s.session.yaml"
    f.write_text(EVENTS.replace("{restart}", restart))
    return build_world(load(f))


def test_a_restarted_container_is_starting_again(tmp_path: Path) -> None:
    for restart in ("docker restart api", "sudo docker container restart api"):
        w = _world(tmp_path, restart)
        [inst] = w.instances
        assert w.state_after(inst, 4) == "starting", restart
        assert [f.event for f in w.launches(inst)] == [1, 4]
        assert isinstance(w.launches(inst)[-1], Launch) and w.launches(inst)[-1].argv[:2] == ["docker", "run"]


def test_a_stopped_container_stays_stopped(tmp_path: Path) -> None:
    w = _world(tmp_path, "docker stop api")
    [inst] = w.instances
    assert w.state_after(inst, 4) == "stopped"
    assert [f.event for f in w.launches(inst)] == [1]


def test_docker_start_of_a_stopped_container_launches_it_again(tmp_path: Path) -> None:
    f = tmp_path / "s.session.yaml"
    f.write_text(EVENTS.replace("{restart}", "docker stop api") + """\
  - bash: docker start api
    output: api
""")
    w = build_world(load(f))
    [inst] = w.instances
    assert (w.state_after(inst, 4), w.state_after(inst, 5)) == ("stopped", "starting")
    assert [f.event for f in w.launches(inst)] == [1, 5]
