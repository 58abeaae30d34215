"""`analyzer check` in CI, as ruff users expect it: every exit status, `--format github`,
`--output-file`, `--quiet`, `--statistics`, `--exit-zero`, colour on a terminal only, and the
agents' own folders when no path is given."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from analyzer.cli import main
from analyzer.report.github import escape_data, escape_property
from tests.conftest import FIXTURES

SEEDS = FIXTURES / "seeds"
S000 = str(SEEDS / "000-kill-after-ready.session.yaml")
S001 = str(SEEDS / "001-relaunch-after-ready.session.yaml")
S004 = str(SEEDS / "004-restart-sglang-systemd.session.yaml")
ANSI = "\x1b["


def check(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["check", *args], env={"COLUMNS": "100", **(env or {})})


def _broken(tmp_path: Path, name: str = "broken.jsonl") -> Path:
    bad = tmp_path / name
    bad.write_text("this is not a log\n", "utf-8")
    return bad


# -- exit statuses -------------------------------------------------------------------------------

def test_a_file_no_format_reads_found_in_a_folder_is_listed_but_does_not_make_it_exit_2(tmp_path: Path) -> None:
    shutil.copy(S004, tmp_path)
    _broken(tmp_path, "rollout-2026-01-01.jsonl")  # named like a session: found, and reported
    result = check("--format", "json", str(tmp_path))
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert [e["path"] for e in doc["errors"]] == [str(tmp_path / "rollout-2026-01-01.jsonl")]
    assert check("--format", "json", str(tmp_path / "rollout-2026-01-01.jsonl"), S004).exit_code == 2


def test_a_named_file_that_does_not_exist_exits_2_after_checking_the_others() -> None:
    result = check("missing.jsonl", S000)
    assert result.exit_code == 2
    assert "missing.jsonl: no such file or folder" in result.stderr
    assert "high kill-after-ready" in result.stdout  # the other file was still checked


def test_exit_zero_hides_findings_from_the_status_but_not_errors(tmp_path: Path) -> None:
    result = check("--exit-zero", S000)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "1 finding(s) in 1 session(s)"
    assert check("--exit-zero", str(_broken(tmp_path)), S000).exit_code == 2


def test_help_has_the_one_exit_status_table() -> None:
    table = ["0  clean", "1  findings", "2  usage error, or input that cannot be read", "3  internal error"]
    for args in ([], ["check"], ["batch"]):
        out = CliRunner().invoke(main, [*args, "--help"]).stdout
        rows = [ln.strip() for ln in out.splitlines() if ln.strip()[:3] in ("0  ", "1  ", "2  ", "3  ")]
        assert [r[: len(t)] for r, t in zip(rows, table, strict=True)] == table, args


# -- --format github -----------------------------------------------------------------------------

def test_github_annotations_locate_each_finding_with_its_level_and_rule() -> None:
    result = check("--format", "github", S000, S001)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"::error file={S000},line=82,title=analyzer high kill-after-ready::kills the sglang ")
    assert "%0A> ssh root@10.1.230.174" in lines[0]  # the evidence: lines of the same annotation
    assert {ln.split(" ", 1)[0] for ln in lines[1:]} == {"::warning"}  # seed 001: medium findings
    assert len(lines) == 4


def test_github_escaping_follows_the_runner() -> None:
    assert escape_data("50% done\r\nnext: a, b") == "50%25 done%0D%0Anext: a, b"
    assert escape_property("dir,1/a:b%.jsonl") == "dir%2C1/a%3Ab%25.jsonl"
    assert escape_data("\x1b]0;title\x07") == "␛]0;title␇"  # the log viewer renders ANSI: made inert


def test_github_annotation_of_a_path_with_commas_and_colons_and_an_unreadable_file(tmp_path: Path) -> None:
    odd = tmp_path / "run,1:a%b.session.yaml"
    shutil.copy(S000, odd)
    bad = _broken(tmp_path)
    result = check("--format", "github", str(odd), str(bad))
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"::error file={bad},line=1,title=analyzer%3A cannot read::not a session log")
    assert lines[1].startswith(f"::error file={tmp_path!s}/run%2C1%3Aa%25b.session.yaml,line=82,")


# -- --output-file, --quiet, --statistics ----------------------------------------------------------

def test_output_file_takes_the_report_and_is_never_coloured(tmp_path: Path) -> None:
    out = tmp_path / "report.txt"
    result = check("--output-file", str(out), S000, env={"FORCE_COLOR": "1"})
    assert result.exit_code == 1
    assert result.stdout == ""
    text = out.read_text("utf-8")
    assert text.startswith(f"{S000}:82: high kill-after-ready ") and ANSI not in text
    assert text.endswith("1 finding(s) in 1 session(s)\n")
    sarif = tmp_path / "reports" / "out.sarif"  # its folder is made
    assert check("--format", "sarif", "-o", str(sarif), S004).exit_code == 0
    assert json.loads(sarif.read_text("utf-8"))["version"] == "2.1.0"
    (tmp_path / "taken").write_text("a file\n", "utf-8")
    unwritable = check("-o", str(tmp_path / "taken" / "out.txt"), S004)
    assert unwritable.exit_code == 2 and unwritable.stderr.startswith(f"analyzer: {tmp_path / 'taken' / 'out.txt'}: ")


def test_output_file_is_written_even_when_nothing_could_be_read(tmp_path: Path) -> None:
    sarif = tmp_path / "out.sarif"
    assert check("--format", "sarif", "-o", str(sarif), str(_broken(tmp_path))).exit_code == 2
    notes = json.loads(sarif.read_text("utf-8"))["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["error"]  # CI's upload still shows why


def test_quiet_prints_findings_only(tmp_path: Path) -> None:
    broken_line = tmp_path / "000.jsonl"
    lines = (SEEDS / "000-kill-after-ready.jsonl").read_text("utf-8").splitlines(keepends=True)
    broken_line.write_text("".join(lines[:3]) + "{not json\n" + "".join(lines[3:]), "utf-8")
    loud = check(str(broken_line))
    assert ":4: error:" in loud.stderr and loud.stdout.endswith("1 finding(s) in 1 session(s)\n")
    quiet = check("--quiet", str(broken_line))
    assert quiet.exit_code == 1
    assert quiet.stderr == ""
    assert quiet.stdout.splitlines()[0].startswith(f"{broken_line}:19: high kill-after-ready")
    assert "finding(s)" not in quiet.stdout
    clean = check("-q", S004)
    assert (clean.exit_code, clean.stdout) == (0, "")


def test_statistics_count_findings_per_rule_in_text_and_json() -> None:
    result = check("--statistics", str(SEEDS))
    assert result.exit_code == 1
    rows = [ln.split() for ln in result.stdout.splitlines()]
    assert rows[0] == ["4", "medium", "ignored-failure"]
    assert sum(int(r[0]) for r in rows) == 14  # every seed finding, counted once
    rank = {"high": 0, "medium": 1, "low": 2}
    assert rows == sorted(rows, key=lambda r: (-int(r[0]), rank[r[1]], r[2]))  # most first, then worst, then name
    doc = json.loads(check("--statistics", "--format", "json", str(SEEDS)).stdout)
    assert doc[0] == {"rule": "ignored-failure", "severity": "medium", "count": 4}
    assert check("--statistics", "--format", "sarif", S000).exit_code == 2


# -- colour ------------------------------------------------------------------------------------------

def _run_on_a_terminal(*args: str, env: dict[str, str]) -> str:
    """`analyzer check` with its stdout on a pseudo-terminal, as a user's shell runs it."""
    leader, follower = pty.openpty()
    full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    proc = subprocess.Popen([sys.executable, "-m", "analyzer", "check", *args], stdout=follower,
                            stderr=subprocess.DEVNULL, env={**full, "COLUMNS": "100", **env})
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait()
    os.close(leader)
    return b"".join(chunks).decode("utf-8")


