"""A compose stack's services are instances of their own (``HOST/container:compose:PROJECT/SERVICE``):
each has its container, its published port and a state history read from progress lines, ``compose
ps`` / ``docker ps`` rows and the per-service verbs; kills of the stack or of one service hit exactly
the live services they select."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from analyzer.cli.graph import command as graph
from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.containers import container_rows, ps_format
from analyzer.lifecycle.world import World

STACK = "local/container:compose:shop"
UP = """\
  - bash: cd /srv/shop && docker compose up -d
    output: |
       ✔ Container shop-db-1   Started
       ✔ Container shop-api-1  Started
       ✔ Container shop-web-1  Started
"""


def world(tmp_path: Path, events: str) -> World:
    f = tmp_path / "s.session.yaml"
    f.write_text("events:\n" + events)
    return build_world(load(f))


def states(w: World) -> dict[str, str]:
    """Each service's state after the last event."""
    end = len(w.session.events)
    return {k.rsplit("/", 1)[1]: i.state_at(end) for k, i in w.instances.items() if i.stack == STACK}


def test_up_progress_lines_make_each_service_a_member_of_its_stack(tmp_path: Path) -> None:
    w = world(tmp_path, UP)
    assert states(w) == {"db": "starting", "api": "starting", "web": "starting"}
    api = w.instances[f"{STACK}/api"]
    assert (api.container, api.stack, api.owner) == ("shop-api-1", STACK, "agent")


def test_stopping_one_service_stops_exactly_that_service(tmp_path: Path) -> None:
    for stop in ("docker compose stop api", "docker compose kill api", "docker compose rm -sf api",
                 "docker compose stop -t 5 api"):
        w = world(tmp_path, UP + f"  - bash: {stop}\n")
        (kill,) = w.kills()
        assert [v.instance for v in kill.victims] == [f"{STACK}/api"], stop
        assert kill.stack is None, stop
        assert states(w) == {"db": "starting", "api": "stopped", "web": "starting"}, stop


def test_a_whole_stack_stop_hits_every_live_service_and_marks_the_stack(tmp_path: Path) -> None:
    w = world(tmp_path, UP + "  - bash: docker compose stop web\n  - bash: docker compose down\n")
    down = w.kills()[-1]
    assert sorted(v.instance or "" for v in down.victims) == [f"{STACK}/api", f"{STACK}/db"]  # web was stopped
    assert down.stack == STACK
    assert set(states(w).values()) == {"stopped"}


def test_restart_of_a_service_stops_it_and_starts_it_again(tmp_path: Path) -> None:
    w = world(tmp_path, UP + "  - bash: docker compose restart api\n")
    api = w.instances[f"{STACK}/api"]
    assert [c.state for c in api.history] == ["starting", "stopped", "starting"]
    assert states(w)["web"] == "starting" and len(w.instances[f"{STACK}/web"].history) == 1


def test_up_of_a_running_stack_restarts_only_what_its_output_recreates(tmp_path: Path) -> None:
    w = world(tmp_path, UP + """\
  - bash: docker compose up -d --build api
    output: |
       ✔ Container shop-db-1   Running
       ✔ Container shop-api-1  Recreated
  - bash: docker compose up -d
    output: ""
""")
    assert [c.state for c in w.instances[f"{STACK}/api"].history] == ["starting", "stopped", "starting"]
    assert len(w.instances[f"{STACK}/db"].history) == 1  # Running: as declared
    assert len(w.instances[f"{STACK}/web"].history) == 1  # an up that printed nothing restarted nothing


def test_up_of_one_service_starts_it_and_what_the_output_shows(tmp_path: Path) -> None:
    w = world(tmp_path, UP + """\
  - bash: docker compose stop
  - bash: docker compose up -d api
    output: ""
""")
    assert states(w) == {"db": "stopped", "api": "starting", "web": "stopped"}


def test_compose_ps_ports_make_a_probe_of_that_port_evidence_for_the_service(tmp_path: Path) -> None:
    w = world(tmp_path, UP + """\
  - bash: docker compose ps
    output: |
      NAME         IMAGE         COMMAND                  SERVICE   CREATED          STATUS          PORTS
      shop-api-1   shop-api      "uvicorn app:api --h…"   api       10 seconds ago   Up 9 seconds    0.0.0.0:8000->8000/tcp
      shop-db-1    postgres:16   "docker-entrypoint.s…"   db        10 seconds ago   Up 9 seconds    5432/tcp
  - bash: curl -sf localhost:8000/health
    output: '{"ok": true}'
""")
    assert w.instances[f"{STACK}/api"].port == 8000
    assert states(w) == {"db": "starting", "api": "ready", "web": "starting"}
    assert w.state_after(STACK, 2) == "ready"  # the stack is probed as before


def test_a_stop_in_one_project_folder_leaves_the_other_projects_services(tmp_path: Path) -> None:
    w = world(tmp_path, UP + """\
  - bash: cd /srv/billing && docker compose up -d
    output: |
       ✔ Container billing-api-1  Started
  - bash: cd /srv/shop && docker compose stop api
""")
    (kill,) = w.kills()
    assert [v.instance for v in kill.victims] == [f"{STACK}/api"]
    assert w.state_after("local/container:compose:billing/api", 2) == "starting"


