"""Headless Debian Chromium through Playwright for the browser tests; they skip cleanly when either
is absent (``apt-get install chromium``; ``pip install -e '.[test]'``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent (apt-get install chromium; .ci/run does it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def shots(tmp_path: Path) -> Path:
    """Where screenshots go: ``$BROWSER_SHOTS`` when set (to look at them), else ``tmp_path``."""
    import os

    where = Path(os.environ["BROWSER_SHOTS"]) if os.environ.get("BROWSER_SHOTS") else tmp_path
    where.mkdir(parents=True, exist_ok=True)
    return where
