"""Compiled report templates kept between processes: the same page, a changed template used at
once, and an unusable cache only slower."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from analyzer import _usercache
from analyzer.pipeline import Analysis, analyze
from analyzer.report import _env
from analyzer.report.html import render_html

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "fixtures" / "seeds" / "002-restart-30001-teardown.session.yaml"


@pytest.fixture(scope="module")
def analysis() -> Analysis:
    return analyze(SEED)


@pytest.fixture
def fresh_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A cache folder of its own, and the process's environment made again on each render."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(_usercache.CACHE_ENV, str(folder))
    _env.environment.cache_clear()
    yield folder
    _env.environment.cache_clear()


def _render(analysis: Analysis, templates: Path | None = None) -> str:
    _env.environment.cache_clear()  # as a new process would: only the files on disk are shared
    return render_html(analysis, templates=templates)


def test_a_page_from_compiled_templates_is_the_page_from_their_sources(
        analysis: Analysis, fresh_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _render(analysis)
    assert list((fresh_env / "templates").glob("*.cache")), "the compiled templates are kept"
    assert _render(analysis) == first
    monkeypatch.setenv(_usercache.CACHE_ENV, "")
    assert _render(analysis) == first, "the same page without any cache"


def test_a_changed_template_is_compiled_again(analysis: Analysis, fresh_env: Path, tmp_path: Path) -> None:
    overrides = tmp_path / "templates"
    overrides.mkdir()
    shutil.copy(ROOT / "reports" / "report.html.j2", overrides / "report.html.j2")
    before = _render(analysis, overrides)
    text = (overrides / "report.html.j2").read_text(encoding="utf-8")
    (overrides / "report.html.j2").write_text(text.replace("</body>", "<!-- edited --></body>", 1), encoding="utf-8")
    after = _render(analysis, overrides)
    assert "<!-- edited -->" not in before and "<!-- edited -->" in after


def test_a_corrupt_compiled_template_is_compiled_again(analysis: Analysis, fresh_env: Path) -> None:
    first = _render(analysis)
    for cached in (fresh_env / "templates").glob("*.cache"):
        cached.write_bytes(cached.read_bytes()[:40])
    assert _render(analysis) == first


def test_an_unwritable_cache_only_costs_time(analysis: Analysis, fresh_env: Path, monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    expected = _render(analysis)
    blocker = tmp_path / "a-file"
    blocker.write_text("where the cache folder should be")
    monkeypatch.setenv(_usercache.CACHE_ENV, str(blocker / "cache"))
    assert _render(analysis) == expected
