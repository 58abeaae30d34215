"""taskkill and Stop-Process read into what they target, and cmd /c / powershell -Command levels."""

from __future__ import annotations

import pytest

from analyzer.shell import kill as killsem
from analyzer.shell.kill.windows import windows_kill
from analyzer.shell.parse import parse


@pytest.mark.parametrize(("argv", "names", "pids", "force", "tree"), [
    (["taskkill", "/F", "/IM", "node.exe"], ["node"], [], True, False),
    (["taskkill", "//PID", "11384", "//F"], [], ["11384"], True, False),  # Git Bash doubles the slash
    (["taskkill", "/pid", "1", "/pid", "2", "/t"], [], ["1", "2"], False, True),
    (["Stop-Process", "-Name", "node,vite", "-Force"], ["node", "vite"], [], True, False),
    (["Stop-Process", "-Id", "18708"], [], ["18708"], False, False),
    (["Stop-Process", "18708"], [], ["18708"], False, False),  # -Id is the first positional parameter
])
def test_windows_kill_switches(argv: list[str], names: list[str], pids: list[str], force: bool, tree: bool) -> None:
    how = windows_kill(argv)
    assert how is not None and (how.names, how.pids, how.force, how.tree) == (names, pids, force, tree)


def test_a_filter_alone_names_no_target() -> None:
    assert windows_kill(["taskkill", "/FI", "WINDOWTITLE eq dev*"]) is None


def test_cmd_c_and_powershell_command_are_nested_levels() -> None:
    assert [(c.name, c.depth) for c in parse('cmd.exe /c "npm run dev"').commands] == [("cmd.exe", 0), ("npm", 1)]
    ps = parse('powershell -NoProfile -Command "Stop-Process -Name node -Force"')
    assert [c.argv for c in ps.commands][-1] == ["Stop-Process", "-Name", "node", "-Force"]


def test_taskkill_by_image_name_is_generic_and_by_pid_is_scoped() -> None:
    procs = [killsem.Process(pid=21972, argv=("node", "server.js"), kind="server", label="dev server", ref="0")]
    (by_name,) = killsem.evaluate(parse("taskkill /F /IM node.exe"), procs)
    assert by_name.generic and [v.process.pid for v in by_name.victims] == [21972]
    (by_pid,) = killsem.evaluate(parse("taskkill //F //PID 21972"), procs)
    assert not by_pid.generic and [v.process.pid for v in by_pid.victims] == [21972] and by_pid.signal_name == "KILL"
