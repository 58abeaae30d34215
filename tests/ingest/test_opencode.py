from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from analyzer.events import AssistantEvent, Level, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest import IngestError, opencode
from analyzer.ingest.base import read_head
from tests.conftest import FIXTURES

EXPORT = FIXTURES / "opencode" / "vllm-restart.export.json"
STORAGE = FIXTURES / "opencode" / "storage"
PROJECT = "4f7e2a9b1c3d5e6f708192a3b4c5d6e7f8091a2b"
MAIN, SUB, OLD = "ses_3b2e7d41cffeHk9Lm2Nq4Rs6Tu", "ses_3b2e6f90bffeAa1Bb2Cc3Dd4Ee", "ses_3c0a1b2c3ffeZy9Xw8Vu7Ts6Rq"

# opencode's drizzle schema (packages/opencode/src/session/session.sql.ts), the columns that matter
SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT, parent_id TEXT,
  slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL, version TEXT NOT NULL,
  share_url TEXT, cost REAL NOT NULL DEFAULT 0, agent TEXT, model TEXT,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_compacting INTEGER, time_archived INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
"""


def make_db(path: Path, sessions: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> Path:
    """An opencode.db holding ``sessions`` given as (session info, [{info, parts}])."""
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    for info, messages in sessions:
        t = info["time"]
        con.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created,"
            " time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (info["id"], info.get("projectID", "p"), info.get("parentID"), info.get("slug", "s"),
             info["directory"], info["title"], info["version"], t["created"], t["updated"]),
        )
        for m in messages:
            mi = m["info"]
            data = {k: v for k, v in mi.items() if k not in ("id", "sessionID")}
            con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                        (mi["id"], info["id"], mi["time"]["created"], mi["time"]["created"], json.dumps(data)))
            for p in m["parts"]:
                pdata = {k: v for k, v in p.items() if k not in ("id", "sessionID", "messageID")}
                con.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                            (p["id"], mi["id"], info["id"], mi["time"]["created"], mi["time"]["created"],
                             json.dumps(pdata)))
    con.commit()
    con.close()
    return path


def storage_session(session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A session of the storage fixture as (info, [{info, parts}]), read with plain json."""
    info = json.loads((STORAGE / "session" / PROJECT / f"{session_id}.json").read_text())
    messages = []
    for f in sorted((STORAGE / "message" / session_id).glob("*.json")):
        mi = json.loads(f.read_text())
        parts = [json.loads(p.read_text()) for p in sorted((STORAGE / "part" / mi["id"]).glob("*.json"))]
        messages.append({"info": mi, "parts": parts})
    return info, messages


def export_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(EXPORT.read_text())
    return doc


def dumps(events: list[Any], exclude: tuple[str, ...] = ("source",)) -> list[dict[str, Any]]:
    return [e.model_dump(exclude=set(exclude)) for e in events]


# ------------------------------------------------------------------------------------------- export

def test_export_timeline_kinds_order_lines_and_session_fields() -> None:
    s = opencode.load(EXPORT)
    assert (s.format, s.agent, s.session_id) == ("opencode", "opencode", "ses_3a1f9c0e2ffeQv7RkT2mWcHd4L")
    assert (s.cwd, s.model) == ("/home/dev/serving", "claude-sonnet-4-5")
    assert [e.kind for e in s.events] == [
        "user", "assistant", "tool", "tool", "assistant", "tool", "assistant", "user", "tool", "tool", "tool",
        "assistant", "user", "tool", "user", "tool", "user",
    ]
    assert [e.line for e in s.events] == [1, 2, 2, 3, 4, 4, 5, 6, 7, 7, 7, 8, 9, 10, 11, 12, 12]
    assert not s.diagnostics
    first = s.events[0]
    assert first.ts is not None and first.ts.isoformat() == "2026-06-16T09:10:00.400000+00:00"


