"""Which operating system a host runs, from what a session shows about it.

The kill semantics differ by platform (shell-semantics §5, §10): procps pkill on Linux spares only
itself, BSD/macOS pkill spares its ancestors unless ``-a``; killall, fuser and the service manager
differ too. So every verdict says which platform it assumed and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

__all__ = ["LINUX", "MACOS", "PlatformName", "infer_platform", "is_bsd_like", "normalize_platform"]

PlatformName = Literal["linux", "macos", "freebsd"]
LINUX: PlatformName = "linux"
MACOS: PlatformName = "macos"

_ALIASES: dict[str, PlatformName] = {
    "linux": "linux", "gnu/linux": "linux", "ubuntu": "linux", "debian": "linux", "wsl": "linux",
    "macos": "macos", "mac": "macos", "osx": "macos", "darwin": "macos",
    "freebsd": "freebsd", "bsd": "freebsd", "openbsd": "freebsd", "netbsd": "freebsd",
}

# (platform, regex, what the evidence is), strongest first: the first rule that fires decides
_RULES: list[tuple[PlatformName, re.Pattern[str], str]] = [
    ("macos", re.compile(r"\bDarwin(?: Kernel Version|\s+\S+\s+\d+\.\d+)|^Darwin$", re.M), "uname says Darwin"),
    ("linux", re.compile(r"^Linux \S+ \d+\.\d+\.\d+|\bGNU/Linux\b", re.M), "uname says Linux"),
    ("freebsd", re.compile(r"^FreeBSD \S+ \d+\.\d", re.M), "uname says FreeBSD"),
    ("macos", re.compile(r"\bProductName:\s*(?:macOS|Mac OS X)\b|\bsw_vers\b"), "sw_vers output"),
    ("linux", re.compile(r"^(?:PRETTY_)?NAME=\"?(?:Ubuntu|Debian|Fedora|CentOS|Rocky|Arch|Alpine|Red Hat)", re.M),
     "/etc/os-release"),
    ("macos", re.compile(r"\blaunchctl\b|\bLaunchAgents\b|\bLaunchDaemons\b"), "launchctl (macOS service manager)"),
    ("macos", re.compile(r"\bbrew (?:install|services|upgrade|list|info)\b|/opt/homebrew/|\bHomebrew\b"),
     "Homebrew"),
    ("linux", re.compile(r"\b(?:apt-get|apt|dpkg|yum|dnf|apk|pacman) (?:install|update|upgrade|-[a-zA-Z]*)"),
     "a Linux package manager"),
    ("linux", re.compile(r"\b(?:systemctl|journalctl)\b|\.service\b"), "systemd (systemctl/journalctl)"),
    ("linux", re.compile(r"\bnvidia-smi\b|/dev/nvidia\d|\bCUDA_VISIBLE_DEVICES\b"), "NVIDIA GPUs (no CUDA on macOS)"),
    ("macos", re.compile(r"(?<![\w/])/Users/[A-Za-z0-9._-]+/|/private/var/folders/|/var/folders/[a-z0-9_]{2}/"),
     "/Users/ home directory"),
    ("linux", re.compile(r"(?<![\w/])/home/[A-Za-z0-9._-]+/|/proc/\d+/|(?<![\w/])/root/"), "/home/ or /root/ paths"),
]


def normalize_platform(name: str | None) -> PlatformName:
    """``"Darwin"`` -> ``"macos"``; unknown or None -> ``"linux"``."""
    return _ALIASES.get((name or "linux").strip().lower(), "linux")


def is_bsd_like(platform: str) -> bool:
    """BSD userland (pkill spares ancestors, killall/fuser are the BSD tools)."""
    return normalize_platform(platform) in ("macos", "freebsd")


def infer_platform(texts: Iterable[str], *, ssh_target: bool = False) -> tuple[str, str]:
    """Guess a host's platform from session text about it (commands run there, their output, paths).

    Returns ``(platform, evidence)``: the strongest rule that fires decides, quoting what it saw.
    Without evidence: Linux, "ssh target (assumed Linux)" for a remote host, else "no evidence
    (assumed Linux)"."""
    best: tuple[int, PlatformName, str] | None = None
    for text in texts:
        if not text:
            continue
        for rank, (platform, rx, what) in enumerate(_RULES):
            if best is not None and rank >= best[0]:
                break
            m = rx.search(text)
            if m:
                best = (rank, platform, f"{what}: {m.group(0).strip()[:60]!r}")
                break
    if best is not None:
        return best[1], best[2]
    return LINUX, "ssh target (assumed Linux)" if ssh_target else "no evidence (assumed Linux)"
