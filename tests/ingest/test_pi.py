"""pi coding-agent sessions: detection, tool calls paired with their results by id, exit codes from the
bash tool's status line, the user's own `!` commands, bad lines, and the real sessions of the corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.events import AssistantEvent, Level, SystemEvent, UserEvent
from analyzer.ingest import FORMATS, detect, load, pi
from analyzer.ingest.base import read_head
from analyzer.pipeline import analyze
from tests.ingest.test_corpus_other import detection_cases

ROOT = Path(__file__).resolve().parents[2]
(FIXTURE,) = (ROOT / "fixtures" / "pi").glob("*.jsonl")
CORPUS = ROOT.parent / "shared" / "corpus" / "pi"
CORPUS_FILES = sorted(CORPUS.glob("*.jsonl")) if CORPUS.is_dir() else []


def test_detected_from_the_header_or_from_an_entry(tmp_path: Path) -> None:
    fmt, reason = detect(FIXTURE)
    assert fmt.NAME == "pi" and "session" in reason
    cut = tmp_path / "cut.jsonl"  # a copy that starts after the header
    cut.write_text("\n".join(FIXTURE.read_text("utf-8").splitlines()[3:]) + "\n", encoding="utf-8")
    fmt, reason = detect(cut)
    assert fmt.NAME == "pi" and "parentId" in reason


@pytest.mark.parametrize(("path", "fmt"), detection_cases(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_claims_no_other_formats_file(path: Path, fmt: str) -> None:
    assert pi.detect(path, read_head(path)) is None


def test_messages_in_file_order() -> None:
    s = load(FIXTURE)
    assert (s.format, s.agent, s.session_id, s.cwd, s.model) == (
        "pi", "pi", "0197a2d4-5c1e-7b3a-9f10-2e4d6a8c0b12", "/home/dev/handbook", "claude-sonnet-4-5")
    assert [e.text for e in s.events if isinstance(e, UserEvent)] == [
        "Serve the docs folder on port 8765 so I can preview the handbook, and check that it answers.",
        "Looks good. Stop the server now, I'm done."]
    said = next(e for e in s.events if isinstance(e, AssistantEvent))
    assert said.text == "Starting a static server for docs/ on 8765." and "http.server" in (said.thinking or "")
    assert [e.subtype for e in s.events if isinstance(e, SystemEvent)] == ["custom:git-status", "compaction"]
    # header, model and thinking-level changes, the extension's custom entry and the label are not events
    assert (s.counts.records, s.counts.skipped, s.diagnostics) == (22, 5, [])


def test_bash_calls_with_results_exit_codes_and_the_users_own_command() -> None:
    s = load(FIXTURE)
    launch, probe, tail, by_user, kill = s.shell_calls()
    assert (launch.ref, launch.line, launch.result_line) == ("call_5f0e1a2b3c4d4e5f8a9b0c1d", 5, 6)
    assert (launch.output, launch.exit_code) == ("52114\n", 0)  # no status line: exit 0
    assert (probe.output, probe.exit_code, probe.is_error) == ("200\n", 0, False)
    assert (tail.interrupted, tail.exit_code, tail.input["timeout"]) == (True, None, 5)  # timed out
    assert (by_user.by_user, by_user.command, by_user.exit_code, by_user.ref) == (True, "ss -ltnp | grep 8765", 0, None)
    assert (kill.exit_code, kill.is_error) == (7, True)
    read = next(t for t in s.tools() if t.name == "read")
    assert read.category == "file" and "Serving HTTP" in (read.output or "")


def test_the_world_sees_launch_probe_and_stop() -> None:
    analysis = analyze(FIXTURE)
    (inst,) = analysis.world.instances.values()
    assert (inst.host, inst.port) == ("local", 8765)
    assert [c.state for c in inst.history][:2] == ["starting", "ready"]


def test_bad_lines_are_reported_and_an_invalid_escape_is_read(tmp_path: Path) -> None:
    lines = FIXTURE.read_text("utf-8").splitlines()
    escaped = lines[9].replace("Serving HTTP", "mail \\\\***@***.*** Serving HTTP").replace("\\\\***", "\\***")
    assert "\\***" in escaped
    broken = [*lines[:5], lines[5][:60], json.dumps({"no": "type"}), *lines[6:9], escaped, *lines[10:]]
    p = tmp_path / "session.jsonl"
    p.write_text("\n".join(broken) + "\n", encoding="utf-8")
    s = load(p, format="pi")
    assert sorted((d.line, d.level) for d in s.diagnostics) == [
        (6, Level.error), (7, Level.error), (11, Level.warning)]
    assert s.shell_calls()[0].output is None  # its result was the cut line
    read = next(t for t in s.tools() if t.name == "read")
    assert "mail \\***@***.*** Serving HTTP" in (read.output or "")  # the lone backslash kept as written


def raw_shell_calls(path: Path) -> int:
    """bash calls whose command is in the file (a harness may have evicted a call's arguments), and the
    user's `!` commands, counted from the raw entries; lines that are not JSON cannot hold a call."""
    count = 0
    for line in path.read_bytes().splitlines():
        try:
            message = json.loads(line).get("message") or {}
        except json.JSONDecodeError:
            continue
        count += message.get("role") == "bashExecution"
        content = message.get("content")
        count += sum(isinstance(b, dict) and b.get("type") == "toolCall" and b.get("name") == "bash"
                     and isinstance(b.get("arguments", {}).get("command"), str)
                     for b in (content if isinstance(content, list) else []))
    return count


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_session_loads_cleanly_with_every_shell_call(corpus: Path, path: Path) -> None:
    assert [name for name, fmt in FORMATS.items() if fmt.detect(path, read_head(path))] == ["pi"]
    s = load(path)
    assert [d for d in s.diagnostics if d.level is Level.error] == []
    assert len(s.shell_calls()) == raw_shell_calls(path)
    unanswered = [t for t in s.shell_calls() if t.output is None]
    assert unanswered in ([], s.shell_calls()[-1:])  # only a call the file ends before answering
    assert [e.index for e in s.events] == list(range(len(s.events)))


@pytest.mark.corpus
def test_corpus_anchors_match_the_labels(corpus: Path) -> None:
    s = load(corpus / "pi" / "raddit-dashboard-pkill.jsonl")
    by_ref = {t.ref: t for t in s.shell_calls()}
    assert by_ref["call_e75a6dcad1df4d8083e1f335"].line == 149  # labels.yaml tolerate anchors
    assert by_ref["call_20cbe6b01ee74f8b92502c9c"].line == 287
    assert by_ref["call_bc9790de03714e71bc0bee66"].line == 432
    first = by_ref["call_329539d941634ff28f9db8c0"]
    assert (first.exit_code, first.result_line) == (7, 148)
    # the line with a redacted e-mail after `\n` is read, with a warning
    assert [(d.level, d.line) for d in s.diagnostics if d.line] == [(Level.warning, 31)]
