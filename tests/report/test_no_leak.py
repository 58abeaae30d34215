"""Nothing leaks anywhere (issues 16 and 17): the planted secrets (43 kinds, ``test_redact.PLANTED``)
are written into every string of one fixture of every input format, and no output of any command
may show one, whole or its first half (what a cut to the terminal width would leave):
``check`` text/json/sarif/github, ``timeline`` text/json, ``graph`` text/json/dot, ``report`` html,
and every file ``batch`` writes.

A check that could pass by accident is no check: each planted session must carry at least 40 kinds
into its events (so the outputs had them to show), and a command must have run cleanly.
"""

from __future__ import annotations

import html
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from analyzer.cli import main
from analyzer.ingest import detect, load
from analyzer.report.github import escape_data
from analyzer.report.redact import MASK
from tests.report.test_redact import PLANTED

from ..conftest import FIXTURES

_ONE_LINE = [(what, text, secret) for what, text, secret in PLANTED if "\n" not in text]
_BLOCK = "\n".join(text for _, text, _ in PLANTED)
_LINE = " ; ".join(text for _, text, _ in _ONE_LINE)


def _one_per_format() -> dict[str, Path]:
    """The first fixture (file or session folder) of each format, in a stable order."""
    found: dict[str, Path] = {}
    candidates = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and "seeds" not in p.parts
                        and p.suffix in (".json", ".jsonl", ".traj", ".cast", ".md", ".yaml"))
    candidates += [FIXTURES / "opencode" / "storage", FIXTURES / "seeds" / "001-relaunch-after-ready.session.yaml"]
    for p in candidates:
        if p.name == "README.md":
            continue
        try:
            fmt = detect(p)[0].NAME
        except Exception:  # a file of a folder format (an OpenHands event) is not a session alone
            continue
        found.setdefault(fmt, p)
    return found


_SOURCES = _one_per_format()


def _plant_value(value: Any) -> Any:
    """Every string with a space in it (words, commands, outputs; not ids or times) gets the
    planted block after it."""
    if isinstance(value, str):
        return f"{value}\n{_BLOCK}" if " " in value.strip() else value
    if isinstance(value, dict):
        return {k: _plant_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plant_value(v) for v in value]
    return value


def _plant_file(path: Path) -> None:
    raw = path.read_text(encoding="utf-8")
    if path.suffix == ".md":  # after every prose line, the one-line kinds (markdown keeps its shape)
        lines = raw.split("\n")
        path.write_text("\n".join(ln + "  " + _LINE if " " in ln and not ln.lstrip().startswith(("#", "|", "```"))
                                  else ln for ln in lines), encoding="utf-8")
    elif path.suffix == ".yaml":
        path.write_text(yaml.safe_dump(_plant_value(yaml.safe_load(raw)), sort_keys=False), encoding="utf-8")
    elif path.suffix in (".jsonl", ".cast"):
        path.write_text("\n".join(json.dumps(_plant_value(json.loads(ln))) if ln.strip()[:1] in ("{", "[") else ln
                                   for ln in raw.split("\n")), encoding="utf-8")
    else:
        path.write_text(json.dumps(_plant_value(json.loads(raw)), indent=1), encoding="utf-8")


def _planted(src: Path, into: Path) -> Path:
    """A copy of ``src`` (a whole format folder, for the formats that read sibling files) with the
    secrets planted in every file of it; the path to analyze."""
    rel = src.relative_to(FIXTURES)
    shutil.copytree(FIXTURES / rel.parts[0], into / rel.parts[0])
    for f in (into / rel.parts[0]).rglob("*"):
        if f.is_file() and f.suffix in (".json", ".jsonl", ".traj", ".cast", ".md", ".yaml") and f.name != "README.md":
            _plant_file(f)
    return into / rel


def _shown(secret: str) -> Iterator[str]:
    """The ways an output can show ``secret``: as is, HTML- or JSON-escaped, as a GitHub annotation;
    and its first half, which a cut to the width would leave."""
    for s in {secret, secret[: max(8, len(secret) // 2)]}:
        yield from {s, html.escape(s), html.escape(s, quote=False), json.dumps(s)[1:-1], escape_data(s)}


def _leaks(text: str) -> list[str]:
    return [what for what, _, secret in PLANTED if any(form in text for form in _shown(secret))]


_COMMANDS = [
    *(["check", "--format", fmt] for fmt in ("text", "json", "sarif", "github")),
    *(["timeline", "--format", fmt] for fmt in ("text", "json")),
    *(["graph", "--format", fmt] for fmt in ("text", "json", "dot")),
]


@pytest.mark.parametrize("fmt", sorted(_SOURCES))
def test_no_planted_secret_reaches_any_output_of_any_command(tmp_path: Path, fmt: str) -> None:
    path = _planted(_SOURCES[fmt], tmp_path / "in")
    session = load(path)
    carried = {what for what, _, secret in PLANTED if secret in session.model_dump_json()}
    assert len(carried) >= 40, f"{fmt}: only {len(carried)} kinds reached the events"
    runner = CliRunner()
    outputs: dict[str, str] = {}
    for args in _COMMANDS:
        result = runner.invoke(main, [*args, str(path)], env={"COLUMNS": "120"})
        assert result.exit_code in (0, 1), f"{args}: {result.output[-2000:]}"
        outputs[" ".join(args)] = result.stdout + result.stderr
    page = tmp_path / "report.html"
    result = runner.invoke(main, ["report", str(path), "-o", str(page)])
    assert result.exit_code in (0, 1), result.output
    outputs["report"] = page.read_text(encoding="utf-8") + result.output
    assert outputs["timeline --format json"].count(MASK) >= 40  # the full events: shown, masked
    for name, out in outputs.items():
        assert _leaks(out) == [], f"{fmt}: `{name}` shows {_leaks(out)}"


def test_no_planted_secret_reaches_any_file_batch_writes(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    for fmt in ("claude-code", "codex", "chat", "gemini-cli", "fixture"):
        _planted(_SOURCES[fmt], inputs / fmt)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["batch", str(inputs), "-o", str(out), "--jobs", "1"])
    assert result.exit_code in (0, 1), result.output
    written = [f for f in out.rglob("*") if f.is_file()]
    assert len([f for f in written if f.suffix == ".html"]) >= 5
    for f in [*written]:
        text = f.read_text(encoding="utf-8", errors="replace")
        assert _leaks(text) == [], f"{f.relative_to(out)} shows {_leaks(text)}"
    assert _leaks(result.output) == []