def test_severity_and_rule_ids_are_coloured_on_a_terminal_only() -> None:
    tty = _run_on_a_terminal(S000, env={})
    assert "\x1b[31m\x1b[1mhigh\x1b[0m" in tty and "\x1b[36m\x1b[1mkill-after-ready\x1b[0m" in tty
    assert ANSI not in _run_on_a_terminal(S000, env={"NO_COLOR": "1"})
    piped = subprocess.run([sys.executable, "-m", "analyzer", "check", S000], capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")})
    assert piped.returncode == 1 and ANSI not in piped.stdout and "high kill-after-ready" in piped.stdout


def test_colour_never_lets_the_transcript_drive_the_terminal(tmp_path: Path) -> None:
    session = tmp_path / "s.session.yaml"
    session.write_text("""\
events:
  - user: Start the API on port 8000
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
  - bash: curl -sf localhost:8000/health
    output: '{"ok": true}'
  - user: "Ready \\e]0;pwned\\a"
  - bash: "pkill -f uvicorn; nohup uvicorn app:api --port 8000 --reload & # \\e[2J"
""", "utf-8")
    out = check(str(session), env={"FORCE_COLOR": "1"}).stdout
    assert ANSI in out  # coloured, yet
    assert "\x1b]" not in out and "\x1b[2J" not in out and "␛[2J" in out


# -- no PATH: the agents' own folders --------------------------------------------------------------

def _home(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": "", "XDG_DATA_HOME": ""}


def test_no_path_reads_the_agent_folders_that_exist_and_says_which(tmp_path: Path) -> None:
    project = tmp_path / ".claude" / "projects" / "-work-app"
    project.mkdir(parents=True)
    shutil.copy(SEEDS / "000-kill-after-ready.jsonl", project / "c71e0a54.jsonl")
    codex = tmp_path / ".codex" / "sessions" / "2026" / "01" / "02"
    codex.mkdir(parents=True)
    result = check("--format", "json", env=_home(tmp_path))
    assert result.exit_code == 1
    assert result.stderr == ("analyzer check: no PATH given; reading ~/.claude/projects (Claude Code), "
                             "~/.codex/sessions (Codex CLI)\n")
    [s] = json.loads(result.stdout)["sessions"]
    assert s["path"] == str(project / "c71e0a54.jsonl")


def test_no_path_and_no_agent_folder_is_a_usage_error(tmp_path: Path) -> None:
    result = check(env=_home(tmp_path))
    assert result.exit_code == 2
    assert result.stderr.startswith("analyzer: no PATH given, and none of the agents' session folders exists: "
                                    "~/.claude/projects (Claude Code), ~/.codex/sessions (Codex CLI), ")


# -- config exclude --------------------------------------------------------------------------------

def test_config_exclude_skips_found_files_but_never_a_named_one(tmp_path: Path) -> None:
    (tmp_path / "scratch").mkdir()
    shutil.copy(S000, tmp_path / "scratch" / "s.session.yaml")
    cfg = tmp_path / "analyzer.toml"
    cfg.write_text('exclude = ["scratch"]\n', "utf-8")
    assert check("--config", str(cfg), str(tmp_path)).exit_code == 2  # the only session was excluded
    named = check("--config", str(cfg), "--format", "json", str(tmp_path / "scratch" / "s.session.yaml"))
    assert named.exit_code == 1
    assert [s["path"] for s in json.loads(named.stdout)["sessions"]] == [str(tmp_path / "scratch" / "s.session.yaml")]
