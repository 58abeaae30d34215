"""The kill-mechanism registry is lazy: it answers as the eager dict did, and a process imports
only the judges of the commands it meets (start-up cost of every ``check``, issue 18)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.shell.kill import MECHANISMS
from analyzer.shell.kill.containers import judge_docker
from analyzer.shell.kill.evaluate import _judge_xargs
from analyzer.shell.kill.fuser import judge_fuser
from analyzer.shell.kill.killall import judge_killall
from analyzer.shell.kill.managers import judge_brew, judge_pm2, judge_supervisorctl
from analyzer.shell.kill.pid import judge_kill
from analyzer.shell.kill.pkill import judge_pkill
from analyzer.shell.kill.services import judge_launchctl, judge_systemctl
from analyzer.shell.kill.sessions import judge_screen, judge_tmux
from analyzer.shell.kill.windows import judge_windows

ROOT = Path(__file__).resolve().parents[3]
SEED = ROOT / "fixtures" / "seeds" / "004-restart-sglang-systemd.session.yaml"

EAGER = {
    "pkill": judge_pkill, "kill": judge_kill, "killall": judge_killall, "fuser": judge_fuser,
    "systemctl": judge_systemctl, "service": judge_systemctl, "launchctl": judge_launchctl,
    "docker": judge_docker, "podman": judge_docker, "docker-compose": judge_docker, "podman-compose": judge_docker,
    "pm2": judge_pm2, "supervisorctl": judge_supervisorctl, "brew": judge_brew,
    "tmux": judge_tmux, "screen": judge_screen,
    "taskkill": judge_windows, "taskkill.exe": judge_windows, "Stop-Process": judge_windows,
    "stop-process": judge_windows, "spps": judge_windows, "xargs": _judge_xargs,
}
"""The registry as it was written before it was lazy: program name -> judge."""

JUDGES = {f"analyzer.shell.kill.{m}" for m in
          ("pkill", "pid", "killall", "fuser", "services", "containers", "managers", "sessions", "windows")}
"""The modules that hold judges (``pid_sources`` comes with ``pid``)."""


def test_the_lazy_registry_is_the_eager_one() -> None:
    assert list(MECHANISMS) == list(EAGER) and len(MECHANISMS) == len(EAGER)
    assert dict(MECHANISMS.items()) == EAGER
    assert all(MECHANISMS[name] is judge for name, judge in EAGER.items())
    assert "echo" not in MECHANISMS and MECHANISMS.get("echo") is None
    with pytest.raises(KeyError):
        MECHANISMS["echo"]


_FRESH = """
import json, sys
from analyzer.shell.kill import evaluate, may_kill
from analyzer.shell.parse import parse
judges = set(json.loads(sys.argv[1]))
loaded = lambda: sorted(m.rsplit(".", 1)[1] for m in judges if m in sys.modules)
script = parse(sys.argv[2])
out = {"at import": loaded(), "may kill": may_kill(script)}
out["after may_kill"] = loaded()
out["verdicts"] = len(evaluate(script, []))
out["after evaluate"] = loaded()
print(json.dumps(out))
"""


@pytest.mark.parametrize(("command", "judges"), [
    ("sudo systemctl restart sglang", ["services"]),
    ("tmux kill-session -t serve", ["sessions"]),
    ("fuser -k 8000/tcp", ["fuser"]),
    ("pgrep -f serve | xargs kill -9", ["pid", "pkill"]),  # the PIDs' source is read with pkill's pgrep parser
])
def test_a_fresh_process_imports_the_judge_of_the_command_it_meets_alone(command: str, judges: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _FRESH, json.dumps(sorted(JUDGES)), command], capture_output=True,
                         text=True, check=True, cwd=ROOT, env=env)
    assert json.loads(out.stdout) == {"at import": [], "may kill": True, "after may_kill": [], "verdicts": 1,
                                      "after evaluate": judges}


_CHECK = """
import json, runpy, sys
judges = json.loads(sys.argv.pop(1))
sys.argv = ["analyzer", "check", *sys.argv[1:]]
try:
    runpy.run_module("analyzer", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
print(json.dumps(sorted(m.rsplit(".", 1)[1] for m in judges if m in sys.modules)), file=sys.stderr)
"""


def test_checking_the_seed_fixture_imports_only_the_judges_it_uses(tmp_path: Path) -> None:
    """The seed runs ``systemctl``: its judge is imported, the judges of docker, tmux, kill PIDs,
    killall, fuser and Windows are not (``managers`` and ``pkill`` also hold the unit and pgrep
    parsers the world builder reads listings with, so they come whatever the session runs)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SESSION_ANALYZER_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", _CHECK, json.dumps(sorted(JUDGES)), str(SEED)], capture_output=True,
                         text=True, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stderr.splitlines()[-1])
    assert "services" in loaded
    assert not {"containers", "fuser", "killall", "pid", "sessions", "windows"} & set(loaded)

