"""The world of labelled real sessions with servers outside the catalog or from before the log,
checked against a careful reading of them (the reading is written above each test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.lifecycle.facts import Launch, Probe
from analyzer.lifecycle.world import World
from tests.lifecycle.corpus import world_of

pytestmark = pytest.mark.corpus


def launch_at(w: World, event: int) -> Launch:
    (launch,) = [la for la in w.launches() if la.event == event]
    return launch


# cline/mcp-vscode-ui-messages.json: Cline spawned the vscode-commands MCP server from its settings
# (PID 35016, WebSocket on :8765) before the agent's calls. The agent's `node build/index.js`
# (#94, L299) dies on "listen EADDRINUSE … :::8765"; `netstat -ano` (#96) shows 35016 listening on
# 8765. One server the log did not launch, seen at the collision and again in the listing.
def test_mcp_server_cline_spawned_is_from_before_the_log(corpus: Path) -> None:
    w = world_of(corpus, "cline/mcp-vscode-ui-messages.json")
    inst = w.instances["local:8765@before"]
    assert (inst.owner, inst.owner_evidence, w.event(94).line) == ("before", 94, 299)
    assert "listen EADDRINUSE" in inst.owner_detail
    assert [(p.event, p.method, p.target) for p in w.facts_about(Probe, inst.id)] == [
        (94, "port-held", ":8765"), (96, "port-list", "PID 35016 listening on :8765"),
        (96, "port-clients", "PID 35016 on :8765 serving 3 established connections")]
    assert launch_at(w, 94).collided and launch_at(w, 94).instance == "local/node:index.js"
    # netstat tied PID 35016 to it, so `taskkill /PID 35016 /F` (L311) stops it
    assert inst.pids == [35016] and inst.state_at(98) == "stopped"


# antigravity/eager-nextdev-port-in-use.jsonl: the user's own `npm run dev` has run in the IDE
# terminal for ~20 h; the agent's `npm run dev` (#582, L778) is refused: "Port 3000 is in use by
# process 65120 … Another next dev server is already running". 65120 is the user's server's PID,
# not the refused launch's.
def test_next_dev_the_user_runs_is_from_before_the_log_with_its_pid(corpus: Path) -> None:
    w = world_of(corpus, "antigravity/eager-nextdev-port-in-use.jsonl")
    assert sorted(w.instances) == ["local:3000", "local:3000@before"]
    before = w.instances["local:3000@before"]
    assert (before.owner, before.owner_evidence, w.event(582).line) == ("before", 582, 778)
    assert "(PID 65120)" in before.owner_detail
    refused = launch_at(w, 582)
    assert refused.collided and refused.pid is None
    assert w.instances["local:3000"].state_at(582) == "failed"


# claude-code/hale43-compose-devserver-develop1.jsonl: `ng serve --port 4200` runs as background
# task btdc73kzn (#315, L660); a probe 9 s later gets no answer (still compiling). `docker compose
# up --build -d` (#482, L942) starts the stack; `docker compose ps` (#484) shows repo-frontend-1
# publishing 0.0.0.0:4200. `curl localhost:4200/api/health` (#492, L957) answers with a page holding
# `/@vite/client`: the dev server, not the stack's nginx, so ng serve ran all along and the up
# launched the frontend onto its port (the agent kills PID 21972 at #496).
def test_compose_up_onto_the_live_angular_dev_server(corpus: Path) -> None:
    w = world_of(corpus, "claude-code/hale43-compose-devserver-develop1.jsonl")
    up = launch_at(w, 482)
    assert (w.event(482).line, up.instance, up.overlaps, up.duplicate_of) == (
        942, "local/container:compose:repo", [(4200, 315)], 315)
    assert w.instances["local:4200"].state_at(492) == "ready"
    # `PORT=3000 node --import tsx/esm src/main.ts &` (#325): a node server the catalog's script
    # reading misses, a generic one on 3000 by its PORT=
    assert (launch_at(w, 325).server, launch_at(w, 325).instance) == ("server", "local:3000")
    assert not [i for i in w.instances.values() if i.owner == "before"]


# codex/edgerunner-devserver-session.jsonl: `cargo run -p edgerunner -- serve --bind 127.0.0.1:8080`
# in a unified-exec session (#99, L402) is the Rust backend; curl of /api/health answers (#102).
# It is relaunched after a clean stop at #160 (L644). No catalog kind: a generic server on 8080.
def test_cargo_run_serve_is_a_generic_server_on_its_bind_port(corpus: Path) -> None:
    w = world_of(corpus, "codex/edgerunner-devserver-session.jsonl")
    assert sorted(w.instances) == ["local:8080"]
    inst = w.instances["local:8080"]
    assert (inst.server, inst.label, inst.launches) == ("server", "cargo run server", [99, 160])
    assert inst.state_at(102) == "ready" and launch_at(w, 160).duplicate_of is None


# claude-code/jgive-donation-docker-transcript.jsonl: the agent runs its own Puma as a daemon
# (`bin/rails server -p 3001 -d`) and curls :3001. The daemon is not read as a launch, and its
# answers must not invent a server from before the log either.
def test_answers_of_a_daemon_the_walk_cannot_read_are_no_server_from_before(corpus: Path) -> None:
    w = world_of(corpus, "claude-code/jgive-donation-docker-transcript.jsonl")
    assert w.instances == {}
