"""`analyzer report --guard-log`: the live guard's decisions on the rows they were about, the Guard
line of the summary, and a hostile log read without a crash (tests/report/guard/: a hand-written
session and its decision log, with another session's decision and broken lines mixed in)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from analyzer.cli import main
from analyzer.ingest import load
from analyzer.pipeline import analyze
from analyzer.report.guard_log import attach, read_guard_log
from analyzer.report.html import render_html
from tests.report.htmlcheck import Element, Page, parse

HERE = Path(__file__).resolve().parent / "guard"
SESSION = HERE / "session.session.yaml"
LOG = HERE / "guard.jsonl"


def _guards(page: Page, index: int) -> list[Element]:
    return [e for e in page.by_id(f"event-{index}").iter() if e.has_class("guard")]


def _text(e: Element) -> str:
    return " ".join(e.all_text.split())


def _report(tmp_path: Path, *args: str) -> tuple[Page, str]:
    out = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["report", str(SESSION), "-o", str(out), "--guard-log", str(LOG), *args])
    assert result.exit_code == 0, result.output
    return parse(out.read_text("utf-8")), result.output


def test_each_decision_is_a_badge_on_the_row_it_was_about(tmp_path: Path) -> None:
    page, _ = _report(tmp_path)
    by_row = {i: [g.attrs["data-guard"] for g in _guards(page, i)] for i in range(9)}
    # 4: the kill (tool_use_id); 6: the second launch, by text and time (the first launch at
    # event 1 has the same command); 7: the pkill; 8: a decision that failed open
    assert by_row == {0: [], 1: [], 2: [], 3: [], 4: ["ask"], 5: [], 6: ["warn"], 7: ["deny"], 8: ["open"]}
    ask = _text(_guards(page, 4)[0])
    assert ask.startswith("guard asked the user kill-after-ready · 12 ms")
    assert "is ready and in use" in ask
    assert _text(_guards(page, 7)[0]).startswith("guard denied over-broad-kill · 7 ms")
    assert "allowed with a warning duplicate-launch" in _text(_guards(page, 6)[0])
    assert "did not start within the time budget" in _text(_guards(page, 8)[0])
    assert page.by_id("event-4").attrs.get("data-guard") == "1"


def test_a_decision_of_another_session_is_left_out(tmp_path: Path) -> None:
    page, _ = _report(tmp_path)
    # it names this session's kill by tool_use_id, but its session id is another one
    assert "OTHER SESSION" not in page.html
    assert [g.attrs["data-guard"] for g in _guards(page, 4)] == ["ask"]
    assert "1 of other sessions left out" in page.section_text("guard-summary")


def test_the_summary_counts_the_decisions(tmp_path: Path) -> None:
    page, output = _report(tmp_path)
    line = page.section_text("guard-summary")
    assert line.startswith("6 commands judged, 1 denied, 1 asked, 1 allowed with a warning, 1 failed open")
    assert "not found on the timeline" not in line
    wrote = next(ln for ln in output.splitlines() if ln.startswith("wrote "))
    assert wrote.startswith(f"wrote {tmp_path / 'r.html'} (9 events, ") and wrote.endswith(", 6 guard decisions)")


def test_broken_log_lines_are_diagnostics_not_a_crash(tmp_path: Path) -> None:
    page, output = _report(tmp_path)
    stderr = [ln for ln in output.splitlines() if ln.startswith(str(LOG))]
    lines = {int(ln.split(":")[1]): ln for ln in stderr}
    assert sorted(lines) == [3, 6, 7, 10, 11]
    assert "not valid JSON" in lines[3]
    assert "verdict 'maybe' is not one of allow, warn, ask, deny" in lines[6]
    assert "binary data" in lines[7]
    assert "warning: latency_ms of the wrong type" in lines[10]  # the decision itself is still read
    assert "a list, not a guard decision object" in lines[11]
    table = page.section_text("appendix")
    assert "Guard log diagnostics" in table and f"{LOG}:6" in table
    assert "5 log diagnostics" in page.section_text("guard-summary")


def test_reasons_are_escaped_and_redacted(tmp_path: Path) -> None:
    page, _ = _report(tmp_path)
    ask = _text(_guards(page, 4)[0])
    assert "<script>alert(1)</script>" in ask, "shown as text"
    assert not [e for e in page.by_id("timeline").iter() if e.tag == "script"]
    assert "ghp_" not in page.html and "token [REDACTED]" in ask
    raw, _ = _report(tmp_path, "--no-redact")
    assert "ghp_R2xhc3NTbGlwcGVyU2VjcmV0MDEyMzQ1Njc4" in _text(_guards(raw, 4)[0])


def test_without_a_session_id_the_transcript_path_decides(tmp_path: Path) -> None:
    transcript = tmp_path / "s.session.yaml"
    transcript.write_text(SESSION.read_text("utf-8").replace("session_id: 0f3c2b6a-guard-report-test\n", ""),
                          encoding="utf-8")
    session = load(transcript)
    assert session.session_id is None
    log = tmp_path / "guard.jsonl"
    records = [{"transcript": str(transcript), "tool_use_id": "toolu_05pkill", "command": "pkill -9 -f python",
                "verdict": "deny", "session": "abc"},
               {"transcript": str(tmp_path / "other.jsonl"), "tool_use_id": "toolu_03kill", "command": "pkill -f vllm",
                "verdict": "deny"}]
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    guard = read_guard_log(log, session)
    assert [r.line for r in guard.records] == [1] and guard.other_sessions == 1
    assert {i: [r.verdict for r in rs] for i, rs in attach(guard.records, session).items()} == {7: ["deny"]}


def test_a_decision_far_from_every_call_with_its_text_is_counted_not_placed(tmp_path: Path) -> None:
    log = tmp_path / "guard.jsonl"
    log.write_text(json.dumps({"ts": "2026-05-02T12:00:00+0000", "session": "0f3c2b6a-guard-report-test",
                               "command": "pkill -f vllm", "verdict": "deny"}) + "\n", encoding="utf-8")
    analysis = analyze(SESSION)
    guard = read_guard_log(log, analysis.session)
    assert attach(guard.records, analysis.session) == {}
    page = parse(render_html(analysis, guard=guard))
    assert page.section_text("guard-summary").startswith("1 command judged, 1 denied, 0 asked")
    assert "1 not found on the timeline" in page.section_text("guard-summary")
    assert not [e for e in page.by_id("timeline").iter() if e.has_class("guard")]


def test_an_unreadable_log_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["report", str(SESSION), "-o", str(tmp_path / "r.html"),
                                       "--guard-log", str(tmp_path / "missing.jsonl")])
    assert result.exit_code == 2
    assert "missing.jsonl: cannot read the guard log" in result.output
    assert not (tmp_path / "r.html").exists()


def test_without_the_option_there_is_no_guard_line(tmp_path: Path) -> None:
    page = parse(render_html(analyze(SESSION)))
    assert "guard-summary" not in page.ids
    assert not [e for e in page.root.iter() if e.has_class("guard")]
