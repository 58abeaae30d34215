"""Kill semantics through parse(): who a pkill/kill/killall/fuser really hits, the shells included."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from analyzer.shell.kill import KillVerdict, Process, agent_process, evaluate, harness_frame
from analyzer.shell.model import ShellFrame
from analyzer.shell.parse import parse

HOST = "root@10.1.230.174"


def run(
    text: str, processes: Sequence[Process] = (), *, harness: ShellFrame | None = None, platform: str = "linux",
) -> list[KillVerdict]:
    return evaluate(parse(text), processes, harness=harness, platform=platform)


def labels(v: KillVerdict) -> list[str]:
    return [x.process.label for x in v.victims]


def server(port: int, *, host: str | None = None, extra: tuple[str, ...] = (), pid: int | None = None) -> Process:
    return Process(
        pid=pid, argv=("python3", "-m", "sglang.launch_server", "--model-path", "/m", *extra, "--port", str(port)),
        host=host, kind="server", label=f"sglang :{port}" + (f"@{host}" if host else ""), ports=(port,),
    )


# ---------------------------------------------------------------- the calling shell


def test_pkill_inside_bash_c_kills_its_own_shell_and_the_relaunch_never_runs() -> None:
    text = ("bash -c 'pkill -f zq_fake_server; sleep 1; "
            "nohup zq_fake_server --port 30001 > /tmp/l 2>&1 & echo RELAUNCHED'")
    script = parse(text)
    (v,) = evaluate(script, [Process(argv=("zq_fake_server", "--port", "30001"), label="old :30001")])
    assert labels(v)[0] == "old :30001"
    assert labels(v)[1].startswith("shell: bash -c pkill -f zq_fake_server; sleep 1;")
    assert [x.process.kind for x in v.victims] == ["other", "shell"]
    shell = v.victims[1]
    assert shell.frame is not None and shell.frame.argv[:2] == ("bash", "-c")
    assert shell.subject is not None and shell.span is not None
    assert shell.subject[shell.span[0] : shell.span[1]] == "zq_fake_server"
    assert "commands after this pkill in it never run" in shell.reason
    assert v.self_kill == shell.frame and v.skipped_after and v.expected_exit == 143
    later = {c.name: v.skips(c) for c in script.commands if c.position > v.command.position}
    assert later == {"sleep": True, "zq_fake_server": True, "echo": True}


def test_ignore_ancestors_spares_the_calling_shell() -> None:
    (v,) = run("bash -c 'pkill -A -f zq_fake_server; echo AFTER'",
               [Process(argv=("zq_fake_server",), label="target")])
    assert labels(v) == ["target"]
    assert v.self_kill is None and not v.skipped_after
    assert any("-A excludes its ancestors" in n for n in v.notes)


def test_a_lone_simple_command_is_execed_so_no_shell_is_left_to_hit() -> None:
    (v,) = run("bash -c 'pkill -f zq_fake_server'", [Process(argv=("zq_fake_server",), label="target")])
    assert labels(v) == ["target"]
    assert v.self_kill is None
    assert any("gone: bash execs a lone simple command" in n for n in v.notes)


def test_a_regex_that_does_not_match_its_own_text_spares_the_shell() -> None:
    script = parse("bash -c 'pkill -f \"x.*3000[01]\"; echo AFTER'")
    (v,) = evaluate(script, [Process(argv=("x", "--port", "30001"), label="x :30001")])
    assert labels(v) == ["x :30001"]  # 3000[ in its own text is not 3000[01]
    assert v.self_kill is None and not v.skipped_after
    echo = next(c for c in script.commands if c.name == "echo")
    assert not v.skips(echo)


def test_bracket_trick_does_not_help_when_the_relaunch_text_is_in_the_same_argv() -> None:
    (v,) = run("bash -c 'pkill -f \"[z]q_srv.*3000[01]\"; sleep 1; nohup zq_srv --port 30001 &'")
    assert v.self_kill is not None  # '…zq_srv --port 30001' later in the same argv matches


def test_bash_execs_the_last_command_of_a_list_but_not_after_a_mixed_list() -> None:
    spared = run("bash -c 'cd /tmp && pkill -f zq_token'")
    killed = run("bash -c 'true; cd /tmp && pkill -f zq_token'")
    redirected = run("bash -c 'true; pkill -f zq_token >/dev/null'")
    assert spared[0].self_kill is None
    assert killed[0].self_kill is not None
    assert redirected[0].self_kill is not None


def test_dash_never_execs_so_sh_c_is_hit_even_for_a_lone_command() -> None:
    (v,) = run("sh -c 'pkill -f zq_token'")
    assert v.self_kill is not None and v.self_kill.argv[0] == "sh"


def test_zsh_execs_the_last_command_even_with_a_redirect() -> None:
    (v,) = run("zsh -c 'true; pkill -f zq_token >/dev/null'")
    assert v.self_kill is None


# ---------------------------------------------------------------- seed 002 over ssh


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


# ---------------------------------------------------------------- kill $(pgrep …), xargs, ps | grep


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


def test_ps_grep_awk_xargs_kill_and_the_grep_v_grep_trick() -> None:
    procs = [Process(argv=("python", "-m", "sglang.launch_server", "--port", "30000"), label="srv")]
    (v,) = run("bash -c \"ps aux | grep launch_server | grep -v grep | awk '{print \\$2}' | xargs -r kill -9\"", procs)
    assert v.mechanism == "ps-grep-kill" and v.pattern == "launch_server"
    assert labels(v) == ["srv"]  # the shell's own line contains 'grep': grep -v grep drops it
    assert any("grep -v grep" in n for n in v.notes)
    (w,) = run("bash -c \"ps -ef | grep '[l]aunch_server' | awk '{print \\$2}' | xargs kill\"", procs)
    assert labels(w) == ["srv"]  # [l]aunch_server does not match its own text
    assert w.self_kill is None


def test_lsof_port_and_nvidia_smi_pid_lists() -> None:
    procs = [server(30000), server(30001),
             Process(argv=("python", "train.py"), label="trainer", open_files=("/dev/nvidia0", "/dev/nvidiactl"))]
    (v,) = run("lsof -ti tcp:30000 | xargs -r kill -9", procs)
    assert v.mechanism == "lsof-kill" and labels(v) == ["sglang :30000"]
    (w,) = run("kill -9 $(lsof -t -i:30001)", procs)
    assert w.mechanism == "lsof-kill" and labels(w) == ["sglang :30001"]
    (g,) = run("nvidia-smi --query-compute-apps=pid --format=csv,noheader | xargs -r -n1 kill -9", procs)
    assert g.mechanism == "nvidia-smi-kill" and labels(g) == ["trainer"] and g.generic


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


# ---------------------------------------------------------------- killall, fuser


def test_killall_matches_the_exact_process_name() -> None:
    py = Process(argv=("python", "a.py"), label="python")
    py3 = Process(argv=("python3", "-m", "sglang.launch_server"), label="python3")
    long_ = Process(argv=("/tmp/zqdemo/bin/zq7731_very_long_server_name", "300"), label="long")
    assert long_.comm == "zq7731_very_lon"
    (v,) = run("killall python", [py, py3, long_])
    assert labels(v) == ["python"] and v.generic
    (w,) = run("killall python3", [py, py3])
    assert labels(w) == ["python3"]
    (r,) = run("killall -9 -r 'python3?'", [py, py3])
    assert labels(r) == ["python", "python3"] and r.signal_name == "KILL"
    (lng,) = run("killall zq7731_very_long_server_name", [long_])
    assert labels(lng) == ["long"]  # comm is 15 long: the argv[0] basename decides
    (none,) = run("killall python", [py3])
    assert labels(none) == [] and any("python3 do not match python" in n for n in none.notes)


def test_killall_hits_the_calling_shell_by_name() -> None:
    (v,) = run("bash -c 'killall bash; echo next'")
    assert v.self_kill is not None and v.victims[0].frame is not None


def test_fuser_k_nvidia_glob_hits_every_gpu_process() -> None:
    procs = [
        Process(argv=("python3", "-m", "vllm.entrypoints.openai.api_server"), label="vllm",
                open_files=("/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm")),
        Process(argv=("python", "train.py"), label="someone's training job", open_files=("/dev/nvidia1",)),
        Process(argv=("nvidia-persistenced",), label="persistenced", open_files=("/dev/nvidiactl",)),
        Process(argv=("nginx",), label="nginx", open_files=("/var/log/nginx.log",)),
    ]
    (v,) = run("fuser -k /dev/nvidia*", procs)
    assert v.mechanism == "fuser-file" and v.signal_name == "KILL" and v.generic
    assert labels(v) == ["vllm", "someone's training job", "persistenced"]


def test_fuser_k_port_hits_only_the_holder_of_the_local_port() -> None:
    (v,) = run("fuser -k 30000/tcp", [server(30000), server(30001)])
    assert v.mechanism == "fuser-port" and labels(v) == ["sglang :30000"] and v.signal == 9
    (t,) = run("fuser -v -k -TERM 30001/tcp || true", [server(30000), server(30001)])
    assert labels(t) == ["sglang :30001"] and t.signal_name == "TERM"
    assert run("fuser -v 30000/tcp", [server(30000)]) == []  # without -k nothing is killed


# ---------------------------------------------------------------- hosts


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


# ---------------------------------------------------------------- the agent itself


def test_pkill_node_and_pkill_f_claude_kill_the_agent() -> None:
    agent = agent_process("claude-code")
    (v,) = run("pkill node", [agent, Process(argv=("node", "server.js"), label="dev server")],
               harness=harness_frame("claude-code", "pkill node"))
    assert labels(v) == ["Claude Code CLI (the agent itself)", "dev server"] and v.generic
    assert "session itself dies" in v.victims[0].reason
    (w,) = run("pkill -f claude", [agent], harness=harness_frame("claude-code", "pkill -f claude"))
    assert "Claude Code CLI (the agent itself)" in labels(w)
    assert w.harness_killed  # the wrapper's text holds /home/user/.claude/shell-snapshots and the command
    native = agent_process("claude-code", install="native")
    (n,) = run("pkill node", [native])
    assert labels(n) == []


def test_claude_harness_is_hit_by_a_pattern_in_the_command_and_never_execs() -> None:
    text = "pkill -f vite"
    (v,) = run(text, [Process(argv=("node", "node_modules/.bin/vite"), label="vite")],
               harness=harness_frame("claude-code", text))
    assert v.harness_killed and v.self_kill is not None and v.self_kill.via == "harness"
    assert v.expected_exit == 143
    (c,) = run(text, [], harness=harness_frame("codex", text))
    assert not c.harness_killed  # bash -lc 'pkill -f vite' execs pkill


def test_sudo_is_an_ancestor_that_pkill_hits() -> None:
    (v,) = run("sudo pkill -f zq_elevated", [Process(argv=("zq_elevated",), label="t")])
    assert labels(v) == ["t", "`sudo` wrapper of `sudo pkill -f zq_elevated`"]
    assert "sudo catches SIGTERM and relays it" in v.victims[1].reason
    (k,) = run("sudo pkill -9 -f zq_elevated", [Process(argv=("zq_elevated",), label="t")])
    assert "it dies with SIGKILL" in k.victims[1].reason


def test_an_interactive_shell_ignores_sigterm() -> None:
    frame = harness_frame("openhands", "pkill bash")
    (v,) = run("pkill bash", [], harness=frame)
    assert v.self_kill is None and "ignores SIGTERM" in v.victims[0].reason
    (k,) = run("pkill -9 bash", [], harness=harness_frame("openhands", "pkill -9 bash"))
    assert k.self_kill is not None


# ---------------------------------------------------------------- platform


def test_macos_pkill_spares_ancestors_unless_a() -> None:
    (v,) = run("bash -c 'pkill -f zq_srv; echo after'", [Process(argv=("zq_srv",), label="t")], platform="macos")
    assert labels(v) == ["t"] and v.self_kill is None and v.platform == "macos"
    assert any("BSD pkill excludes its ancestors" in n for n in v.notes)
    (a,) = run("bash -c 'pkill -a -f zq_srv; echo after'", [], platform="macos")
    assert a.self_kill is not None


def test_macos_kill_pgrep_does_not_list_the_calling_shell() -> None:
    (v,) = run("bash -c 'kill $(pgrep -f zq_srv)'", [Process(argv=("zq_srv",), label="t")], platform="macos")
    assert labels(v) == ["t"] and v.self_kill is None


# ---------------------------------------------------------------- services, containers, sessions


def test_systemctl_stop_normalises_the_unit_name() -> None:
    a = Process(argv=("python3", "-m", "sglang.launch_server"), unit="sglang.service", label="sglang unit")
    b = Process(argv=("python3", "-m", "vllm"), unit="vllm.service", label="vllm unit")
    v, _docker = run("sudo systemctl stop sglang && docker stop sgl-router", [a, b])
    assert v.mechanism == "systemctl" and v.targets == ["sglang.service"] and labels(v) == ["sglang unit"]
    (r,) = run("systemctl restart vllm.service; sleep 10", [a, b])
    assert labels(r) == ["vllm unit"] and any("new instance starts" in n for n in r.notes)
    assert run("systemctl start sglang", [a]) == []
    (t,) = run("systemctl stop 'sglang@*'", [Process(argv=("x",), unit="sglang@30000.service", label="tmpl")])
    assert labels(t) == ["tmpl"]


def test_docker_stop_kill_and_rm() -> None:
    router = Process(argv=("python3", "-m", "sglang_router.launch_router"), container="sgl-router", label="router")
    worker = Process(argv=("python3", "-m", "sglang.launch_server"), container="sgl-worker-0", label="worker")
    (v,) = [x for x in run("systemctl stop sglang && docker stop sgl-router sgl-worker-0", [router, worker])
            if x.mechanism == "docker"]
    assert labels(v) == ["router", "worker"] and v.signal_name == "TERM"
    (k,) = run("docker kill sgl-router", [router, worker])
    assert labels(k) == ["router"] and k.signal_name == "KILL"
    (rm,) = run("docker rm sgl-router", [router])
    assert labels(rm) == [] and any("without -f" in n for n in rm.notes)
    (rf,) = run("docker rm -f $(docker ps -q --filter name=sgl-w)", [router, worker])
    assert labels(rf) == ["worker"]
    (c,) = run("docker compose down", [Process(argv=("x",), container="app-web-1", label="web")])
    assert c.mechanism == "docker-compose" and labels(c) == ["web"]


def test_tmux_kill_session_and_server() -> None:
    a = Process(argv=("python", "-m", "sglang.launch_server"), tmux_session="server", label="in server")
    b = Process(argv=("vllm", "serve"), tmux_session="vllm", label="in vllm")
    (v,) = run("tmux kill-session -t server", [a, b])
    assert v.mechanism == "tmux" and labels(v) == ["in server"] and v.signal_name == "HUP"
    (s,) = run("tmux kill-server", [a, b])
    assert labels(s) == ["in server", "in vllm"]


# ---------------------------------------------------------------- bad patterns and usage


@pytest.mark.parametrize("pattern", ["(?i)vllm", "x{", "launch_server(", "*launch"])
def test_an_invalid_regex_kills_nothing(pattern: str) -> None:
    (v,) = run(f"bash -c 'pkill -f \"{pattern}\"; echo next'", [Process(argv=("vllm", "serve"), label="vllm")])
    assert v.invalid_pattern and v.victims == [] and v.self_kill is None


def test_a_pattern_starting_with_dash_is_an_option_error() -> None:
    (v,) = run("pkill -f '--port 30001'", [server(30001)])
    assert v.victims == [] and any("unrecognized option" in n for n in v.notes)
    assert any("'--'" in n for n in v.notes)
    (ok,) = run("pkill -f -- '--port 30001'", [server(30001)])
    assert labels(ok) == ["sglang :30001"]


def test_two_patterns_are_a_usage_error_on_linux_but_or_on_bsd() -> None:
    procs = [Process(argv=("zq_a",), label="a"), Process(argv=("zq_b",), label="b")]
    (v,) = run("pkill zq_a zq_b", procs)
    assert v.victims == [] and any("only one pattern" in n for n in v.notes)
    (b,) = run("pkill zq_a zq_b", procs, platform="macos")
    assert labels(b) == ["a", "b"]


def test_signal_zero_and_names() -> None:
    (v,) = run("pkill -0 -f zq", [Process(argv=("zq",), label="z")])
    assert v.victims == [] and v.signal == 0
    (h,) = run("pkill --signal HUP zq", [Process(argv=("zq",), label="z")])
    assert h.signal_name == "HUP" and labels(h) == ["z"]


def test_newest_and_exact_and_name_without_f() -> None:
    procs = [Process(pid=10, argv=("zq_srv", "a"), label="old"), Process(pid=20, argv=("zq_srv", "b"), label="new")]
    (n,) = run("pkill -n zq_srv", procs)
    assert labels(n) == ["new"]
    (x,) = run("pkill -x zq_sr", procs)
    assert labels(x) == []
    (f,) = run("pkill zq_srv.*b", procs)  # without -f the subject is the name, not the argv
    assert labels(f) == []


def test_pid_assigned_from_a_substitution_earlier_in_the_command() -> None:
    (v,) = run("PID=$(pgrep -f launch_server); kill -9 $PID", [server(30000)])
    assert v.mechanism == "kill-pgrep" and labels(v) == ["sglang :30000"] and not v.unresolved
    (u,) = run("kill -9 $SERVER_PID", [server(30000)])
    assert labels(u) == [] and u.unresolved == ["$SERVER_PID"]


def test_exported_port_is_substituted_into_the_pattern() -> None:
    (v,) = run('export P=30001; pkill -f "launch_server.*--port $P"', [server(30000), server(30001)])
    assert labels(v) == ["sglang :30001"] and not v.unresolved


def test_ps_grep_bracket_kill_in_the_claude_harness_kills_the_harness_before_the_relaunch() -> None:
    text = ('kill -9 $(ps aux | grep "[l]aunch_server" | awk \'{print $2}\') 2>/dev/null; sleep 2; '
            "nohup python -m sglang.launch_server --port 30001 > /tmp/s.log 2>&1 &")
    script = parse(text)
    (v,) = evaluate(script, [server(30001)], harness=harness_frame("claude-code", text))
    assert v.mechanism == "ps-grep-kill"
    assert labels(v)[0] == "sglang :30001" and v.harness_killed
    relaunch = next(c for c in script.commands if c.name == "python")
    assert v.skips(relaunch) and v.expected_exit == 137


def test_a_background_task_shell_of_an_earlier_call_is_hit_too() -> None:
    from analyzer.shell.kill import harness_process

    bg = harness_process("claude-code", "npm run dev -- --port 5173", task_id="bash_1")
    assert bg is not None and bg.kind == "shell" and bg.task_id == "bash_1"
    dev = Process(argv=("node", "/app/node_modules/.bin/vite", "--port", "5173"), label="vite", task_id="bash_1")
    (v,) = run("pkill -f 'port 5173'", [bg, dev], harness=harness_frame("claude-code", "pkill -f 'port 5173'"))
    assert labels(v)[:2] == [bg.label, "vite"] and v.harness_killed


def test_user_filter_with_a_variable_is_ignored_not_applied() -> None:
    owned = Process(argv=("zq_srv",), user="alice", label="alice's")
    (v,) = run("pkill -u $USER -f zq_srv", [owned])
    assert labels(v) == ["alice's"] and any("$USER" in n for n in v.notes)
    (w,) = run("pkill -u bob -f zq_srv", [owned])
    assert labels(w) == []


def test_a_stdin_fed_remote_shell_holds_no_text_but_has_a_name() -> None:
    text = "ssh node1 bash -s <<'EOF'\npkill -f zq_srv\nsleep 2\nEOF"
    (v,) = run(text, [Process(argv=("zq_srv",), host="node1", label="remote")])
    assert labels(v) == ["remote"] and v.self_kill is None  # its argv is just `bash -s`
    (b,) = run("ssh node1 bash -s <<'EOF'\npkill bash\nEOF")
    assert b.self_kill is not None and b.self_kill.argv == ("bash", "-s")  # no exec for a script on stdin


def test_killall_ignore_case() -> None:
    (v,) = run("killall -I PYTHON3", [Process(argv=("python3", "x"), label="py3")])
    assert labels(v) == ["py3"]
