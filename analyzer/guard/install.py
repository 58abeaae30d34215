"""``guard install`` / ``guard uninstall``: merge the guard's hook entries into an agent's config
file, and take exactly those out again. Idempotent: installing twice leaves one set of entries;
every other hook, setting and key of the file is kept as it was.

The command written runs the hook client file directly with this interpreter, ``[ -f '…/client.py' ]
&& exec '…/python' -I -S '…/analyzer/guard/client.py' --agent NAME``: no ``site``, no package
imports, no click (what a new process per shell command costs the agent; ``bench/README.md``), and
a hook error, not a block, once the file is gone. Moving the environment means installing again. An entry is the guard's when its command runs that file, ``analyzer guard
--agent`` or ``python -m analyzer.guard --agent``; nothing else is touched.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from analyzer.guard import client
from analyzer.guard.agents import AGENTS

_OURS = re.compile(r"analyzer[ ./]guard\b.*--agent\b")


class InstallError(ValueError):
    """The config file cannot be read as the agent's JSON."""


def is_ours(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("command"), str) and bool(_OURS.search(entry["command"]))


def hook_command(agent: str, timeout: float | None = None) -> str:
    """The hook command line: this interpreter (not resolved: a venv's ``python`` is a link that
    makes it the venv) running the client file, which imports nothing of the package. Every agent
    runs it through a shell. The file is tested first: once the analyzer is uninstalled or moved
    without ``guard uninstall``, Python would exit 2 ("can't open file"), which every agent reads as
    "block", on every command; the failed test exits 1, a hook error the agents let pass."""
    extra = f" --timeout {timeout:g}" if timeout else ""
    script = shlex.quote(str(Path(client.__file__).resolve()))
    return f"[ -f {script} ] && exec {shlex.quote(sys.executable)} -I -S {script} --agent {agent}{extra}"


def _read(path: Path) -> dict[str, Any]:
    if not path.exists() or not path.read_text("utf-8").strip():
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InstallError(f"{path}: not JSON ({exc}); fix or move it, then install again") from exc
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise InstallError(f"{path}: expected a JSON object with a `hooks` object")
    return data


def _strip(entries: list[Any]) -> tuple[list[Any], int]:
    """``entries`` without the guard's: flat entries (Cursor) or ``{hooks: […]}`` groups."""
    kept: list[Any] = []
    removed = 0
    for entry in entries:
        if is_ours(entry):
            removed += 1
            continue
        if isinstance(entry, dict) and isinstance(entry.get("hooks"), list):
            inner = [h for h in entry["hooks"] if not is_ours(h)]
            removed += len(entry["hooks"]) - len(inner)
            if not inner and entry["hooks"]:
                continue  # a group that held only the guard's hook
            entry = {**entry, "hooks": inner}
        kept.append(entry)
    return kept, removed


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", "utf-8")


def install(agent: str, scope: str, root: Path, home: Path, timeout: float | None = None) -> Path:
    """Add the guard's entries to the agent's config at ``scope``; returns the file."""
    protocol = AGENTS[agent]
    path = protocol.config_path(scope, root, home)
    data = _read(path)
    hooks: dict[str, Any] = data.setdefault("hooks", {})
    if agent == "cursor":
        data.setdefault("version", 1)
    for event, entries in protocol.hook_entries(hook_command(agent, timeout)).items():
        current = hooks.get(event)
        kept, _ = _strip(current if isinstance(current, list) else [])
        hooks[event] = [*kept, *entries]
    _write(path, data)
    return path


def uninstall(agent: str, scope: str, root: Path, home: Path) -> tuple[Path, int]:
    """Remove exactly the guard's entries; returns the file and how many were removed. A file left
    with nothing but what ``install`` adds (the ``hooks`` table, Cursor's ``version``) is removed."""
    path = AGENTS[agent].config_path(scope, root, home)
    if not path.exists():
        return path, 0
    data = _read(path)
    hooks: dict[str, Any] = data.get("hooks", {})
    removed = 0
    for event in list(hooks):
        if not isinstance(hooks[event], list):
            continue
        kept, n = _strip(hooks[event])
        removed += n
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not removed:
        return path, 0
    if not hooks:
        data.pop("hooks", None)  # install added the table: an empty one means nothing to any agent
    if not data or (agent == "cursor" and data == {"version": 1}):
        path.unlink()  # nothing left but what install wrote: the file install made
    else:
        _write(path, data)
    return path, removed
