"""pm2 apps as a careful SRE draws them: what a command string runs (its port, its kind), what a
restart of an ecosystem file restarts, and pm2 starting an app again when its process is killed
from outside pm2 (``autorestart``, on by default).

Commands and outputs are written from pm2's documented behaviour and formats (``pm2 start
"CMD"`` runs ``bash -c CMD`` named after the string; the ``pm2 list`` table with its ``↺`` restarts
column; the ``Applying action restartProcessId on app [NAME](ids: [ 0 ])`` line of an action on
an ecosystem file), not taken from any log.
"""

from __future__ import annotations

from pathlib import Path

from analyzer.lifecycle.facts import Kill
from analyzer.shell.kill.managers import manager_command
from tests.lifecycle.test_units import indented, states, world

TABLE = """\
┌────┬──────────┬─────────────┬─────────┬─────────┬──────────┬────────┬──────┬───────────┬──────────┬──────────┐
│ id │ name     │ namespace   │ version │ mode    │ pid      │ uptime │ ↺    │ status    │ cpu      │ mem      │
├────┼──────────┼─────────────┼─────────┼─────────┼──────────┼────────┼──────┼───────────┼──────────┼──────────┤
│ 0  │ api      │ default     │ 1.0.0   │ fork    │ {api}     │ 0s     │ {n}    │ online    │ 0%       │ 30.1mb   │
│ 1  │ worker   │ default     │ 1.0.0   │ fork    │ {worker}     │ 0s     │ {n}    │ online    │ 0%       │ 28.4mb   │
└────┴──────────┴─────────────┴─────────┴─────────┴──────────┴────────┴──────┴───────────┴──────────┴──────────┘
"""


def more(text: str) -> str:
    """Lines of ``text`` that go on in an output block already open (six spaces in)."""
    return indented(text).removeprefix("|\n").rstrip("\n")


def table(api: int, worker: int, restarts: int = 0) -> str:
    return TABLE.format(api=api, worker=worker, n=restarts)


def test_a_command_string_runs_under_bash_and_names_the_app_after_itself() -> None:
    named = manager_command(["pm2", "start", "npm run dev", "--name", "web"])
    assert named is not None and named.names == ("web",) and named.script == "npm run dev"
    unnamed = manager_command(["pm2", "start", "uvicorn app:app --port 8000"])
    assert unnamed is not None and unnamed.names == ("uvicorn app:app --port 8000",)
    program = manager_command(["pm2", "start", "npm", "--name", "web", "--", "run", "dev"])
    assert program is not None and program.program_args == ("run", "dev")


def test_the_port_of_the_command_a_pm2_app_runs_makes_a_probe_of_it_evidence(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: pm2 start "uvicorn app:app --port 8000" --name api
  - bash: curl -sf localhost:8000/health
    output: '{"ok": true}'
""")
    (launch,) = w.launches("local/pm2:api")
    assert launch.port == 8000 and launch.app == "uvicorn" and w.instances["local/pm2:api"].port == 8000
    assert states(w, "local/pm2:api") == [("starting", 0), ("ready", 1)]
    assert "local:8000@before" not in w.instances  # the answer came from the app, not from a stranger


def test_a_program_with_arguments_after_the_double_dash_and_pm2s_environment(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: pm2 start npm --name web -- run dev
  - bash: PORT=4000 pm2 start server.js --name shop
  - bash: pm2 start worker.py --name jobs
""")
    (web,) = w.launches("local/pm2:web")
    assert (web.app, web.port) == ("npm-script", 3000)  # npm run dev: its kind and the kind's default port
    (shop,) = w.launches("local/pm2:shop")
    assert (shop.app, shop.port) == ("node", 4000)  # pm2 hands PORT to the app it starts
    (jobs,) = w.launches("local/pm2:jobs")
    assert jobs.port is None and w.instances["local/pm2:jobs"].port is None  # nothing says it serves


def test_the_logs_of_a_command_string_app_are_read_with_its_programs_lines(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: pm2 start "uvicorn app:app --port 8000" --name api
  - bash: pm2 logs api --lines 5 --nostream
    output: |
      0|api  | INFO:     Started server process [7001]
      0|api  | INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)
  - bash: pkill -f "uvicorn app:app --port"
