"""PIDs bound from job notices, process listings (``ps aux``, ``ps -ef``, ``pgrep -a``, a bare
``pgrep``) and ``fuser PORT/tcp``: a later ``kill PID`` hits exactly the server the listing showed."""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.facts import Kill, Launch
from analyzer.lifecycle.probes import bare_pids, fuser_holders, process_rows
from analyzer.lifecycle.world import World


def world(tmp_path: Path, events: str) -> World:
    f = tmp_path / "s.session.yaml"
    f.write_text("events:\n" + events)
    return build_world(load(f))


def pids(w: World) -> list[tuple[int | None, int | None]]:
    return [(f.port, f.pid) for f in w.facts if isinstance(f, Launch)]


def victims(w: World) -> list[list[str | None]]:
    return [[v.instance for v in f.victims] for f in w.facts if isinstance(f, Kill)]


def test_rows_of_ps_and_pgrep_listings() -> None:
    aux = ("USER  PID %CPU %MEM    VSZ   RSS TTY   STAT START   TIME COMMAND\n"
           "dev  7311  2.0  1.1 998812 90000 ?     Sl   09:12   0:04 node /srv/web/node_modules/.bin/vite --port 5173\n")
    assert process_rows("ps", ["ps", "aux"], aux) == [(7311, "node /srv/web/node_modules/.bin/vite --port 5173")]
    ef = ("UID   PID  PPID  C STIME TTY      TIME CMD\n"
          "dev  8120     1  0 09:20 ?    00:00:02 /opt/venv/bin/python -m uvicorn shop.api:app --port 8000\n")
    assert process_rows("ps", ["ps", "-ef"], ef) == [(8120, "/opt/venv/bin/python -m uvicorn shop.api:app --port 8000")]
    assert process_rows("pgrep", ["pgrep", "-af", "uvicorn"], "8120 uvicorn shop.api:app\n") == [(8120, "uvicorn shop.api:app")]
    assert process_rows("pgrep", ["pgrep", "-f", "uvicorn"], "8120\n") == []  # PIDs only
    assert bare_pids("pgrep", ["pgrep", "-f", "uvicorn"], "8120\n") == [8120]
    assert bare_pids("pgrep", ["pgrep", "-c", "uvicorn"], "1\n") is None  # a count, not a PID
    assert fuser_holders("8000/tcp:             8120\n") == {8000: {8120}}
    assert fuser_holders("/srv/app.log: 8120c\n") == {}


def test_a_ps_aux_row_through_grep_binds_the_server_and_a_kill_hits_it(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup vite --port 5173 > web.log 2>&1 &
  - bash: nohup uvicorn shop.api:app --port 8000 > api.log 2>&1 &
  - bash: ps aux | grep vite
    output: |
      dev   7311  2.0  1.1 998812 90000 ?      Sl   09:12   0:04 node /srv/web/node_modules/.bin/vite --port 5173
      dev   7400  0.0  0.0   6432   720 pts/1  S+   09:13   0:00 grep vite
  - bash: kill 7311
""")
    assert pids(w) == [(5173, 7311), (8000, None)]
    assert victims(w) == [["local:5173"]]
    assert w.instances["local:8000"].state_at(3) == "starting"


def test_the_wrapper_shells_row_is_not_the_server(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup uvicorn shop.api:app --port 8000 > api.log 2>&1 &
  - bash: ps -ef | grep uvicorn
    output: |
      dev   8101     1  0 09:20 ?        00:00:00 /bin/bash -c nohup uvicorn shop.api:app --port 8000 > api.log 2>&1 &
      dev   8120  8101  0 09:20 ?        00:00:02 /opt/venv/bin/python /opt/venv/bin/uvicorn shop.api:app --port 8000
  - bash: kill -9 8120
""")
    assert pids(w) == [(8000, 8120)]
    assert victims(w) == [["local:8000"]]


def test_workers_with_one_command_line_bind_nothing(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup gunicorn shop.wsgi:app --bind 0.0.0.0:9001 --workers 2 > g.log 2>&1 &
  - bash: ps aux | grep gunicorn
    output: |
      dev  9001  0.1  0.4 55000 31000 ?  S  09:30  0:00 /opt/venv/bin/python /opt/venv/bin/gunicorn shop.wsgi:app --bind 0.0.0.0:9001 --workers 2
      dev  9005  0.0  0.4 56000 32000 ?  S  09:30  0:00 /opt/venv/bin/python /opt/venv/bin/gunicorn shop.wsgi:app --bind 0.0.0.0:9001 --workers 2
  - bash: kill 9005
""")
    assert pids(w) == [(9001, None)]
    assert victims(w) == [[]]


def test_pgrep_a_rows_and_a_bare_pgrep_that_selects_one_instance(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup uvicorn shop.api:app --port 8000 > api.log 2>&1 &
  - bash: nohup python3 -m http.server 9000 > h.log 2>&1 &
  - bash: pgrep -af uvicorn
    output: "8120 /opt/venv/bin/python /opt/venv/bin/uvicorn shop.api:app --port 8000"
  - bash: pgrep -f "http.server 9000"
    output: "8311"
  - bash: kill 8311 && kill 8120
""")
    assert pids(w) == [(8000, 8120), (9000, 8311)]
    assert victims(w) == [["local:9000"], ["local:8000"]]


def test_a_bare_pgrep_whose_pattern_fits_two_servers_binds_nothing(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup uvicorn shop.api:app --port 8000 > api.log 2>&1 &
  - bash: nohup uvicorn shop.admin:app --port 8001 > admin.log 2>&1 &
  - bash: pgrep -f uvicorn
    output: "8120"
""")
    assert pids(w) == [(8000, None), (8001, None)]


def test_a_job_notice_and_fuser_output_bind_their_servers(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: uvicorn shop.api:app --port 8000 > api.log 2>&1 &
    output: "[1] 40123"
  - bash: nohup vite --port 5173 > web.log 2>&1 &
  - bash: fuser 5173/tcp
    output: "5173/tcp:             7311"
  - bash: kill 7311; kill 40123
""")
    assert pids(w) == [(8000, 40123), (5173, 7311)]
    assert victims(w) == [["local:5173"], ["local:8000"]]
    assert w.instances["local:5173"].history[1].reason.startswith("probe PID 7311 listening on :5173")
