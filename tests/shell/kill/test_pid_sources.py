"""What a PID pipeline lists for kill: ps | grep | awk, lsof -t, nvidia-smi."""

from __future__ import annotations

from analyzer.shell.kill import Process, evaluate, harness_frame
from analyzer.shell.parse import parse
from tests.shell.kill.helpers import labels, run, server


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


def test_ps_grep_bracket_kill_in_the_claude_harness_kills_the_harness_before_the_relaunch() -> None:
    text = ('kill -9 $(ps aux | grep "[l]aunch_server" | awk \'{print $2}\') 2>/dev/null; sleep 2; '
            "nohup python -m sglang.launch_server --port 30001 > /tmp/s.log 2>&1 &")
    script = parse(text)
    (v,) = evaluate(script, [server(30001)], harness=harness_frame("claude-code", text))
    assert v.mechanism == "ps-grep-kill"
    assert labels(v)[0] == "sglang :30001" and v.harness_killed
    relaunch = next(c for c in script.commands if c.name == "python")
    assert v.skips(relaunch) and v.expected_exit == 137