def test_docker_ps_rows_of_a_custom_format_are_read() -> None:
    table = ps_format(["docker", "ps", "--format", "table {{.Names}}\t{{.Status}}\t{{.Ports}}"])
    bare = ps_format(["docker", "ps", "--format", "{{.Names}} {{.Ports}}"])
    assert table is not None and bare is not None
    rows = container_rows("NAMES        STATUS         PORTS\n"
                          "shop-api-1   Up 2 minutes   0.0.0.0:8000->8000/tcp\n", [table])
    assert [(r.name, r.status, r.published) for r in rows] == [("shop-api-1", "Up 2 minutes", [8000])]
    # no STATUS column, but `docker ps` without -a lists running containers only
    rows = container_rows("tgi-old 0.0.0.0:8080->80/tcp\n", [bare])
    assert [(r.name, r.status, r.published) for r in rows] == [("tgi-old", "Up", [8080])]
    assert container_rows("tgi-old 0.0.0.0:8080->80/tcp\n") == []  # without the format: not a row


def test_a_listed_container_removed_after_docker_refused_its_port_is_the_holder_from_before(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - user: bring up TGI on port 8080 in docker
  - bash: docker run -d --name tgi -p 8080:80 ghcr.io/huggingface/text-generation-inference:2.4
    output: "docker: Error response from daemon: Bind for 0.0.0.0:8080 failed: port is already allocated."
    exit_code: 125
  - bash: docker ps --format '{{.Names}} {{.Ports}}' | grep 8080
    output: tgi-old 0.0.0.0:8080->80/tcp
  - bash: docker rm -f tgi-old tgi
    output: "tgi-old\\ntgi"
""")
    (kill,) = w.kills()
    # the holder docker's refusal found first, named by the listing after it: one box, not two
    assert [(v.label, v.instance, w.instances[v.instance or ""].owner) for v in kill.victims] == [
        ("tgi-old (container)", "local:8080@before", "before")]


def test_graph_shows_the_services_with_their_stack_and_states(tmp_path: Path) -> None:
    f = tmp_path / "s.session.yaml"
    f.write_text("events:\n" + UP + "  - bash: docker compose stop api\n")
    out = CliRunner().invoke(graph, [str(f)]).output
    assert f"{STACK}/api  api service (shop) on local  [stopped]" in out
    assert f"stack: {STACK}" in out and "container: shop-api-1" in out


def test_start_of_a_stopped_service_starts_it(tmp_path: Path) -> None:
    w = world(tmp_path, UP + """\
  - bash: docker compose stop api
  - bash: docker compose start api
    output: ""
""")
    assert [c.state for c in w.instances[f"{STACK}/api"].history] == ["starting", "stopped", "starting"]


def test_a_container_named_in_the_compose_file_is_one_service_and_run_containers_none(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: cd /srv/shop && docker compose up -d && docker compose run --rm api pytest
    output: |
       ✔ Container shop-cache  Started
       ✔ Container shop-api-run-4cf0b9e13ae6  Created
  - bash: docker compose ps
    output: |
      NAME         IMAGE         COMMAND                  SERVICE   CREATED          STATUS          PORTS
      shop-cache   redis:7       "docker-entrypoint.s…"   cache     10 seconds ago   Up 9 seconds    0.0.0.0:6379->6379/tcp
""")
    services = {k: i.port for k, i in w.instances.items() if i.stack == STACK}
    assert services == {f"{STACK}/shop-cache": 6379}


def test_another_projects_container_under_a_service_name_is_not_a_service_of_the_stack(tmp_path: Path) -> None:
    header = "NAME          IMAGE         COMMAND                  SERVICE   CREATED          STATUS          PORTS"
    w = world(tmp_path, UP + f"""\
  - bash: docker compose ps
    output: |
      {header}
      shop-db-1     postgres:16   "docker-entrypoint.s…"   db        10 seconds ago   Up 9 seconds    5432/tcp
  - bash: docker compose ps -a
    output: |
      {header}
      billing-db    mariadb:11    "docker-entrypoint.s…"   db        2 seconds ago    Up 1 second     3306/tcp
""")
    assert w.instances[f"{STACK}/db"].container == "shop-db-1"
    assert not any(i.container == "billing-db" for i in w.instances.values() if i.stack)


def test_stopping_every_service_one_by_one_stops_the_stack(tmp_path: Path) -> None:
    w = world(tmp_path, UP + """\
  - bash: cd /srv/shop && docker compose stop api
  - bash: cd /srv/shop && docker compose stop web db
""")
    stack = [c.state for c in w.instances[STACK].history]
    # api alone leaves the stack running; the second stop leaves none of its services up
    assert stack == ["starting", "stopped"] and w.instances[STACK].history[-1].event == 2
    assert set(states(w).values()) == {"stopped"}
