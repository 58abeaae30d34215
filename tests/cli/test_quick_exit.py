"""A one-shot command's process ends without the interpreter's teardown (``analyzer.cli._exit_now``):
what a user sees of it (the exit status, every byte of stdout and stderr, the caches written by exit
handlers) is the same as with the usual exit."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.cli import QUICK_EXIT

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "fixtures" / "seeds"
SEED = SEEDS / "004-restart-sglang-systemd.session.yaml"

# the same command line through click's plain call, which ends with the usual interpreter exit
_USUAL = "import sys; from analyzer.cli import main; main(sys.argv[1:], prog_name='analyzer')"


def _run(args: list[str], cache: Path, usual: bool = False) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SESSION_ANALYZER_CACHE_DIR": str(cache), "NO_COLOR": "1"}
    argv = [sys.executable, "-c", _USUAL, *args] if usual else [sys.executable, "-m", "analyzer", *args]
    return subprocess.run(argv, capture_output=True, env=env, cwd=ROOT, check=False, timeout=300)


@pytest.mark.parametrize("args", [
    ["check", str(SEED)],                                   # clean: 0
    ["check", str(SEEDS), "--format", "json"],              # findings: 1, a document of every seed
    ["check", str(ROOT / "nope.jsonl")],                    # unreadable: 2, on stderr
    ["check", str(SEED), "--select", "no-such-rule"],       # a usage error
    ["nosuch"],                                             # click's own error
])
def test_the_quick_exit_says_and_returns_what_the_usual_exit_does(args: list[str], tmp_path: Path) -> None:
    quick, usual = _run(args, tmp_path / "a"), _run(args, tmp_path / "b", usual=True)
    assert (quick.returncode, quick.stdout, quick.stderr) == (usual.returncode, usual.stdout, usual.stderr)
    if "json" in args:
        assert quick.returncode == 1 and len(json.loads(quick.stdout)["sessions"]) > 5


def test_the_exit_handlers_still_run_the_readings_are_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _run(["check", str(SEED)], cache).returncode == 0
    [store] = cache.rglob("*.sqlite")
    with sqlite3.connect(store) as db:  # written by an atexit handler of the language stage
        assert db.execute("SELECT count(*) FROM readings").fetchone()[0] > 0
    db.close()


_PROBE = """
import builtins, sys
class Probe:
    def __del__(self):
        sys.__stderr__.write("TEARDOWN\\n")
builtins.probe = Probe()  # freed by the interpreter's teardown, if there is one
"""


@pytest.mark.parametrize(("argv", "teardown"), [
    (["-m", "analyzer", "check", str(SEED)], False),                    # cold: spaCy (multiprocessing) imported
    (["-c", "from analyzer.cli import main; main()", "check", str(SEED), "--format", "json"], False),
    (["-m", "analyzer", "batch", "--help"], True),                      # not a one-shot command
    (["-m", "cProfile", "-m", "analyzer", "check", str(SEED)], True),   # a tool around the CLI acts after it
])
def test_the_process_entry_point_skips_the_teardown_of_a_one_shot_command(argv: list[str], teardown: bool,
                                                                          tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(_PROBE)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path / 'site'}{os.pathsep}{ROOT}",
           "SESSION_ANALYZER_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env, cwd=ROOT, check=False,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert ("TEARDOWN" in out.stderr) is teardown
    if "cProfile" in argv:
        assert "function calls" in out.stdout  # the profiler printed its table after the command


def test_commands_that_run_pools_or_servers_end_as_usual() -> None:
    assert "check" in QUICK_EXIT and "report" in QUICK_EXIT
    assert "batch" not in QUICK_EXIT and "guard" not in QUICK_EXIT
