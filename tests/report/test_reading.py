"""What makes a report read in one pass, checked on the HTML itself: Markdown that stays inert and
redacted, times with their zone, long victim tables folded, no finding repeating the summary, and
no summary claiming the output shows what only an exit status says."""

from __future__ import annotations

import re
from pathlib import Path

from analyzer.pipeline import analyze
from analyzer.report._markdown import markdown
from analyzer.report._when import zone
from analyzer.report.html import render_html
from tests.conftest import FIXTURES

SEED_002 = FIXTURES / "seeds" / "002-restart-30001-teardown.session.yaml"


def session(tmp_path: Path, body: str, start: str = "2026-04-09T13:02:11Z") -> Path:
    p = tmp_path / "s.session.yaml"
    p.write_text(f"agent: claude-code\nstart: {start}\nstep: 30\nevents:\n{body}", encoding="utf-8")
    return p


def test_markdown_keeps_tags_as_text_and_fetches_no_image() -> None:
    html = str(markdown("**up** <script>x()</script> ![a](https://example.com/a.png) [b](javascript:alert(1))"))
    assert "<strong>up</strong>" in html and "&lt;script&gt;" in html
    assert "<img" not in html and "<script" not in html and 'href="javascript:' not in html


def test_the_agents_message_is_markdown_redacted_first(tmp_path: Path) -> None:
    key = "sk-ant-api03-" + "B" * 40
    src = session(tmp_path, f"  - user: hi\n  - assistant: |-\n      **Done.** The key `{key}` works.\n")
    html = render_html(analyze(src))
    assert re.search(r'<div class="text md"><p><strong>Done\.</strong> The key <code>[^<]*REDACTED', html)
    assert key not in html


def test_times_name_their_zone_utc_unless_the_log_says_otherwise(tmp_path: Path) -> None:
    body = "  - user: Start the API on port 8000\n  - bash: nohup uvicorn app:api --port 8000 &\n"
    utc = render_html(analyze(session(tmp_path, body)))
    assert "13:02:11 → 13:02:41 UTC" in utc
    local = render_html(analyze(session(tmp_path, body, start="2026-04-09T13:02:11+05:30")))
    assert "13:02:11 → 13:02:41 UTC+05:30" in local  # the log's own clock, not converted


def test_zone_names() -> None:
    from datetime import UTC, datetime, timedelta, timezone

    assert zone(datetime(2026, 1, 1, tzinfo=UTC)) == "UTC"
    assert zone(datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=-5, minutes=-30)))) == "UTC-05:30"


def test_a_finding_does_not_repeat_the_summary_sentence() -> None:
    html = render_html(analyze(SEED_002))
    story = re.findall(r'<li class="sev-\w+" id="story-(\d+)"[^>]*>(.*?) <a class="go"', html, re.S)
    assert len(story) == 3
    for number, sentence in story:
        finding = html[html.index(f'id="finding-{number}"'):]
        finding = finding[:finding.index("</article>")]
        assert sentence not in finding


def test_the_killed_shell_that_went_on_is_not_said_to_run_nothing_more() -> None:
    html = render_html(analyze(SEED_002))
    summary = html[html.index('id="summary"'):html.index('id="impact"')]
    assert "The output shows later commands in that shell still ran." in summary
    findings = html[html.index('id="findings"'):html.index('id="lifecycle"')]
    # the model's "never run" is struck through, and the observed outcome is said beside it
    assert findings.count("<s>") == findings.count("but the output shows later commands in this shell ran") >= 1
    assert not re.search(r'never run</span>(?!</s>)', findings.replace("</s></span>", "</span></s>"))


def test_long_victim_tables_fold_after_three_rows(tmp_path: Path) -> None:
    workers = "".join(f"  - bash: nohup uvicorn app:api --port 800{n} &\n" for n in range(1, 7))
    src = session(tmp_path, "  - user: Start six workers on 8001 to 8006\n" + workers
                  + "  - user: Restart the worker on 8003\n  - bash: pkill -f 'uvicorn app:api'\n")
    html = render_html(analyze(src))
    kills = html[html.index('<div class="kills">'):]
    first = kills[:kills.index("</table>")]
    assert first.count("<tr") == 3
    hits = re.search(r"hits (\d+) processes", kills)
    more = re.search(r'<details class="more-rows"><summary>(\d+) more processes this kill hits</summary>', kills)
    assert hits and more and int(more.group(1)) == int(hits.group(1)) - 3 >= 3
    finding = html[html.index('id="finding-1"'):]
    finding = finding[:finding.index("</article>")]
    shown = finding[:finding.index("more pieces of evidence")]
    assert shown.count('<li data-role="') == 4  # the anchor and three of the processes it hit
