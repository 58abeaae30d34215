"""The hook command run exactly as an agent runs it: a subprocess with the hook JSON on stdin,
answering from the warm server it starts (in a private folder, stopped after the test)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from analyzer.guard.client import pid_path, socket_path
from tests.guard.conftest import transcript_before, uvicorn_transcript

ANALYZER = [sys.executable, "-c", "from analyzer.cli import main; main()"]


def _hook(payload: dict[str, object], *args: str) -> subprocess.CompletedProcess[str]:
    # a budget no loaded CI machine misses on a cold start (the default is for live use)
    return subprocess.run([*ANALYZER, "guard", "--agent", "claude-code", "--timeout", "60", *args],
                          input=json.dumps(payload),
                          capture_output=True, text=True, timeout=120, env=os.environ.copy())


def _logged() -> list[dict[str, object]]:
    """The decision log's lines: the server appends each after its reply has gone, so the hook
    may exit a moment before its line is there (a generous bound, not a timing check)."""
    log = Path(os.environ["ANALYZER_GUARD_LOG"])
    deadline = time.monotonic() + 30
    while not (log.exists() and log.read_text().endswith("\n")) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.skipif(shutil.which("pkill") is None or shutil.which("bash") is None, reason="needs bash and pkill")
def test_self_matching_pkill_is_denied_and_really_kills_its_own_wrapper(guard_dir: Path, tmp_path: Path) -> None:
    token = uuid.uuid4().hex[:12]
    transcript = tmp_path / "e2e.jsonl"
    uvicorn_transcript(transcript, token)
    command = f"pkill -f 'uvicorn app:{token}'; nohup uvicorn app:{token} --port 8765 > api.log 2>&1 &"
    payload = {"session_id": "e2e", "transcript_path": str(transcript), "cwd": str(tmp_path),
               "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
               "tool_use_id": "toolu_restart", "permission_mode": "default"}
    out = _hook(payload)
    assert out.returncode == 0, out.stderr
    decision = json.loads(out.stdout)["hookSpecificOutput"]
    assert decision["hookEventName"] == "PreToolUse" and decision["permissionDecision"] == "deny"
    assert "its own shell" in decision["permissionDecisionReason"]
    assert "fuser -k 8765/tcp (the uvicorn" in decision["permissionDecisionReason"]

    # the prediction holds for a real wrapper: a bash -c whose text holds the pattern dies by it
    wrapper = subprocess.run(["bash", "-c", f"pkill -f 'uvicorn app:{token}'; echo survived"],
                             capture_output=True, text=True, timeout=30)
    assert "survived" not in wrapper.stdout and wrapper.returncode != 0

    log = _logged()
    assert [(r["verdict"], r["rule"], r["session"], r["command"]) for r in log] == [
        ("deny", "over-broad-kill", "e2e", command)]
    assert log[0]["latency_ms"] > 0 and log[0]["error"] is None


def test_a_harmless_command_is_allowed_silently(guard_dir: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    uvicorn_transcript(transcript, "x")
    out = _hook({"session_id": "e2e", "transcript_path": str(transcript), "cwd": str(tmp_path),
                 "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git status"},
                 "tool_use_id": "toolu_2"})
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")


def test_seed_kill_after_ready_asks_through_the_hook(guard_dir: Path, tmp_path: Path) -> None:
    path, ev = transcript_before("000-kill-after-ready", 8, tmp_path / "t.jsonl")
    out = _hook({"session_id": "seed0", "transcript_path": str(path), "cwd": str(tmp_path),
                 "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": ev.command},
                 "tool_use_id": ev.ref})
    decision = json.loads(out.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "ask"
    assert "ready and in use" in decision["permissionDecisionReason"]


def test_fails_open_when_the_guard_cannot_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("ANALYZER_GUARD_DIR", str(blocker / "sub"))  # cannot be created
    monkeypatch.setenv("ANALYZER_GUARD_LOG", str(tmp_path / "guard.jsonl"))
    out = _hook({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                 "tool_input": {"command": "pkill -f python"}, "tool_use_id": "t"})
    assert (out.returncode, out.stdout) == (0, "")
    record = json.loads((tmp_path / "guard.jsonl").read_text())
    assert record["verdict"] == "allow" and record["error"]


def test_malformed_hook_input_is_allowed_and_logged(guard_dir: Path) -> None:
    out = subprocess.run([*ANALYZER, "guard", "--agent", "claude-code", "--timeout", "60"], input="{truncated",
                         capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stdout) == (0, "")
    (record,) = _logged()
    assert record["verdict"] == "allow" and "unreadable hook input" in record["error"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_installed_command_runs_as_the_agent_runs_it(guard_dir: Path, tmp_path: Path) -> None:
    """``guard install`` writes a command line; the agent hands it to a shell with the JSON on stdin."""
    from analyzer.guard.install import install

    settings = install("claude-code", "project", tmp_path, tmp_path / "home", timeout=60)
    hook = json.loads(settings.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    transcript = tmp_path / "t.jsonl"
    uvicorn_transcript(transcript, "inst")
    command = "pkill -f 'uvicorn app:inst'; nohup uvicorn app:inst --port 8765 > api.log 2>&1 &"
    payload = {"session_id": "inst", "transcript_path": str(transcript), "cwd": str(tmp_path),
               "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
               "tool_use_id": "toolu_i"}
    out = subprocess.run(["bash", "-c", hook], input=json.dumps(payload), capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    # the hook process itself loaded nothing of the analyzer: the standard library only
    traced = subprocess.run(["bash", "-c", hook.replace(" -I -S ", " -I -S -X importtime ", 1)],
                            input=json.dumps({**payload, "tool_input": {"command": "ls"}}),
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert traced.returncode == 0 and traced.stdout == ""
    loaded = {line.split("|")[-1].strip().split(".")[0] for line in traced.stderr.splitlines()
              if line.startswith("import time:")}
    assert loaded and not loaded & {"analyzer", "pydantic", "click", "spacy", "json", "typing", "pathlib",
                                    "argparse", "subprocess"}


def test_the_server_exits_when_idle(guard_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANALYZER_GUARD_IDLE", "1")
    transcript = tmp_path / "t.jsonl"
    uvicorn_transcript(transcript, "idle")
    out = _hook({"session_id": "idle", "transcript_path": str(transcript), "cwd": str(tmp_path),
                 "hook_event_name": "PreToolUse", "tool_name": "Bash",
                 "tool_input": {"command": "curl -sf localhost:8765/health"}, "tool_use_id": "t1"})
    assert out.returncode == 0
    pid, sock = Path(pid_path(str(guard_dir))), Path(socket_path(str(guard_dir)))
    assert pid.exists()
    deadline = time.monotonic() + 60  # a generous bound for a loaded machine, not a timing check
    while pid.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    # the server removes both on its way out
    assert not pid.exists() and not sock.exists()


def test_a_killed_server_cleans_up(guard_dir: Path, tmp_path: Path) -> None:
    """``kill PID`` (SIGTERM, as at logout) removes the socket and pid file like an idle exit."""
    import signal

    transcript = tmp_path / "t.jsonl"
    uvicorn_transcript(transcript, "term")
    _hook({"session_id": "term", "transcript_path": str(transcript), "cwd": str(tmp_path),
           "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t"})
    pid, sock = Path(pid_path(str(guard_dir))), Path(socket_path(str(guard_dir)))
    os.kill(int(pid.read_text()), signal.SIGTERM)
    deadline = time.monotonic() + 60  # a generous bound for a loaded machine, not a timing check
    while pid.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid.exists() and not sock.exists()


def test_a_server_that_dies_as_it_starts_fails_the_hook_open_at_once(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken install (the server cannot import): the hook allows the command and logs why as
    soon as the server has exited, instead of waiting out its whole budget for a socket."""
    broken = tmp_path / "broken"
    guard = broken / "analyzer" / "guard"
    shutil.copytree(Path(__file__).parents[2] / "analyzer" / "guard", guard,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (broken / "analyzer" / "__init__.py").write_text("")
    (guard / "server.py").write_text("raise SystemExit('an import the server needs is missing')\n")
    folder = tmp_path / "g"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("ANALYZER_GUARD_DIR", str(folder))
    monkeypatch.setenv("ANALYZER_GUARD_LOG", str(tmp_path / "guard.jsonl"))
    payload = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "pkill -f python"}, "tool_use_id": "t"}
    out = subprocess.run([sys.executable, "-I", "-S", str(guard / "client.py"), "--agent", "claude-code",
                          "--timeout", "60"], input=json.dumps(payload), capture_output=True, text=True,
                         timeout=120)
    assert (out.returncode, out.stdout) == (0, "")
    record = json.loads((tmp_path / "guard.jsonl").read_text())
    assert record["verdict"] == "allow" and "exited as it started (status 1" in record["error"]
    assert "an import the server needs is missing" in (folder / "server.log").read_text()


