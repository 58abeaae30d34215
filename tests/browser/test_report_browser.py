"""The seed 002 report in a real browser (Debian's Chromium through Playwright): finding links land
on visible events, outputs unfold, the swimlane has its lanes, filters work, and the page asks the
network for nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from analyzer.pipeline import analyze
from analyzer.report.html import render_html

pytestmark = pytest.mark.browser

SEED_002 = Path(__file__).resolve().parents[2] / "fixtures" / "seeds" / "002-restart-30001-teardown.session.yaml"

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")


@pytest.fixture(scope="module")
def analysis() -> Any:
    return analyze(SEED_002)


@pytest.fixture
def page(tmp_path: Path, analysis: Any, browser: Any) -> Iterator[tuple[Any, list[str], list[str]]]:
    report = tmp_path / "report-002.html"
    report.write_text(render_html(analysis), encoding="utf-8")
    url = report.as_uri()
    blocked: list[str] = []
    errors: list[str] = []

    def guard(route: Any) -> None:
        req = route.request.url
        if req.split("#", 1)[0] == url or req.startswith("data:"):
            route.continue_()
        else:
            blocked.append(req)
            route.abort()

    context = browser.new_context(viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    try:
        context.route("**/*", guard)
        pg = context.new_page()
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(url)
        yield pg, blocked, errors
        shot = tmp_path / "report-002.png"
        pg.screenshot(path=str(shot))
        assert shot.stat().st_size > 10_000
    finally:
        context.close()


def in_viewport(pg: Any, selector: str) -> None:
    sync_api.expect(pg.locator(selector)).to_be_in_viewport()


def test_each_finding_links_to_a_visible_event(page: tuple[Any, list[str], list[str]], analysis: Any) -> None:
    pg, blocked, errors = page
    findings = pg.locator("article.finding")
    assert findings.count() == len(analysis.findings) == 3
    for i in range(findings.count()):
        link = findings.nth(i).locator("a.anchor-link")
        href = link.get_attribute("href")
        assert href is not None and href.startswith("#event-")
        link.click()
        in_viewport(pg, href)
        sync_api.expect(pg.locator(href)).to_be_visible()
        pg.evaluate("window.scrollTo(0, 0)")
    # and back: the badge in the timeline goes to the finding
    pg.locator("#event-9 .badges a").first.click()
    in_viewport(pg, "#finding-1")
    assert blocked == [] and errors == []


def test_folded_output_opens_on_click(page: tuple[Any, list[str], list[str]]) -> None:
    pg, blocked, errors = page
    details = pg.locator("#event-9 details.output")
    out = details.locator("pre.out")
    assert details.get_attribute("open") is None
    sync_api.expect(out).to_be_hidden()
    details.locator("summary").click()
    assert details.get_attribute("open") is not None
    sync_api.expect(out).to_be_visible()
    sync_api.expect(out).to_contain_text("148137 Killed")
    assert blocked == [] and errors == []


def test_swimlane_lanes_and_marker_links(page: tuple[Any, list[str], list[str]], analysis: Any) -> None:
    pg, blocked, errors = page
    lanes = pg.locator("#lifecycle svg g.lane.instance")
    assert lanes.count() == len(analysis.world.instances) == 3
    assert sorted(lanes.nth(i).get_attribute("data-lane") for i in range(3)) == sorted(analysis.world.instances)
    kill = pg.locator('#lifecycle g[data-lane="10.1.230.181:8000"] a:has(path.kill)').first
    kill.click()
    in_viewport(pg, "#event-9")
    assert blocked == [] and errors == []


def test_filter_by_kind_hides_and_a_link_reveals(page: tuple[Any, list[str], list[str]]) -> None:
    pg, blocked, errors = page
    form = pg.locator("#filters")
    sync_api.expect(form).to_be_visible()  # JS unhid it
    sync_api.expect(pg.locator("#shown-count")).to_have_text("18 of 18 events shown")
    form.locator("input[name=kind][value=assistant]").uncheck()
    sync_api.expect(pg.locator("#event-5")).to_be_hidden()
    sync_api.expect(pg.locator("#shown-count")).to_have_text("13 of 18 events shown")
    form.locator("input[name=q]").fill("pkill")
    sync_api.expect(pg.locator("#shown-count")).to_have_text("1 of 18 events shown")
    # a link to a hidden event clears the filters and lands on it
    pg.locator('#summary a[href="#event-10"]').first.click()
    in_viewport(pg, "#event-10")
    sync_api.expect(pg.locator("#shown-count")).to_have_text("18 of 18 events shown")
    assert blocked == [] and errors == []


def test_readable_without_javascript(tmp_path: Path, analysis: Any, browser: Any) -> None:
    report = tmp_path / "report-002.html"
    report.write_text(render_html(analysis), encoding="utf-8")
    context = browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=False,
                                  reduced_motion="reduce")
    try:
        pg = context.new_page()
        pg.goto(report.as_uri())
        sync_api.expect(pg.locator("#filters")).to_be_hidden()  # the JS-only controls stay out of the way
        sync_api.expect(pg.locator("#summary ol.story li")).to_have_count(3)
        details = pg.locator("#event-9 details.output")
        details.locator("summary").click()
        sync_api.expect(details.locator("pre.out")).to_be_visible()
        pg.locator("article.finding").first.locator("a.anchor-link").click()
        in_viewport(pg, "#event-9")
        pg.screenshot(path=str(tmp_path / "report-002-nojs.png"))
    finally:
        context.close()
