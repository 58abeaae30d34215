"""The batch index as a user reads it: what went wrong, where, without clicking. Rows are built
from ``SessionResult``s directly (what a batch run keeps), so these tests need no worker pool."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html import unescape
from typing import Any

import pytest

from analyzer.batch.index import render_index, report_order, session_rows
from analyzer.batch.job import SessionResult
from analyzer.batch.outputs import summary_doc
from analyzer.batch.results import BatchRun
from analyzer.pipeline import analyze
from analyzer.report.json_doc import finding_dict
from tests.conftest import FIXTURES

SEED_002 = FIXTURES / "seeds" / "002-restart-30001-teardown.session.yaml"


def finding(rule: str, severity: str, index: int, message: str = "", fp: str = "") -> dict[str, Any]:
    return {"rule": rule, "severity": severity, "message": message or f"{rule} at {index}",
            "anchor": {"index": index, "ref": None, "line": index + 1}, "related": [],
            "instance": "local:8000", "fingerprint": fp or f"{rule}-{index}"}


def result(name: str, started: str | None, *findings: dict[str, Any], sid: str | None = None,
           status: str = "ok", error: str | None = None, times: list[str | None] | None = None) -> SessionResult:
    return SessionResult(session=name, key=f"/abs/{name}", path=name, status=status, error=error,
                         format="claude-code", agent="claude-code", session_id=sid or name, started=started,
                         ended=started, events=10, findings=list(findings),
                         finding_times=times if times is not None else [started] * len(findings),
                         report=f"sessions/{name}.html")


def names(run: BatchRun) -> list[str]:
    return [row.session for row in session_rows(run)]


def test_sessions_with_findings_come_first_worst_severity_then_newest() -> None:
    run = BatchRun([
        result("clean-new", "2026-05-01T10:00:00+00:00"),
        result("medium-old", "2026-01-01T10:00:00+00:00", finding("ignored-failure", "medium", 3)),
        result("high-old", "2026-01-02T10:00:00+00:00", finding("kill-after-ready", "high", 4)),
        result("high-new", "2026-04-01T10:00:00+00:00", finding("over-broad-kill", "high", 2),
               finding("ignored-failure", "medium", 5)),
        result("broken", None, status="error", error="broken: not a session log"),
        result("low-newest", "2026-06-01T10:00:00+00:00", finding("user-correction", "low", 1)),
    ])
    assert names(run) == ["high-new", "high-old", "medium-old", "low-newest", "broken", "clean-new"]


def test_a_session_dated_only_by_its_file_comes_after_those_dated_by_their_log() -> None:
    undated = result("copied-today", None, finding("over-broad-kill", "high", 2))
    undated.mtime_ns = int(datetime(2026, 12, 1, tzinfo=UTC).timestamp() * 1e9)
    run = BatchRun([undated, result("logged", "2026-01-01T10:00:00+00:00", finding("kill-after-ready", "high", 1))])
    assert names(run) == ["logged", "copied-today"]
    html = render_index(run, ["sessions/"])
    assert re.search(r'2026-12-01 00:00 UTC</span><span class="meta">file date: the log has no times', html)


def test_each_row_shows_its_findings_messages_instance_and_time_in_the_logs_zone() -> None:
    r = result("s", "2026-04-09T13:02:11+02:00",
               finding("over-broad-kill", "high", 9, "kills more than its target: <the relaunch>"),
               times=["2026-04-09T13:32:26+02:00"])
    html = render_index(BatchRun([r]), ["in/"])
    row = re.search(r'<tr id="s-1".*?</tr>', html, re.S)
    assert row is not None
    text = unescape(re.sub(r"<[^>]+>", "", row.group(0)))
    assert "over-broad-kill kills more than its target: <the relaunch>" in text
    assert "· local:8000" in text and "· 13:32:26" in text
    assert "2026-04-09 13:02 UTC+02:00" in text
    assert "&lt;the relaunch&gt;" in row.group(0) and "<the relaunch>" not in row.group(0)


def test_finding_links_land_on_the_same_finding_in_its_report() -> None:
    pytest.importorskip("analyzer.report.html")
    from analyzer.report.html import render_html

    a = analyze(SEED_002)
    dicts = [finding_dict(f) for f in a.findings]
    report = render_html(a)
    numbered = dict(re.findall(r'id="finding-(\d+)" data-rule="([^"]+)"', report))
    assert len(numbered) == len(dicts) >= 3
    for number, i in enumerate(report_order(dicts), 1):
        assert numbered[str(number)] == dicts[i]["rule"]
    r = result("seed-002", "2026-04-09T13:02:11+00:00", *dicts)
    html = render_index(BatchRun([r]), ["fixtures/"])
    links = re.findall(r'<a href="sessions/seed-002.html#finding-(\d+)"><span class="pill sev-(\w+)">', html)
    assert [n for n, _ in links] == [str(n) for n in range(1, len(dicts) + 1)]
    assert [s for _, s in links] == sorted((s for _, s in links), key=["high", "medium", "low"].index)


def test_the_same_session_read_from_two_files_is_one_row_and_counted_once() -> None:
    twin = [finding("kill-after-ready", "high", 7, fp="abc")]
    run = BatchRun([result("seeds/000.jsonl", "2026-03-14T02:40:00+00:00", *twin, sid="c71e"),
                    result("seeds/000.session.yaml", "2026-03-14T02:40:00+00:00", *twin, sid="c71e"),
                    result("other.jsonl", "2026-03-14T02:40:00+00:00", finding("kill-after-ready", "high", 7, fp="xyz"),
                           sid="c71e")])
    rows = session_rows(run)
    assert [row.session for row in rows] == ["other.jsonl", "seeds/000.jsonl"] or \
        [row.session for row in rows] == ["seeds/000.jsonl", "other.jsonl"]
    folded = next(row for row in rows if row.session == "seeds/000.jsonl")
    assert [t.name for t in folded.twins] == ["seeds/000.session.yaml"]
    html = render_index(run, ["fixtures/"])
    assert "2 sessions in 3 files" in html
    assert re.search(r"<b>2</b>findings", html)
    assert 'also read as <a href="sessions/seeds/000.session.yaml.html">' in html
    # the terminal summary and summary.json count the same two findings the index shows
    assert run.by_severity() == {"high": 2, "medium": 0, "low": 0}
    assert [(t.rule, t.findings, t.sessions) for t in run.per_rule()] == [("kill-after-ready", 2, 2)]
    assert summary_doc(run)["findings"] == 2 and summary_doc(run)["distinct_sessions"] == 2


def test_a_failed_session_shows_its_error_in_its_row() -> None:
    run = BatchRun([result("bad.jsonl", None, status="error", error="bad.jsonl:3: truncated <record>")])
    html = render_index(run, ["in/"])
    row = re.search(r'<tr class="failed".*?</tr>', html, re.S)
    assert row is not None and "line 3: truncated &lt;record&gt;" in row.group(0)


def test_findings_are_grouped_by_rule_with_links_most_severe_rule_first() -> None:
    run = BatchRun([
        result("a", "2026-01-01T10:00:00+00:00", finding("ignored-failure", "medium", 1),
               finding("ignored-failure", "medium", 2)),
        result("b", "2026-01-02T10:00:00+00:00", finding("kill-after-ready", "high", 3),
               finding("ignored-failure", "medium", 4)),
    ])
    html = render_index(run, ["in/"])
    groups = re.findall(r'<details class="rule" id="rule-([\w-]+)">\s*<summary>.*?<code>[\w-]+</code>: (.*?)<button',
                        html, re.S)
    assert groups == [("kill-after-ready", "1 finding in 1 session"), ("ignored-failure", "3 findings in 2 sessions")]
    body = html[html.index('id="rule-ignored-failure"'):]
    assert body.index('href="sessions/b.html#finding-2"') > 0 and 'href="sessions/a.html#finding-1"' in body
