"""The batch index of the bundled fixtures in a real browser (Debian's Chromium through Playwright):
sessions with findings on top with readable messages, the filter, sorting the way a column means,
an 800 px window with nothing cut, finding links that land in the report and a way back.

Screenshots go to ``$BROWSER_SHOTS`` (a folder) when set, else the test's temporary folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analyzer.cli import main
from tests.browser.conftest import shots
from tests.conftest import FIXTURES

pytestmark = pytest.mark.browser


sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's quick start: ``analyzer batch fixtures/ -o postmortems``."""
    out = tmp_path_factory.mktemp("postmortems")
    run = CliRunner().invoke(main, ["batch", str(FIXTURES), "-o", str(out), "--jobs", "2"], catch_exceptions=False)
    assert run.exit_code in (0, 1), run.output
    return out / "index.html"


def open_page(browser: Any, url: str, width: int) -> tuple[Any, Any, list[str]]:
    context = browser.new_context(viewport={"width": width, "height": 900}, reduced_motion="reduce")
    errors: list[str] = []
    # nothing but the output folder's own files: the index works offline
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(("file:", "data:"))
                  else route.abort())
    pg = context.new_page()
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.goto(url)
    return context, pg, errors


@pytest.fixture
def page(index: Path, browser: Any, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    context, pg, errors = open_page(browser, index.as_uri(), 1280)
    try:
        yield pg
        pg.screenshot(path=str(shots(tmp_path) / f"index-{request.node.name}.png"), full_page=True)
        assert errors == []
    finally:
        context.close()


def visible_rows(pg: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pg.evaluate("""() => Array.from(document.querySelectorAll('#sessions tbody tr'))
      .filter(r => !r.hidden).map(r => ({
        name: r.querySelector('td.session').innerText, worst: r.getAttribute('data-worst'),
        when: r.getAttribute('data-when'), day: r.getAttribute('data-day'), agent: r.getAttribute('data-agent'),
        rules: Array.from(r.querySelectorAll('li[data-rule]')).filter(li => !li.hidden)
          .map(li => li.getAttribute('data-rule')),
        findings: Array.from(r.querySelectorAll('li[data-rule]')).filter(li => !li.hidden).map(li => li.innerText),
      }))""")
    return rows


def test_top_rows_are_the_sessions_with_findings_with_their_messages(page: Any) -> None:
    rows = visible_rows(page)
    with_findings = [r for r in rows if r["findings"]]
    assert with_findings and rows[:len(with_findings)] == with_findings
    worst = [r["worst"][0] for r in with_findings]
    assert worst == sorted(worst, reverse=True)
    top = rows[0]["findings"][0]
    assert top.split()[0] == "HIGH" and len(top) > 40  # a readable message, not a bare count
    # the four seed incidents are listed once each, their JSONL twins folded into them
    seeds = [r["name"] for r in rows if r["name"].startswith("seeds/")]
    assert len(seeds) == 4 and all("also read as" in s for s in seeds)
    # as the README says: three incidents and the clean restart that is their negative control
    assert sum(bool(r["findings"]) for r in rows if r["name"].startswith("seeds/")) == 3
    seed_002 = next(r for r in rows if r["name"].startswith("seeds/002-"))
    assert {"over-broad-kill", "unrequested-teardown", "ignored-failure"} <= set(seed_002["rules"])


def test_the_filter_narrows_rows_and_findings(page: Any) -> None:
    total = len(visible_rows(page))
    page.select_option("select[name=rule]", "over-broad-kill")
    rows = visible_rows(page)
    assert 0 < len(rows) < total and all(r["rules"] and set(r["rules"]) == {"over-broad-kill"} for r in rows)
    assert page.locator("#shown").inner_text() == f"{len(rows)} of {total} sessions shown"
    page.click("button[type=reset]")
    page.fill("input[name=q]", "10.1.230.181:30001")
    assert [r["name"].split("\n")[0] for r in visible_rows(page)] == ["seeds/002-restart-30001-teardown.jsonl"]
    page.click("button[type=reset]")
    page.select_option("select[name=severity]", "2")
    assert all(r["findings"] and all(f.split()[0] in ("HIGH", "MEDIUM") for f in r["findings"])
               for r in visible_rows(page))
    page.click("button[type=reset]")
    page.fill("input[name=from]", "2026-03-14")
    page.fill("input[name=to]", "2026-04-30")
    days = [r["day"] for r in visible_rows(page)]
    assert days and all("2026-03-14" <= d <= "2026-04-30" for d in days)
    page.click("button[type=reset]")
    page.select_option("select[name=agent]", "codex")
    assert {r["agent"] for r in visible_rows(page)} == {"codex"}
    page.click("button[type=reset]")
    page.check("input[name=only]")
    assert all(r["findings"] for r in visible_rows(page))
    page.click("button[type=reset]")
    assert len(visible_rows(page)) == total


def test_a_rules_show_these_sessions_button_filters_by_it(page: Any) -> None:
    page.click("#rule-kill-after-ready summary button")
    rows = visible_rows(page)
    assert rows and all(r["rules"] == ["kill-after-ready"] for r in rows)


def test_first_click_sorts_the_way_the_column_means(page: Any) -> None:
    page.click("th[data-key=when] button")
    when = [r["when"] for r in visible_rows(page)]
    assert when[0] == max(when) and when == sorted(when, reverse=True)  # newest first
    page.click("th[data-key=worst] button")
    worst = [r["worst"] for r in visible_rows(page)]
    assert worst == sorted(worst, reverse=True)  # most severe first
    page.click("th[data-key=name] button")
    names = [r["name"].lower() for r in visible_rows(page)]
    assert names[0] < names[-1]  # A to Z


def test_an_800px_window_cuts_no_column_and_wraps_no_word_letter_by_letter(index: Path, browser: Any,
                                                                           tmp_path: Path) -> None:
    context, pg, errors = open_page(browser, index.as_uri(), 800)
    try:
        assert pg.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        widths = pg.evaluate("""() => Array.from(document.querySelectorAll('#sessions thead th'))
          .map(th => th.getBoundingClientRect().width)""")
        assert len(widths) == 3 and min(widths) >= 150, widths
        # nothing spills out of its cell into the next column
        spills = pg.evaluate("""() => Array.from(document.querySelectorAll('#sessions td'))
          .filter(td => td.scrollWidth > td.clientWidth + 1).map(td => td.innerText)""")
        assert spills == []
        # the filter's controls and every finding line sit inside the window
        right = pg.evaluate("""() => Math.max(...Array.from(document.querySelectorAll(
          'form.filter input, form.filter select, td.findings li, td.session a')).map(e => e.getBoundingClientRect().right))""")
        assert right <= 800
        # no word is broken letter by letter: a long word may wrap (a path), but every line of it
        # holds at least 8 characters
        narrow = pg.evaluate("""() => {
          const walker = document.createTreeWalker(document.getElementById('sessions'), NodeFilter.SHOW_TEXT);
          const bad = [];
          for (let n = walker.nextNode(); n; n = walker.nextNode()) {
            for (const m of n.data.matchAll(/\\S{8,}/g)) {
              const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
              const lines = new Set(Array.from(r.getClientRects()).filter(c => c.width > 0).map(c => Math.round(c.top)));
              if (lines.size > Math.ceil(m[0].length / 8)) { bad.push(m[0]); }
            }
          }
          return bad;
        }""")
        assert narrow == []
        pg.screenshot(path=str(shots(tmp_path) / "index-800.png"), full_page=True)
        assert errors == []
    finally:
        context.close()


def test_a_finding_link_lands_on_that_finding_and_the_report_links_back(page: Any, index: Path) -> None:
    link = page.locator("#sessions td.findings li a").first
    rule = link.locator("code").inner_text()
    link.click()
    page.wait_for_load_state()
    assert "#finding-" in page.url
    target = page.locator(f"#{page.url.rsplit('#', 1)[1]}")
    sync_api.expect(target).to_be_in_viewport()
    assert target.get_attribute("data-rule") == rule
    page.click("a.back")
    page.wait_for_load_state()
    assert Path(page.url.split("#")[0].removeprefix("file://")) == index
