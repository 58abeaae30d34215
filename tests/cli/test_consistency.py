"""The commands agree with each other and with their help: detect and report on a folder, graph
with the config's server kinds, rules list's columns, rules new's target folder."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from click.testing import CliRunner, Result

from analyzer.cli import main
from tests.conftest import FIXTURES, ROOT

SEEDS = FIXTURES / "seeds"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"COLUMNS": "200"})


def test_detect_on_a_folder_lists_each_session_and_why(tmp_path: Path) -> None:
    shutil.copy(SEEDS / "000-kill-after-ready.jsonl", tmp_path)
    shutil.copy(SEEDS / "004-restart-sglang-systemd.session.yaml", tmp_path)
    (tmp_path / "rollout-x.jsonl").write_text("garbage\n", "utf-8")
    (tmp_path / "notes.txt").write_text("not a log\n", "utf-8")
    result = run("detect", str(tmp_path))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[:2] == [
        f"{tmp_path / '000-kill-after-ready.jsonl'}: claude-code (JSONL of Claude Code entries (permission-mode))",
        f"{tmp_path / '004-restart-sglang-systemd.session.yaml'}: fixture (YAML document with an `events:` list "
        "of user/bash/tool entries)",
    ]
    assert lines[2].startswith(f"{tmp_path / 'rollout-x.jsonl'}: not read: not a session log in any known format")
    assert len(lines) == 3  # notes.txt is no session and not named like one
    (tmp_path / "empty").mkdir()
    none = run("detect", str(tmp_path / "empty"))
    assert none.exit_code == 2 and "no session in a known format" in none.stderr


def test_report_on_a_folder_of_one_session_writes_it_and_on_many_points_to_batch(tmp_path: Path) -> None:
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(SEEDS / "000-kill-after-ready.session.yaml", one)
    out = tmp_path / "r.html"
    written = run("report", str(one), "-o", str(out))
    assert written.exit_code == 0, written.output
    assert written.stdout.startswith(f"wrote {out} (") and out.is_file()
    many = run("report", str(SEEDS))
    assert many.exit_code == 2
    assert many.stderr.startswith(f"analyzer: {SEEDS}: holds 8 sessions (000-kill-after-ready.jsonl, ")
    assert many.stderr.rstrip().endswith(f"analyzer batch {SEEDS} -o postmortems")


def test_graph_knows_the_config_catalog_like_check(tmp_path: Path) -> None:
    session = tmp_path / "s.session.yaml"
    session.write_text("events:\n  - bash: nohup ./bin/inferd --listen-port 9100 > /tmp/i.log 2>&1 &\n", "utf-8")
    # unlisted, it is a generic server (its port flag and `&`); the entry gives it its kind and label
    plain = json.loads(run("graph", "--format", "json", str(session)).stdout)["instances"]
    assert [(i["id"], i["server"]) for i in plain] == [("local:9100", "server")]
    cfg = tmp_path / "analyzer.toml"
    cfg.write_text('[catalog.inferd]\nlabel = "inferd daemon"\nprograms = ["inferd"]\nport_flags = ["--listen-port"]\n',
                   "utf-8")
    doc = json.loads(run("graph", "--config", str(cfg), "--format", "json", str(session)).stdout)
    assert [(i["id"], i["label"]) for i in doc["instances"]] == [("local:9100", "inferd daemon")]
    cwd = Path.cwd()
    os.chdir(tmp_path)  # found upwards, as check finds it
    try:
        text = run("graph", str(session)).stdout
    finally:
        os.chdir(cwd)
    assert "inferd daemon on local:9100" in text
    cfg.write_text("[catalog.inferd]\nprograms = 3\n", "utf-8")
    bad = run("graph", "--config", str(cfg), str(session))
    assert bad.exit_code == 2 and bad.stderr.startswith(f"analyzer: {cfg}: [catalog]")


def test_rules_list_shows_severity_status_and_groups() -> None:
    result = run("rules", "list")
    assert result.exit_code == 0
    rows = {ln.split()[0]: ln.split()[1:4] for ln in result.stdout.splitlines()}
    assert rows["kill-after-ready"] == ["high", "stable", "lifecycle,coordination"]
    assert rows["user-correction"] == ["medium", "stable", "coordination"]


def test_rules_new_never_writes_into_the_builtin_pack_by_default(tmp_path: Path) -> None:
    cwd = Path.cwd()
    os.chdir(ROOT)  # here ./rules is the built-in pack
    try:
        made = CliRunner().invoke(main, ["rules", "new", "my-check"], catch_exceptions=False)
    finally:
        os.chdir(cwd)
    try:
        assert made.exit_code == 0
        assert made.stdout.startswith("wrote analyzer_rules/my_check.py and analyzer_rules/my-check.cases.yaml")
        assert not (ROOT / "rules" / "my_check.py").exists()
    finally:
        shutil.rmtree(ROOT / "analyzer_rules", ignore_errors=True)
    (tmp_path / "team").mkdir()
    (tmp_path / "analyzer.toml").write_text('rules_dir = ["team"]\n', "utf-8")
    os.chdir(tmp_path)
    try:
        into_config = run("rules", "new", "my-check")
    finally:
        os.chdir(cwd)
    assert into_config.exit_code == 0
    assert (tmp_path / "team" / "my_check.py").is_file()
