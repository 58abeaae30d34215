"""evaluate() over a whole script: the mechanism registry, hosts and containers, kills that never run."""

from __future__ import annotations

import pytest

from analyzer.shell.kill import MECHANISMS, Process, evaluate, harness_frame, may_kill
from analyzer.shell.parse import parse
from tests.shell.kill.helpers import HOST, labels, run, server


def test_seed_002_chain_over_ssh_kills_the_remote_shell_at_the_first_pkill() -> None:
    text = (f"ssh {HOST} 'pkill -9 -f launch_router; pkill -9 -f \"launch_server.*disaggregation\"; "
            "pkill -9 -f \"launch_server.*3000[01]\"; sleep 4; nohup bash /root/serve.sh > /root/final.log 2>&1 &'")
    router = Process(argv=("python3", "-m", "sglang_router.launch_router", "--pd-disaggregation", "--port", "8000"),
                     host=HOST, kind="server", label="router :8000", ports=(8000,))
    prefill = server(30000, host=HOST, extra=("--disaggregation-mode", "prefill"))
    decode = server(30001, host=HOST, extra=("--disaggregation-mode", "decode"))
    local = server(30001)  # same command line, but on the local machine
    script = parse(text)
    verdicts = evaluate(script, [router, prefill, decode, local],
                        harness=harness_frame("claude-code", text))
    assert [v.pattern for v in verdicts] == ["launch_router", "launch_server.*disaggregation", "launch_server.*3000[01]"]
    first, second, third = verdicts
    # launch_router matches its own text in sshd's `bash -c '<remote command>'`
    assert labels(first)[0] == "router :8000"
    assert first.victims[1].frame is not None and first.victims[1].frame.via == "ssh"
    assert first.self_kill is not None and first.self_kill.host == HOST
    assert first.expected_exit == 255 and first.signal_name == "KILL" and first.platform == "linux"
    assert any("ssh target (assumed Linux)" in n for n in first.notes)
    # the later pkills would hit the prefill and decode servers, but they never run
    assert not second.reached and not third.reached
    assert set(labels(second)) >= {f"sglang :30000@{HOST}", f"sglang :30001@{HOST}"}
    hit = {lab for v in verdicts for lab in labels(v)}
    assert {"router :8000", f"sglang :30000@{HOST}", f"sglang :30001@{HOST}"} <= hit
    assert "sglang :30001" not in hit  # the local server is on another machine
    relaunch = next(c for c in script.commands if c.effective_argv[:2] == ["bash", "/root/serve.sh"])
    assert first.skips(relaunch)
    # the local harness survives: the ssh client just exits 255
    assert not first.harness_killed


def test_real_kill_only_counts_reached_verdicts() -> None:
    text = "bash -c 'pkill -9 -f zq_router; pkill -9 -f zq_worker'"
    verdicts = run(text, [Process(argv=("zq_router",), label="r"), Process(argv=("zq_worker",), label="w")])
    reached = [lab for v in verdicts if v.reached for lab in labels(v)]
    assert [x for x in reached if not x.startswith("shell")] == ["r"]


def test_local_pkill_does_not_reach_remote_servers_but_hits_the_local_ssh_client() -> None:
    remote = server(30001, host=HOST)
    client = Process(argv=("ssh", HOST, "nohup python3 -m sglang.launch_server --port 30001 > /tmp/l 2>&1 &"),
                     kind="ssh-client", label="ssh client")
    (v,) = run("pkill -f 'launch_server.*--port 30001'", [remote, client])
    assert labels(v) == ["ssh client"]
    assert any("does not stop a nohup'd remote process" in n for n in v.notes)
    (w,) = run(f"ssh {HOST} 'pkill -f launch_server.*--port.30001'", [remote, client, server(30001)])
    assert labels(w)[0] == f"sglang :30001@{HOST}" and "ssh client" not in labels(w)
    assert w.host == HOST


def test_a_remote_self_kill_does_not_stop_the_local_commands_after_ssh() -> None:
    script = parse(f"ssh {HOST} 'pkill -f zq_srv; echo remote'; echo local")
    (v,) = evaluate(script, [])
    remote_echo, local_echo = [c for c in script.commands if c.name == "echo"]
    assert v.skips(remote_echo) and not v.skips(local_echo)


def test_a_pkill_inside_a_container_sees_only_that_container() -> None:
    inside = Process(argv=("python3", "-m", "sglang.launch_server"), container="sgl", label="in sgl")
    other = Process(argv=("python3", "-m", "sglang.launch_server"), container="other", label="in other")
    host_proc = Process(argv=("python3", "-m", "sglang.launch_server"), label="on host")
    (v,) = run("docker exec -it sgl bash -c \"pkill -f launch_server || true\"", [inside, other, host_proc])
    assert labels(v)[0] == "in sgl" and "in other" not in labels(v) and "on host" not in labels(v)
    (h,) = run("pkill -f launch_server", [inside, other, host_proc])
    assert labels(h) == ["in sgl", "in other", "on host"]  # the host PID namespace sees them all


@pytest.mark.parametrize("program", sorted(MECHANISMS))
def test_every_registered_program_may_kill(program: str) -> None:
    assert may_kill(parse(program))


def test_an_unregistered_program_is_not_judged() -> None:
    assert not may_kill(parse("echo pkill -f x; grep kill log.txt"))
    assert run("echo pkill -f launch_server", [server(30001)]) == []


def test_xargs_kill_is_judged_as_the_kill_it_runs() -> None:
    (v,) = run("pgrep -f launch_server | xargs kill -9", [server(30001)])
    assert v.mechanism == "xargs-kill" and labels(v) == ["sglang :30001"]
