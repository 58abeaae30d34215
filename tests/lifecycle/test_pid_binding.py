"""PIDs bound to instances from port listers' output, and kills by PID that hit exactly them."""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.facts import Kill, Launch
from analyzer.lifecycle.probes import listeners
from analyzer.lifecycle.world import World


def test_listener_rows_of_every_port_lister() -> None:
    assert listeners("  TCP    0.0.0.0:8080    0.0.0.0:0    LISTENING    18708\n"
                     "  TCP    127.0.0.1:4145  127.0.0.1:8765  ESTABLISHED  34280\n") == {8080: {18708}}
    assert listeners("tcp   0  0 0.0.0.0:3000   0.0.0.0:*   LISTEN   4242/node\n"
                     "tcp6  0  0 :::8000        :::*        LISTEN   99/python3\n") == {3000: {4242}, 8000: {99}}
    assert listeners('LISTEN 0  511  *:3000  *:*  users:(("node",pid=1234,fd=23))') == {3000: {1234}}
    assert listeners("COMMAND PID USER FD TYPE DEVICE SIZE/OFF NODE NAME\n"
                     "java 18708 me 45u IPv4 12345 0t0 TCP localhost:8080 (LISTEN)\n") == {8080: {18708}}
    assert listeners("tcp 0 0 10.0.0.2:51234 10.0.0.9:443 ESTABLISHED 77/curl") == {}


def world(tmp_path: Path, events: str) -> World:
    f = tmp_path / "s.session.yaml"
    f.write_text("events:\n" + events)
    return build_world(load(f))


def launches(w: World) -> list[Launch]:
    return [f for f in w.facts if isinstance(f, Launch)]


def kills(w: World) -> list[Kill]:
    return [f for f in w.facts if isinstance(f, Kill)]


def test_lsof_t_binds_the_pid_and_kill_hits_that_server(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
  - bash: nohup vite --port 5173 > web.log 2>&1 &
  - bash: lsof -ti :8000
    output: "48213"
  - bash: kill 48213
""")
    assert [(la.port, la.pid) for la in launches(w)] == [(8000, 48213), (5173, None)]
    assert [v.instance for v in kills(w)[0].victims] == ["local:8000"]
    assert w.instances["local:8000"].state_at(3) == "stopped"
    assert w.instances["local:5173"].state_at(3) == "starting"


def test_netstat_piped_through_findstr_binds_and_proves_it_listens(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: java -jar target/app.jar
    background: true
  - bash: netstat -ano | findstr :8080
    output: "  TCP    0.0.0.0:8080           0.0.0.0:0              LISTENING       18330\\n"
  - bash: taskkill /F /PID 18330
""")
    assert launches(w)[0].pid == 18330
    assert w.instances["local:8080"].state_at(1) == "ready"
    assert [v.instance for v in kills(w)[0].victims] == ["local:8080"]


def test_two_pids_on_one_port_bind_nothing(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
  - bash: ss -ltnp
    output: |
      LISTEN 0 511 0.0.0.0:8000 0.0.0.0:* users:(("uvicorn",pid=11,fd=3))
      LISTEN 0 511 [::]:8000 [::]:* users:(("uvicorn",pid=12,fd=3))
  - bash: kill 11
""")
    assert launches(w)[0].pid is None
    assert [v.instance for v in kills(w)[0].victims] == []


def test_pids_from_echo_bang_the_servers_own_line_and_a_variable_in_the_same_command(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 & echo $!
    output: "51234"
  - bash: nohup gunicorn app:wsgi --bind :9001 > g.log 2>&1 &
  - bash: tail -3 g.log
    output: "[INFO] Listening at: http://0.0.0.0:9001 (60111)"
  - bash: nohup vite --port 5173 > v.log 2>&1 & PID=$!; sleep 5; kill $PID
  - bash: kill 60111
""")
    assert [(la.port, la.pid) for la in launches(w)] == [(8000, 51234), (9001, 60111), (5173, None)]
    assert [[v.instance for v in k.victims] for k in kills(w)] == [["local:5173"], ["local:9001"]]
    assert w.instances["local:5173"].state_at(3) == "stopped"
    assert w.instances["local:8000"].state_at(4) == "starting"


def test_a_job_spec_finds_no_job_in_the_fresh_shell_of_a_later_call(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
  - bash: kill %1
""")
    assert [k.victims for k in kills(w)] == [[]]
    assert w.instances["local:8000"].state_at(1) == "starting"


def test_bang_of_a_backgrounded_subshell_or_pipeline_is_not_the_server(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: (streamlit run app.py --server.port 8765 2>&1 | head -20) & PID=$!; sleep 6; kill $PID
  - bash: nohup vite --port 5173 2>&1 | tee v.log & echo $!
    output: "7001"
""")
    assert [k.victims for k in kills(w)] == [[]]
    assert [la.pid for la in launches(w)] == [None, None]


def test_a_kill_after_ready_by_pid_points_at_the_line_that_bound_the_pid(tmp_path: Path) -> None:
    from analyzer import analyze

    f = tmp_path / "k.session.yaml"
    f.write_text("""\
events:
  - user: start the API on port 8000
  - bash: nohup uvicorn shop.api:app --port 8000 > /tmp/api.log 2>&1 &
  - bash: curl -sf localhost:8000/health
    output: '{"status": "ok"}'
  - user: works, thanks. I'm clicking through it now
  - bash: lsof -ti :8000
    output: "48213"
  - bash: kill -9 48213
""")
    (finding,) = [x for x in analyze(f).findings if x.rule == "kill-after-ready"]
    assert [(r.role, r.index) for r in finding.related] == [("ready-signal", 3), ("launch", 1), ("pid-shown", 4)]
    assert [la.pid_event for la in launches(build_world(load(f)))] == [4]
