"""docker stop/kill/rm: containers by name and id prefix."""

from __future__ import annotations

from analyzer.shell.kill import Process
from tests.shell.kill.helpers import labels, run


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