def test_export_bash_parts_commands_exit_codes_and_refs() -> None:
    s = opencode.load(EXPORT)
    launch, probe1, probe2, restart, rejected, smi, tail = s.shell_calls()
    assert launch.name == "bash" and launch.ref == "toolu_01Ew3nZ5kQp8RtVb2xLm9sYh"
    assert launch.command == "nohup vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8000 > vllm.log 2>&1 &"
    assert (launch.exit_code, launch.output, launch.is_error) == (0, "", False)
    assert (probe1.exit_code, probe1.is_error) == (7, True)
    assert probe1.output is not None and probe1.output.startswith("curl: (7)")
    assert probe2.exit_code == 0 and probe2.output is not None and "Llama-3.1-8B-Instruct" in probe2.output
    assert probe2.result_ts is not None and probe2.ts is not None
    assert (probe2.result_ts - probe2.ts).total_seconds() == pytest.approx(60.15)
    assert restart.command is not None and restart.command.startswith('pkill -f "vllm serve"; sleep 5; nohup')
    # status error: the user refused the call
    assert (rejected.is_error, rejected.exit_code, rejected.interrupted) == (True, None, False)
    assert rejected.output is not None and "rejected permission" in rejected.output
    # the user's own `!nvidia-smi`
    assert smi.by_user and not launch.by_user and smi.exit_code == 0
    # aborted by the user
    assert tail.interrupted and tail.is_error and tail.output == "Tool execution aborted"
    assert all(t.cwd == "/home/dev/serving" for t in (launch, smi, tail))


def test_export_task_part_is_a_subagent_call_with_the_child_session() -> None:
    task = next(t for t in opencode.load(EXPORT).tools() if t.name == "task")
    assert task.category == "subagent" and task.task_id == "ses_3a1f8e51affeP0sL6xNbUy2GtJ"
    assert task.ref == "toolu_01Vw2Xy5Za8Bc1De4Fg7Hi0J" and task.command is None


def test_export_text_reasoning_synthetic_and_abort() -> None:
    s = opencode.load(EXPORT)
    said = [e for e in s.events if isinstance(e, AssistantEvent)]
    assert said[0].text == "I'll start vLLM in the background and log to `vllm.log`."
    assert said[0].thinking is not None and said[0].thinking.startswith("The user wants a vLLM server")
    # reasoning with no text after it in its message is kept as a silent turn
    assert (said[1].text, said[1].thinking) == ("", "Still loading weights; wait longer.")
    users = [e for e in s.events if isinstance(e, UserEvent)]
    assert [u.origin for u in users] == ["prompt", "prompt", "meta", "prompt", "interrupt"]
    assert users[2].text == opencode.USER_SHELL_MARKER
    assert users[-1].text == "[MessageAbortedError] The operation was aborted."
    assert users[-1].ref == export_doc()["messages"][-1]["info"]["id"]


def test_bare_messages_array_reads_like_the_export(tmp_path: Path) -> None:
    p = tmp_path / "messages.json"
    p.write_text(json.dumps(export_doc()["messages"], indent=2))
    assert opencode.detect(p, read_head(p)) == "opencode messages array: [{info, parts}]"
    s = opencode.load(p)
    assert s.session_id == "ses_3a1f9c0e2ffeQv7RkT2mWcHd4L"
    assert dumps(s.events) == dumps(opencode.load(EXPORT).events)


def test_bad_message_and_part_are_diagnostics_and_the_rest_loads(tmp_path: Path) -> None:
    doc = export_doc()
    doc["messages"].insert(1, "not a message")
    doc["messages"][2]["parts"].append(42)
    p = tmp_path / "export.json"
    p.write_text(json.dumps(doc))
    s = opencode.load(p)
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.error, 2), (Level.error, 3)]
    assert len(s.shell_calls()) == 7


def test_session_info_alone_is_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "session.json"
    p.write_text(json.dumps({"id": "ses_1", "slug": "x", "projectID": "p", "directory": "/w", "title": "t",
                             "version": "1.15.7", "time": {"created": 1, "updated": 2}}))
    assert opencode.detect(p, read_head(p)) == "opencode session info (no messages)"
    with pytest.raises(IngestError, match="session info without messages") as info:
        opencode.load(p)
    assert "opencode export ses_1" in str(info.value)


def test_export_without_messages_is_an_empty_session_with_a_warning(tmp_path: Path) -> None:
    doc = export_doc()
    doc["messages"] = []
    p = tmp_path / "export.json"
    p.write_text(json.dumps(doc))
    s = opencode.load(p)
    assert s.events == [] and s.session_id == "ses_3a1f9c0e2ffeQv7RkT2mWcHd4L"
    assert [(d.level, d.message) for d in s.diagnostics] == [(Level.warning, "the session has no messages")]


