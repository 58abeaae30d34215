"""Planted secrets (43 kinds) through every output of `check` (text, json, sarif) and `report`
(html), in the fixture format and Claude Code JSONL: none may be shown (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from analyzer.cli import main
from analyzer.report.redact import MASK
from tests.report.test_redact import PLANTED

_ONE_LINE = [(what, text, secret) for what, text, secret in PLANTED if "\n" not in text]
_KILL = "pkill -f uvicorn; cat <<'EOF'\n" + "\n".join(t for _, t, _ in PLANTED) + "\nEOF"


def _fixture(tmp_path: Path) -> Path:
    events = [
        {"user": "Start the API on port 8000. " + " ".join(t for _, t, _ in _ONE_LINE)},
        {"bash": "nohup uvicorn app:api --port 8000 > api.log 2>&1 &"},
        {"user": "Ready"},
        {"bash": _KILL, "output": "\n".join(t for _, t, _ in PLANTED)},
    ]
    path = tmp_path / "secrets.session.yaml"
    path.write_text(yaml.safe_dump({"agent": "claude-code", "events": events}, sort_keys=False), encoding="utf-8")
    return path


def _claude_code(tmp_path: Path) -> Path:
    sid = "5d1c0c7e-8a4f-4f3e-9d7b-2a6c1e0f9b31"
    rows: list[dict[str, object]] = []

    def user(n: int, content: object) -> None:
        rows.append({"type": "user", "uuid": f"u{n}", "sessionId": sid, "timestamp": f"2025-01-01T00:00:0{n}Z",
                     "message": {"role": "user", "content": content}})

    def bash(n: int, tool_id: str, command: str, output: str) -> None:
        rows.append({"type": "assistant", "uuid": f"a{n}", "sessionId": sid, "timestamp": f"2025-01-01T00:00:0{n}Z",
                     "message": {"role": "assistant", "content": [
                         {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}]}})
        user(n, [{"type": "tool_result", "tool_use_id": tool_id, "content": output}])

    user(1, "Start the API on port 8000. " + " ".join(t for _, t, _ in _ONE_LINE))
    bash(2, "toolu_01", "nohup uvicorn app:api --port 8000 > api.log 2>&1 &", "")
    user(3, "Ready")
    bash(4, "toolu_02", _KILL, "\n".join(t for _, t, _ in PLANTED))
    path = tmp_path / "secrets.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("make", [_fixture, _claude_code], ids=["fixture", "claude-code"])
def test_no_planted_secret_reaches_any_output(tmp_path: Path, make: object) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    outputs: dict[str, str] = {}
    for fmt in ("text", "json", "sarif"):
        result = CliRunner().invoke(main, ["check", "--format", fmt, str(path)], env={"COLUMNS": "10000"})
        assert result.exit_code == 1, result.output  # the kill after "Ready" is found
        outputs[fmt] = result.stdout + result.stderr
    html = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(path), "-o", str(html)])
    assert result.exit_code in (0, 1), result.output
    outputs["html"] = html.read_text(encoding="utf-8")
    for fmt, out in outputs.items():
        leaked = [what for what, _, secret in PLANTED if secret in out]
        assert leaked == [], f"{fmt} shows {leaked}"
    assert MASK in outputs["text"]  # the kill command is quoted, redacted
    for _, text, _ in _ONE_LINE[:3]:  # the report shows the user's words around the masks
        assert text.split()[0] in outputs["html"]