def test_a_verdict_later_than_the_budget_is_not_waited_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that takes the call and does not answer within ``--timeout``: the hook allows the
    command and the log says the budget ran out (the server logs nothing of a call it answered late)."""
    import socket
    import threading

    folder = tmp_path / "g"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("ANALYZER_GUARD_DIR", str(folder))
    monkeypatch.setenv("ANALYZER_GUARD_LOG", str(tmp_path / "guard.jsonl"))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path(str(folder)))
    listener.listen(1)
    done = threading.Event()

    def stall() -> None:  # takes the request, answers only once the hook has given up
        conn, _ = listener.accept()
        with conn:
            done.wait(120)

    threading.Thread(target=stall, daemon=True).start()
    try:
        out = subprocess.run([*ANALYZER, "guard", "--agent", "claude-code", "--timeout", "0.5"],
                             input=json.dumps({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                                               "tool_input": {"command": "pkill -f python"}, "tool_use_id": "t"}),
                             capture_output=True, text=True, timeout=120)
    finally:
        done.set()
        listener.close()
    assert (out.returncode, out.stdout) == (0, "")
    record = json.loads((tmp_path / "guard.jsonl").read_text())
    assert (record["verdict"], record["command"]) == ("allow", "pkill -f python")
    assert record["error"] == "TimeoutError: no verdict within the time budget (--timeout)"
