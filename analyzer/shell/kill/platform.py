"""Which platform's tools a kill on a host runs: procps/psmisc on Linux, BSD pkill/killall on macOS."""

from __future__ import annotations

from collections.abc import Mapping

from analyzer.shell.kill.chain import host_key
from analyzer.shell.platform import normalize_platform

__all__ = ["platform_for"]

_PLATFORM_WORDS = {
    "linux": "Linux tools assumed (procps pkill spares only itself, psmisc killall/fuser)",
    "macos": "assumed macOS: BSD pkill spares its ancestors unless -a; killall -m, no fuser ports",
    "freebsd": "assumed FreeBSD: BSD pkill spares its ancestors unless -a",
}


def platform_for(host: str | None, default: str, platforms: Mapping[str | None, str] | None) -> tuple[str, str]:
    """(platform, the note saying so) for a kill on ``host``: as ``platforms`` maps it, else the
    local ``default``; ssh targets are Linux unless mapped."""
    where = "the local machine" if host is None else host
    if platforms:
        for key, value in platforms.items():
            if host_key(key) == host_key(host):
                plat = normalize_platform(value)
                return plat, f"{where}: {_PLATFORM_WORDS[plat]} (as inferred for this host)"
    if host is None:
        plat = normalize_platform(default)
        return plat, f"{where}: {_PLATFORM_WORDS[plat]}"
    return "linux", f"{host}: ssh target (assumed Linux)"
