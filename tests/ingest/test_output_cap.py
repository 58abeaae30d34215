"""Huge tool outputs are kept at their head and tail, with a marker in the text and a diagnostic
that says how much was left out (never silently)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from analyzer.ingest import base, load
from analyzer.ingest.base import cap_output

from ..conftest import FIXTURES

SESSION = FIXTURES / "claude-code" / "v2.0-kill-shell.jsonl"


def test_short_text_is_kept_whole() -> None:
    assert cap_output("abc\n" * 10, limit=40) == ("abc\n" * 10, 0)


def test_long_text_keeps_whole_lines_at_both_ends() -> None:
    text = "".join(f"line {i:03d}\n" for i in range(100))  # 9 characters a line
    kept, elided = cap_output(text, limit=100)
    head, marker, tail = kept.partition(f"[… {elided} characters elided …]\n")
    assert marker and head == text[:45] and tail == text[-45:]  # 5 whole lines each side
    assert len(head) + elided + len(tail) == len(text)


def test_text_without_newlines_is_cut_at_the_halves() -> None:
    kept, elided = cap_output("x" * 1000, limit=100)
    assert (kept, elided) == ("x" * 50 + "[… 900 characters elided …]\n" + "x" * 50, 900)


def test_a_huge_shell_result_and_a_huge_user_shell_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "MAX_OUTPUT_CHARS", 1000)
    lines = SESSION.read_bytes().splitlines()
    result = orjson.loads(lines[9])  # the health check's result
    log = "".join(f"[{i:05d}] GET /health 200\n" for i in range(500))
    result["message"]["content"][0]["content"] = log
    result["toolUseResult"] = {"stdout": log, "stderr": "", "interrupted": False, "isImage": False}
    lines[9] = orjson.dumps(result)
    bang = orjson.loads(lines[1])  # the prompt, rewritten as a `!` command with its output
    bang["message"]["content"] = f"<bash-input>cat big.log</bash-input><bash-stdout>{log}</bash-stdout>"
    lines[1] = orjson.dumps(bang)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    s = load(path)
    outputs = {e.command: e.output for e in s.tools()}
    for command in ("curl -s localhost:8000/health", "cat big.log"):
        out = outputs[command]
        assert out is not None and out.startswith("[00000] GET /health 200\n")
        assert out.rstrip().endswith("[00499] GET /health 200") and "characters elided …]\n" in out
        assert len(out) < 1100
    assert [(d.level.value, d.line) for d in s.diagnostics] == [("info", 2), ("info", 10)]
    assert all("only its first and last" in d.message for d in s.diagnostics)


def test_every_format_keeps_outputs_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "MAX_OUTPUT_CHARS", 1000)
    log = "".join(f"line {i:04d} of a long build log\n" for i in range(200))  # 6,000 characters
    path = tmp_path / "s.session.yaml"
    path.write_text("agent: claude-code\nevents:\n  - user: build it\n  - bash: make all\n    output: |\n"
                    + "".join(f"      {ln}\n" for ln in log.splitlines()))
    s = load(path)
    (tool,) = s.tools()
    assert tool.output is not None and tool.output.startswith("line 0000 of a long build log\n")
    assert "characters elided …]\nline 01" in tool.output and len(tool.output) < 1100
    assert [(d.level.value, d.line) for d in s.diagnostics] == [("info", tool.line)]
    assert cap_output(tool.output, 1000) == (tool.output, 0)  # a cut output is never cut again
