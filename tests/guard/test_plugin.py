"""The Claude Code plugin folder (``.claude-plugin/``, ``hooks/hooks.json``) as Claude Code runs it:
the plugin copied whole to a cache folder of its own, each hook's command string handed to a shell
with ``${CLAUDE_PLUGIN_ROOT}`` substituted and exported, the hook JSON on stdin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.guard.client import pid_path
from tests.guard.conftest import uvicorn_transcript

REPO = Path(__file__).resolve().parents[2]
HOOKS = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
COMMAND = "pkill -f 'uvicorn app:plug'; nohup uvicorn app:plug --port 8765 > api.log 2>&1 &"
DENY = {"hookSpecificOutput": {
    "hookEventName": "PreToolUse", "permissionDecision": "deny",
    "permissionDecisionReason": (
        "[analyzer guard: over-broad-kill] this command kills more than its target: its own shell "
        "(`uvicorn app:plug` is in its command line) and the relaunch after it (`uvicorn app:plug` matches it); "
        "the rest of the command never runs. Instead: fuser -k 8765/tcp (the uvicorn app on local:8765). "
        "Run the relaunch as a separate command, after the kill.")}}

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("sh") is None, reason="needs bash and sh")


def _plugin_copy(dest: Path) -> Path:
    """What a plugin install leaves in Claude Code's cache: the repository (the plugin's root) copied
    somewhere else, here to a path with a space, as the desktop app's is (its package and the rules
    and report templates it reads; not the tests, fixtures or git history)."""
    root = dest / "plugin cache" / "session-analyzer-guard" / "0.1.0"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in (".claude-plugin", "hooks", "analyzer", "rules", "reports"):
        shutil.copytree(REPO / part, root / part, ignore=skip)
    shutil.copy2(REPO / "pyproject.toml", root)
    return root


def _payload(transcript: Path, command: str, tool_use_id: str) -> str:
    return json.dumps({"session_id": "plug", "transcript_path": str(transcript), "cwd": str(transcript.parent),
                       "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": command, "description": "Restart the API"},
                       "tool_use_id": tool_use_id})


def _run(shell: str, event: str, root: Path, stdin: str, path: str) -> subprocess.CompletedProcess[str]:
    """The event's hook command as Claude Code runs it (``--timeout`` raised for a loaded test machine:
    the plugin's own command keeps the client's default)."""
    (hook,) = [h for group in HOOKS[event] for h in group["hooks"]]
    command = hook["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(root)) + " --timeout 60"
    env = {**os.environ, "CLAUDE_PLUGIN_ROOT": str(root), "PATH": path}
    env.pop("ANALYZER_PYTHON", None)
    return subprocess.run([shell, "-c", command], input=stdin, capture_output=True, text=True, timeout=120,
                          env=env, cwd=root.parent)


def _path_with_analyzer() -> str:
    """PATH as a user's with session-analyzer installed: the environment's ``analyzer`` script on it."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def test_every_hook_of_the_plugin_runs_the_fast_client() -> None:
    assert sorted(HOOKS) == ["PostToolUse", "PreToolUse", "UserPromptSubmit"]
    commands = {h["command"] for groups in HOOKS.values() for g in groups for h in g["hooks"]}
    assert commands == {'sh "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh" --agent claude-code'}


def test_the_plugins_hook_denies_a_self_matching_restart_exactly(guard_dir: Path, tmp_path: Path) -> None:
    root = _plugin_copy(tmp_path)
    transcript = root.parent / "plug.jsonl"
    uvicorn_transcript(transcript, "plug")
    for n, shell in enumerate(["bash", "sh"]):
        out = _run(shell, "PreToolUse", root, _payload(transcript, COMMAND, f"toolu_r{n}"), _path_with_analyzer())
        assert (out.returncode, out.stderr) == (0, ""), out.stderr
        assert json.loads(out.stdout) == DENY
    harmless = _run("bash", "PreToolUse", root, _payload(transcript, "git status", "toolu_g"), _path_with_analyzer())
    assert (harmless.returncode, harmless.stdout, harmless.stderr) == (0, "", "")
    prompt = json.dumps({"session_id": "plug", "transcript_path": str(transcript), "cwd": str(tmp_path),
                         "hook_event_name": "UserPromptSubmit", "prompt": "thanks, leave it running"})
    kept = _run("bash", "UserPromptSubmit", root, prompt, _path_with_analyzer())
    assert (kept.returncode, kept.stdout, kept.stderr) == (0, "", "")
    # the warm server the plugin's hook started runs the plugin's own package, not the checkout's
    cwd = Path(f"/proc/{Path(pid_path(str(guard_dir))).read_text()}/cwd")
    if Path("/proc/self/cwd").exists():  # Linux
        assert cwd.resolve() == root.resolve()


