"""Terminal escape injection: transcript text printed by `check` and `timeline` cannot drive the
terminal (OSC 0 title, OSC 8 hidden link, OSC 52 clipboard, DCS, C1 CSI, bidi reordering)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.cli import main
from analyzer.report.terminal import neutralise

PAYLOADS = {
    "OSC 0 title": "\x1b]0;pwned\x07",
    "OSC 8 hyperlink": "\x1b]8;;http://evil.example/\x1b\\click me\x1b]8;;\x1b\\",
    "OSC 52 clipboard": "\x1b]52;c;cm0gLXJmIH4=\x07",
    "DCS": "\x1bPqpayload\x1b\\",
    "C1 CSI": "\x9b2J\x9d0;title\x9c",
    "CSI clear": "\x1b[2J\x1b[H",
    "carriage return overwrite": "safe\rkill -9 -1",
    "backspaces": "rm -rf /\b\b\b\b\b\b\b\bls",
    "bidi override": "# \u202e1- 9- llik",
}
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f]")


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_every_control_character_is_made_visible(payload: str) -> None:
    out = neutralise(payload)
    assert _CONTROL.search(out) is None
    assert len(out) >= len(payload)  # shown, not silently dropped


def test_newlines_tabs_and_ordinary_text_are_kept() -> None:
    text = "ssh h 'kill 1'\n\tnohup vllm serve … → ready ✓ 日本語"
    assert neutralise(text) == text


def _session(tmp_path: Path) -> Path:
    user = " ".join(PAYLOADS.values()).replace("\\", "\\\\").replace('"', '\\"')
    body = "".join(f"\\x{ord(c):02x}" if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F else c for c in user)
    path = tmp_path / "hostile.session.yaml"
    path.write_text(
        "agent: claude-code\nevents:\n"
        f'  - user: "Start the API on port 8000 {body}"\n'
        "  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &\n"
        "  - user: Ready\n"
        f'  - bash: "pkill -f uvicorn; echo {body}"\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("args", [["check"], ["check", "--format", "github"], ["timeline"], ["graph"],
                                  ["graph", "--format", "dot"]])
def test_text_outputs_carry_no_raw_control_character(tmp_path: Path, args: list[str]) -> None:
    path = _session(tmp_path)
    result = CliRunner().invoke(main, [*args, str(path)], env={"COLUMNS": "400"})
    assert result.exit_code in (0, 1), result.output
    assert _CONTROL.search(result.stdout) is None
    assert _CONTROL.search(result.stderr) is None
    if args == ["timeline"]:
        assert "\u241b]52;c;" in result.stdout  # the clipboard write is shown as text


def test_json_output_escapes_control_characters_itself(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["check", "--format", "json", str(_session(tmp_path))])
    assert result.exit_code == 1
    assert "\x1b" not in result.stdout  # JSON escapes C0 itself; its strings are data, kept exact


def test_bidi_overrides_are_shown_not_obeyed_in_the_html_report(tmp_path: Path) -> None:
    path = tmp_path / "bidi.session.yaml"
    path.write_text('agent: claude-code\nevents:\n'
                    '  - user: "clean up with # \\u202e1- 9- llik please"\n'
                    '  - bash: "echo \\u202e1- 9- llik \\u2066x\\u2069"\n', encoding="utf-8")
    html = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["report", str(path), "-o", str(html)])
    assert result.exit_code in (0, 1), result.output
    page = html.read_text(encoding="utf-8")
    assert _CONTROL.search(page) is None
    assert "&lt;U+202E&gt;1- 9- llik" in page
    assert "&lt;U+2066&gt;x&lt;U+2069&gt;" in page


def test_reveal_bidi_keeps_markup_tags_and_escapes_the_marker() -> None:
    from markupsafe import Markup

    from analyzer.report.terminal import reveal_bidi

    assert reveal_bidi(Markup("<mark>\u202eab</mark>")) == Markup("<mark>&lt;U+202E&gt;ab</mark>")
    assert reveal_bidi("a\u202eb") == "a<U+202E>b"  # autoescape turns it into text
    assert reveal_bidi(3) == 3


@pytest.mark.parametrize("args", [["check", "--format", "json"], ["check", "--format", "sarif"],
                                  ["timeline", "--format", "json"], ["graph", "--format", "json"]])
def test_json_outputs_escape_c1_and_bidi_and_keep_the_data(tmp_path: Path, args: list[str]) -> None:
    """C1 controls (a raw U+009B is CSI to many terminals) and bidi overrides are JSON-escaped: a
    document piped to a terminal cannot drive it, and a JSON reader gets the same text back."""
    import json

    path = _session(tmp_path)
    result = CliRunner().invoke(main, [*args, str(path)])
    assert result.exit_code in (0, 1), result.output
    assert _CONTROL.search(result.stdout) is None
    doc = json.loads(result.stdout)
    if args[0] == "timeline":
        texts = [e.get("text") or e.get("command") or "" for e in doc["events"]]
        assert any("\x9b2J" in t and "\u202e1- 9- llik" in t for t in texts)  # exact, as data


def test_json_text_round_trips_every_character() -> None:
    import json

    from analyzer.report.terminal import json_text

    value = {"s": "".join(chr(c) for c in range(0x20, 0x2100)) + "\x1b\u202e\u2066\u2028\ufeff", "k\x9b": [1]}
    text = json_text(value)
    assert json.loads(text) == value
    assert _CONTROL.search(text) is None and "\u2028" not in text
