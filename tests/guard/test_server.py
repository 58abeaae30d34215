"""The warm server's per-session state: transcript tail plus the hook calls that arrive before the
transcript shows them; Cursor's world made of hook calls alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.guard.agents import AGENTS
from analyzer.guard.server import Server
from analyzer.guard.verdict import HookCall, Verdict
from tests.guard.conftest import transcript_before


def _verdict(server: Server, call: HookCall) -> Verdict:
    return server.judge(call)[0]


def _seed_call(seed: str, index: int, tmp_path: Path) -> HookCall:
    """The PreToolUse call of the seed's event ``index``, with the transcript as it stood then."""
    path, ev = transcript_before(seed, index, tmp_path / "t.jsonl")
    return HookCall(agent="claude-code", event="pre", session_id="s", transcript_path=str(path), cwd=str(tmp_path),
                    command=ev.command, tool_use_id=ev.ref)


@pytest.mark.parametrize("aside", [False, True], ids=["read-here", "first-read-aside"])
def test_kill_of_the_server_the_user_called_ready_asks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       aside: bool) -> None:
    if aside:  # as a large transcript's first read: in a forked copy while spaCy loads
        monkeypatch.setattr("analyzer.guard.server.ASIDE_BYTES", 0)
    call = _seed_call("000-kill-after-ready", 8, tmp_path)
    v = _verdict(Server(), call)
    assert (v.decision, v.rule) == ("ask", "kill-after-ready")
    assert "sglang server on 10.1.230.174:30000 is ready and in use" in v.reason
    assert "ask the user" in v.reason


def test_the_call_already_in_the_transcript_is_the_proposed_one(tmp_path: Path) -> None:
    """Claude Code may write the tool_use before the hook runs: judged once, not as a prior call."""
    src, ev = transcript_before("001-relaunch-after-ready", 14, tmp_path / "t.jsonl")
    full = (Path(__file__).parents[2] / "fixtures/seeds/001-relaunch-after-ready.jsonl").read_bytes().splitlines(True)
    assert ev.line
    src.write_bytes(b"".join(full[: ev.line]))  # now with the assistant line holding the call
    call = HookCall(agent="claude-code", event="pre", session_id="s", transcript_path=str(src), cwd=str(tmp_path),
                    command=ev.command, tool_use_id=ev.ref)
    v = _verdict(Server(), call)
    assert (v.decision, v.rule) == ("ask", "duplicate-launch")
    assert "already ready" in v.reason


def test_a_prompt_the_transcript_does_not_show_yet_counts(tmp_path: Path) -> None:
    """The user says "Ready" (UserPromptSubmit) and the transcript lags behind."""
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "2026-10-01T10:00:00Z",
         "message": {"role": "user", "content": "Start the API on port 8000"}},
        {"type": "assistant", "uuid": "a1", "sessionId": "s", "timestamp": "2026-10-01T10:00:01Z",
         "message": {"id": "m1", "role": "assistant", "content": [
             {"type": "tool_use", "id": "toolu_1", "name": "Bash",
              "input": {"command": "nohup uvicorn app:api --port 8000 > api.log 2>&1 &"}}]}},
        {"type": "user", "uuid": "u2", "sessionId": "s", "timestamp": "2026-10-01T10:00:02Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": ""}]}},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    server = Server()
    base = {"agent": "claude-code", "session_id": "s", "transcript_path": str(path), "cwd": str(tmp_path)}
    kill = HookCall(**base, event="pre", command="kill $(lsof -t -i:8000)", tool_use_id="toolu_2")  # type: ignore[arg-type]
    assert _verdict(server, kill).decision == "allow"  # nobody said it is ready
    _verdict(server, HookCall(**base, event="prompt", prompt="Ready, it works. Thanks!"))  # type: ignore[arg-type]
    v = _verdict(server, kill)
    assert (v.decision, v.rule) == ("ask", "kill-after-ready")


def test_cursor_world_is_made_of_its_hook_calls(tmp_path: Path) -> None:
    server = Server()
    cursor = AGENTS["cursor"]

    def send(payload: dict[str, object]) -> Verdict:
        call = cursor.parse({"conversation_id": "c1", "cwd": str(tmp_path), **payload})
        return _verdict(server, call)

    send({"hook_event_name": "beforeSubmitPrompt", "prompt": "Start the API on port 8000"})
    launch = "nohup uvicorn app:api --port 8000 > api.log 2>&1 &"
    assert send({"hook_event_name": "beforeShellExecution", "command": launch}).decision == "allow"
    send({"hook_event_name": "afterShellExecution", "command": launch, "output": ""})
    send({"hook_event_name": "afterShellExecution", "command": "curl -sf localhost:8000/health",
          "output": '{"ok": true}'})
    v = send({"hook_event_name": "beforeShellExecution", "command": launch})
    assert (v.decision, v.rule) == ("ask", "duplicate-launch")
    reply = cursor.answer(v, cursor.parse({"hook_event_name": "beforeShellExecution", "command": launch}))
    assert json.loads(reply.stdout)["permission"] == "ask"


@pytest.mark.parametrize(("mode", "decision"), [("deny", "deny"), ("warn", "warn")])
def test_config_mode_per_rule(tmp_path: Path, mode: str, decision: str) -> None:
    (tmp_path / "analyzer.toml").write_text(f'[guard.mode]\nkill-after-ready = "{mode}"\n')
    call = _seed_call("000-kill-after-ready", 8, tmp_path)
    assert _verdict(Server(), call).decision == decision


def test_self_matching_pkill_is_denied_by_default(tmp_path: Path) -> None:
    call = _seed_call("002-restart-30001-teardown", 9, tmp_path)
    v = _verdict(Server(), call)
    assert (v.decision, v.rule) == ("deny", "over-broad-kill")
    # the victims and the precise alternative: the one server the user asked about, by pid
    assert "its own shell" in v.reason and "the relaunch after it" in v.reason
    assert "ssh 10.1.230.181 kill 141207 (the sglang server on 10.1.230.181:30001)" in v.reason
    assert "separate command" in v.reason
