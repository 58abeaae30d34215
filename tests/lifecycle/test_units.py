"""Process managers' units and the sessions hosting servers, as the world draws them: identity
(manager + name on a host), members (PIDs the output shows), states from the managers' own output,
reconcile (a start of a running unit changes nothing), restarts, and ``all``.

Commands and outputs are written from the tools' documented formats (pm2's list table,
``supervisorctl status`` lines, ``brew services list`` columns, ``launchctl list``, ``systemctl
status``), not taken from any log.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from analyzer.cli import main
from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.facts import Failure, Kill, Launch
from analyzer.lifecycle.world import World

PM2_TABLE = """\
[PM2] Starting /srv/shop/server.js in fork_mode (1 instance)
[PM2] Done.
┌────┬────────┬──────────┬──────┬───────────┬──────────┬──────────┐
│ id │ name   │ mode     │ pid  │ status    │ cpu      │ memory   │
├────┼────────┼──────────┼──────┼───────────┼──────────┼──────────┤
│ 0  │ api    │ fork     │ 4821 │ online    │ 0%       │ 31.2mb   │
│ 3  │ billing│ fork     │ 5120 │ online    │ 0%       │ 40.0mb   │
└────┴────────┴──────────┴──────┴───────────┴──────────┴──────────┘
"""


def world(tmp_path: Path, events: str) -> World:
    f = tmp_path / "s.session.yaml"
    f.write_text("agent: claude-code\nevents:\n" + events)
    return build_world(load(f))


def indented(text: str, by: int = 6) -> str:
    return "|\n" + "".join(" " * by + line + "\n" for line in text.splitlines())


def states(w: World, inst: str) -> list[tuple[str, int]]:
    return [(c.state, c.event) for c in w.instances[inst].history]


def test_a_pm2_app_is_its_name_with_the_pid_and_id_its_table_shows(tmp_path: Path) -> None:
    w = world(tmp_path, f"""\
  - bash: pm2 start server.js --name api
    output: {indented(PM2_TABLE)}
""")
    api = w.instances["local/pm2:api"]
    assert (api.server, api.label, api.unit, api.owner) == ("pm2", "pm2 app api", "api", "agent")
    (launch,) = w.launches("local/pm2:api")
    assert launch.pid == 4821 and launch.pid_event == 0
    assert states(w, "local/pm2:api") == [("starting", 0)]
    # pm2 start returns at once while the app runs on: it did not end with the command
    assert not any(k.mechanism == "command-returned" for k in w.kills())


def test_a_start_of_an_online_app_changes_nothing(tmp_path: Path) -> None:
    w = world(tmp_path, f"""\
  - bash: pm2 start server.js --name api
    output: {indented(PM2_TABLE)}
  - user: the api works, thanks
  - bash: pm2 start server.js --name api
    output: "[PM2][ERROR] Script already launched, add -f option to force re-execution"
""")
    first, again = w.launches("local/pm2:api")
    assert first.pid == 4821 and again.duplicate_of is None and "changes nothing" in again.detail
    assert states(w, "local/pm2:api") == [("starting", 0), ("ready", 1)]
    assert not w.failures()


def test_a_restart_stops_the_app_and_starts_it_again(tmp_path: Path) -> None:
    w = world(tmp_path, f"""\
  - bash: pm2 start server.js --name api
    output: {indented(PM2_TABLE)}
  - user: the api is ready
  - bash: pm2 restart api
""")
    (kill,) = w.kills()
    assert kill.mechanism == "pm2" and [v.instance for v in kill.victims] == ["local/pm2:api"]
    assert states(w, "local/pm2:api") == [("starting", 0), ("ready", 1), ("stopped", 2), ("starting", 2)]
    assert [la.event for la in w.launches("local/pm2:api")] == [0, 2]


def test_delete_all_reaches_the_apps_of_other_projects_a_listing_showed(tmp_path: Path) -> None:
    w = world(tmp_path, f"""\
  - bash: pm2 start server.js --name api
    output: {indented(PM2_TABLE)}
  - bash: pm2 delete all
""")
    billing = w.instances["local/pm2:billing"]
    assert billing.owner == "before" and billing.pids == [5120]
    (kill,) = w.kills()
    assert kill.generic and sorted(v.instance or "" for v in kill.victims) == ["local/pm2:api", "local/pm2:billing"]
    assert w.state_after("local/pm2:billing", 1) == "stopped" and w.state_after("local/pm2:api", 1) == "stopped"


def test_a_listing_shows_an_app_errored_and_an_id_kill_finds_it(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: pm2 start worker.js
  - bash: pm2 status
    output: |
      ┌────┬──────────┬──────┬──────────┐
      │ id │ name     │ pid  │ status   │
      ├────┼──────────┼──────┼──────────┤
      │ 7  │ worker   │ 0    │ errored  │
      └────┴──────────┴──────┴──────────┘
  - bash: pm2 stop 7
""")
    (failure,) = w.failures("local/pm2:worker")
    assert failure.event == 1 and "errored" in failure.quote
    assert states(w, "local/pm2:worker") == [("starting", 0), ("failed", 1)]


