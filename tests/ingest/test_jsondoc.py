"""Whole-document JSON read as hostile input (issue 17): a damaged record costs that record, the
records after it are read, and the diagnostic names the line of the syntax error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.ingest import IngestError, load
from analyzer.ingest.jsondoc import Lost, json_prefix

from ..conftest import FIXTURES


def test_json_prefix_reads_a_cut_off_head() -> None:
    doc = json_prefix(b'{"messages": [{"role": "user", "content": "a"}, {"role": "assis')
    assert doc is not None and not doc.complete
    messages = doc.value["messages"]
    assert messages[0] == {"role": "user", "content": "a"} and doc.is_cut(messages) and doc.is_cut(messages[1])
    assert not doc.is_cut(messages[0])
    assert json_prefix(b"plain text") is None


def test_json_prefix_stops_at_a_syntax_error_and_says_where() -> None:
    doc = json_prefix(b'[\n  {"role": "user", "content": "a"},\n  {"role": "user", "content": "b\x01"},\n'
                      b'  {"role": "user", "content": "c"}\n]')
    assert doc is not None and doc.value[0] == {"role": "user", "content": "a"}
    assert doc.error is not None and (doc.error.line, doc.error.column) == (3, 33)


def _pretty(messages: list[dict[str, object]], damaged: int) -> tuple[str, int]:
    """The messages as an indented JSON array, with message ``damaged`` cut in the middle of its
    ``content`` line (what a disk error or a bad edit leaves); and that line's number."""
    lines = json.dumps(messages, indent=2).split("\n")
    seen = -1
    for n, line in enumerate(lines):
        if line == "  {":
            seen += 1
        if seen == damaged and '"content"' in line:
            lines[n] = line[: len(line) // 2]
            return "\n".join(lines), n + 1
    raise AssertionError("no content line")


def test_a_damaged_record_keeps_its_place_and_the_records_after_it() -> None:
    messages = [{"role": "user", "content": f"message {i}"} for i in range(6)]
    text, line = _pretty(messages, 2)
    doc = json_prefix(text, resync=True)
    assert doc is not None and doc.complete and doc.error is None
    assert [m if not isinstance(m, Lost) else "lost" for m in doc.value] == [*messages[:2], "lost", *messages[3:]]
    with pytest.raises(json.JSONDecodeError) as syntax:
        json.loads(text)
    assert [d.line for d in doc.damage] == [syntax.value.lineno] and line <= syntax.value.lineno <= line + 1


def test_a_compact_document_reads_on_at_the_next_record_of_the_same_shape() -> None:
    messages = [{"role": "tool" if i % 2 else "assistant", "content": f"{{\"ok\": {i}}}"} for i in range(5)]
    text = json.dumps(messages)
    cut = text.index('"content"', text.index('{"role": "assistant", "content": "{\\"ok\\": 2}"}')) + 12
    doc = json_prefix(text[:cut] + "\x01" + text[cut:], resync=True)  # message 2's content broken
    assert doc is not None
    assert [m if not isinstance(m, Lost) else "lost" for m in doc.value] == [*messages[:2], "lost", *messages[3:]]


def test_a_pretty_member_is_read_past_inside_its_record() -> None:
    text = '{\n  "sessionId": "s",\n  "startTime": "2026-\x01",\n  "messages": [\n    {"id": "a"}\n  ]\n}'
    doc = json_prefix(text, resync=True)
    assert doc is not None and doc.value == {"sessionId": "s", "messages": [{"id": "a"}]}
    assert [d.line for d in doc.damage] == [3]


_WHOLE_DOCUMENT = [
    "chat/openai-uvicorn-lifecycle.json",
    "chat/anthropic-vllm-restart.json",
    "gemini-cli/session-2026-03-02T09-14-5c1e2a7b.json",
    "opencode/vllm-restart.export.json",
    "openhands/http-server-trajectory.json",
    "cline/api_conversation_history.json",
    "cline/ui_messages.json",
    "swe-agent/flask-health-503.traj",
]


@pytest.mark.parametrize("rel", _WHOLE_DOCUMENT)
def test_a_damaged_middle_line_keeps_the_rest_of_the_session(tmp_path: Path, rel: str) -> None:
    src = FIXTURES / rel
    clean = load(src)
    lines = src.read_text(encoding="utf-8").split("\n")
    middle = len(lines) // 2
    k = next(i for i in range(middle, len(lines)) if len(lines[i].strip()) > 8 and '"' in lines[i])
    lines[k] = lines[k][: len(lines[k]) // 2]  # cut inside the line: a string never closes
    damaged = tmp_path / src.name
    damaged.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as syntax:
        json.loads("\n".join(lines))
    where = syntax.value.lineno  # the line or the next (a number cut short reads on to it)
    session = load(damaged)  # detected and read, not "not a session log" at line 1
    assert session.format == clean.format
    errors = [d for d in session.diagnostics if d.level == "error"]
    assert errors and errors[0].line == where and f"line {where} " in errors[0].message
    # what comes after the damage is still there: the last event of the clean read
    last = clean.events[-1]
    assert any(type(e) is type(last) and e.ts == last.ts and e.ref == last.ref and e.line == last.line
               for e in session.events[-3:])
    assert len(session.events) >= len(clean.events) - 3


def test_damage_before_the_first_record_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[\n  {\n    "role": "user",\n    "content": "hi\x01"\n  }\n]\n', encoding="utf-8")
    with pytest.raises(IngestError) as exc:
        load(path)
    assert exc.value.line == 4 and "line 4 column" in str(exc.value)


def test_findings_after_a_damaged_line_are_kept(tmp_path: Path) -> None:
    """The opencode export's finding (an over-broad kill near the end) survives damage before it."""
    from analyzer.pipeline import analyze

    src = FIXTURES / "opencode/vllm-restart.export.json"
    before = {f.rule for f in analyze(load(src)).findings}
    lines = src.read_text(encoding="utf-8").split("\n")
    k = next(i for i in range(len(lines) // 3, len(lines)) if '"text"' in lines[i])
    lines[k] = lines[k][: len(lines[k]) // 2]
    damaged = tmp_path / src.name
    damaged.write_text("\n".join(lines), encoding="utf-8")
    after = {f.rule for f in analyze(load(damaged)).findings}
    assert before and before <= after
