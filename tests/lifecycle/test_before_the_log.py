"""Servers the log did not launch (owner ``before``): a listener a port lister shows, a probe
answered before any launch on its port, a port a launch collided with, a URL the user says they
use; and the PID the agent states for its own server."""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.facts import Launch, Probe
from analyzer.lifecycle.world import World


def world(tmp_path: Path, events: str) -> World:
    f = tmp_path / "s.session.yaml"
    f.write_text("agent: claude-code\nevents:\n" + events)
    return build_world(load(f))


def before(w: World) -> list[tuple[str, int | None, str]]:
    return [(k, i.owner_evidence, i.history[-1].state if i.history else "-")
            for k, i in w.instances.items() if i.owner == "before"]


def test_a_listener_on_the_port_the_agent_asks_about_is_a_server_from_before_the_log(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - user: the api should use postgres on 5432
  - bash: ss -ltnp | grep 5432
    output: 'LISTEN 0 244 127.0.0.1:5432 0.0.0.0:* users:(("postgres",pid=871,fd=6))'
""")
    assert before(w) == [("local:5432@before", 1, "ready")]
    inst = w.instances["local:5432@before"]
    assert inst.label == "postgres from before the log"
    assert inst.owner_detail == '`ss -ltnp` shows PID 871 (postgres) listening on :5432'


def test_a_full_listing_nobody_asked_about_invents_no_servers(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: ss -ltnp
    output: |
      LISTEN 0 128 0.0.0.0:22 0.0.0.0:* users:(("sshd",pid=610,fd=3))
      LISTEN 0 244 127.0.0.1:5432 0.0.0.0:* users:(("postgres",pid=871,fd=6))
""")
    assert w.instances == {}


def test_a_probe_answered_before_any_launch_is_the_users_server_and_a_later_launch_is_its_own_box(
        tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: curl -s localhost:8000/health
    output: '{"ok": true}'
  - bash: nohup uvicorn app:api --port 8001 > api.log 2>&1 &
  - bash: curl -s localhost:8000/health
    output: '{"ok": true}'
""")
    assert before(w) == [("local:8000@before", 0, "ready")]
    assert [(p.event, p.instance) for p in w.facts_of(Probe)] == [(0, "local:8000@before"), (2, "local:8000@before")]
    assert w.instances["local:8001"].owner == "agent"


def test_no_server_from_before_where_a_launch_of_the_log_may_be_what_answers(tmp_path: Path) -> None:
    # `npm run dev` only guesses its port, `rails server -d` is a daemon the walk cannot read:
    # either may be what answers on another port
    w = world(tmp_path, """\
  - bash: nohup npm run dev > dev.log 2>&1 &
  - bash: curl -s localhost:5173/
    output: '<html>'
""")
    assert before(w) == []
    w = world(tmp_path, """\
  - bash: bin/rails server -p 3001 -d
    output: '=> Booting Puma'
  - bash: curl -s -o /dev/null -w '%{http_code}' http://localhost:3001/
    output: '200'
""")
    assert before(w) == []


def test_a_probe_from_inside_a_container_or_of_another_host_is_not_a_local_server(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: docker exec web wget -qO- http://localhost:8080/health
    output: ok
  - bash: curl -s http://api.example.com:8443/v1/status
    output: '{"up": true}'
""")
    assert before(w) == []


def test_an_address_in_use_collision_points_at_the_holder_from_before_the_log(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: npx next dev --port 3000
    output: "⚠ Port 3000 is in use by process 65120\\n⨯ Another next dev server is already running.\\nRun taskkill /PID 65120 /F"
    exit: 1
""")
    (launch,) = w.facts_of(Launch)
    assert launch.collided and launch.pid is None  # 65120 is the holder's PID, not this launch's
    assert before(w) == [("local:3000@before", 0, "ready")]
    assert w.instances["local:3000@before"].owner_detail.startswith("`npx next dev --port` found its port taken (PID 65120)")
    assert ("event:0", "instance:local:3000@before", "conflicts-with") in w.graph.edges(keys=True)
    assert w.instances["local:3000"].history[-1].state == "failed"


def test_the_user_naming_a_url_they_use_is_a_server_from_before_the_log(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - user: I have the dashboard open on http://localhost:3000 already, just fix the chart colours
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
  - user: the api is running on localhost:8000 now, thanks
""")
    assert before(w) == [("local:3000@before", 0, "ready")]
    (said,) = w.ready_signals("local:3000@before", 99)
    assert (said.source, said.quote) == ("user", "I have the dashboard open on http://localhost:3000")
    assert "local:8000@before" not in w.instances  # the agent's own server on that port


def test_an_instruction_with_a_url_is_no_server_in_use(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - user: start the frontend so it serves on http://localhost:5173
""")
    assert w.instances == {}


def test_the_pid_the_agent_states_binds_its_server_until_output_shows_one(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
  - assistant: The API is running as PID 4242 on port 8000.
  - bash: kill 4242
""")
    (launch,) = w.facts_of(Launch)
    assert (launch.pid, launch.pid_event) == (4242, 1)
    assert [v.instance for k in w.kills() for v in k.victims] == ["local:8000"]
    w = world(tmp_path, """\
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
  - assistant: Started the API (pid 4242).
  - bash: lsof -ti :8000
    output: "4313"
""")
    (launch,) = w.facts_of(Launch)
    assert (launch.pid, launch.pid_event) == (4313, 2)  # what the output shows outranks the claim


def test_the_agent_never_overrides_a_pid_the_output_showed(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 & echo $!
    output: "5150"
  - assistant: The server is running as PID 4242.
""")
    (launch,) = w.facts_of(Launch)
    assert (launch.pid, launch.pid_event) == (5150, 0)


def test_a_collision_of_a_launch_with_no_known_port_names_the_port_in_its_line(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: node build/index.js
    output: "ws server error: Error: listen EADDRINUSE: address already in use :::8765"
    exit: 1
  - bash: netstat -ano
    output: "  TCP    0.0.0.0:8765   0.0.0.0:0   LISTENING   4412\\n"
""")
    assert before(w) == [("local:8765@before", 0, "ready")]
    assert [(p.event, p.target) for p in w.facts_about(Probe, "local:8765@before")] == [
        (0, ":8765"), (1, "PID 4412 listening on :8765")]