def test_supervisor_programs_from_before_the_log_and_a_restart_of_all(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: supervisorctl status
    output: |
      api                              RUNNING   pid 2101, uptime 3 days, 4:01:22
      worker                           RUNNING   pid 2102, uptime 3 days, 4:01:22
      mailer                           FATAL     Exited too quickly (process log may have details)
      cron                             STOPPED   Not started
  - bash: supervisorctl restart all
    output: |
      api: stopped
      worker: stopped
      api: started
      worker: started
""")
    assert sorted(w.instances) == ["local/supervisor:api", "local/supervisor:worker"]  # nothing runs the others
    api = w.instances["local/supervisor:api"]
    assert api.owner == "before" and api.pids == [2101] and api.label == "supervisor program api"
    (kill,) = w.kills()
    assert kill.mechanism == "supervisorctl" and kill.generic and len(kill.victims) == 2
    # stopped, started again; the answer lines of the restart leave it running
    assert states(w, "local/supervisor:api") == [("starting", 0), ("stopped", 1), ("starting", 1)]


def test_supervisorctl_start_of_a_running_program_and_a_fatal_one(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: supervisorctl start api
    output: "api: ERROR (already started)"
  - bash: supervisorctl start worker
    output: "worker: ERROR (spawn error)"
""")
    api = w.instances["local/supervisor:api"]
    assert api.owner == "before" and states(w, "local/supervisor:api") == [("starting", 0)]
    (failure,) = w.failures("local/supervisor:worker")
    assert failure.quote == "worker: ERROR (spawn error)" and w.state_after("local/supervisor:worker", 1) == "failed"


def test_a_restart_of_a_program_this_log_never_started_is_one_from_before(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: supervisorctl restart worker
    output: |
      worker: stopped
      worker: started
""")
    (kill,) = w.kills()
    (victim,) = kill.victims
    assert victim.instance == "local/supervisor:worker" and "never started" in victim.reason
    assert w.instances["local/supervisor:worker"].owner == "before"
    assert w.state_after("local/supervisor:worker", 0) == "starting"


def test_brew_services_and_launchd_jobs(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: brew services start redis
    output: "==> Successfully started `redis` (label: homebrew.mxcl.redis)"
  - bash: brew services list
    output: |
      Name          Status  User File
      postgresql@16 error   256  dev  ~/Library/LaunchAgents/homebrew.mxcl.postgresql@16.plist
      redis         started dev  ~/Library/LaunchAgents/homebrew.mxcl.redis.plist
  - bash: launchctl stop homebrew.mxcl.redis
  - bash: launchctl load ~/Library/LaunchAgents/com.me.api.plist
  - bash: launchctl list | grep com.me
    output: "5123\\t0\\tcom.me.api"
  - bash: launchctl kickstart -k gui/501/com.me.api
""")
    assert "local/brew:postgresql@16" not in w.instances  # an error of a service nobody here started
    redis_kill, job_kill = w.kills()
    assert [v.instance for v in redis_kill.victims] == ["local/brew:redis"]  # brew's service is a launchd job
    job = w.instances["local/launchd:com.me.api"]
    assert job.label == "launchd job com.me.api" and job.pids == [5123]
    assert w.launches("local/launchd:com.me.api")[0].pid == 5123
    assert job_kill.mechanism == "launchctl" and [v.instance for v in job_kill.victims] == ["local/launchd:com.me.api"]
    assert states(w, "local/launchd:com.me.api") == [("starting", 3), ("stopped", 5), ("starting", 5)]


def test_systemd_start_of_an_active_unit_changes_nothing_and_restart_restarts(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: sudo systemctl start sglang
  - bash: curl -sf localhost:30000/health
    output: ok
  - bash: sudo systemctl start sglang
  - bash: sudo systemctl restart sglang
""")
    key = "local/unit:sglang"
    _, again, restart = w.launches(key)
    assert again.duplicate_of is None and "changes nothing" in again.detail and restart.event == 3
    assert states(w, key) == [("starting", 0), ("ready", 1), ("stopped", 3), ("starting", 3)]
    assert [k.event for k in w.kills()] == [3]


def test_systemctl_status_gives_state_and_main_pid(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: sudo systemctl start api
  - bash: systemctl status api --no-pager
    output: |
      ● api.service - Shop API
           Loaded: loaded (/etc/systemd/system/api.service; enabled; preset: enabled)
           Active: active (running) since Tue 2026-12-01 10:00:00 UTC; 3s ago
         Main PID: 9123 (uvicorn)
  - bash: systemctl is-active api
    output: failed
  - bash: systemctl status nginx
    output: |
      ● nginx.service - A high performance web server and a reverse proxy server
           Active: active (running) since Mon 2026-11-30 08:00:00 UTC; 1 day ago
         Main PID: 812 (nginx)
  - bash: systemctl status worker
    output: |
      ● worker.service - Queue worker
           Active: inactive (dead)
""")
    (launch,) = w.launches("local/unit:api")
    assert launch.pid == 9123 and launch.pid_event == 1
    assert states(w, "local/unit:api") == [("starting", 0), ("failed", 2)]
    (failure,) = w.failures("local/unit:api")
    assert failure.reason == "exit" and failure.quote == "failed"
    nginx = w.instances["local/unit:nginx"]
    assert nginx.owner == "before" and nginx.pids == [812] and states(w, "local/unit:nginx") == [("starting", 3)]
    assert "local/unit:worker" not in w.instances  # inactive and never started here: nothing to draw


