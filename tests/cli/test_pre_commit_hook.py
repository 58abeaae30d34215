"""The pre-commit hook (.pre-commit-hooks.yaml) run as pre-commit runs it: `pre-commit try-repo`
from a temporary git repository, which installs the hook's own environment from the package and
runs `analyzer check` on the matching files.

The hook repository is a clone of this checkout's HEAD with the working tree's manifest on top:
try-repo of the checkout itself would take modified tracked files but not new ones, so work in
progress (a new module not yet added) would break the hook's install rather than the hook."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import FIXTURES, ROOT

pytestmark = pytest.mark.network  # the hook environment is built by pip (PyPI or the pip cache)

HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


def test_the_hook_is_declared_like_a_linters() -> None:
    [hook] = HOOKS
    assert (hook["id"], hook["entry"], hook["language"]) == ("analyzer-check", "analyzer check", "python")
    assert "pass_filenames" not in hook  # pre-commit hands the changed files to `analyzer check`


def test_try_repo_fails_on_a_session_with_findings_and_reads_only_session_logs(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout of this project")
    pre_commit = shutil.which("pre-commit")
    if pre_commit is None:
        pytest.skip("pre-commit is not installed (pip install -e '.[test]')")
    repo = tmp_path / "repo"
    (repo / "sessions").mkdir(parents=True)
    shutil.copy(FIXTURES / "seeds" / "000-kill-after-ready.session.yaml", repo / "sessions")
    shutil.copy(FIXTURES / "seeds" / "004-restart-sglang-systemd.session.yaml", repo / "sessions")
    (repo / "package.json").write_text('{"name": "not-a-session"}\n', "utf-8")  # not matched by `files`
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    hook_repo = tmp_path / "hook-repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(hook_repo)], check=True, capture_output=True)
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", hook_repo / ".pre-commit-hooks.yaml")
    _git(hook_repo, "commit", "-q", "--allow-empty", "-am", "the manifest as in the working tree")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}
    env.pop("VIRTUAL_ENV", None)
    proc = subprocess.run([pre_commit, "try-repo", str(hook_repo), "analyzer-check", "--all-files", "--color", "never"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "analyzer check (coding-agent session logs)" in out and "Failed" in out
    assert "- exit code: 1" in out  # findings, not an error: 2 would mean a file it could not read
    assert "sessions/000-kill-after-ready.session.yaml:82: high kill-after-ready" in out
    assert "1 finding(s) in 2 session(s)" in out
    assert "package.json" not in out
