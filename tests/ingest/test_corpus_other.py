"""Real logs of the chat-array, Gemini CLI, OpenHands, SWE-agent, asciinema and aider formats
(../shared/corpus), and detection across every format's files: each of these detectors claims its
own files and no other's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.events import Level
from analyzer.ingest import FORMATS, detect, load, openhands
from analyzer.ingest.base import read_head

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
FIXTURES = ROOT / "fixtures"

MINE = ("chat", "gemini-cli", "openhands", "swe-agent", "asciinema", "aider")
DIRS = {"claude-code": "claude-code", "codex": "codex", "opencode": "opencode", "gemini-cli": "gemini-cli",
        "openhands": "openhands", "swe-agent": "swe-agent", "chat": "chat", "aider": "aider",
        "asciinema": "asciinema"}
"""Corpus/fixture folder → the format its files are in."""

# SWE-agent's own commands (tools bundles `defaults`, `windowed*`, `search`, `submit`, EnIGMA):
# written out here again so the shell count below does not reuse the reader's list
SWE_TOOL_WORDS = {"open", "goto", "scroll_up", "scroll_down", "create", "edit", "insert", "append", "submit",
                  "search_dir", "search_file", "find_file", "str_replace_editor", "filemap", "exit_forfeit",
                  "connect_start", "connect_sendline", "connect_stop", "decompile", "disassemble",
                  "debug_start", "debug_add_breakpoint", "debug_continue", "debug_step", "debug_exec",
                  "debug_stop",
                  # the run's own ends, written as the last action: not commands the agent typed
                  "exit_cost", "exit_context", "exit_api", "exit_error", "exit_format"}
# the tool names chat conversions give their shell tool (Claude Code's, SWE-agent-style harnesses', opencode's)
CHAT_SHELL_TOOLS = {"Bash", "bash", "execute_bash", "shell", "run_command", "exec_command"}


def format_of(path: Path) -> str | None:
    """The format of a corpus or fixture file, from the folder it sits in (sub-agent folders too)."""
    for part in reversed(path.parts[:-1]):
        if part in DIRS:
            return DIRS[part]
    return None


def _in_event_store(path: Path) -> bool:
    """A file of an OpenHands event-store session folder: the folder is the session, not the file."""
    return any(openhands.event_files(parent) for parent in path.parents[:3])


def files_under(root: Path) -> list[Path]:
    """Session files, and event-store folders (the one session format that is a folder of files)."""
    files = [p for p in root.rglob("*") if p.is_file() and p.name != "MANIFEST.md" and format_of(p)]
    stores = {parent for p in files for parent in p.parents[:3] if openhands.event_files(parent)}
    return sorted([p for p in files if not _in_event_store(p)] + list(stores))


def raw_shell_calls(path: Path, fmt: str) -> int:
    """Shell calls counted from the raw records, independently of the readers."""
    text = path.read_text("utf-8")
    if fmt == "gemini-cli" and path.suffix == ".json":
        doc = json.loads(text)
        return sum(tc.get("name") == "run_shell_command" for m in doc["messages"] for tc in m.get("toolCalls", []))
    if fmt == "gemini-cli":
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
        return sum(r.get("type") == "tool_use" and r.get("tool_name") == "run_shell_command" for r in records)
    if fmt == "chat":
        # distinct call ids: a compaction sub-agent's copy of a main message repeats its calls with the same ids
        doc = json.loads(text)
        messages = doc["messages"] if isinstance(doc, dict) else doc
        return len({tc["id"] for m in messages for tc in m.get("tool_calls") or []
                    if tc.get("function", {}).get("name") in CHAT_SHELL_TOOLS})
    if fmt == "openhands":
        return sum(e.get("action") == "run" and not e["args"].get("is_input") and bool(e["args"].get("command"))
                   for e in json.loads(text))
    if fmt == "swe-agent":
        steps = json.loads(text)["trajectory"]
        return sum(s["action"].split()[0] not in SWE_TOOL_WORDS for s in steps if s["action"].strip())
    if fmt == "aider":
        return sum(line.startswith(("#### /run ", "#### !", "> Running ")) for line in text.splitlines())
    if fmt == "asciinema":  # no structure to count: the commands a person sees when replaying the cast
        return len(CAST_COMMANDS[path.name])
    raise AssertionError(fmt)


CAST_COMMANDS = {
    "asciinema-repo-demo.cast": ["vim"],
    "chimera-mock-server-v3.cast": ["chimera --path Chimera/data.json"],
    "wg-forwarding-setup-v2.cast": [
        "wget -q https://raw.githubusercontent.com/AlainDevs/wg-forwarding/refs/heads/master/setup.sh"
        " && chmod +x setup.sh && sudo ./setup.sh", "ping 10.0.0.2", "exit"],
    "docker-hello-world-operator.cast": [
        "docker run hello-world", "docker run -p 30000:80 hello-world",
        "docker run --name ny-hello-world hello-world", "exit"],
    "go-rev-proxy-compose-operator.cast": [
        "cd examples", "docker-compose up -d",
        "curl -s http://truck.localhost:2002 | grep -op 'name.*$' | sed -e 's/<[^>]*>//g'",
        "curl -s http://car.localhost:2002 | grep -op 'name.*$' | sed -e 's/<[^>]*>//g'", "exit"],
    "ksre-k9s-demo.cast": [],  # a full-screen TUI: no prompt, nothing typed at a shell
}


def corpus_files() -> list[Path]:
    return [p for p in files_under(CORPUS) if format_of(p) in MINE] if CORPUS.is_dir() else []


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_corpus_file_loads_cleanly_with_every_shell_call(corpus: Path, path: Path) -> None:
    fmt = format_of(path)
    assert fmt is not None
    s = load(path)
    assert s.format == fmt
    if fmt != "chat":  # a chat conversion does not say which harness wrote the conversation
        assert s.agent == fmt
    assert [d for d in s.diagnostics if d.level is Level.error] == []
    assert len(s.shell_calls()) == raw_shell_calls(path, fmt)
    assert s.counts.records >= s.counts.skipped + 1
    assert s.events or CAST_COMMANDS.get(path.name) == []  # a recording of a TUI alone has nothing typed
    assert [e.index for e in s.events] == list(range(len(s.events)))


@pytest.mark.corpus
def test_corpus_details_that_matter_downstream(corpus: Path) -> None:
    served = load(corpus / "openhands" / "basic-gui-mode-trajectory.json")
    (server,) = [t for t in served.shell_calls() if "http.server" in (t.command or "")]
    assert server.background and server.exit_code is None and server.task_id == server.ref == "13"
    stream = load(corpus / "gemini-cli" / "figma-startup-stream-json.jsonl")
    assert [d.line for d in stream.diagnostics] == [93]  # the second concatenated session
    assert stream.session_id == "6727b31e-11a1-4351-b526-77ba7b90da09"
    last = stream.shell_calls()[-1]
    assert last.line == 149 and last.output is None  # the log ends before its result
    chat_file = load(corpus / "gemini-cli" / "figma-dashstack-chat-session.json")
    assert {t.exit_code for t in chat_file.shell_calls()} == {0}
    for name, commands in CAST_COMMANDS.items():
        assert [t.command for t in load(corpus / "asciinema" / name).shell_calls()] == commands
    (mock,) = load(corpus / "asciinema" / "chimera-mock-server-v3.cast").shell_calls()
    assert mock.interrupted and "Trying to bind to port 8080" in (mock.output or "")
    runs = load(corpus / "aider" / "rfp-platform-root.aider.chat.history.md").shell_calls()
    assert runs[0].command == "uvicorn main:app --reload" and all(r.by_user for r in runs)
    ctf = load(corpus / "swe-agent" / "ctf-web-i-got-id.traj")
    assert [t.exit_code for t in ctf.shell_calls()].count(0) == 17  # the EnIGMA PROCESS-DONE markers


def detection_cases() -> list[tuple[Path, str]]:
    roots = [FIXTURES] + ([CORPUS] if CORPUS.is_dir() else [])
    return [(p, fmt) for root in roots for p in files_under(root) if (fmt := format_of(p)) is not None]


@pytest.mark.parametrize(("path", "fmt"), detection_cases(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_each_detector_claims_only_its_own_files(path: Path, fmt: str) -> None:
    head = read_head(path)
    claimed = [name for name in MINE if FORMATS[name].detect(path, head)]
    assert claimed == ([fmt] if fmt in MINE else [])
    if fmt in MINE:
        assert fmt == detect(path)[0].NAME  # and no format earlier in the registry takes it first
