"""A report read in one pass, in headless Chromium: the agent's Markdown renders (and stays inert),
a kill's long victim table folds after its first rows with a count, times name their zone, and a
finding does not repeat the summary's sentence. Screenshots: ``$BROWSER_SHOTS`` or tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from analyzer.pipeline import analyze
from analyzer.report.html import render_html
from tests.browser.conftest import shots

pytestmark = pytest.mark.browser

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")

WORKERS = "\n".join(f"  - bash: nohup uvicorn app:api --port 800{n} > /tmp/w{n}.log 2>&1 &" for n in range(1, 6))
SESSION = f"""agent: claude-code
start: 2026-04-09T13:02:11+02:00
step: 30
events:
  - user: Start five API workers on ports 8001 to 8005
{WORKERS}
  - bash: curl -s localhost:8001/health localhost:8005/health
    output: '{{"ok":true}}{{"ok":true}}'
  - assistant: |-
      **All five workers are up.** Ports:

      - `8001` and `8002`
      - `8003` to `8005`

      <img src=x onerror="document.title='owned'"> and ![chart](https://example.com/c.png) stay inert.
      The key is sk-ant-api03-{'A' * 40}.
  - user: Restart the worker on 8003
  - bash: pkill -f uvicorn; nohup uvicorn app:api --port 8003 > /tmp/w3.log 2>&1 &
  - assistant: Restarted the worker on 8003.
"""


@pytest.fixture
def page(tmp_path: Path, browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    src = tmp_path / "workers.session.yaml"
    src.write_text(SESSION, encoding="utf-8")
    report = tmp_path / "workers.html"
    report.write_text(render_html(analyze(src)), encoding="utf-8")
    requests: list[str] = []
    errors: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    try:
        context.route("**/*", lambda route: (requests.append(route.request.url), route.continue_()
                                             if route.request.url.startswith(("file:", "data:")) else route.abort()))
        pg = context.new_page()
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(report.as_uri())
        yield pg
        pg.screenshot(path=str(shots(tmp_path) / f"report-{request.node.name}.png"), full_page=True)
        assert errors == [] and [u for u in requests if not u.startswith("file:")] == []
        assert pg.title() != "owned"
    finally:
        context.close()


def test_the_agents_markdown_renders_and_stays_inert(page: Any) -> None:
    text = page.locator("article.ev[data-kind=assistant] .md").first
    sync_api.expect(text.locator("strong")).to_have_text("All five workers are up.")
    assert text.locator("li").count() == 2 and text.locator("li code").first.inner_text() == "8001"
    assert text.locator("img, script").count() == 0
    shown = text.inner_text()
    assert '<img src=x onerror="document.title=\'owned\'">' in shown  # the tag is shown as text
    assert "sk-ant-api03-AAAA" not in shown  # still redacted


def test_a_long_victim_table_and_evidence_list_fold_after_their_first_rows(page: Any) -> None:
    kill = page.locator("article.finding .kills").first
    assert kill.locator(":scope > table tr").count() == 3
    more = kill.locator("details.more-rows")
    sync_api.expect(more.locator("summary")).to_have_text("3 more processes this kill hits")
    sync_api.expect(more.locator("table")).to_be_hidden()
    more.locator("summary").click()
    sync_api.expect(more.locator("table")).to_be_visible()
    assert more.locator("tr").count() == 4  # two more servers, its own shell, and the relaunch
    sync_api.expect(more).to_contain_text("uvicorn app on local:8005")
    # the launches the pattern hit: the first three shown, the rest folded the same way
    evidence = page.locator("#finding-1 > details.more-rows")
    sync_api.expect(evidence.locator("summary")).to_have_text("2 more pieces of evidence")
    sync_api.expect(evidence.locator("li").first).to_be_hidden()
    evidence.locator("summary").click()
    sync_api.expect(evidence.locator("li")).to_have_count(2)
    sync_api.expect(evidence.locator("li").last).to_be_visible()


def test_times_name_the_logs_zone(page: Any) -> None:
    sync_api.expect(page.locator("header.top .meta")).to_contain_text("13:02:11 → 13:07:11 UTC+02:00")
    sync_api.expect(page.locator("article.finding .where").first).to_contain_text("13:06:41 UTC+02:00")
    sync_api.expect(page.locator("#event-9 .idx").locator("..")).to_contain_text("UTC+02:00")


def test_a_finding_leads_with_its_message_not_the_summarys_sentence(page: Any) -> None:
    story = page.locator("#story-1").inner_text()
    finding = page.locator("#finding-1")
    assert finding.locator("p.lead").inner_text().startswith("kills more than its target")
    assert story.split(" finding 1")[0] not in finding.inner_text()
    finding.locator("p.lead a").click()
    sync_api.expect(page.locator("#story-1")).to_be_in_viewport()