# ------------------------------------------------------------------------------------------ storage

def test_storage_root_loads_the_latest_session_with_its_subagent_after_the_task_call() -> None:
    s = opencode.load(STORAGE)
    assert (s.session_id, s.model, s.cwd) == (MAIN, "gpt-5.1", "/srv/sglang")
    assert [(e.kind, e.agent) for e in s.events] == [
        ("user", "main"), ("assistant", "main"), ("tool", "main"), ("tool", "main"), ("tool", "main"),
        ("user", SUB), ("tool", SUB), ("tool", SUB), ("assistant", SUB),
        ("tool", "main"), ("assistant", "main"),
    ]
    task = s.events[4]
    assert isinstance(task, ToolEvent) and task.category == "subagent" and task.task_id == SUB
    child_prompt = s.events[5]
    assert isinstance(child_prompt, UserEvent) and child_prompt.origin == "meta"
    launch = s.events[2]
    assert isinstance(launch, ToolEvent) and launch.ref == "call_q1W2e3R4t5Y6u7I8o9P0a1S2"
    assert launch.command is not None and launch.command.startswith("setsid nohup python -m sglang.launch_server")
    assert launch.line is None and launch.source is not None
    assert json.loads(Path(launch.source).read_text())["callID"] == launch.ref
    kill = s.events[9]
    assert isinstance(kill, ToolEvent) and kill.command is not None and kill.command.startswith("kill 77120")
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.info, None)]
    assert s.sources[0].endswith(f"session/{PROJECT}/{MAIN}.json")


def test_storage_part_file_is_the_event_source() -> None:
    s = opencode.load(STORAGE)
    for ev in s.events:
        assert ev.source is not None and Path(ev.source).parent.parent.name == "part"
        part = json.loads(Path(ev.source).read_text())
        assert ev.ref == (part["callID"] if isinstance(ev, ToolEvent) else part["id"])


@pytest.mark.parametrize("entry", [f"session/{PROJECT}/{OLD}.json", f"message/{OLD}"])
def test_storage_session_file_or_message_folder_loads_that_session(entry: str) -> None:
    s = opencode.load(STORAGE / entry)
    assert s.session_id == OLD and not s.diagnostics
    (probe,) = s.shell_calls()
    assert (probe.command, probe.exit_code, probe.is_error) == ("ss -ltnp | grep 30001", 1, True)


def test_list_sessions_and_load_session() -> None:
    refs = opencode.list_sessions(STORAGE)
    assert [r.id for r in refs] == [MAIN, SUB, OLD]
    assert refs[1].parent_id == MAIN and refs[0].title == "Launch sglang on 30000 and stop 30001"
    sub = opencode.load_session(STORAGE, SUB)
    assert sub.session_id == SUB and len(sub.shell_calls()) == 2
    with pytest.raises(IngestError, match="no session 'ses_nope'"):
        opencode.load_session(STORAGE, "ses_nope")


def test_broken_part_file_is_a_diagnostic_with_its_file(tmp_path: Path) -> None:
    root = shutil.copytree(STORAGE, tmp_path / "storage")
    s0 = opencode.load(root)
    victim = Path(str(s0.shell_calls()[1].source))
    victim.write_text('{"id": "prt_x", "type": "tool", "state": {')
    s = opencode.load(root)
    errors = [d for d in s.diagnostics if d.level == Level.error]
    assert len(errors) == 1 and errors[0].file == str(victim) and "unreadable JSON" in errors[0].message
    assert len(s.shell_calls()) == len(s0.shell_calls()) - 1


# ------------------------------------------------------------------------------------------- sqlite

def test_database_reads_the_latest_session_like_its_export(tmp_path: Path) -> None:
    doc = export_doc()
    older = storage_session(OLD)
    older[0]["time"] = {"created": 1781500000000, "updated": 1781500100000}  # before the export's session
    db = make_db(tmp_path / "opencode.db", [older, (doc["info"], doc["messages"])])
    assert opencode.detect(db, read_head(db)) == "opencode SQLite database (session, message, part tables)"
    s = opencode.load(db)
    assert s.session_id == doc["info"]["id"] and s.sources == [str(db)]
    assert dumps(s.events) == dumps(opencode.load(EXPORT).events)
    assert [d.level for d in s.diagnostics] == [Level.info]


