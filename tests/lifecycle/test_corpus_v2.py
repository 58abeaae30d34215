"""The world of labelled real sessions for issue 13's later capabilities (port holders docker
names, task results linked to their launch, who started a server and who it was handed to),
checked against a careful reading of them (the reading is written above each test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.lifecycle.facts import Failure, Launch
from analyzer.lifecycle.world import World
from tests.lifecycle.corpus import world_of

pytestmark = pytest.mark.corpus


def stack_of(w: World) -> str:
    (stack,) = [k for k, i in w.instances.items() if i.server == "compose"]
    return stack


# chat/hale43-bugfix2.json: `docker compose up --build` (#451, L750) and `down && up` (#453, L753)
# fail with Docker's "Bind for 0.0.0.0:3000 failed: port is already allocated": Docker's own
# allocator refuses, so another container publishes :3000, one no command of this log started
# (the log never shows it). Both ups failed on an address in use; the holder is one box, from
# before the log.
def test_hale43_the_compose_ups_meet_a_container_from_before_the_log_on_3000(corpus: Path) -> None:
    w = world_of(corpus, "chat/hale43-bugfix2.json")
    holder = w.instances["local:3000@before"]
    assert (holder.owner, holder.label, w.event(holder.owner_evidence or 0).line) == (
        "before", "container from before the log", 750)
    stack = stack_of(w)
    ups = {f.event: f.reason for f in w.failures(stack) if f.event in (451, 453)}
    assert ups == {451: "address-in-use", 453: "address-in-use"}
    assert [(la.event, la.collided is not None) for la in w.launches(stack) if la.event in (451, 453)] == [
        (451, True), (453, True)]


# chat/task70-develop1-compose-heavy.json: `docker compose down && docker compose up -d` (#70, L127)
# cannot publish :5432 ("port is already allocated"); the agent removes the postgres port mapping
# (#73) and the next `up -d` (#74, L134) cannot publish :8080: two ports, each held by a container
# no command of the log started.
def test_task70_each_refused_port_has_its_holder_from_before_the_log(corpus: Path) -> None:
    w = world_of(corpus, "chat/task70-develop1-compose-heavy.json")
    for port, event in ((5432, 70), (8080, 74)):
        holder = w.instances[f"local:{port}@before"]
        assert (holder.owner, holder.owner_evidence, holder.state_at(event)) == ("before", event, "ready")
    assert {f.event for f in w.failures(stack_of(w)) if f.reason == "address-in-use"} >= {70, 74}


# antigravity/expfrontend-springboot.jsonl: `npm run dev` (#431, L576) runs as task-622; a task
# status poll (#433, L579) says "Status: DONE" with no exit code, and the harness's notice (#434,
# L581) says the task exited 1. The launch failed (a Vite start error), it did not just complete.
def test_expfrontend_a_done_poll_leaves_the_outcome_to_the_notice_of_exit_1(corpus: Path) -> None:
    w = world_of(corpus, "antigravity/expfrontend-springboot.jsonl")
    assert w.event(433).line == 579 and w.event(434).line == 581
    assert [c.state for c in w.instances["local:5173"].history if c.event in (431, 433, 434)] == [
        "starting", "failed"]
    (failed,) = [f for f in w.failures("local:5173") if f.event == 434]
    assert isinstance(failed, Failure) and failed.launch_event == 431


# claude-code/todo-app-nextjs-dev-server.jsonl: both dev servers are started by sub-agents (the
# Task tool's agents task-9xM… at #72 and task-iKj… at #240/#256), in the same world as the main
# agent. The sub-agent's "The development server is running successfully" (#74) is its report to
# the main agent, not to the user: neither server is handed to the user.
def test_todo_servers_started_by_sub_agents_and_never_handed_to_the_user(corpus: Path) -> None:
    w = world_of(corpus, "claude-code/todo-app-nextjs-dev-server.jsonl")
    a, b = w.instances["local:3001"], w.instances["local:3000"]
    assert (a.owner, (a.started_by or "")[:8]) == ("agent", "task-9xM")
    assert (b.owner, (b.started_by or "")[:8]) == ("agent", "task-iKj")
    assert w.event(72).agent == a.started_by and isinstance(w.facts_at(72)[0], Launch)
    assert (a.handed_at, b.handed_at) == (None, None)
