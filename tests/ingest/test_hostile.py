"""Hostile input at the ingest stage (issue 17): each class of input that crashed, hung or ate memory
in a reader, as a small hand-written reproducer. What a user relies on: ``load`` never raises
anything but ``IngestError``, the rest of the session still arrives, the bad spot is a diagnostic
with its file and line, and every renderer can print what was loaded."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from analyzer.cli import main
from analyzer.events import Level, Session, ToolEvent
from analyzer.ingest import IngestError, detect, load, opencode
from analyzer.ingest.base import DEEP_MARKER, MAX_DEPTH
from analyzer.ingest.discover import discover_sessions
from analyzer.pipeline import analyze
from analyzer.report import json_doc
from analyzer.report.html import render_html

from ..conftest import FIXTURES
from .test_opencode import MAIN, STORAGE, make_db, storage_session

CLAUDE = FIXTURES / "claude-code" / "v2.0-kill-shell.jsonl"
CLAUDE_FOLDER = FIXTURES / "claude-code" / "v2.1-sglang"
SID = "7d0c7e4e-3b1a-4c2f-8e9d-5a6b7c8d9e0f"
OPENHANDS = FIXTURES / "openhands" / "file_store" / "sessions" / "5f1c2d3e4b5a69788796a5b4c3d2e1f0"
CAST_V3 = FIXTURES / "asciinema" / "deploy-restart-no-markers-v3.cast"


def errors(s: Session) -> list[tuple[str, int | None, str]]:
    return [(d.level.value, d.line, d.message) for d in s.diagnostics if d.level is not Level.info]


def renders(s: Session) -> None:
    """Every output of the session can be produced: JSON document, HTML report."""
    a = analyze(s)
    orjson.dumps(json_doc.document([a]))
    render_html(a).encode("utf-8")


def claude_records() -> list[dict[str, object]]:
    return [json.loads(line) for line in CLAUDE.read_text().splitlines()]


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    # json (not orjson) writes lone surrogates as \ud800 escapes, like the stdlib-based tools that made them
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


# ------------------------------------------------------------------------------------ wrong types

@pytest.mark.parametrize("kind", [b"{}", b"[]", b'["user"]'])
def test_a_type_field_that_is_an_object_or_list_is_not_a_crash_in_detection(tmp_path: Path, kind: bytes) -> None:
    p = tmp_path / "x.jsonl"
    p.write_bytes(b'{"type":' + kind + b',"x":1}\n')
    with pytest.raises(IngestError, match="not a session log in any known format"):
        detect(p)


def test_session_fields_of_the_wrong_type_are_dropped_not_a_validation_error(tmp_path: Path) -> None:
    records = claude_records()
    for r in records:
        if "sessionId" in r:
            r["sessionId"] = ["not", "an", "id"]
    s = load(write_jsonl(tmp_path / "s.jsonl", records))
    assert s.session_id is None
    assert len(s.events) == len(load(CLAUDE).events)


def test_fixture_yaml_fields_of_the_wrong_type(tmp_path: Path) -> None:
    p = tmp_path / "bad.session.yaml"
    p.write_text("start: 2026-01-01T00:00:00Z\nstep: abc\nevents:\n"
                 "  - bash: ls\n    exit: abc\n"          # line 4: no exit code
                 "  - user: hi\n    at: '+1e30'\n"        # line 6: no date that far on
                 "  - user: still read\n")                # line 8
    s = load(p)
    assert [e.line for e in s.events] == [6, 8]
    assert errors(s) == [
        ("warning", None, "`step: abc` is not a number of seconds; 30 s used"),
        ("error", 4, "event skipped: `exit_code`: Input should be a valid integer, unable to parse string as an "
                     "integer"),
        ("warning", 6, "`at: +1e30` is no usable number of seconds; the previous time is kept"),
    ]
    # the bad `at` keeps the start time; the next event is the default step (30 s) later
    assert [e.ts.isoformat() for e in s.events if e.ts] == ["2026-01-01T00:00:00+00:00", "2026-01-01T00:00:30+00:00"]


def test_asciinema_times_out_of_range(tmp_path: Path) -> None:
    header, *rest = CAST_V3.read_bytes().splitlines()
    p = tmp_path / "big.cast"
    p.write_bytes(b"\n".join([header, b'[9223372036854775808, "o", "x"]', b'[-9223372036854775808, "o", "y"]',
                              b"[1" + b"0" * 400 + b', "o", "z"]', *rest]) + b"\n")
    s = load(p)
    assert [(d.level.value, d.line) for d in s.diagnostics if d.level is Level.error] == [("error", 4)]
    assert [t.command for t in s.shell_calls()] == [t.command for t in load(CAST_V3).shell_calls()]
    renders(s)


# -------------------------------------------------------------------------------------- recursion

def test_tool_input_nested_deeper_than_orjson_dumps_is_cut_with_a_warning(tmp_path: Path) -> None:
    records = claude_records()
    deep: object = "bottom"
    for _ in range(300):
        deep = {"a": deep}
    line = next(n for n, r in enumerate(records, 1) if '"tool_use"' in json.dumps(r))
    content = records[line - 1]["message"]["content"]  # type: ignore[index]
    next(b for b in content if b["type"] == "tool_use")["input"]["deep"] = deep  # type: ignore[union-attr]
    s = load(write_jsonl(tmp_path / "s.jsonl", records))
    assert errors(s) == [("warning", line, f"input nested over {MAX_DEPTH} levels: the deeper part is "
                                           "replaced by a marker")]
    tool = next(e for e in s.events if isinstance(e, ToolEvent) and "deep" in e.input)
    node = tool.input["deep"]
    for _ in range(MAX_DEPTH - 1):
        node = node["a"]
    assert node == DEEP_MARKER
    renders(s)
    assert CliRunner().invoke(main, ["timeline", str(tmp_path / "s.jsonl")]).exit_code == 0


def test_yaml_nested_a_thousand_deep_is_one_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "deep.session.yaml"
    p.write_text("events:\n  - user: " + "[" * 1000 + "]" * 1000 + "\n")
    with pytest.raises(IngestError, match="YAML nested too deep to read"):
        load(p)


def test_codex_user_shell_command_without_a_command_is_a_message(tmp_path: Path) -> None:
    p = tmp_path / "rollout.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s", "cwd": "/"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "event_msg",
         "payload": {"type": "user_message", "message": "<user_shell_command> no command here"}},
    ]) + "\n")
    s = load(p)
    assert [(type(e).__name__, getattr(e, "origin", None)) for e in s.events] == [("UserEvent", "meta")]


# --------------------------------------------------------------------------------------- encoding

def test_lone_surrogates_become_replacement_characters(tmp_path: Path) -> None:
    p = tmp_path / "s.session.yaml"
    p.write_text('session_id: "id\\ud800"\nevents:\n  - user: "hi \\ud800"\n'
                 '  - bash: "echo \\udfff"\n    output: "out \\ud800"\n    input: {k: "\\ud800"}\n')
    s = load(p)
    assert s.session_id == "id\ufffd"
    assert s.events[0].text == "hi \ufffd"  # type: ignore[union-attr]
    tool = s.events[1]
    assert isinstance(tool, ToolEvent)
    assert (tool.command, tool.output, tool.input["k"]) == ("echo \ufffd", "out \ufffd", "\ufffd")
    renders(s)
    result = CliRunner().invoke(main, ["check", "--format", "json", str(p)])
    assert result.exit_code in (0, 1) and json.loads(result.stdout)["sessions"][0]["session_id"] == "id\ufffd"


def test_a_jsonl_line_with_a_lone_surrogate_escape_is_read_not_lost(tmp_path: Path) -> None:
    records = claude_records()
    line = next(n for n, r in enumerate(records, 1)
                if isinstance(r.get("message"), dict) and isinstance(r["message"].get("content"), str))  # type: ignore[union-attr]
    records[line - 1]["message"]["content"] += " \ud800"  # type: ignore[index]
    s = load(write_jsonl(tmp_path / "s.jsonl", records))
    assert errors(s) == [("warning", line, "lone UTF-16 surrogate escape (\\ud800-\\udfff) read as U+FFFD")]
    assert [e.ref for e in s.events] == [e.ref for e in load(CLAUDE).events]
    assert any(getattr(e, "text", "").endswith(" \ufffd") for e in s.events)
    renders(s)


SINGLE_FILES = [
    *sorted(p for p in FIXTURES.glob("*/*") if p.is_file() and p.name != "README.md" and p.parent.name != "seeds"),
    FIXTURES / "seeds" / "000-kill-after-ready.session.yaml",
]


@pytest.mark.parametrize("path", SINGLE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_utf8_bom_is_read_past_in_every_format(tmp_path: Path, path: Path) -> None:
    p = tmp_path / path.name
    p.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    good, bommed = load(path), load(p)
    assert bommed.format == good.format
    assert [(e.ref, e.line) for e in bommed.events] == [(e.ref, e.line) for e in good.events]
    assert errors(bommed) == errors(good)


# -------------------------------------------------------------------------------------- YAML bomb

def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    lines = ["a: &a [x,x,x,x,x,x,x,x,x]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    p = tmp_path / "bomb.session.yaml"
    p.write_text("\n".join(lines) + "\nevents:\n  - user: *i\n")  # 9**9 nodes when expanded
    assert p.stat().st_size < 600
    with pytest.raises(IngestError, match="an alias bomb"):
        load(p)


def test_yaml_aliases_of_ordinary_size_still_read(tmp_path: Path) -> None:
    p = tmp_path / "ok.session.yaml"
    p.write_text("x: &out 'Uvicorn running on http://0.0.0.0:8000'\nevents:\n"
                 "  - bash: uvicorn app:app\n    output: *out\n  - bash: uvicorn app:app\n    output: *out\n")
    assert [t.output for t in load(p).shell_calls()] == ["Uvicorn running on http://0.0.0.0:8000"] * 2


# ------------------------------------------------------------------------------ devices and FIFOs

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(),
                                reason="needs FIFOs and /dev/zero")


@needs_fifo
def test_a_subagent_file_linked_to_a_device_is_one_error(tmp_path: Path) -> None:
    folder = tmp_path / "cc"
    shutil.copytree(CLAUDE_FOLDER, folder)
    zero = folder / SID / "subagents" / "agent-zzzzzzz.jsonl"
    zero.symlink_to("/dev/zero")
    s = load(folder / f"{SID}.jsonl")
    assert errors(s) == [("error", None, "file not read: not a regular file (a FIFO, device or socket)")]
    assert [d.file for d in s.diagnostics if d.level is Level.error] == [str(zero)]
    assert len(s.events) == len(load(CLAUDE_FOLDER / f"{SID}.jsonl").events)


@needs_fifo
def test_an_openhands_event_linked_to_a_device_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "oh"
    shutil.copytree(OPENHANDS, folder)
    (folder / "events" / "999.json").symlink_to("/dev/zero")
    s = load(folder)
    assert errors(s) == [("error", None, "event file skipped: not a regular file (a FIFO, device or socket)")]
    assert len(s.events) == len(load(OPENHANDS).events)


@needs_fifo
def test_a_fifo_as_an_opencode_part_or_a_session_file_does_not_hang(tmp_path: Path) -> None:
    storage = tmp_path / "storage"
    shutil.copytree(STORAGE, storage)
    message = json.loads(next((storage / "message" / MAIN).glob("*.json")).read_text())
    part = next((storage / "part" / message["id"]).glob("*.json"))
    part.unlink()
    os.mkfifo(part)
    s = load(storage)
    assert any(d.file == str(part) and d.level is Level.error for d in s.diagnostics)
    os.mkfifo(tmp_path / "fifo.jsonl")
    with pytest.raises(IngestError, match="not a regular file"):
        load(tmp_path / "fifo.jsonl")


# -------------------------------------------------------------------------------------- opencode

def test_opencode_db_row_with_invalid_utf8_is_read_with_replacement(tmp_path: Path) -> None:
    clean = load(make_db(tmp_path / "clean.db", [storage_session(MAIN)]))
    db = make_db(tmp_path / "opencode.db", [storage_session(MAIN)])
    con = sqlite3.connect(db)
    con.execute("UPDATE session SET title = CAST(X'6869FF21' AS TEXT)")  # 'hi\xff!': not UTF-8
    con.commit()
    con.close()
    s = load(db)
    assert s.session_id == MAIN and len(s.events) == len(clean.events)


def test_opencode_db_without_a_column_is_one_clear_error(tmp_path: Path) -> None:
    db = make_db(tmp_path / "opencode.db", [storage_session(MAIN)])
    con = sqlite3.connect(db)
    con.execute("ALTER TABLE message DROP COLUMN time_created")
    con.commit()
    con.close()
    with pytest.raises(IngestError, match=r"opencode database not readable \(no such column: time_created\)"):
        load(db)


def test_opencode_db_null_ids(tmp_path: Path) -> None:
    db = make_db(tmp_path / "opencode.db", [storage_session(MAIN)])
    con = sqlite3.connect(db)
    con.execute("UPDATE part SET id = NULL WHERE rowid = (SELECT min(rowid) FROM part)")
    con.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)"
                " VALUES (NULL, 'p', 's', '/', 't', '1', 1, 1)")
    con.commit()
    con.close()
    s = load(db)
    assert s.session_id == MAIN and s.events
    assert [r.id for r in opencode.list_sessions(db)] == [MAIN]  # batch lists it without the NULL row
    assert [f.member for f in discover_sessions([tmp_path])] == [MAIN]


def test_opencode_storage_message_id_longer_than_a_file_name(tmp_path: Path) -> None:
    storage = tmp_path / "storage"
    shutil.copytree(STORAGE, storage)
    msg = next((storage / "message" / MAIN).glob("*.json"))
    info = json.loads(msg.read_text())
    info["id"] = "msg_" + "x" * 300
    msg.write_text(json.dumps(info))
    s = load(storage)
    assert [d.file for d in s.diagnostics if "names no part folder" in d.message] == [str(msg)]
