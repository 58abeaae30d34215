"""tmux kill-session/kill-server: the processes of the session."""

from __future__ import annotations

from analyzer.shell.kill import Process
from tests.shell.kill.helpers import labels, run


def test_tmux_kill_session_and_server() -> None:
    a = Process(argv=("python", "-m", "sglang.launch_server"), tmux_session="server", label="in server")
    b = Process(argv=("vllm", "serve"), tmux_session="vllm", label="in vllm")
    (v,) = run("tmux kill-session -t server", [a, b])
    assert v.mechanism == "tmux" and labels(v) == ["in server"] and v.signal_name == "HUP"
    (s,) = run("tmux kill-server", [a, b])
    assert labels(s) == ["in server", "in vllm"]
