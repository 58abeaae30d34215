"""Docker refusing to publish a port, and servers refusing to start beside a running copy (a lock or
PID file), are evidence of who holds the port: a container or server from before the log, another
project's container a listing showed, or nobody named where the log's own may hold it."""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.facts import Failure, Launch
from analyzer.lifecycle.probes import docker_port_refusal
from analyzer.lifecycle.world import World

ALLOCATED = ("docker: Error response from daemon: driver failed programming external connectivity on endpoint "
             "api (5c1e07): Bind for 0.0.0.0:8000 failed: port is already allocated.")
NOT_AVAILABLE = ("Error response from daemon: Ports are not available: exposing port TCP 0.0.0.0:3000 -> 0.0.0.0:0: "
                 "listen tcp 0.0.0.0:3000: bind: address already in use")


def world(tmp_path: Path, events: str) -> World:
    f = tmp_path / "s.session.yaml"
    f.write_text("events:\n" + events)
    return build_world(load(f))


def failures(w: World) -> list[tuple[str | None, str]]:
    return [(f.instance, f.reason) for f in w.facts if isinstance(f, Failure)]


def test_docker_refusal_lines() -> None:
    got = docker_port_refusal(f"Unable to find image 'api:dev' locally\n{ALLOCATED}\n")
    assert got is not None and (got.port, got.by_container) == (8000, True) and got.line == ALLOCATED
    got = docker_port_refusal(NOT_AVAILABLE)
    assert got is not None and (got.port, got.by_container) == (3000, False)
    assert docker_port_refusal("Error: port is already allocated somewhere") is None


def test_a_port_already_allocated_with_no_container_of_the_log_is_a_container_from_before(tmp_path: Path) -> None:
    w = world(tmp_path, f"""\
  - bash: docker run -d --name api -p 8000:8000 api:dev
    output: "{ALLOCATED}"
    exit: 125
""")
    assert failures(w) == [("local:8000", "address-in-use")]
    (launch,) = [f for f in w.facts if isinstance(f, Launch)]
    assert launch.collided == ALLOCATED
    before = w.instances["local:8000@before"]
    assert (before.owner, before.label, before.state_at(0)) == ("before", "container from before the log", "ready")


def test_the_holder_is_the_container_a_listing_showed_publishing_the_port(tmp_path: Path) -> None:
    w = world(tmp_path, f"""\
  - bash: docker ps
    output: |
      CONTAINER ID   IMAGE         COMMAND                  CREATED       STATUS       PORTS                    NAMES
      0a1b2c3d4e5f   billing-api   "uvicorn main:app"       2 hours ago   Up 2 hours   0.0.0.0:8000->8000/tcp   billing-api-1
  - bash: docker compose up -d
    output: |
      ✔ Network shop_default  Created
      ✔ Container shop-db-1   Started
      {ALLOCATED}
    exit: 1
""")
    (stack,) = [i for i in w.instances.values() if i.server == "compose"]
    holder = w.instances["local/container:billing-api-1@0"]
    assert (holder.owner, holder.port, holder.state_at(1)) == ("before", 8000, "ready")
    assert "before this session made any container" in holder.owner_detail
    assert failures(w) == [(stack.id, "address-in-use")]
    assert not any(k.endswith("@before") for k in w.instances)


def test_a_listing_after_the_refusal_names_the_holder_and_its_removal_stops_that_one_box(tmp_path: Path) -> None:
    w = world(tmp_path, f"""\
  - user: bring the api up on 8000
  - bash: docker run -d --name api -p 8000:8000 api:dev
    output: "{ALLOCATED}"
    exit: 125
  - bash: docker ps --format '{{{{.Names}}}} {{{{.Ports}}}}'
    output: "api-old 0.0.0.0:8000->8000/tcp"
  - bash: docker rm -f api-old && docker run -d --name api -p 8000:8000 api:dev
    output: |
      api-old
      9f8e7d6c5b4a
""")
    holder = w.instances["local:8000@before"]
    assert (holder.container, holder.label) == ("api-old", "container api-old from before the log")
    assert [c.state for c in holder.history] == ["ready", "stopped"]
    # one box for api-old: the kill stops the holder the refusal found, not a second container box
    assert not any(i.container == "api-old" for k, i in w.instances.items() if k != holder.id)


def test_no_holder_is_named_where_the_logs_own_containers_may_hold_the_port(tmp_path: Path) -> None:
    w = world(tmp_path, f"""\
  - bash: docker compose up -d
    output: |
      ✔ Container shop-api-1  Started
  - bash: docker run -d --name api2 -p 8000:8000 api:dev
    output: "{ALLOCATED}"
    exit: 125
  - bash: nohup uvicorn app:api --port 3000 > api.log 2>&1 &
  - bash: docker run -d --name web -p 3000:80 web:dev
    output: "{NOT_AVAILABLE}"
    exit: 125
""")
    assert [i.owner for i in w.instances.values() if i.stack is None] == ["agent"] * 3  # services aside
    assert [f.collided for f in w.facts if isinstance(f, Launch)] == [None] * 4
    assert [r for _, r in failures(w)] == ["address-in-use", "address-in-use"]


def test_a_lock_or_pid_file_refusal_is_a_collision_with_a_server_from_before(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: bin/rails server -p 3000 &
    output: "=> Booting Puma\\nA server is already running (pid: 4242, file: /srv/shop/tmp/pids/server.pid).\\nExiting"
    exit: 1
  - bash: uvicorn app:api --port 8000
    output: "ERROR: another instance is running on this port"
    exit: 1
""")
    assert [r for _, r in failures(w)] == ["address-in-use", "address-in-use"]
    assert {"local:3000@before", "local:8000@before"} <= set(w.instances)


def test_compose_says_why_an_up_failed(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: docker compose up -d --build
    output: |
      => ERROR [api 4/6] RUN pip install -r requirements.txt
      failed to solve: process "/bin/sh -c pip install -r requirements.txt" did not complete successfully: exit code: 1
    exit: 17
  - bash: docker compose up -d
    output: |
      ✔ Container shop-db-1   Started
      dependency failed to start: container shop-db-1 is unhealthy
    exit: 1
""")
    quotes = [(f.reason, f.quote.split(":")[0]) for f in w.facts if isinstance(f, Failure)]
    assert quotes == [("error", "failed to solve"), ("error", "dependency failed to start")]
