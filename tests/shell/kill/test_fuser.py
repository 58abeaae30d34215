"""fuser -k: every holder of a port or a file."""

from __future__ import annotations

from analyzer.shell.kill import Process
from tests.shell.kill.helpers import labels, run, server


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