def test_database_subagent_sessions_and_listing(tmp_path: Path) -> None:
    db = make_db(tmp_path / "opencode.db", [storage_session(OLD), storage_session(SUB), storage_session(MAIN)])
    assert [r.id for r in opencode.list_sessions(db)] == [MAIN, SUB, OLD]
    s = opencode.load(db)
    assert s.session_id == MAIN
    # the same events as from the storage folder; lines are message numbers instead of part files
    assert dumps(s.events, ("source", "line")) == dumps(opencode.load(STORAGE).events, ("source", "line"))
    assert [e.line for e in s.events[:6]] == [1, 2, 2, 2, 2, 1]
    old = opencode.load_session(db, OLD)
    assert [t.command for t in old.shell_calls()] == ["ss -ltnp | grep 30001"]


def test_other_sqlite_databases_are_not_opencode(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE session (id TEXT)")
    con.commit()
    con.close()
    assert opencode.detect(db, read_head(db)) is None
    with pytest.raises(IngestError, match="without opencode's session/message/part tables"):
        opencode.load(db)


# ---------------------------------------------------------------------------------------- detection

def test_detects_export_storage_and_long_exports(tmp_path: Path) -> None:
    assert opencode.detect(EXPORT, read_head(EXPORT)) == "opencode export: {info, messages: [{info, parts}]}"
    assert opencode.detect(STORAGE, b"") and opencode.detect(STORAGE / f"message/{OLD}", b"")
    doc = export_doc()
    doc["info"]["summary"]["diffs"] = [{"file": "big.txt", "patch": "+x\n" * 40_000}]
    p = tmp_path / "big.json"
    p.write_text(json.dumps(doc, indent=2))
    assert opencode.detect(p, read_head(p)) == "opencode export: {info, messages: [{info, parts}]}"
    assert len(opencode.load(p).shell_calls()) == 7


@pytest.mark.parametrize(
    "doc",
    [
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        {"messages": [{"role": "user", "content": "hi"}]},
        {"info": {"title": "x"}, "entries": []},
        {"id": "abc", "timestamp": "2026-01-01T00:00:00Z"},
    ],
)
def test_does_not_claim_other_json(tmp_path: Path, doc: Any) -> None:
    p = tmp_path / "x.json"
    p.write_text(json.dumps(doc))
    assert opencode.detect(p, read_head(p)) is None


def test_folders_that_are_not_storage_are_not_claimed(tmp_path: Path) -> None:
    (tmp_path / "session").mkdir()
    assert opencode.detect(tmp_path, b"") is None


def test_compaction_and_api_error(tmp_path: Path) -> None:
    doc = export_doc()
    msgs = doc["messages"]
    msgs[0]["parts"].append({"id": "prt_c", "sessionID": "s", "messageID": msgs[0]["info"]["id"],
                             "type": "compaction", "auto": True})
    msgs[1]["info"]["error"] = {"name": "APIError", "data": {"message": "Overloaded", "statusCode": 529}}
    p = tmp_path / "export.json"
    p.write_text(json.dumps(doc))
    s = opencode.load(p)
    systems = [e for e in s.events if isinstance(e, SystemEvent)]
    assert [(e.subtype, e.text, e.line) for e in systems] == [
        ("compaction", "auto", 1), ("api_error", "APIError: Overloaded", 2)]


def test_fields_of_the_wrong_type_never_raise(tmp_path: Path) -> None:
    doc = export_doc()
    parts = doc["messages"][1]["parts"]
    parts[1]["type"] = ["text"]            # unhashable type
    parts[2]["text"] = {"not": "text"}     # a text part with an object for text
    parts[3]["state"] = "completed"        # a tool part whose state is not an object
    parts[3]["tool"] = {"name": "bash"}
    doc["messages"][1]["info"]["modelID"] = 12
    p = tmp_path / "export.json"
    p.write_text(json.dumps(doc))
    s = opencode.load(p)
    msg2 = [e for e in s.events if e.line == 2]
    assert [e.kind for e in msg2] == ["assistant", "tool"]
    tool = msg2[1]
    assert isinstance(tool, ToolEvent) and (tool.name, tool.command, tool.output) == ("?", None, None)
    # the part of unknown type; the tool part without a status
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.info, 2), (Level.warning, 2)]
    assert len(s.shell_calls()) == 6


