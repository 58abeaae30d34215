"""A labelled corpus session that drives a compose stack, read as a careful reader would: its
services are members of the stack with their containers and published ports, and each whole-stack
``down`` hits the services then running (and only them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lifecycle.corpus import world_of

SESSION = "claude-code/hale43-compose-devserver-develop1.jsonl"
STACK = "local/container:compose:repo"


@pytest.mark.corpus
def test_the_stacks_services_are_its_members_with_their_ports(corpus: Path) -> None:
    w = world_of(corpus, SESSION)
    services = {k.rsplit("/", 1)[1]: (i.container, i.port) for k, i in w.instances.items() if i.stack == STACK}
    assert services == {"db": ("repo-db-1", 5433), "backend": ("repo-backend-1", 3000),
                        "frontend": ("repo-frontend-1", 4200)}


@pytest.mark.corpus
def test_each_down_hits_the_services_running_then_and_marks_the_whole_stack(corpus: Path) -> None:
    w = world_of(corpus, SESSION)
    downs = [k for k in w.kills() if k.mechanism == "docker-compose"]
    assert downs and all(k.stack == STACK for k in downs)
    for k in downs:
        running = [key for key, i in w.instances.items() if i.stack == STACK
                   and w.state_before(key, k.event) in ("starting", "ready")]
        assert sorted(v.instance or "" for v in k.victims) == sorted(running), w.event(k.event).line
    # the backend the agent handed over is restarted by a recreate, not by a kill
    backend = w.instances[f"{STACK}/backend"]
    assert backend.handed_at is not None
    assert any("Recreated" in c.reason for c in backend.history)
