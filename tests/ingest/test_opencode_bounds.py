"""opencode stores read as hostile input (issue 17): one session of a database of thousands is
read from its own rows (batch loads each member alone: reading the whole session table per member
was quadratic), and a part too big to keep (a 900 MB tool output) is read as its two ends."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from analyzer.events import ToolEvent
from analyzer.ingest import opencode

from .test_opencode import MAIN, STORAGE, SUB, make_db, storage_session


def test_one_session_of_a_database_is_loaded_from_its_own_rows(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    db = make_db(tmp_path / "opencode.db", [storage_session(MAIN), storage_session(SUB)])
    whole = opencode.load_session(db, MAIN)

    def every_session(self: object) -> list[object]:
        raise AssertionError("listed every session to load one")

    monkeypatch.setattr(opencode._DbStore, "infos", every_session)
    member = opencode.load_session(db, MAIN)
    assert member.model_dump() == whole.model_dump()  # its sub-agent session found by parent_id
    assert any(e.agent == SUB for e in member.events)


def test_a_database_without_parent_ids_still_finds_sub_agents(tmp_path: Path) -> None:
    db = make_db(tmp_path / "opencode.db", [storage_session(MAIN), storage_session(SUB)])
    con = sqlite3.connect(db)
    con.execute("ALTER TABLE session RENAME COLUMN parent_id TO parent")  # another version's schema
    con.commit()
    con.close()
    s = opencode.load_session(db, MAIN)
    assert s.session_id == MAIN and s.events


def _huge_output(size: int) -> str:
    return "BEGIN of the output\n" + "x" * size + "\nKilled (the end of the output)"


def test_a_huge_part_in_a_database_is_read_as_its_two_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opencode, "MAX_VALUE_CHARS", 1 << 20)
    info, messages = storage_session(MAIN)
    tool = next(p for m in messages for p in m["parts"] if p.get("type") == "tool")
    tool["state"]["output"] = _huge_output(3 << 20)
    db = make_db(tmp_path / "opencode.db", [(info, messages)])
    s = opencode.load_session(db, MAIN)
    ev = next(e for e in s.events if isinstance(e, ToolEvent) and e.ref == tool["callID"])
    assert ev.output is not None and ev.output.startswith("BEGIN") and ev.output.endswith("(the end of the output)")
    assert len(ev.output) < 2 << 20
    assert any(f"part {tool['id']}: 3 MiB of JSON" in d.message and "not read" in d.message for d in s.diagnostics)
    assert ev.exit_code == tool["state"].get("metadata", {}).get("exit")  # the fields after the output too


def test_a_huge_part_file_in_a_storage_folder_is_read_as_its_two_ends(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opencode, "MAX_VALUE_CHARS", 1 << 20)
    storage = tmp_path / "storage"
    shutil.copytree(STORAGE, storage)
    part = next(p for p in sorted((storage / "part").rglob("*.json")) if json.loads(p.read_text())["type"] == "tool"
                and json.loads(p.read_text())["sessionID"] == MAIN)
    data = json.loads(part.read_text())
    data["state"]["output"] = _huge_output(3 << 20)
    part.write_text(json.dumps(data))
    s = opencode.load_session(storage, MAIN)
    ev = next(e for e in s.events if isinstance(e, ToolEvent) and e.source == str(part))
    assert ev.output is not None and ev.output.startswith("BEGIN") and ev.output.endswith("(the end of the output)")
    assert [d.file for d in s.diagnostics if "were not read" in d.message] == [str(part)]
