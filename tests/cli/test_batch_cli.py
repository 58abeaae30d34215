"""`analyzer batch` as a CI gate and for a new user: `--fail-on` (exit 1), exit 2 when no session
could be read, the agents' own folders into ./postmortems when nothing is given, `--open`."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from click.testing import CliRunner, Result

from analyzer.cli import main
from tests.conftest import FIXTURES

SEEDS = FIXTURES / "seeds"


def batch(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["batch", "--jobs", "1", "--format-reports", "none", *args], env=env)


def _sessions(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for n in names:
        shutil.copy(SEEDS / n, folder / n)
    return folder


def test_findings_exit_0_unless_fail_on_says_so(tmp_path: Path) -> None:
    folder = _sessions(tmp_path, "001-relaunch-after-ready.session.yaml")  # medium findings only
    assert batch(str(folder), "-o", str(tmp_path / "a")).exit_code == 0
    assert batch(str(folder), "-o", str(tmp_path / "b"), "--fail-on", "high").exit_code == 0
    gated = batch(str(folder), "-o", str(tmp_path / "c"), "--fail-on", "medium")
    assert gated.exit_code == 1
    assert "findings: 3" in gated.stdout  # the summary is still written and shown


def test_no_readable_session_exits_2_and_one_readable_is_enough(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "a.jsonl").write_text("not a session\n", "utf-8")
    (folder / "b.jsonl").write_text("{broken\n", "utf-8")
    result = batch(str(folder), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "2 failed" in result.stdout and (tmp_path / "out" / "summary.json").is_file()
    shutil.copy(SEEDS / "004-restart-sglang-systemd.session.yaml", folder)
    assert batch(str(folder), "-o", str(tmp_path / "out")).exit_code == 0


def test_an_empty_folder_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = batch(str(tmp_path / "empty"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "no session found under" in result.stderr


def test_no_folder_given_reads_the_agents_folders_into_postmortems(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-work-app"
    project.mkdir(parents=True)
    shutil.copy(SEEDS / "000-kill-after-ready.jsonl", project / "c71e0a54.jsonl")
    gemini = home / ".gemini" / "tmp"
    gemini.mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": "", "XDG_DATA_HOME": ""}
    cwd = Path.cwd()
    os.chdir(work)
    try:
        result = CliRunner().invoke(main, ["batch", "--jobs", "1", "--format-reports", "none"], env=env)
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("analyzer batch: no PATH given; reading ~/.claude/projects (Claude Code), "
                                    "~/.gemini/tmp (Gemini CLI)\n")
    assert "1 session(s)" in result.stdout
    assert (work / "postmortems" / "index.html").is_file()


def test_open_shows_the_index_in_the_browser(tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > "{opened}"\n', "utf-8")
    browser.chmod(browser.stat().st_mode | stat.S_IXUSR)
    folder = _sessions(tmp_path, "004-restart-sglang-systemd.session.yaml")
    result = batch(str(folder), "-o", str(tmp_path / "out"), "--open", env={"BROWSER": str(browser)})
    assert result.exit_code == 0, result.output
    assert opened.read_text("utf-8") == (tmp_path / "out" / "index.html").resolve().as_uri()


def test_config_exclude_skips_found_sessions_but_never_a_named_file(tmp_path: Path) -> None:
    folder = _sessions(tmp_path, "000-kill-after-ready.session.yaml")
    cfg = tmp_path / "analyzer.toml"
    cfg.write_text('exclude = ["sessions/**"]\n', "utf-8")  # relative to the config's folder
    walked = batch("--config", str(cfg), str(folder), "-o", str(tmp_path / "a"))
    assert walked.exit_code == 2 and "no session found" in walked.stderr
    named = batch("--config", str(cfg), str(folder / "000-kill-after-ready.session.yaml"), "-o", str(tmp_path / "b"))
    assert named.exit_code == 0 and "1 session(s)" in named.stdout


def test_the_summary_redacts_and_neutralises_what_it_quotes(tmp_path: Path) -> None:
    """A failed session's name and error are printed from the input: no secret, no live escape."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2  # the shape of a GitHub token
    (folder / f"{token}.jsonl").write_text("not a session\n", "utf-8")
    (folder / "\x1b]0;pwned\x07.jsonl").write_text("{broken\n", "utf-8")
    result = batch(str(folder), "-o", str(tmp_path / "out"))
    assert "2 failed" in result.stdout
    assert token not in result.stdout and "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "␛]0;pwned␇.jsonl" in result.stdout
    shown = batch(str(folder), "-o", str(tmp_path / "raw"), "--no-redact")
    assert token in shown.stdout and "\x1b" not in shown.stdout
