"""A hostile transcript: markup, event handlers and javascript: links render as text; planted
secrets are redacted (and their kinds listed) unless --no-redact."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from analyzer.cli import main
from analyzer.pipeline import analyze
from analyzer.report.html import render_html
from tests.report.htmlcheck import Page, parse

ANT = "sk-ant-api03-" + "Zx9Qw" * 8
BEARER = "eyTopSecretBearer0123456789abc"
HF = "hf_" + "a1B2c3D4e5" * 4
PW = "hunter2secretpw"
SECRETS = [ANT, BEARER, HF, PW]
XSS = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
JS = "javascript:alert(document.cookie)"


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    doc = {"agent": "claude-code", "model": "claude-opus-4-6", "start": "2026-05-01T10:00:00Z", "step": 20, "events": [
        {"user": f"Start the API on port 8000 {XSS} {IMG} see [docs]({JS}) and use {ANT}"},
        {"bash": f"export HF_TOKEN={HF}; nohup uvicorn app:api --port 8000 > api.log 2>&1 &", "output": ""},
        {"bash": f'curl -sf -H "Authorization: Bearer {BEARER}" localhost:8000/health', "output": '{"ok": true}'},
        {"user": "Ready"},
        {"bash": f"psql postgres://admin:{PW}@db.internal:5432/app -c 'select 1'; echo '{IMG}'; xdg-open '{JS}'",
         "output": f"{XSS}\nANTHROPIC_API_KEY={ANT}\n{IMG}"},
        # the kill pattern carries markup and a secret into the finding's message and evidence
        {"bash": f"pkill -f 'uvicorn app:api|{XSS}|{ANT}'", "output": ""},
        {"assistant": f"Restarted {XSS} {IMG} [x]({JS})"},
    ]}
    path = tmp_path / "hostile.session.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def assert_inert(page: Page) -> None:
    html = page.html
    assert not re.search(r"<script>\s*alert", html, re.I)
    assert "<img" not in html.lower()
    assert [t for t, _ in page.starts].count("script") == 1, "only the report's own script"
    handlers = [(t, k) for t, attrs in page.starts for k in attrs if k.lower().startswith("on")]
    assert handlers == []
    assert all(h.startswith("#") for h in page.hrefs()), "no link from transcript text"
    # the hostile text is still there, as text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "javascript:alert(document.cookie)" in page.section_text("timeline")


def test_hostile_transcript_renders_as_text_with_secrets_redacted(hostile: Path) -> None:
    a = analyze(hostile)
    assert {f.rule for f in a.findings} >= {"kill-after-ready"}, "the hostile kill reaches the findings"
    page = parse(render_html(a))
    assert_inert(page)
    for secret in SECRETS:
        assert secret not in page.html
    assert "sk-ant-api03" not in page.html
    banner = page.section_text("summary")
    for kind in ("Anthropic API key", "Authorization header", "password in URL", "Hugging Face token"):
        assert kind in banner
    assert "[REDACTED]" in page.section_text("findings")
    assert "[REDACTED]" in page.section_text("timeline")


def test_no_redact_shows_secrets_escaped(hostile: Path, tmp_path: Path) -> None:
    out = tmp_path / "open.html"
    result = CliRunner().invoke(main, ["report", str(hostile), "-o", str(out), "--no-redact"])
    assert result.exit_code == 0, result.output
    page = parse(out.read_text("utf-8"))
    assert_inert(page)
    for secret in SECRETS:
        assert secret in page.html
    assert "Secrets are not redacted in this report" in page.section_text("summary")
    assert "[REDACTED]" not in page.html


def test_secret_at_the_edge_of_a_cut_is_not_half_shown() -> None:
    """A huge output is redacted in windows: a key straddling where the shown head ends must not
    leak its first half."""
    from analyzer.report._clean import Cleaner

    filler = "x" * 7990
    text = filler + " " + ANT + " " + "y" * 300_000 + " " + ANT + " tail"
    shown = Cleaner(redact=True).text(text, head_lines=40, tail_lines=20, head_chars=8000, tail_chars=3000)
    assert "sk-ant" not in shown.head and "sk-ant" not in shown.tail
    assert shown.tail.endswith("tail") and shown.cut
    assert Cleaner(redact=False).text(text, head_chars=8000).head.endswith(" sk-ant-ap"), "the control: unredacted, the cut does split it"
