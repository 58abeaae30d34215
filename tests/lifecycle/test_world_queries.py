"""The World's indexed queries answer exactly what their plain definitions say, at every event of
real and hand-made sessions (the indexes exist for speed only), and the graph is the same whether
it is built during the walk or on first use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from analyzer.events import UserEvent
from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.facts import Failure, Instruction, Kill, Launch, Ready
from analyzer.lifecycle.world import Instance, StateChange, World

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SESSIONS = [
    FIXTURES / "seeds" / "000-kill-after-ready.session.yaml",
    FIXTURES / "seeds" / "001-relaunch-after-ready.jsonl",
    FIXTURES / "seeds" / "002-restart-30001-teardown.session.yaml",
    FIXTURES / "seeds" / "004-restart-sglang-systemd.jsonl",
    FIXTURES / "claude-code" / "v2.0-kill-shell.jsonl",
    FIXTURES / "claude-code" / "v2.1-sglang" / "7d0c7e4e-3b1a-4c2f-8e9d-5a6b7c8d9e0f.jsonl",
]


def plain_instructions_in_force(w: World, event: int) -> list[Instruction]:
    before = [f for f in w.facts if isinstance(f, Instruction) and f.event < event]
    if not before:
        return []
    prompts = [e.index for e in w.session.events
               if isinstance(e, UserEvent) and e.origin == "prompt" and e.index < event]
    latest = prompts[-1] if prompts else -1
    current = [f for f in before if f.event == latest]
    holds = [h for h in before if h.action == "hold" and h.event != latest and not any(
        g.event > h.event and g.action != "hold" and (set(g.targets) & set(h.targets) or not h.targets)
        for g in before)]
    return current + holds


def answers(w: World) -> dict[str, Any]:
    """Every query at every event boundary, by the indexed World."""
    n = len(w.session.events)
    out: dict[str, Any] = {}
    for e in range(-1, n + 2):
        out[f"at {e}"] = [id(f) for f in w.facts_at(e)]
        out[f"force {e}"] = [id(f) for f in w.instructions_in_force(e)]
        out[f"between -1 {e}"] = [ev.index for ev in w.user_messages_between(-1, e)]
        out[f"between {e} {n}"] = [ev.index for ev in w.user_messages_between(e, n)]
        for inst in [*w.instances, "nowhere:1"]:
            out[f"ready {inst} {e}"] = [id(f) for f in w.ready_signals(inst, e)]
            for inclusive in (False, True):
                out[f"state {inst} {e} {inclusive}"] = w.state_at(inst, e, inclusive)
    for inst in [None, *w.instances]:
        out[f"launches {inst}"] = [id(f) for f in w.launches(inst)]
        out[f"failures {inst}"] = [id(f) for f in w.failures(inst)]
    for kind in (Launch, Kill, Ready, Failure, Instruction, Launch | Kill):
        out[f"of {kind}"] = [id(f) for f in w.facts_of(kind)]  # type: ignore[arg-type]
    return out


def plain_answers(w: World) -> dict[str, Any]:
    """The same queries, by their definitions: scans of every fact and event."""
    n = len(w.session.events)
    events = w.session.events
    out: dict[str, Any] = {}

    def state(inst: str, e: int, inclusive: bool) -> str:
        if inst not in w.instances:
            return "unknown"
        found = "unknown"
        for change in w.instances[inst].history:
            if change.event < e or (inclusive and change.event == e):
                found = change.state
            else:
                break
        return found

    for e in range(-1, n + 2):
        out[f"at {e}"] = [id(f) for f in w.facts if f.event == e]
        out[f"force {e}"] = [id(f) for f in plain_instructions_in_force(w, e)]
        out[f"between -1 {e}"] = [ev.index for ev in events[0:e]
                                  if isinstance(ev, UserEvent) and ev.origin == "prompt"]
        out[f"between {e} {n}"] = [ev.index for ev in events[e + 1:n]
                                   if isinstance(ev, UserEvent) and ev.origin == "prompt"]
        for inst in [*w.instances, "nowhere:1"]:
            out[f"ready {inst} {e}"] = [id(f) for f in w.facts
                                        if isinstance(f, Ready) and f.instance == inst and f.event < e]
            for inclusive in (False, True):
                out[f"state {inst} {e} {inclusive}"] = state(inst, e, inclusive)
    for inst in [None, *w.instances]:
        out[f"launches {inst}"] = [id(f) for f in w.facts
                                   if isinstance(f, Launch) and (inst is None or f.instance == inst)]
        out[f"failures {inst}"] = [id(f) for f in w.facts
                                   if isinstance(f, Failure) and (inst is None or f.instance == inst)]
    for kind in (Launch, Kill, Ready, Failure, Instruction, Launch | Kill):
        out[f"of {kind}"] = [id(f) for f in w.facts if isinstance(f, kind)]
    return out


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_indexed_queries_answer_as_their_definitions(path: Path) -> None:
    w = build_world(load(path))
    assert w.facts  # a session with something to ask about
    assert answers(w) == plain_answers(w)


@pytest.mark.parametrize("path", SESSIONS[:3], ids=lambda p: p.name)
def test_a_hand_built_world_out_of_timeline_order(path: Path) -> None:
    built = build_world(load(path))
    w = World(session=built.session, catalog=built.catalog, facts=list(reversed(built.facts)),
              instances=built.instances)
    assert answers(w) == plain_answers(w)


def test_indexed_queries_on_real_sessions(corpus: Path) -> None:
    for path in [corpus / "claude-code" / "posthog-dashboard-pkill-v2.1.112.jsonl",
                 corpus / "claude-code" / "todo-app-nextjs-dev-server.jsonl"]:
        w = build_world(load(path))
        assert answers(w) == plain_answers(w), path.name


def test_holds_lifted_by_a_later_instruction_about_the_same_target(tmp_path: Path) -> None:
    p = tmp_path / "s.session.yaml"
    p.write_text("""agent: claude-code
