"""``guard install`` merges exactly the guard's entries into each agent's config, idempotently;
``guard uninstall`` takes out exactly those."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.cli.guard import command
from analyzer.guard.agents import AGENTS
from analyzer.guard.install import InstallError, hook_command, install, is_ours, uninstall

THEIRS = {"type": "command", "command": "~/bin/lint-on-edit"}


def _seed_config(agent: str, path: Path) -> dict[str, object]:
    """A config the user already had: their own hook on the same event, and another setting."""
    event = next(iter(AGENTS[agent].hook_entries("x")))
    entry: object = {"command": THEIRS["command"]} if agent == "cursor" else {"matcher": "Bash", "hooks": [THEIRS]}
    data: dict[str, object] = {"model": "keep-me", "hooks": {event: [entry], "Stop": [{"hooks": [THEIRS]}]}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return data


@pytest.mark.parametrize("agent", sorted(AGENTS))
@pytest.mark.parametrize("scope", ["project", "user"])
def test_install_is_idempotent_and_uninstall_restores(agent: str, scope: str, tmp_path: Path) -> None:
    root, home = tmp_path / "repo", tmp_path / "home"
    path = AGENTS[agent].config_path(scope, root, home)
    before = _seed_config(agent, path)
    assert install(agent, scope, root, home) == path
    once = json.loads(path.read_text())
    install(agent, scope, root, home)
    assert json.loads(path.read_text()) == once  # a second install changes nothing
    ours = [e for entries in once["hooks"].values() for g in entries
            for e in ([g] if "command" in g else g["hooks"]) if is_ours(e)]
    assert len(ours) == len(AGENTS[agent].hook_entries("x"))
    assert all(e["command"] == hook_command(agent) for e in ours)
    assert once["model"] == "keep-me"
    _, removed = uninstall(agent, scope, root, home)
    assert removed == len(ours)
    after = json.loads(path.read_text())
    if agent == "cursor":
        after.pop("version")
    assert after == before


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_uninstall_leaves_the_project_as_it_was_before_install(agent: str, tmp_path: Path) -> None:
    """No config before: none after. A config without hooks before: the same settings after, with
    no empty ``hooks`` table (a Cursor hooks file keeps the ``version`` every such file carries)."""
    root, home = tmp_path / "repo", tmp_path / "home"
    path = install(agent, "project", root, home)
    assert uninstall(agent, "project", root, home) == (path, len(AGENTS[agent].hook_entries("x")))
    assert not path.exists()
    path.write_text(json.dumps({"model": "keep-me"}))
    install(agent, "project", root, home)
    uninstall(agent, "project", root, home)
    after = json.loads(path.read_text())
    if agent == "cursor":
        assert after.pop("version") == 1
    assert after == {"model": "keep-me"}


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_an_installed_hook_whose_client_is_gone_fails_without_blocking(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The analyzer uninstalled (or moved) before ``guard uninstall``: Python would exit 2 on the
    missing file, which every agent reads as "block"; the command written exits 1, a hook error."""
    gone = tmp_path / "site-packages" / "analyzer" / "guard" / "client.py"
    monkeypatch.setattr("analyzer.guard.install.client.__file__", str(gone))
    command = hook_command("codex")
    assert is_ours({"type": "command", "command": command})
    out = subprocess.run(["bash", "-c", command], input="{}", capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout) == (1, "")


@pytest.mark.parametrize(("command", "ours"), [
    ("analyzer guard --agent codex", True),
    ("python -m analyzer.guard --agent gemini --timeout 5", True),
    ("'/opt/my env/bin/python' -I -S '/opt/my env/site-packages/analyzer/guard/client.py' --agent cursor", True),
    ("analyzer check --agent x", False),
    ("~/bin/guard --agent codex", False),
])
def test_the_guards_entries_are_recognised_in_every_form_it_wrote(command: str, ours: bool) -> None:
    assert is_ours({"type": "command", "command": command}) is ours


def test_paths_per_agent_and_scope(tmp_path: Path) -> None:
    root, home = tmp_path / "r", tmp_path / "h"
    assert [AGENTS[a].config_path("project", root, home).relative_to(root).as_posix() for a in sorted(AGENTS)] == [
        ".claude/settings.json", ".codex/hooks.json", ".cursor/hooks.json", ".gemini/settings.json"]
    assert AGENTS["claude-code"].config_path("user", root, home) == home / ".claude" / "settings.json"


def test_claude_code_entries_match_the_plugin_folder() -> None:
    """The plugin hooks the same events with the same matchers as ``guard install`` (its command
    differs only in how it finds the client: ``tests/guard/test_plugin.py``)."""
    plugin = Path(__file__).parents[2] / "hooks" / "hooks.json"
    assert json.loads(plugin.read_text())["hooks"] == AGENTS["claude-code"].hook_entries(
        'sh "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh" --agent claude-code')


def test_a_broken_config_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("{not json")
    with pytest.raises(InstallError, match="not JSON"):
        install("claude-code", "project", tmp_path, tmp_path)
    assert path.read_text() == "{not json"


def test_cli_install_and_uninstall(tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(command, ["install", "--agent", "codex", "--root", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert "installed" in r.output and (tmp_path / ".codex" / "hooks.json").is_file()
    r = runner.invoke(command, ["uninstall", "--agent", "codex", "--root", str(tmp_path)])
    assert r.exit_code == 0 and "removed 3 guard hook(s)" in r.output
    r = runner.invoke(command, ["uninstall", "--agent", "codex", "--root", str(tmp_path)])
    assert "no guard hooks" in r.output
