"""Bad input never raises a traceback: it becomes a diagnostic with file and line, and the records
around it still arrive. Written against Claude Code JSONL (fixtures/claude-code/)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from analyzer.cli import main
from analyzer.events import Session, ToolEvent, UserEvent
from analyzer.ingest import IngestError, base, load

from ..conftest import FIXTURES

SESSION = FIXTURES / "claude-code" / "v2.0-kill-shell.jsonl"
"""21 lines: snapshot, prompt, a streamed message (3 entries), launch result, poll, … (12 events)."""
SID = "7d0c7e4e-3b1a-4c2f-8e9d-5a6b7c8d9e0f"
WITH_AGENT = FIXTURES / "claude-code" / "v2.1-sglang"


def good_lines() -> list[bytes]:
    return SESSION.read_bytes().splitlines()


def write(tmp_path: Path, lines: list[bytes], end: bytes = b"\n", name: str = "session.jsonl") -> Path:
    p = tmp_path / name
    p.write_bytes(b"\n".join(lines) + end)
    return p


def refs(s: Session) -> list[str | None]:
    return [e.ref for e in s.events]


GOOD = load(SESSION)


def test_truncated_last_line(tmp_path: Path) -> None:
    lines = good_lines()
    cut = lines[-1][: len(lines[-1]) // 2]  # the writer died mid-line
    p = write(tmp_path, [*lines[:-1], cut], end=b"")
    s = load(p)
    (d,) = s.diagnostics
    assert (d.level.value, d.file, d.line) == ("error", None, 21)
    assert d.message == f"truncated JSON at end of file ({len(cut)} bytes); line skipped"
    assert refs(s) == refs(GOOD)[:-1]  # everything but the last message
    assert s.counts.records == 21 and s.counts.diagnostics == 1


def test_invalid_utf8_in_one_line_is_read_with_a_warning(tmp_path: Path) -> None:
    lines = good_lines()
    prompt = lines[1]
    at = prompt.index(b"port 8000")
    lines[1] = prompt[:at] + b"\xff\xfe" + prompt[at:]  # two bytes that are not UTF-8
    s = load(write(tmp_path, lines))
    (d,) = s.diagnostics
    assert (d.level.value, d.file, d.line) == ("warning", None, 2)
    assert d.message == f"invalid UTF-8 at byte {at}; read with the bad bytes replaced by U+FFFD"
    first = s.events[0]
    assert isinstance(first, UserEvent) and "on \ufffd\ufffdport 8000" in first.text
    assert refs(s) == refs(GOOD)


def test_invalid_utf8_in_a_broken_line_is_an_error(tmp_path: Path) -> None:
    lines = good_lines()
    bad = b'{"type":"user","message":{"content":"caf\xe9"'  # not UTF-8 and not complete
    lines.insert(2, bad)
    s = load(write(tmp_path, lines))
    (d,) = s.diagnostics
    at = bad.index(b"\xe9")
    assert (d.level.value, d.line, d.message) == ("error", 3, f"invalid UTF-8 at byte {at}; line skipped")
    assert refs(s) == refs(GOOD)


def test_binary_junk_in_the_middle(tmp_path: Path) -> None:
    junk = random.Random(7).randbytes(6000)
    assert junk.count(b"\n") >= 10  # the junk spans several "lines"
    lines = good_lines()
    # between the launch call (line 5) and its result (line 6)
    p = write(tmp_path, [*lines[:5], junk, *lines[5:]])
    s = load(p)
    junk_lines = junk.count(b"\n") + 1
    (d,) = s.diagnostics
    assert (d.level.value, d.file, d.line) == ("error", None, 6)
    assert d.message == f"binary data, not JSON ({junk_lines} lines); skipped"
    assert refs(s) == refs(GOOD)
    launch = s.tools()[0]
    assert launch.task_id == "5f1c2a" and launch.result_line == 6 + junk_lines  # paired across the junk


def test_100_mb_line_is_read_and_the_next_line_arrives(tmp_path: Path) -> None:
    lines = good_lines()
    result = orjson.loads(lines[9])  # the health check's result
    big = "x" * (100 * 2**20)
    result["message"]["content"][0]["content"] = big
    result["toolUseResult"] = {"stdout": big, "stderr": "", "interrupted": False, "isImage": False}
    lines[9] = orjson.dumps(result)
    del big, result
    s = load(write(tmp_path, lines))
    health = s.tools()[2]
    assert health.command == "curl -s localhost:8000/health" and health.result_line == 10
    # the output is kept at its first and last half MiB, and the session says so
    elided = 100 * 2**20 - base.MAX_OUTPUT_CHARS
    assert health.output == "x" * 2**19 + f"[… {elided} characters elided …]\n" + "x" * 2**19
    assert [(d.level.value, d.line) for d in s.diagnostics] == [("info", 10)]
    assert f"({elided:,} characters elided)" in s.diagnostics[0].message
    assert refs(s) == refs(GOOD)


def test_line_over_the_limit_is_reported_and_the_next_line_arrives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(base, "MAX_LINE_BYTES", 2**20)
    lines = good_lines()
    huge = b'{"type":"user","message":{"role":"user","content":"' + b"y" * (3 * 2**20) + b'"}}'
    s = load(write(tmp_path, [*lines[:3], huge, *lines[3:]]))
    (d,) = s.diagnostics
    assert (d.level.value, d.file, d.line) == ("error", None, 4)
    assert d.message == "line of 3 MiB skipped (over the 1 MiB limit)"
    assert refs(s) == refs(GOOD)
    assert s.events[1].line == 3 and s.tools()[0].line == 6  # numbering continues after the long line


def test_bad_line_in_a_subagent_file_names_that_file(tmp_path: Path) -> None:
    shutil.copytree(WITH_AGENT, tmp_path / "s")
    agent_file = tmp_path / "s" / SID / "subagents" / "agent-a3f9c21.jsonl"
    agent_lines = agent_file.read_bytes().splitlines()
    agent_file.write_bytes(b"\n".join([agent_lines[0], b'{"type":"assistant", oops}', *agent_lines[1:]]) + b"\n")
    s = load(tmp_path / "s" / f"{SID}.jsonl")
    (d,) = s.diagnostics
    assert (d.level.value, d.file, d.line) == ("error", str(agent_file), 2)
    assert d.message.startswith("not valid JSON (")
    sub = [e for e in s.events if e.agent == "a3f9c21"]
    assert [e.line for e in sub] == [1, 3, 5]  # lines of the agent file, after the bad one


def test_json_that_is_not_an_entry(tmp_path: Path) -> None:
    lines = good_lines()
    s = load(write(tmp_path, [*lines[:2], b"[1, 2, 3]", b'"just a string"', *lines[2:]]))
    assert [(d.level.value, d.line, d.message) for d in s.diagnostics] == [
        ("error", 3, "line is JSON list, not an entry; skipped"),
        ("error", 4, "line is JSON str, not an entry; skipped"),
    ]
    assert refs(s) == refs(GOOD)


def test_entry_with_fields_of_the_wrong_type(tmp_path: Path) -> None:
    lines = good_lines()
    odd = orjson.loads(lines[1])
    odd.update(uuid=42, cwd=["/srv"], timestamp={"at": 1}, message={"role": "user", "content": 7})
    call = orjson.loads(lines[4])
    call["message"]["content"][0]["input"] = "not a mapping"
    s = load(write(tmp_path, [*lines[:2], orjson.dumps(odd), *lines[2:4], orjson.dumps(call), *lines[5:]]))
    assert s.diagnostics == []
    launch = s.tools()[0]
    assert isinstance(launch, ToolEvent) and launch.input == {} and launch.command is None
    assert launch.output is not None and launch.output.startswith("Command running in background")
    assert len(s.events) == len(GOOD.events)  # the entry with no usable content added nothing


def test_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "empty.jsonl"
    p.write_bytes(b"")
    with pytest.raises(IngestError) as info:
        load(p)
    assert str(info.value) == f"{p}: empty file: nothing to analyze"


def test_file_in_no_known_format(tmp_path: Path) -> None:
    p = tmp_path / "notes.jsonl"
    p.write_text('{"event":"deploy","service":"api","ok":true}\n{"event":"rollback","service":"api"}\n')
    with pytest.raises(IngestError) as info:
        load(p)
    assert info.value.path == str(p) and info.value.line == 1
    assert info.value.reason.startswith("not a session log in any known format (tried: ")
    assert "claude-code" in info.value.reason


def test_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(IngestError) as info:
        load(tmp_path)
    assert str(info.value) == f"{tmp_path}: folder holds no session in a known format"


# -- the command line ------------------------------------------------------------------------


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_cli_exit_2_when_nothing_could_be_read(tmp_path: Path) -> None:
    p = tmp_path / "empty.jsonl"
    p.write_bytes(b"")
    code, out, err = run("timeline", str(p))
    assert (code, out) == (2, "")
    assert err == f"analyzer: {p}: empty file: nothing to analyze\n"
    # a Claude Code file whose every conversation line is broken
    broken = write(tmp_path, [good_lines()[0], b'{"type":"user","message":', b"\x00\x01\x02\x03"], end=b"",
                   name="broken.jsonl")
    code, out, err = run("timeline", str(broken))
    assert (code, out) == (2, "")
    assert f"{broken}:2: error: not valid JSON (" in err
    assert err.endswith(f"analyzer: {broken}: no readable record\n")


def test_cli_exit_0_with_the_diagnostic_on_stderr_when_some_records_were_read(tmp_path: Path) -> None:
    lines = good_lines()
    p = write(tmp_path, [*lines[:-1], lines[-1][:40]], end=b"")
    code, out, err = run("timeline", str(p))
    assert code == 0
    assert err == f"{p}:21: error: truncated JSON at end of file (40 bytes); line skipped\n"
    assert "uv run uvicorn app.main:api --host 127.0.0.1 --port 8000 --reload" in out
    assert "KillShell" in out


def test_cli_json_has_counts(tmp_path: Path) -> None:
    lines = good_lines()
    p = write(tmp_path, [*lines[:5], b"\x00\xff binary \x00", *lines[5:]])
    code, out, _ = run("timeline", "--format", "json", str(p))
    assert code == 0
    doc = orjson.loads(out)
    # 22 records: 12 events, 2 skipped (snapshot, turn_duration), 1 lost to the diagnostic, and
    # 7 that completed earlier events (3 streamed parts, results)
    assert doc["counts"] == {"records": 22, "events": 12, "skipped": 2, "diagnostics": 1}
    assert doc["diagnostics"] == [{"level": "error", "message": "binary data, not JSON; skipped",
                                   "file": None, "line": 6}]
    assert [e["kind"] for e in doc["events"]][:3] == ["user", "assistant", "tool"]
