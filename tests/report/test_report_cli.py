"""`analyzer report`: where it writes, what it says, template overrides, bad input, and every
corpus session."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.cli import main
from analyzer.ingest import IngestError, load
from analyzer.ingest.discover import discover
from analyzer.pipeline import Analyzer
from analyzer.report._env import reports_dir
from analyzer.report.html import render_html
from tests.report.htmlcheck import parse

ROOT = Path(__file__).resolve().parents[2]
SEED_002 = ROOT / "fixtures" / "seeds" / "002-restart-30001-teardown.session.yaml"


def test_default_output_is_named_after_the_session_in_the_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["report", str(SEED_002)])
    assert result.exit_code == 0, result.output
    out = tmp_path / "002-restart-30001-teardown.report.html"
    assert out.is_file()
    assert result.output.strip() == f"wrote {out} (18 events, 3 findings)"
    page = parse(out.read_text("utf-8"))
    assert len([e for e in page.root.iter() if e.tag == "article" and e.has_class("finding")]) == 3


def test_output_option(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "x.html"
    result = CliRunner().invoke(main, ["report", str(SEED_002), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text("utf-8").startswith("<!DOCTYPE html>")


def test_templates_override_by_name(tmp_path: Path) -> None:
    templates = tmp_path / "tpl"
    templates.mkdir()
    (templates / "_report_summary.html.j2").write_text(
        '<section class="block" id="summary"><h2>Our summary</h2>'
        '<p id="custom">{{ counts.findings }} findings in {{ title }} {{ "<b>" }}</p></section>\n', encoding="utf-8")
    out = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["report", str(SEED_002), "-o", str(out), "--templates", str(templates)])
    assert result.exit_code == 0, result.output
    page = parse(out.read_text("utf-8"))
    assert page.section_text("custom") == "3 findings in 002-restart-30001-teardown.session.yaml <b>"
    assert "&lt;b&gt;" in page.html, "user templates are autoescaped too"
    assert {"impact", "findings", "lifecycle", "timeline", "appendix"} <= page.ids  # the rest is built in


def test_broken_user_template_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    templates = tmp_path / "tpl"
    templates.mkdir()
    (templates / "_report_impact.html.j2").write_text("{% if %}", encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(SEED_002), "-o", str(tmp_path / "r.html"),
                                       "--templates", str(templates)])
    assert result.exit_code == 2
    assert "template error" in result.output and "_report_impact.html.j2" in result.output


def test_a_template_failing_half_way_leaves_the_old_report_and_no_temporary_file(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    out.write_text("the report of yesterday", encoding="utf-8")
    templates = tmp_path / "tpl"
    templates.mkdir()
    # fails while rendering, after the summary and impact sections were already written out
    (templates / "_report_appendix.html.j2").write_text('{% include "no-such-part.j2" %}', encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(SEED_002), "-o", str(out), "--templates", str(templates)])
    assert result.exit_code == 2
    assert "template error" in result.output and "no-such-part.j2" in result.output
    assert out.read_text("utf-8") == "the report of yesterday"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html", "tpl"]


def test_an_output_that_cannot_be_written_is_an_error_with_the_path(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    out = tmp_path / "a-file" / "r.html"  # its folder is a file
    result = CliRunner().invoke(main, ["report", str(SEED_002), "-o", str(out)])
    assert result.exit_code == 2
    assert result.output.startswith(f"analyzer: {out}: cannot write:")


def test_a_pipe_or_a_link_given_as_output_is_written_into(tmp_path: Path) -> None:
    import os
    import threading

    target = tmp_path / "real.html"
    link = tmp_path / "link.html"
    link.symlink_to(target)
    assert CliRunner().invoke(main, ["report", str(SEED_002), "-o", str(link)]).exit_code == 0
    assert link.is_symlink() and target.read_text("utf-8").startswith("<!DOCTYPE html>")

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    assert CliRunner().invoke(main, ["report", str(SEED_002), "-o", str(fifo)]).exit_code == 0
    reader.join(timeout=30)
    assert got and got[0].startswith(b"<!DOCTYPE html>") and fifo.is_fifo()


def test_the_written_report_is_the_rendered_document(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert CliRunner().invoke(main, ["report", str(SEED_002), "-o", str(out)]).exit_code == 0
    analysis = Analyzer().analyze_session(load(SEED_002))
    assert out.read_text("utf-8") == render_html(analysis)


def test_missing_templates_folder_and_unreadable_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["report", str(SEED_002), "--templates", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "templates folder not found" in result.output
    junk = tmp_path / "junk.txt"
    junk.write_text("not a session\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(junk), "-o", str(tmp_path / "j.html")])
    assert result.exit_code == 2 and "analyzer:" in result.output
    assert not (tmp_path / "j.html").exists()


def test_command_is_registered() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert "report" in result.output and "self-contained HTML postmortem" in result.output


def test_builtin_templates_are_found() -> None:
    assert (reports_dir() / "report.html.j2").is_file()


@pytest.mark.corpus
def test_every_corpus_session_renders_with_its_event_count(corpus: Path) -> None:
    analyzer = Analyzer()
    rendered = 0
    for path in discover([corpus]):
        try:
            session = load(path)
        except IngestError:
            continue  # not a session on its own (an opencode session-info file): `check` says so
        page = parse(render_html(analyzer.analyze_session(session), rules=analyzer.ruleset.rules))
        n = len(session.events)
        assert page.by_id("timeline-list").attrs["data-events"] == str(n), path
        assert len([e for e in page.by_id("timeline-list").children if e.tag == "article"]) == n, path
        cards = {e.attrs["data-count"]: e.children[0].all_text for e in page.by_id("summary").iter()
                 if "data-count" in e.attrs}
        assert cards["events"] == f"{n:,}", path
        rendered += 1
    assert rendered >= 20