""")
    (launch, _) = w.launches("local/pm2:api")
    assert launch.pid == 7001 and w.state_after("local/pm2:api", 1) == "ready"
    (kill,) = w.kills()
    # the bash -c pm2 runs the string with holds it in its command line
    assert [v.instance for v in kill.victims if v.role == "server"] == ["local/pm2:api"]


def test_a_restart_of_an_ecosystem_file_restarts_the_apps_it_started(tmp_path: Path) -> None:
    w = world(tmp_path, f"""\
  - bash: pm2 start ecosystem.config.js
    output: |
      [PM2][WARN] Applications api, worker not running, starting...
      [PM2] App [api] launched (1 instances)
      [PM2] App [worker] launched (1 instances)
{more(table(4821, 4822))}
  - user: the api answers. I changed its env, restart it
  - bash: pm2 restart ecosystem.config.js
    output: |
      [PM2] Applying action restartProcessId on app [api](ids: [ 0 ])
      [PM2] Applying action restartProcessId on app [worker](ids: [ 1 ])
      [PM2] [api](0) ✓
      [PM2] [worker](1) ✓
{more(table(5001, 5002, 1))}
  - bash: pm2 reload ecosystem.config.js
""")
    for app in ("api", "worker"):
        key = f"local/pm2:{app}"
        assert [s for s, e in states(w, key) if e >= 2] == ["stopped", "starting", "stopped", "starting"]
        assert all(la.duplicate_of is None for la in w.launches(key))
    restart, reload = w.kills()
    assert restart.mechanism == "pm2" and sorted(v.instance or "" for v in restart.victims) == \
        ["local/pm2:api", "local/pm2:worker"]
    assert sorted(v.instance or "" for v in reload.victims) == ["local/pm2:api", "local/pm2:worker"]
    # the table after the restart shows the new processes of the apps started again
    assert [la.pid for la in w.launches("local/pm2:api")] == [4821, 5001, None]


def test_a_restart_of_an_ecosystem_file_starts_the_apps_that_did_not_run(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: pm2 restart ecosystem.config.js
    output: |
      [PM2] Applying action restartProcessId on app [api](ids: [ 0 ])
      [PM2][WARN] Applications worker not running, starting...
      [PM2] App [worker] launched (1 instances)
""")
    assert w.instances["local/pm2:api"].owner == "before"  # restarted, though no start of this log ran it
    (kill,) = w.kills()
    assert [v.instance for v in kill.victims] == ["local/pm2:api"]
    (worker,) = w.launches("local/pm2:worker")
    assert worker.duplicate_of is None and w.state_after("local/pm2:worker", 0) == "starting"


def test_without_output_the_restart_reaches_the_running_apps_that_file_started(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: pm2 start ecosystem.config.js
  - bash: pm2 start other.js --name other
  - bash: pm2 restart ecosystem.config.js
""")
    (kill,) = w.kills()
    assert [v.instance for v in kill.victims] == ["local/pm2:ecosystem.config.js"]  # the file is the unit
    assert w.state_after("local/pm2:other", 2) == "starting" and len(w.launches("local/pm2:other")) == 1


def test_pm2_starts_an_app_again_when_a_kill_from_outside_ends_its_process(tmp_path: Path) -> None:
    w = world(tmp_path, f"""\
  - bash: pm2 start server.js --name api
    output: {indented(table(4821, 4822))}
  - bash: kill 4821
  - bash: pm2 list
    output: {indented(table(6001, 4822, 1))}
  - bash: pm2 start server.js --name api
""")
    key = "local/pm2:api"
    (kill,) = w.kills()
    assert [v.instance for v in kill.victims] == [key]  # the kill still hits the app's process
    assert states(w, key) == [("starting", 0), ("stopped", 1), ("starting", 1)]
    _, respawn, again = w.launches(key)
    assert respawn.event == 1 and "autorestart" in respawn.detail and respawn.pid == 6001
    assert w.instances[key].history[2].reason.startswith("pm2 starts it again (autorestart)")
    # pm2 already brought it back: the agent's start changes nothing, no second copy
    assert again.duplicate_of is None and "changes nothing" in again.detail


def test_no_autorestart_and_the_managers_own_stop_leave_the_app_stopped(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: pm2 start app.js --name once --no-autorestart
  - bash: pkill -f app.js
  - bash: pm2 start server.js --name api
  - bash: pm2 stop api
""")
    assert w.state_after("local/pm2:once", 1) == "stopped" and len(w.launches("local/pm2:once")) == 1
    assert w.state_after("local/pm2:api", 3) == "stopped" and len(w.launches("local/pm2:api")) == 1


