"""kill by PID and job: the builtin stops at its own shell, xargs kill, process groups, $! and %1."""

from __future__ import annotations

from analyzer.shell.kill import Process
from tests.shell.kill.helpers import labels, run, server


def test_kill_pgrep_makes_the_shell_signal_itself() -> None:
    (v,) = run("bash -c 'kill $(pgrep -f zq_fake_server)'", [Process(argv=("zq_fake_server",), label="srv")])
    assert v.mechanism == "kill-pgrep"
    assert labels(v)[0] == "srv" and v.victims[1].frame is not None
    assert v.self_kill is not None and v.expected_exit == 143
    assert any("pgrep excludes only itself" in n for n in v.notes)


def test_builtin_kill_stops_at_its_own_pid_so_newer_processes_survive() -> None:
    (v,) = run("bash -c 'nohup zq_srv --port 1 > /dev/null & sleep 2; kill $(pgrep -f zq_srv)'")
    assert [x.frame is not None for x in v.victims] == [True]  # the shell, older than its child
    assert any("never signals" in n and "zq_srv --port 1" in n for n in v.notes)


def test_pgrep_piped_to_xargs_kill_signals_everything_in_the_list() -> None:
    (v,) = [x for x in run("bash -c 'pgrep -f zq_srv | xargs kill; echo done'",
                           [Process(argv=("zq_srv",), label="srv")]) if x.command.name == "kill"]
    assert v.mechanism == "xargs-kill"
    assert labels(v)[0] == "srv" and v.self_kill is not None
    assert not any("never signals" in n for n in v.notes)


def test_kill_by_pid_and_by_process_group() -> None:
    a = Process(pid=4242, pgid=4242, argv=("srv",), label="a")
    b = Process(pid=4243, pgid=4242, ppid=4242, argv=("worker",), label="b")
    c = Process(pid=5000, argv=("other",), label="c")
    (v,) = run("kill -9 4242 && echo killed", [a, b, c])
    assert v.mechanism == "kill" and labels(v) == ["a"] and v.signal == 9
    (w,) = run("kill -TERM -- -4242", [a, b, c])
    assert labels(w) == ["a", "b"] and w.signal_name == "TERM"
    (u,) = run("kill 777", [a])
    assert labels(u) == [] and any("777" in n for n in u.notes)


def test_kill_dollar_bang_and_job_specs_use_background_jobs_of_the_same_shell() -> None:
    (v,) = run("bash -c 'zq_srv --port 1 & sleep 5; kill $!'")
    assert labels(v) == ["started earlier in this command: zq_srv --port 1"]
    (w,) = run("kill %1")
    assert labels(w) == [] and "%1" in w.unresolved


def test_pid_assigned_from_a_substitution_earlier_in_the_command() -> None:
    (v,) = run("PID=$(pgrep -f launch_server); kill -9 $PID", [server(30000)])
    assert v.mechanism == "kill-pgrep" and labels(v) == ["sglang :30000"] and not v.unresolved
    (u,) = run("kill -9 $SERVER_PID", [server(30000)])
    assert labels(u) == [] and u.unresolved == ["$SERVER_PID"]
