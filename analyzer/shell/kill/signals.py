"""Signal names and numbers on Linux and the BSDs, and which signals a process dies of."""

from __future__ import annotations

_LINUX_SIGNALS = {
    "HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "TRAP": 5, "ABRT": 6, "IOT": 6, "BUS": 7, "FPE": 8, "KILL": 9,
    "USR1": 10, "SEGV": 11, "USR2": 12, "PIPE": 13, "ALRM": 14, "TERM": 15, "STKFLT": 16, "CHLD": 17,
    "CLD": 17, "CONT": 18, "STOP": 19, "TSTP": 20, "TTIN": 21, "TTOU": 22, "URG": 23, "XCPU": 24,
    "XFSZ": 25, "VTALRM": 26, "PROF": 27, "WINCH": 28, "IO": 29, "POLL": 29, "PWR": 30, "SYS": 31,
}
_BSD_SIGNALS = {
    "HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "TRAP": 5, "ABRT": 6, "IOT": 6, "EMT": 7, "FPE": 8, "KILL": 9,
    "BUS": 10, "SEGV": 11, "SYS": 12, "PIPE": 13, "ALRM": 14, "TERM": 15, "URG": 16, "STOP": 17, "TSTP": 18,
    "CONT": 19, "CHLD": 20, "TTIN": 21, "TTOU": 22, "IO": 23, "XCPU": 24, "XFSZ": 25, "VTALRM": 26,
    "PROF": 27, "WINCH": 28, "INFO": 29, "USR1": 30, "USR2": 31,
}
# default action "ignore" or "stop": the target does not die
NOT_FATAL = frozenset({"CHLD", "CLD", "CONT", "URG", "WINCH", "INFO"})
STOPPING = frozenset({"STOP", "TSTP", "TTIN", "TTOU"})


def signal_table(bsd: bool) -> dict[str, int]:
    """The name -> number table of Linux, or of macOS/FreeBSD when ``bsd``."""
    return _BSD_SIGNALS if bsd else _LINUX_SIGNALS


def parse_signal(spec: str, bsd: bool = False) -> tuple[int, str] | None:
    """``"9"``, ``"KILL"``, ``"SIGKILL"``, ``"kill"`` -> ``(9, "KILL")``; None if not a signal."""
    table = signal_table(bsd)
    s = spec.strip()
    if s.isdigit():
        num = int(s)
        if num == 0:
            return 0, "0"
        name = next((k for k, v in table.items() if v == num and k not in ("IOT", "CLD", "POLL")), None)
        if name is None:
            return (num, f"SIG{num}") if 0 < num < 65 else None
        return num, name
    up = s.upper()
    if up.startswith("SIG"):
        up = up[3:]
    if up in table:
        return table[up], up
    m = up.startswith("RTMIN") or up.startswith("RTMAX")
    return (34, up) if m and not bsd else None


def is_fatal(name: str) -> bool:
    """Whether a process dies of the signal by default (not 0, not ignored, not a stop)."""
    return name != "0" and name not in NOT_FATAL and name not in STOPPING
