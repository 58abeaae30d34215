"""Windows' kill commands, read into what they target: ``taskkill`` and PowerShell's ``Stop-Process``.

Agents on Windows (Antigravity, Cline, Claude Code under Git Bash) free a port with
``taskkill /F /IM node.exe`` (every ``node.exe``: the ``killall node`` of Windows) or
``taskkill //F //PID 21972`` (Git Bash doubles the slash so MSYS leaves the switch alone), and
PowerShell with ``Stop-Process -Name node -Force`` or ``Stop-Process -Id 21972``. Switches are
case-blind and may start with ``/``, ``//`` or ``-``; an image name drops its ``.exe``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.shell.kill.context import KillContext
from analyzer.shell.kill.killall import judge_killall
from analyzer.shell.kill.model import KillVerdict
from analyzer.shell.kill.pid import kill_pids

__all__ = ["WindowsKill", "judge_windows", "windows_kill"]


@dataclass
class WindowsKill:
    """What one taskkill/Stop-Process targets."""

    names: list[str] = field(default_factory=list)
    """Image names without ``.exe`` (``/IM``, ``-Name``): every process of that name."""
    pids: list[str] = field(default_factory=list)
    """``/PID``, ``-Id`` values."""
    force: bool = False
    """``/F``, ``-Force``: no chance to clean up (like SIGKILL)."""
    tree: bool = False
    """``/T``: the process and every child it started."""


_VALUED = frozenset({"fi", "s", "u", "p", "inputobject"})


def _switch(word: str) -> str | None:
    """``/IM``, ``//im``, ``-Name`` -> ``im``, ``name``; None for a value."""
    for prefix in ("//", "/", "--", "-"):
        if word.startswith(prefix) and len(word) > len(prefix) and word[len(prefix)].isalpha():
            return word[len(prefix):].lower()
    return None


def _image(name: str) -> str:
    return name[:-4] if name.lower().endswith(".exe") else name


def windows_kill(argv: list[str]) -> WindowsKill | None:
    """Read ``taskkill …`` or ``Stop-Process …``; None when it targets nothing it names (a filter
    such as ``/FI`` alone, or a process object piped in)."""
    out = WindowsKill()
    i = 1
    while i < len(argv):
        key = _switch(argv[i])
        value = argv[i + 1] if i + 1 < len(argv) else None
        if key in ("f", "force"):
            out.force = True
        elif key == "t":
            out.tree = True
        elif key in ("im", "name", "processname") and value is not None:
            out.names += [_image(n) for n in value.split(",") if n.strip()]
            i += 1
        elif key in ("pid", "id") and value is not None:
            out.pids += [p for p in value.split(",") if p.strip()]
            i += 1
        elif key in _VALUED:
            i += 1  # a filter, a remote machine, credentials: not a target read here
        elif key is None and not out.names and not out.pids:
            # Stop-Process's first positional parameter is -Id
            out.pids += [p for p in argv[i].split(",") if p.strip()]
        i += 1
    return out if out.names or out.pids else None


def judge_windows(ctx: KillContext, argv: list[str]) -> KillVerdict | None:
    """``taskkill /IM node.exe /F`` and ``Stop-Process -Name node`` kill by image name, like
    ``killall``; ``taskkill /PID 123`` and ``Stop-Process -Id 123`` by PID, like ``kill``."""
    how = windows_kill(argv)
    if how is None:
        return None
    force = ["-9"] if how.force else []
    if how.names:
        v = judge_killall(ctx, ["killall", *force, *how.names])
    else:
        found = kill_pids(ctx, ["kill", *force, *how.pids], external=True, piped=False)
        if found is None:
            return None
        v = found
    v.notes.append(f"{argv[0]} read as `{'killall' if how.names else 'kill'} {' '.join(force + (how.names or how.pids))}`"
                   + (" (with /T: the child processes of each too)" if how.tree else ""))
    return v
