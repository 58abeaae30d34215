"""``may_kill`` answers whether ``evaluate`` could find a kill, without the process list: the
world skips building it for every other shell call. It must never say no where evaluate says yes."""

from __future__ import annotations

from pathlib import Path

import yaml

from analyzer.shell.kill import Process, agent_process, evaluate, harness_frame, may_kill
from analyzer.shell.parse import parse

APPENDIX = Path(__file__).with_name("appendix_a.yaml")
MORE = [
    "curl -s localhost:8000/health", "ls -la /tmp", "nohup python -m sglang.launch_server --port 30000 &",
    "ps aux | grep sglang | awk '{print $2}' | xargs kill -9", "echo 123 | xargs -n1 kill",
    "docker stop api", "systemctl restart vllm", "tmux kill-session -t srv", "screen -S srv -X quit",
    "fuser -k 8000/tcp", "killall node", "launchctl unload ~/Library/LaunchAgents/x.plist",
    "ssh gpu1 'pkill -f vllm; sleep 2'", "bash -c 'kill $(cat /tmp/pid)'", "timeout 5 pkill -f x",
    "sudo kill -9 1234", "git status && make test", "xargs rm < files.txt",
]


def commands() -> list[str]:
    cases = yaml.safe_load(APPENDIX.read_text())["cases"]
    return [c["command"] for c in cases] + MORE


def test_may_kill_is_never_no_where_evaluate_finds_a_verdict() -> None:
    processes = [Process(argv=("python", "-m", "sglang.launch_server", "--port", "30000"), kind="server",
                         ports=(30000,)), agent_process("claude-code")]
    said_no = 0
    for text in commands():
        script = parse(text)
        verdicts = evaluate(script, processes, harness=harness_frame("claude-code", text))
        if not may_kill(script):
            said_no += 1
            assert verdicts == [], text
    assert said_no >= 10  # it does skip the plain commands
    assert may_kill(parse("ps aux | grep x | xargs kill")) and not may_kill(parse("curl -s localhost:1/"))