events:
  - bash: nohup python -m sglang.launch_server --port 30000 > s.log 2>&1 &
  - user: Don't touch the sglang server on port 30000, it is serving
  - bash: curl -s localhost:30000/health
    output: ok
  - user: Restart sglang on port 30000 now
  - bash: pkill -f sglang
""")
    w = build_world(load(p))
    hold = next(f for f in w.facts_of(Instruction) if f.action == "hold")
    restart = next(f for f in w.facts_of(Instruction) if f.action == "restart")
    kill = w.kills()[0]
    assert w.instructions_in_force(restart.event) == [hold]  # before the restart: the hold stands
    assert w.instructions_in_force(kill.event) == [restart]  # lifted by the restart of the same server
    assert w.instructions_in_force(kill.event) == plain_instructions_in_force(w, kill.event)


def test_the_graph_is_the_same_built_during_the_walk_or_afterwards() -> None:
    late = build_world(load(SESSIONS[2]))
    early = World(session=late.session, catalog=late.catalog)
    _ = early.graph  # made before any fact: every step is applied to it as it happens
    from analyzer.lifecycle.build import Builder

    Builder(early).run()
    assert early.graph is early.graph
    for g, h in [(early.graph, late.graph)]:
        assert list(g.nodes(data=True)) == list(h.nodes(data=True))
        assert list(g.edges(keys=True, data=True)) == list(h.edges(keys=True, data=True))
        assert {n: list(g.pred[n]) for n in g} == {n: list(h.pred[n]) for n in h}
    assert late.graph.number_of_edges() > 5


def test_state_at_reads_the_history_prefix() -> None:
    inst = Instance(id="local:8000", server="uvicorn", label="uvicorn app", host="local", port=8000, history=[
        StateChange(state="starting", event=2, fact=0, reason="launched"),
        StateChange(state="ready", event=5, fact=1, reason="probe"),
        StateChange(state="failed", event=5, fact=2, reason="log"),
        StateChange(state="stopped", event=9, fact=3, reason="kill"),
    ])
    assert [inst.state_at(e, inclusive=False) for e in range(11)] == [
        "unknown", "unknown", "unknown", "starting", "starting", "starting", "failed", "failed", "failed",
        "failed", "stopped"]
    assert [inst.state_at(e) for e in (1, 2, 5, 9)] == ["unknown", "starting", "failed", "stopped"]
