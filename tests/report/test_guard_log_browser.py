"""The guard's decisions as a person sees them in headless Chromium: the Guard line in the summary
and each badge visible on its timeline row, reached from the event link."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from analyzer.pipeline import analyze
from analyzer.report.guard_log import read_guard_log
from analyzer.report.html import render_html

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
HERE = Path(__file__).resolve().parent / "guard"

if not CHROMIUM.exists():
    pytest.skip("/usr/bin/chromium is absent (apt-get install chromium; .ci/run does it)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")


def test_guard_badges_are_visible_on_their_rows(tmp_path: Path) -> None:
    analysis = analyze(HERE / "session.session.yaml")
    report = tmp_path / "guard.html"
    report.write_text(render_html(analysis, guard=read_guard_log(HERE / "guard.jsonl", analysis.session)), "utf-8")
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser: Any = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                          args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        try:
            pg = browser.new_page(viewport={"width": 1280, "height": 900})
            pg.on("pageerror", lambda e: errors.append(str(e)))
            pg.goto(report.as_uri())
            expect = sync_api.expect
            expect(pg.locator("#guard-summary")).to_be_visible()
            expect(pg.locator("#guard-summary")).to_contain_text("1 denied, 1 asked")
            pg.goto(report.as_uri() + "#event-7")
            deny = pg.locator("#event-7 .guard.deny")
            expect(deny).to_be_in_viewport()
            expect(deny).to_contain_text("over-broad-kill")
            box = deny.bounding_box()
            assert box is not None and box["height"] > 20 and box["width"] > 300
            # a different colour from the ask badge: the decision reads at a glance
            colour = deny.evaluate("e => getComputedStyle(e).backgroundColor")
            ask = pg.locator("#event-4 .guard.ask").evaluate("e => getComputedStyle(e).backgroundColor")
            assert colour != ask and "rgba(0, 0, 0, 0)" not in (colour, ask)
            pg.screenshot(path=str(tmp_path / "guard.png"))  # looked at by hand; not committed
        finally:
            browser.close()
    assert errors == []