def test_a_unit_that_dies_after_its_start_has_failed(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: sudo systemctl start api && systemctl status api
    output: |
      × api.service - Shop API
           Active: failed (Result: exit-code) since Tue 2026-12-01 10:00:02 UTC; 1s ago
  - bash: sudo systemctl start api && systemctl status api
    output: |
      ● api.service - Shop API
           Active: activating (auto-restart) (Result: exit-code) since Tue 2026-12-01 10:01:00 UTC; 2s ago
""")
    assert [f.event for f in w.failures("local/unit:api")] == [0, 1]
    assert states(w, "local/unit:api") == [("starting", 0), ("failed", 0), ("starting", 1), ("failed", 1)]


def test_a_tmux_session_hosts_the_server_started_or_typed_in_it(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: tmux new -d -s api 'uvicorn app:api --port 8000'
  - bash: tmux capture-pane -p -t api
    output: "INFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)"
  - bash: tmux send-keys -t api C-c
  - bash: tmux send-keys -t web:0 'npm run dev -- --port 5173' Enter
  - bash: tmux kill-session -t web
""")
    api = w.instances["local:8000"]
    assert api.session == "tmux:api" and w.launches("local:8000")[0].session == "tmux:api"
    assert states(w, "local:8000") == [("starting", 0), ("ready", 1), ("stopped", 2)]
    interrupt, close = w.kills()
    assert interrupt.mechanism == "tmux" and [v.instance for v in interrupt.victims] == ["local:8000"]
    assert w.instances["local:5173"].session == "tmux:web"
    assert [v.instance for v in close.victims] == ["local:5173"]


def test_capture_pane_shows_a_traceback_and_screen_sessions(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: tmux new-session -d -s api "python -m uvicorn app:api --port 8000"
  - bash: tmux capture-pane -p -t api -S -20
    output: |
      Traceback (most recent call last):
        File "/srv/app.py", line 3, in <module>
      ModuleNotFoundError: No module named 'fastapi'
  - bash: screen -dmS docs python -m http.server 8080
  - bash: screen -S docs -X quit
""")
    assert w.state_after("local:8000", 1) == "failed"
    assert w.instances["local:8080"].session == "screen:docs"
    (quit_,) = [k for k in w.kills() if k.mechanism == "screen"]
    assert [v.instance for v in quit_.victims] == ["local:8080"]


def test_the_user_names_a_unit_by_its_name(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: supervisorctl status
    output: |
      api                              RUNNING   pid 2101, uptime 0:10:00
      worker                           RUNNING   pid 2102, uptime 0:10:00
  - user: restart the worker, I changed its settings
""")
    (instruction,) = [f for f in w.facts if f.kind == "instruction"]
    assert instruction.action == "restart" and instruction.targets == ["local/supervisor:worker"]


def test_graph_shows_units_their_manager_session_and_listed_pids(tmp_path: Path) -> None:
    f = tmp_path / "s.session.yaml"
    f.write_text(f"""\
agent: claude-code
events:
  - bash: pm2 start server.js --name api
    output: {indented(PM2_TABLE, 6)}
  - bash: tmux new -d -s web 'uvicorn app:api --port 8000'
""")
    out = CliRunner().invoke(main, ["graph", str(f)]).output
    assert "local/pm2:api  pm2 app api on local" in out and "unit: api (pm2)" in out
    assert "pid: 4821 (launch #0)" in out
    assert "local/pm2:billing" in out and "owner: someone before the log began" in out and "pid: 5120 (listed)" in out
    assert "session: tmux:web" in out


def test_kills_of_units_are_facts_with_their_victims(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: brew services start redis
  - bash: brew services stop --all
""")
    kills = [f for f in w.facts if isinstance(f, Kill)]
    assert [(k.mechanism, k.generic, [v.instance for v in k.victims]) for k in kills] == \
        [("brew-services", True, ["local/brew:redis"])]
    assert isinstance(w.facts[0], Launch) and not any(isinstance(f, Failure) for f in w.facts)
