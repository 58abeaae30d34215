"""What the signal does to the processes above a kill: sudo relays it, an interactive shell ignores it."""

from __future__ import annotations

from analyzer.shell.kill import Process, harness_frame
from tests.shell.kill.helpers import labels, run


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