def _spaced_env(dest: Path) -> Path:
    """This environment's interpreter at a path with a space (a venv folder named "my env"): the
    case pip writes its ``#!/bin/sh`` form for."""
    venv = Path(sys.prefix)
    env = dest / "my env"
    (env / "bin").mkdir(parents=True)
    shutil.copy2(venv / "pyvenv.cfg", env)
    (env / "lib").symlink_to(venv / "lib")
    python = env / "bin" / "python3"
    python.symlink_to(Path(sys.executable).resolve())
    return python


def _hook_with_console_script(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    """The self-matching restart through the plugin's hook, with ``text`` as the ``analyzer``
    script on PATH (and only the system's folders after it)."""
    root = _plugin_copy(tmp_path)
    transcript = root.parent / "plug.jsonl"
    uvicorn_transcript(transcript, "plug")
    bin_dir = tmp_path / "console-bin"
    bin_dir.mkdir()
    script = bin_dir / "analyzer"
    script.write_text(text)
    script.chmod(0o755)
    path = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    return _run("bash", "PreToolUse", root, _payload(transcript, COMMAND, "toolu_console"), path)


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="needs a virtual environment")
def test_pips_long_interpreter_form_of_the_console_script_is_read(guard_dir: Path, tmp_path: Path) -> None:
    """pip writes ``#!/bin/sh`` and an ``exec`` line when the interpreter's path has a space or is
    too long for ``#!``."""
    out = _hook_with_console_script(
        tmp_path, f"#!/bin/sh\n'''exec' \"{_spaced_env(tmp_path)}\" \"$0\" \"$@\"\n' '''\nimport sys\n")
    assert (out.returncode, json.loads(out.stdout)) == (0, DENY), out.stderr


def test_without_an_analyzer_the_command_is_allowed_and_the_user_told(guard_dir: Path, tmp_path: Path) -> None:
    """Claude Code reads an exit other than 0 and 2 as a non-blocking error: the command runs and the
    user sees why it was not judged."""
    root = _plugin_copy(tmp_path)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    path = os.pathsep.join([str(empty), *(d for d in ("/usr/bin", "/bin") if not (Path(d) / "analyzer").exists())])
    out = _run("bash", "PreToolUse", root, _payload(tmp_path / "none.jsonl", COMMAND, "toolu_x"), path)
    assert (out.returncode, out.stdout) == (1, "")
    assert "no analyzer on PATH" in out.stderr and "not judged" in out.stderr


def test_the_repository_is_its_own_marketplace_of_this_plugin() -> None:
    """``/plugin marketplace add <this repository>`` then ``/plugin install
    session-analyzer-guard@session-analyzer``: the entry names the plugin and points at the root
    that holds its manifest and hooks."""
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    (entry,) = market["plugins"]
    assert (market["name"], entry["name"], entry["version"]) == (
        "session-analyzer", manifest["name"], manifest["version"])
    root = (REPO / entry["source"]).resolve()
    assert (root / ".claude-plugin" / "plugin.json").is_file() and (root / "hooks" / "hooks.json").is_file()


def test_a_version_managers_shim_is_run_as_the_console_script(guard_dir: Path, tmp_path: Path) -> None:
    """pyenv's and asdf's ``analyzer`` on PATH is a shell script (``#!/usr/bin/env bash``) that finds
    the interpreter itself: the hook runs it (``analyzer guard``), it does not run bash as Python."""
    out = _hook_with_console_script(
        tmp_path, f'#!/usr/bin/env bash\nexec "{Path(sys.executable).parent / "analyzer"}" "$@"\n')
    assert (out.returncode, json.loads(out.stdout)) == (0, DENY), out.stderr


def test_a_plugin_root_without_the_client_is_a_hook_error_not_a_block(tmp_path: Path) -> None:
    """Python exits 2 on a file it cannot open, and exit 2 blocks: the hook tests the file first."""
    root = tmp_path / "plugin"
    shutil.copytree(REPO / "hooks", root / "hooks")
    out = _run("bash", "PreToolUse", root, _payload(tmp_path / "none.jsonl", COMMAND, "toolu_y"), _path_with_analyzer())
    assert (out.returncode, out.stdout) == (1, "")
    assert "no analyzer/guard/client.py under the plugin root" in out.stderr
