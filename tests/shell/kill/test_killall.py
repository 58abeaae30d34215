"""killall: the exact process name, the calling shell by name, -I."""

from __future__ import annotations

from analyzer.shell.kill import Process
from tests.shell.kill.helpers import labels, run


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


def test_killall_ignore_case() -> None:
    (v,) = run("killall -I PYTHON3", [Process(argv=("python3", "x"), label="py3")])
    assert labels(v) == ["py3"]
