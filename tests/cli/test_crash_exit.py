"""An internal error exits 3, never 1 (findings) or 2 (usage): CI must tell a crash from a verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.cli import EXIT_CRASH, main
from analyzer.pipeline import Analyzer
from tests.conftest import FIXTURES

S001 = str(FIXTURES / "seeds" / "001-relaunch-after-ready.session.yaml")
S004 = str(FIXTURES / "seeds" / "004-restart-sglang-systemd.session.yaml")


@pytest.fixture
def analysis_crashes_on_001(monkeypatch: pytest.MonkeyPatch) -> None:
    real = Analyzer.analyze_session

    def analyze(self: Analyzer, session: object) -> object:
        if "001-" in str(getattr(session, "path", "")):
            raise ZeroDivisionError("planted bug")
        return real(self, session)  # type: ignore[arg-type]

    monkeypatch.setattr(Analyzer, "analyze_session", analyze)


@pytest.mark.usefixtures("analysis_crashes_on_001")
def test_a_crash_in_check_exits_3_and_the_json_document_names_it() -> None:
    result = CliRunner().invoke(main, ["check", "--format", "json", S001, S004])
    assert result.exit_code == EXIT_CRASH == 3
    doc = json.loads(result.stdout)
    assert [s["path"] for s in doc["sessions"]] == [S004]  # the other file is still checked
    assert any(e["path"] == S001 and "internal error: ZeroDivisionError: planted bug" in e["message"]
               for e in doc["errors"])
    assert "Traceback" in result.stderr


@pytest.mark.usefixtures("analysis_crashes_on_001")
def test_a_crash_on_the_only_file_still_prints_the_document() -> None:
    for fmt in ("json", "sarif", "github"):
        result = CliRunner().invoke(main, ["check", "--format", fmt, S001])
        assert result.exit_code == EXIT_CRASH
        assert "planted bug" in result.stdout
        if fmt == "sarif":
            assert json.loads(result.stdout)["runs"][0]["invocations"][0]["executionSuccessful"] is False
    annotation = CliRunner().invoke(main, ["check", "--format", "github", S001]).stdout
    assert annotation.startswith(f"::error file={S001},title=analyzer%3A internal error::internal error: ")


@pytest.mark.usefixtures("analysis_crashes_on_001")
def test_a_crash_in_batch_fails_only_that_session(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["batch", "--jobs", "1", "--format-reports", "none", S001, S004,
                                       "-o", str(tmp_path / "out")])
    assert result.exit_code == 0  # one session read: the batch ran; the crash is listed, not fatal
    assert "1 failed" in result.stdout and "ZeroDivisionError" in result.stdout
    alone = CliRunner().invoke(main, ["batch", "--jobs", "1", "--format-reports", "none", S001,
                                      "-o", str(tmp_path / "alone")])
    assert alone.exit_code == 2  # nothing could be read


@pytest.mark.usefixtures("analysis_crashes_on_001")
def test_a_crash_in_another_command_exits_3_with_the_traceback() -> None:
    result = CliRunner().invoke(main, ["report", S001, "-o", "/dev/null"])
    assert result.exit_code == EXIT_CRASH
    assert "ZeroDivisionError" in result.stderr
    assert "internal error" in result.stderr


def test_usage_errors_keep_exit_2() -> None:
    assert CliRunner().invoke(main, ["check", "--format", "xml", S001]).exit_code == 2
