"""``docker compose up -d`` reconciles: on a stack that runs as declared it changes nothing (every
container ``Running``), while ``--build``/``--force-recreate`` or a changed config recreate
services, which is a restart of the stack."""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.world import World


def world(tmp_path: Path, events: str) -> World:
    f = tmp_path / "s.session.yaml"
    f.write_text("events:\n" + events)
    return build_world(load(f))


UP_AND_READY = """\
  - bash: cd /srv/shop && docker compose up -d
    output: " ✔ Container shop-db-1   Started\\n ✔ Container shop-api-1  Started"
  - bash: curl -sf localhost:8000/health
    output: '{"ok": true}'
"""


def test_up_on_a_running_stack_that_changes_nothing_leaves_it_ready(tmp_path: Path) -> None:
    w = world(tmp_path, UP_AND_READY + """\
  - bash: docker compose up -d
    output: " ✔ Container shop-db-1   Running\\n ✔ Container shop-api-1  Running"
""")
    (stack,) = [k for k, i in w.instances.items() if i.server == "compose"]
    assert [c.state for c in w.instances[stack].history] == ["starting", "ready"]
    assert [la.duplicate_of for la in w.launches(stack)] == [None, None]


def test_a_rebuild_or_forced_recreate_restarts_the_stack(tmp_path: Path) -> None:
    for up, lines in (("up -d --build api", "Running\\n ✔ Container shop-api-1  Recreated"),
                      ("up -d --force-recreate", "Recreated\\n ✔ Container shop-api-1  Recreated")):
        w = world(tmp_path, UP_AND_READY + f"""\
  - bash: docker compose {up}
    output: " ✔ Container shop-db-1   {lines}"
""")
        (stack,) = [k for k, i in w.instances.items() if i.server == "compose"]
        assert [(c.state, c.event) for c in w.instances[stack].history] == [
            ("starting", 0), ("ready", 1), ("starting", 2)], up
