"""The kill model's data: a process's kernel name, which later commands a killed shell skips."""

from __future__ import annotations

from analyzer.shell.kill import KillVerdict, Process
from analyzer.shell.kill.model import comm_of
from analyzer.shell.model import ShellFrame, SimpleCommand


def test_process_comm_is_the_15_byte_basename() -> None:
    assert Process(argv=("/root/venv/bin/python3", "-m", "x")).comm == "python3"
    assert Process(argv=("/tmp/zq7731_very_long_server_name",)).comm == "zq7731_very_lon"
    assert Process(argv=("python3",), comm="sglang::schedul").comm == "sglang::schedul"
    assert comm_of("/usr/bin/ééééééééé") == "ééééééé"  # 15 bytes, no half character


def test_skips_follows_the_deepest_shared_shell() -> None:
    outer = ShellFrame(argv=("bash", "-c", "bash -c 'pkill -f x; a'; b"), via="shell-c")
    inner = ShellFrame(argv=("bash", "-c", "pkill -f x; a"), via="shell-c")
    kill = SimpleCommand(argv=["pkill", "-f", "x"], name="pkill", effective_argv=["pkill", "-f", "x"],
                         position=2, shells=[outer, inner])
    a = SimpleCommand(argv=["a"], name="a", effective_argv=["a"], position=3, shells=[outer, inner])
    b = SimpleCommand(argv=["b"], name="b", effective_argv=["b"], position=4, shells=[outer])
    top = SimpleCommand(argv=["c"], name="c", effective_argv=["c"], position=5)
    only_outer = KillVerdict(command=kill, mechanism="pkill", signal=15, signal_name="TERM", killed_frames=[outer])
    assert not only_outer.skips(a)  # the inner shell keeps running its script
    assert only_outer.skips(b) and not only_outer.skips(top)
    only_inner = KillVerdict(command=kill, mechanism="pkill", signal=15, signal_name="TERM", killed_frames=[inner])
    assert only_inner.skips(a) and not only_inner.skips(b)
    harness = KillVerdict(command=kill, mechanism="pkill", signal=15, signal_name="TERM",
                          killed_frames=[ShellFrame(argv=("bash", "-c", "…"))], harness_killed=True)
    assert harness.skips(top) and not harness.skips(b)