def test_supervisord_restarts_a_program_killed_by_a_signal_and_systemd_is_left_as_is(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: supervisorctl start worker
    output: "worker: started"
  - bash: supervisorctl status worker
    output: "worker                           RUNNING   pid 2102, uptime 0:05:00"
  - bash: kill -9 2102
  - bash: sudo systemctl start api
  - bash: systemctl status api
    output: |
      ● api.service - Shop API
           Active: active (running) since Tue 2026-12-01 10:00:00 UTC; 3s ago
         Main PID: 9123 (uvicorn)
  - bash: kill 9123
""")
    assert states(w, "local/supervisor:worker") == [("starting", 0), ("stopped", 2), ("starting", 2)]
    kills = [f for f in w.facts if isinstance(f, Kill)]
    assert [k.text for k in kills] == ["kill -9 2102", "kill 9123"]
    # Restart= of the unit is not in the log: the kill stops it
    assert w.state_after("local/unit:api", 5) == "stopped" and len(w.launches("local/unit:api")) == 1


def test_pm2_names_a_node_apps_process_after_the_scripts_absolute_path(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: cd /srv/shop && pm2 start server.js --name api
  - bash: pkill -f "node server.js"
  - bash: pkill -f "shop/server.js"
""")
    missed, hit = w.kills()
    # pm2 runs it as `node /srv/shop/server.js`: the relative command line matches nothing of it
    assert not any(v.instance == "local/pm2:api" for v in missed.victims)
    assert any(v.instance == "local/pm2:api" for v in hit.victims)


def test_a_pid_query_binds_the_units_process_for_a_later_kill(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: pm2 start server.js --name api
  - bash: pm2 pid api
    output: "4821"
  - bash: supervisorctl start worker
    output: "worker: started"
  - bash: supervisorctl pid worker
    output: "2102"
  - bash: kill 2102 4821
""")
    api = w.launches("local/pm2:api")[0]
    assert (api.pid, api.pid_event) == (4821, 1)
    (kill,) = w.kills()
    assert sorted(v.instance or "" for v in kill.victims) == ["local/pm2:api", "local/supervisor:worker"]


def test_a_kill_of_the_pid_a_manager_prints_hits_that_unit(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: pm2 start server.js --name api
  - bash: pm2 start worker.js --name jobs
  - bash: kill -9 $(pm2 pid api)
  - bash: kill `pm2 pid nothing`
""")
    named, unknown = w.kills()
    assert [v.instance for v in named.victims] == ["local/pm2:api"] and not any("not modelled" in n for n in named.notes)
    assert w.state_after("local/pm2:jobs", 2) == "starting" and len(w.launches("local/pm2:jobs")) == 1
    assert unknown.victims == []  # no app of that name runs: the query prints nothing, kill fails


def test_pm2_logs_of_every_app_are_read_app_by_app(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: pm2 start "uvicorn app:app --port 8000" --name api
  - bash: PORT=3001 pm2 start billing-worker.js --name billing-worker
  - bash: pm2 logs --lines 5 --nostream
    output: |
      [TAILING] Tailing last 5 lines for [all] processes (change the value with --lines option)
      /home/dev/.pm2/pm2.log last 5 lines:
      PM2        | 2026-12-01T10:00:00: PM2 log: App [api:0] online
      /home/dev/.pm2/logs/api-out.log last 5 lines:
      0|api      | INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)
      /home/dev/.pm2/logs/billing-worker-error.log last 5 lines:
      1|billing- | Error: listen EADDRINUSE: address already in use :::3001
""")
    assert w.state_after("local/pm2:api", 2) == "ready"
    (failure,) = w.failures("local/pm2:billing-worker")
    assert "EADDRINUSE" in failure.quote and not w.failures("local/pm2:api")


def test_pm2_jlist_lists_apps_as_the_table_does_and_a_bad_entry_is_skipped(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: pm2 start server.js --name api
  - bash: pm2 jlist
    output: '[{"pid": 4821, "name": "api", "pm_id": 0, "pm2_env": {"status": "online", "restart_time": 0}},
      {"pid": 0, "name": "mailer", "pm_id": 1, "pm2_env": {"status": "errored"}},
      {"pid": true, "name": ["x"], "pm2_env": "online"}, 7,
      {"pid": 5120, "name": "billing", "pm_id": 2, "pm2_env": {"status": "online"}}]'
  - bash: pm2 jlist
    output: '[{"pid": 48'
""")
    (launch,) = w.launches("local/pm2:api")
    assert launch.pid == 4821 and w.state_after("local/pm2:api", 1) == "starting"
    assert w.instances["local/pm2:billing"].owner == "before" and w.instances["local/pm2:billing"].pids == [5120]
    assert "local/pm2:mailer" not in w.instances  # errored, and nobody here started it
