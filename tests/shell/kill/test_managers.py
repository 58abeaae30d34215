"""Process managers: what pm2, supervisorctl, brew services and launchctl command lines name, and
which units their stops, deletes and restarts hit (every unit of the manager for ``all``)."""

from __future__ import annotations

from analyzer.shell.kill import Process
from analyzer.shell.kill.managers import manager_command
from tests.shell.kill.helpers import labels, run


def app(manager: str, name: str, *, ident: int | None = None, host: str | None = None) -> Process:
    return Process(argv=("node", f"/srv/{name}.js") if manager == "pm2" else (), kind="server", host=host,
                   label=f"{manager} {name}", manager=manager, manager_name=name, manager_id=ident,
                   unit=f"homebrew.mxcl.{name}" if manager == "brew" else None)


def test_pm2_start_names_the_app_by_its_name_flag_or_its_script() -> None:
    named = manager_command(["pm2", "start", "dist/server.js", "--name", "api", "-i", "2"])
    assert named is not None and (named.manager, named.action, named.names, named.script) == \
        ("pm2", "start", ("api",), "dist/server.js")
    by_script = manager_command(["pm2", "start", "worker.prod.js", "--", "--port", "9000"])
    assert by_script is not None and by_script.names == ("worker.prod",)
    program = manager_command(["pm2", "start", "npm", "--name", "web", "--", "run", "dev"])
    assert program is not None and program.names == ("web",) and program.script == "npm"
    ecosystem = manager_command(["pm2", "start", "ecosystem.config.js", "--only", "api,worker"])
    assert ecosystem is not None and ecosystem.names == ("api", "worker") and ecosystem.script == "ecosystem.config.js"
    whole = manager_command(["pm2", "start", "ecosystem.config.js"])
    assert whole is not None and whole.names == () and not whole.every


def test_readings_of_the_other_managers() -> None:
    stop = manager_command(["pm2", "delete", "all"])
    assert stop is not None and stop.action == "stop" and stop.every and stop.names == ()
    sup = manager_command(["supervisorctl", "-c", "/etc/supervisord.conf", "restart", "web:*", "worker"])
    assert sup is not None and (sup.manager, sup.action, sup.names) == ("supervisor", "restart", ("web:*", "worker"))
    reload = manager_command(["supervisorctl", "reload"])
    assert reload is not None and reload.action == "restart" and reload.every
    listing = manager_command(["brew", "services"])
    assert listing is not None and listing.action == "list"
    brew = manager_command(["brew", "services", "stop", "--all"])
    assert brew is not None and brew.every and brew.action == "stop"
    assert manager_command(["brew", "install", "redis"]) is None
    boot = manager_command(["launchctl", "bootstrap", "gui/501", "/Users/me/Library/LaunchAgents/com.me.api.plist"])
    assert boot is not None and (boot.action, boot.names) == ("start", ("com.me.api",))
    kick = manager_command(["launchctl", "kickstart", "-k", "gui/501/com.me.api"])
    assert kick is not None and kick.force_restart and kick.names == ("com.me.api",)


def test_pm2_stop_hits_the_named_app_by_name_id_or_regex() -> None:
    api, web = app("pm2", "api", ident=0), app("pm2", "web", ident=1)
    (v,) = run("pm2 stop api", [api, web])
    assert v.mechanism == "pm2" and labels(v) == ["pm2 api"] and v.signal_name == "INT" and not v.generic
    assert v.victims[0].reason == "pm2 stop api stops pm2 app api, which runs it"
    (by_id,) = run("pm2 restart 1", [api, web])
    assert labels(by_id) == ["pm2 web"] and "restarts pm2 app web" in by_id.victims[0].reason
    (regex,) = run("pm2 reload /^a/", [api, web])
    assert labels(regex) == ["pm2 api"]
    assert run("pm2 start server.js --name api", [api]) == []  # a start kills nothing
    assert run("pm2 list", [api]) == []


def test_all_hits_every_unit_of_that_manager_on_the_host_and_is_generic() -> None:
    local = [app("pm2", "api"), app("pm2", "web")]
    remote = app("pm2", "gpu-api", host="gpu1")
    (v,) = run("pm2 delete all", [*local, remote])
    assert labels(v) == ["pm2 api", "pm2 web"] and v.generic and v.selects is not None and "every app" in v.selects
    (k,) = run("pm2 kill", local)
    assert labels(k) == ["pm2 api", "pm2 web"] and k.generic
    sup = [app("supervisor", "api"), app("supervisor", "worker")]
    (s,) = run("supervisorctl restart all", sup)
    assert s.mechanism == "supervisorctl" and labels(s) == ["supervisor api", "supervisor worker"] and s.generic
    (b,) = run("brew services stop --all", [app("brew", "redis"), app("brew", "postgresql@16")])
    assert b.mechanism == "brew-services" and len(b.victims) == 2 and b.generic


def test_a_manager_kill_reaches_only_its_own_units() -> None:
    pm2_api, sup_api = app("pm2", "api"), app("supervisor", "api")
    unit = Process(argv=("python3", "serve.py"), unit="api.service", label="api unit")
    (v,) = run("supervisorctl stop api", [pm2_api, sup_api, unit])
    assert labels(v) == ["supervisor api"]
    (s,) = run("systemctl stop api", [pm2_api, sup_api, unit])
    assert labels(s) == ["api unit"]  # pm2's and supervisord's names are no systemd units
    (g,) = run("supervisorctl stop 'web:*'", [app("supervisor", "web:web_0"), app("supervisor", "web:web_1"),
                                              app("supervisor", "worker")])
    assert labels(g) == ["supervisor web:web_0", "supervisor web:web_1"]


def test_a_brew_service_is_also_the_launchd_job_brew_loaded() -> None:
    redis = app("brew", "redis")
    (v,) = run("brew services restart redis", [redis])
    assert labels(v) == ["brew redis"] and v.victims[0].why.matched == "brew service"
    (j,) = run("launchctl stop homebrew.mxcl.redis", [redis])
    assert labels(j) == ["brew redis"]


def test_tmux_send_keys_c_c_interrupts_what_runs_in_the_session() -> None:
    api = Process(argv=("uvicorn", "app:api"), tmux_session="api", label="uvicorn in api")
    web = Process(argv=("npm", "run", "dev"), tmux_session="web", label="vite in web")
    (v,) = run("tmux send-keys -t api:0 C-c", [api, web])
    assert v.mechanism == "tmux" and labels(v) == ["uvicorn in api"] and v.signal_name == "INT"
    assert v.victims[0].reason == "tmux send-keys -t api:0 C-c interrupts what runs in the foreground of session api"
    assert run("tmux send-keys -t api 'ls' Enter", [api, web]) == []
    assert run("tmux send-keys -l -t api C-c", [api]) == []  # -l types the letters, no control key
    (restart,) = run("tmux send-keys -t web C-c 'npm run dev' Enter", [api, web])
    assert labels(restart) == ["vite in web"]
