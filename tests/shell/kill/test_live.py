"""The model against the real thing: run each command with this machine's bash/dash/zsh and procps,
and check that the calling shell dies exactly when evaluate() says it does.

Every pattern carries a fresh random token, so nothing but the test's own shells can match."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import uuid

import pytest

from analyzer.shell.kill import evaluate
from analyzer.shell.parse import parse

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or shutil.which("pkill") is None or shutil.which("bash") is None,
    reason="needs Linux procps and bash",
)

# (shell, script with T for the token, whether the shell is killed) as measured on Debian 12
CASES = [
    ("bash", "pkill -f T", False),
    ("bash", "pkill -f T; true", True),
    ("bash", "true; pkill -f T", False),
    ("bash", "true && pkill -f T", False),
    ("bash", "true; true && pkill -f T", True),
    ("bash", "true; pkill -f T >/dev/null", True),
    ("bash", "pkill -A -f T; true", False),
    ("bash", 'pkill -f "T.*3000[01]"; true', False),
    ("bash", "kill $(pgrep -f T)", True),
    ("bash", "pgrep -f T | xargs -r kill; true", True),
    ("bash", "ps aux | grep T | grep -v grep | awk '{print $2}' | xargs -r kill; true", False),
    ("bash", "for i in 1; do true; done; pkill -f T", False),
    ("sh", "pkill -f T", True),
    ("zsh", "true; pkill -f T >/dev/null", False),
]


@pytest.mark.parametrize(("shell", "template", "killed"), CASES)
def test_evaluate_agrees_with_the_real_shell(shell: str, template: str, killed: bool) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    token = "zqlive" + uuid.uuid4().hex[:10]
    script = template.replace("T", token)
    text = f"{shell} -c {shlex.quote(script)}"
    verdicts = [v for v in evaluate(parse(text), []) if v.reached]
    predicted = any(v.self_kill is not None for v in verdicts)
    assert predicted == killed, [n for v in verdicts for n in v.notes]
    done = subprocess.run([shell, "-c", script], capture_output=True, timeout=60, check=False)
    assert (done.returncode == -15) == killed, (done.returncode, done.stderr)


def test_builtin_kill_stops_at_its_own_shell_for_real() -> None:
    token = "zqlive" + uuid.uuid4().hex[:10]
    script = f"(exec -a {token}_srv sleep 30) >/dev/null 2>&1 & sleep 0.3; kill $(pgrep -f {token})"
    (v,) = [v for v in evaluate(parse(f"bash -c {shlex.quote(script)}"), []) if v.command.name == "kill"]
    assert v.self_kill is not None
    assert any("never signals" in n for n in v.notes)  # the child is newer than the shell
    try:
        done = subprocess.run(["bash", "-c", script], capture_output=True, timeout=60, check=False)
        survivors = subprocess.run(["pgrep", "-f", f"{token}_srv"], capture_output=True, text=True, check=False)
        assert done.returncode == -15
        assert survivors.stdout.strip() != ""  # the builtin kill died before signalling it
    finally:
        subprocess.run(["pkill", "-f", f"{token}_srv"], check=False)
