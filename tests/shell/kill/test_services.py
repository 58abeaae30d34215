"""systemctl: units by name, every process of the unit."""

from __future__ import annotations

from analyzer.shell.kill import Process
from tests.shell.kill.helpers import labels, run


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
