"""``analyzer batch --guard-log``: every session's report shows that session's decisions from the
shared log, as ``report --guard-log`` does, and a log that changed renders the reports again."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from analyzer.cli import main

GUARD = Path(__file__).resolve().parents[1] / "report" / "guard"  # the report's session and its log


def _batch(sessions: Path, out: Path, log: Path) -> str:
    result = CliRunner().invoke(main, ["batch", str(sessions), "-o", str(out), "-j", "1", "--guard-log", str(log)])
    assert result.exit_code == 0, result.output
    return result.output


def _badges(out: Path) -> list[str]:
    (report,) = (out / "sessions").glob("*.html")
    html = report.read_text("utf-8")
    return [v for v in ("ask", "warn", "deny", "open") if f'data-guard="{v}"' in html]


def test_each_report_shows_its_sessions_decisions_and_a_changed_log_renders_again(tmp_path: Path) -> None:
    sessions, out, log = tmp_path / "sessions", tmp_path / "out", tmp_path / "guard.jsonl"
    sessions.mkdir()
    shutil.copy(GUARD / "session.session.yaml", sessions)
    shutil.copy(GUARD / "guard.jsonl", log)
    assert "1 analyzed" in _batch(sessions, out, log)
    assert _badges(out) == ["ask", "warn", "deny", "open"]
    assert "from the cache" in _batch(sessions, out, log) and "0 analyzed" in _batch(sessions, out, log)
    # a new decision may belong to any session: the reports are made again
    with log.open("a") as f:
        f.write('{"session": "someone-else", "command": "ls", "verdict": "allow"}\n')
    assert "1 analyzed" in _batch(sessions, out, log)


def test_a_missing_log_is_a_usage_error(tmp_path: Path) -> None:
    sessions = tmp_path / "s"
    sessions.mkdir()
    shutil.copy(GUARD / "session.session.yaml", sessions)
    result = CliRunner().invoke(main, ["batch", str(sessions), "-o", str(tmp_path / "o"), "--guard-log",
                                       str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 2 and "nope.jsonl" in result.output
