"""Readiness evidence and its strength: a probe's answer and the server's own ready line are strong,
the user's words medium, the agent's claim weak; waits (``sleep``, a scheduling tool) and the
agent's narration are no evidence at all, and a weak claim never overrules a failure."""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.facts import Ready
from analyzer.lifecycle.world import World


def world(tmp_path: Path, events: str) -> World:
    f = tmp_path / "s.session.yaml"
    f.write_text("agent: claude-code\nevents:\n" + events)
    return build_world(load(f))


def test_waits_scheduling_and_narration_are_no_readiness(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup uvicorn shop.api:app --port 8000 > api.log 2>&1 &
  - bash: sleep 8
  - assistant: Let me wait a few seconds for the server to come up.
  - tool: ScheduleWakeup
    input: {delaySeconds: 60, reason: wait for the API to start}
    output: Scheduled
  - bash: sleep 5 && echo waited
    output: waited
  - assistant: The server should be up by now, I'll check.
  - bash: curl -s localhost:8000/health || true
    output: "curl: (7) Failed to connect to localhost port 8000 after 0 ms: Connection refused"
""")
    assert w.facts_of(Ready) == []
    assert [c.state for c in w.instances["local:8000"].history] == ["starting"]


def test_each_source_has_its_strength(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup uvicorn shop.api:app --port 8000 > api.log 2>&1 &
  - bash: curl -sf localhost:8000/health
    output: '{"status": "ok"}'
  - assistant: The API is up on port 8000.
  - user: yes it's working on 8000, thanks
  - bash: nohup vite --port 5173 > web.log 2>&1 &
  - bash: tail -3 web.log
    output: "  VITE v5.4.2  ready in 312 ms\\n  ➜  Local:   http://localhost:5173/"
""")
    assert [(r.source, r.strength) for r in w.ready_signals("local:8000", 99)] == [
        ("probe", "strong"), ("agent", "weak"), ("user", "medium")]
    assert [(r.source, r.strength) for r in w.ready_signals("local:5173", 99)] == [("log", "strong")]


def test_the_agents_claim_does_not_overrule_a_failed_probe_but_the_users_words_do(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup uvicorn shop.api:app --port 8000 > api.log 2>&1 &
  - bash: curl -sf localhost:8000/health
    output: '{"status": "ok"}'
  - bash: curl -sf localhost:8000/health
    output: "curl: (7) Failed to connect to localhost port 8000 after 0 ms: Connection refused"
    exit: 7
  - assistant: The API is up and running on port 8000.
  - user: the api on 8000 is ready, I restarted it myself
""")
    inst = w.instances["local:8000"]
    assert [inst.state_at(i) for i in range(5)] == ["starting", "ready", "failed", "failed", "ready"]