RUN_STREAM = FIXTURES / "opencode" / "run-format-json-uvicorn.jsonl"


def test_run_format_json_stream_is_read_as_the_session_it_prints() -> None:
    assert opencode.detect(RUN_STREAM, read_head(RUN_STREAM)) == \
        "opencode run --format json event stream (JSONL of parts)"
    s = opencode.load(RUN_STREAM)
    assert (s.format, s.agent, s.session_id) == ("opencode", "opencode", "ses_4a1b2c3d4ffeRunJsonUvic0rn")
    assert [e.kind for e in s.events] == ["assistant", "tool", "tool", "tool", "assistant"]
    # each event at its own line; the step markers are skipped, the error event is a warning
    assert [e.line for e in s.events] == [2, 3, 6, 7, 9]
    launch, probe, restart = [e for e in s.events if isinstance(e, ToolEvent)]
    assert (launch.ref, launch.command, launch.exit_code) == ("call_A1", "nohup uvicorn app:api --port 8000 > "
                                                             "api.log 2>&1 &", 0)
    assert probe.output == '{"status":"ok"}'
    assert restart.command is not None and restart.command.startswith("pkill -f uvicorn && ")
    assert [(d.level, d.line, d.message) for d in s.diagnostics] == [
        (Level.warning, 8, "opencode reported an error: rate limited, retrying")]
    assert (s.counts.records, s.counts.skipped) == (10, 4)  # every line; the 4 step markers


def test_a_bad_line_in_a_run_stream_is_reported_and_the_rest_read(tmp_path: Path) -> None:
    lines = RUN_STREAM.read_text("utf-8").splitlines()
    p = tmp_path / "run.jsonl"
    p.write_text("\n".join([*lines[:3], lines[3][:50], '{"type": "text", "sessionID": "x"}', *lines[4:]]) + "\n",
                 encoding="utf-8")
    s = opencode.load(p)
    assert [(d.level, d.line) for d in s.diagnostics if d.level == Level.error] == [(Level.error, 4), (Level.error, 5)]
    assert len([e for e in s.events if isinstance(e, ToolEvent)]) == 3


def test_a_storage_folder_is_listed_once_for_all_its_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch loads each session of a storage folder by its file; each load needs the listing
    (sub-agents are found by parentID). It is read once, not once per session."""
    root = shutil.copytree(STORAGE, tmp_path / "storage")
    reads: list[Path] = []
    real = opencode._StorageStore._read
    monkeypatch.setattr(opencode._StorageStore, "_read",
                        lambda self, path, b: reads.append(path) or real(self, path, b))
    infos = sorted((root / "session" / PROJECT).glob("*.json"))
    loaded = [opencode.load(f).session_id for f in infos]
    assert loaded == [f.stem for f in infos]
    assert sorted(set(reads) & set(infos)) == infos
    assert all(reads.count(f) == 1 for f in infos)
    # a session added since: the next load lists the folder again
    extra = root / "session" / PROJECT / "ses_4zzzzzzzzzffeNewNewNewNewNe.json"
    extra.write_text(json.dumps({**json.loads(infos[0].read_text()), "id": extra.stem}))
    (root / "message" / extra.stem).mkdir()
    assert opencode.load(extra).session_id == extra.stem


def test_a_session_file_updated_in_place_is_read_as_it_is_now(tmp_path: Path) -> None:
    root = shutil.copytree(STORAGE, tmp_path / "storage")
    f = root / "session" / PROJECT / f"{OLD}.json"
    assert opencode.load(f).cwd == json.loads(f.read_text())["directory"]
    info = json.loads(f.read_text())
    f.write_text(json.dumps({**info, "directory": "/srv/moved", "title": "renamed"}))  # same folder entry
    assert opencode.load(f).cwd == "/srv/moved"
    assert next(r.title for r in opencode.list_sessions(root) if r.id == OLD) == "renamed"
