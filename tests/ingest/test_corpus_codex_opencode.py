"""The Codex and opencode files of the shared corpus (real third-party logs) load cleanly, and the shell
calls found match a count made here straight from the raw records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from analyzer.events import AssistantEvent, Level, UserEvent
from analyzer.ingest import IngestError, codex, opencode
from analyzer.ingest.base import read_head

pytestmark = pytest.mark.corpus

_CODEX_SHELL_FUNCTIONS = {"shell", "shell_command", "exec_command", "container.exec"}


def codex_files(corpus: Path) -> list[Path]:
    files = sorted((corpus / "codex").glob("*.jsonl"))
    if not files:
        pytest.skip("no Codex files in the corpus")
    return files


def raw_codex_shell_calls(path: Path) -> set[str]:
    """call_ids of shell tool calls, read with plain json: function calls of the shell tools,
    local_shell_call items and code-mode `exec` scripts that call exec_command (others browse the
    web or poll: ``tools.web__run``, ``tools.wait``)."""
    ids: set[str] = set()
    for line in path.read_text().splitlines():
        rec: dict[str, Any] = json.loads(line)
        item = rec.get("payload") if isinstance(rec.get("payload"), dict) else rec
        if rec.get("type") not in (None, "response_item"):
            continue
        kind, name = item.get("type"), item.get("name")
        if (kind == "function_call" and name in _CODEX_SHELL_FUNCTIONS) or kind == "local_shell_call" or (
            kind == "custom_tool_call" and name == "exec" and "exec_command(" in item.get("input", "")
        ):
            ids.add(item["call_id"])
    return ids


def test_codex_corpus_files_load_without_errors_and_count_shell_calls(corpus: Path) -> None:
    for path in codex_files(corpus):
        assert codex.detect(path, read_head(path)), path
        s = codex.load(path)
        assert [d for d in s.diagnostics if d.level == Level.error] == [], path
        assert {t.ref for t in s.shell_calls()} == raw_codex_shell_calls(path), path
        assert s.counts.records == len(path.read_text().splitlines())


def test_codex_exec_run_messages_are_not_duplicated(corpus: Path) -> None:
    path = corpus / "codex" / "agent-history-exec-redacted.jsonl"
    if not path.exists():
        pytest.skip("file absent")
    s = codex.load(path)
    assert (s.session_id, s.model) == ("019e9625-802f-7e91-840a-cfe88d14117a", "gpt-5.5")
    # each of prompt and answer is written twice (response_item + event_msg)
    assert [(e.kind, getattr(e, "origin", None)) for e in s.events] == [
        ("user", "meta"), ("user", "prompt"), ("assistant", None)]


def test_codex_code_mode_command_comes_from_the_command_execution(corpus: Path) -> None:
    path = corpus / "codex" / "v0.153-unified-exec-excerpt.jsonl"
    if not path.exists():
        pytest.skip("file absent")
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    item = next(r["payload"]["item"] for r in rows
                if r["type"] == "event_msg" and r["payload"].get("item", {}).get("type") == "CommandExecution")
    s = codex.load(path)
    (call,) = s.shell_calls()
    assert call.command == item["command"][2]  # argv [/bin/zsh, -lc, SCRIPT]
    assert (call.exit_code, call.output) == (item["exit_code"], item["aggregated_output"])
    texts = {r["payload"]["content"][0]["text"] for r in rows
             if r["type"] == "response_item" and r["payload"].get("role") == "assistant"}
    said = [e for e in s.events if isinstance(e, AssistantEvent)]
    assert len(said) == len(texts) == 2


def test_opencode_messages_file_loads_and_counts_bash_parts(corpus: Path) -> None:
    path = corpus / "opencode" / "poem-write-messages.json"
    if not path.exists():
        pytest.skip("file absent")
    assert opencode.detect(path, read_head(path)) == "opencode messages array: [{info, parts}]"
    s = opencode.load(path)
    assert [d for d in s.diagnostics if d.level == Level.error] == []
    raw = json.loads(path.read_text())
    parts = [p for m in raw for p in m["parts"]]
    assert len(s.shell_calls()) == sum(p["type"] == "tool" and p["tool"] == "bash" for p in parts)
    tools = [p for p in parts if p["type"] == "tool"]
    assert [(t.name, t.ref, t.category) for t in s.tools()] == [(p["tool"], p["callID"], "file") for p in tools]
    assert [e.text for e in s.events if isinstance(e, UserEvent)] == [raw[0]["parts"][0]["text"]]
    assert s.counts.records == len(raw) + len(parts)


def test_opencode_session_info_file_is_a_clear_error(corpus: Path) -> None:
    path = corpus / "opencode" / "poem-write-session.json"
    if not path.exists():
        pytest.skip("file absent")
    assert opencode.detect(path, read_head(path)) == "opencode session info (no messages)"
    with pytest.raises(IngestError, match="session info without messages") as info:
        opencode.load(path)
    assert str(path) in str(info.value)
