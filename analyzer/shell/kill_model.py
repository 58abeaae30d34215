"""The data of kill semantics: the processes a kill can see, who it hits and why, signals.

Private to ``analyzer.shell.kill`` (import the names from there).
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.shell.model import ShellFrame, SimpleCommand

ProcessKind = Literal["server", "shell", "ssh-client", "agent", "gpu", "other"]
Mechanism = Literal[
    "pkill", "kill", "kill-pgrep", "xargs-kill", "ps-grep-kill", "lsof-kill", "nvidia-smi-kill", "pidof-kill",
    "killall", "fuser-port", "fuser-file", "systemctl", "launchctl", "docker", "docker-compose", "tmux",
    "screen", "task-stop",
]

COMM_LEN_LINUX = 15  # TASK_COMM_LEN - 1
COMM_LEN_BSD = 16  # MAXCOMLEN on macOS / FreeBSD


def comm_of(argv0: str, limit: int = COMM_LEN_LINUX) -> str:
    """The kernel's name for a process started as ``argv0``: the basename, cut to ``limit`` bytes."""
    base = os.path.basename(argv0.rstrip("/")) or argv0
    return base.encode("utf-8")[:limit].decode("utf-8", "ignore")


class Process(BaseModel):
    """A process a kill could hit, as the caller (the lifecycle stage) knows it at that moment."""

    model_config = ConfigDict(frozen=True)

    pid: int | None = None
    """Its PID when the log shows it (``echo $!``, ``pgrep`` output); None when unknown."""
    argv: tuple[str, ...] = ()
    """Its argv as the program sees it (after wrappers such as nohup): ``pgrep -f`` matches these
    joined by spaces. For a ``#!`` script run as ``./serve.sh`` the kernel runs
    ``("/bin/bash", "./serve.sh")``: pass that, and ``comm="serve.sh"``."""
    host: str | None = None
    """None for the local machine, else the ssh target as written (``root@10.1.2.3``)."""
    comm: str = ""
    """The kernel task name that pgrep without ``-f`` and killall match. Derived when not given:
    the basename of ``argv[0]`` cut to 15 bytes (shell-semantics §5 "Without -f"). Pass it for
    processes renamed by setproctitle (``sglang::schedul``) or started with ``exec -a``."""
    ppid: int | None = None
    pgid: int | None = None
    """Process group (``kill -- -PGID``, ``pkill -g``)."""
    user: str | None = None
    """Owner (``pkill -u``); None when unknown."""
    kind: ProcessKind = "other"
    label: str = ""
    """Human text for reports: ``"sglang server :30001"``."""
    ref: str | None = None
    """Opaque id of the caller's (e.g. a server instance id)."""
    ports: tuple[int, ...] = ()
    """Local TCP ports it listens on or inherited a listening socket of (``fuser -k PORT/tcp``,
    ``lsof -t -i:PORT``)."""
    open_files: tuple[str, ...] = ()
    """Files and device nodes it holds open (``/dev/nvidia0``): ``fuser -k FILE``."""
    unit: str | None = None
    """The systemd unit (or launchd label) it runs in."""
    container: str | None = None
    """The container it runs in, by name (or id) as docker shows it."""
    task_id: str | None = None
    """The agent's background task that started it (Claude Code ``run_in_background``)."""
    tmux_session: str | None = None
    """The tmux (or screen) session it runs in."""

    @model_validator(mode="before")
    @classmethod
    def _derive_comm(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("comm") and data.get("argv"):
            data = {**data, "comm": comm_of(next(iter(data["argv"])))}
        return data

    def describe(self) -> str:
        """The label, else a short command line."""
        if self.label:
            return self.label
        text = " ".join(self.argv) or f"[{self.comm}]"
        return text if len(text) <= 60 else text[:57] + "…"


class Victim(BaseModel):
    """One process a kill hits, with the reason in words a person can check."""

    model_config = ConfigDict(frozen=True)

    process: Process
    reason: str
    """``pkill -f 'launch_server.*3000[01]' matches its command line 'python3 -m sglang… --port 30001'``."""
    subject: str | None = None
    """The text the pattern was matched against (command line or process name), if any."""
    span: tuple[int, int] | None = None
    """Where in ``subject`` the pattern matched (character offsets), for highlighting."""
    frame: ShellFrame | None = None
    """Set when the victim is a shell in the command's own chain (or the harness)."""
    ancestor: bool = False
    """The victim is an ancestor of the killing process (its own shell, sudo, the agent)."""


class KillVerdict(BaseModel):
    """What one kill-ish command would hit, as procps/psmisc/bash really behave."""

    command: SimpleCommand
    mechanism: Mechanism
    signal: int
    """Signal number on the assumed platform (``0`` = existence check, nothing dies)."""
    signal_name: str
    """``TERM``, ``KILL``…"""
    pattern: str | None = None
    """The regex or name as written (pkill/pgrep/killall/grep), if any."""
    targets: list[str] = Field(default_factory=list)
    """Other targets as written: PIDs, units, containers, sessions, ports, files."""
    host: str | None = None
    """Where the kill runs: None = locally."""
    victims: list[Victim] = Field(default_factory=list)
    self_kill: ShellFrame | None = None
    """The innermost shell of the command's own chain that the kill takes down (None: it survives).
    The kill keeps going (pkill already has its list), but that shell runs nothing more."""
    killed_frames: list[ShellFrame] = Field(default_factory=list)
    """Every shell of the chain (harness included) the kill takes down, outermost first."""
    harness_killed: bool = False
    """The agent's own wrapper shell (the ``harness`` frame) is among ``killed_frames``."""
    skipped_after: bool = False
    """True when ``self_kill`` is set: the commands after this one in that shell never run
    (``skips()`` says which)."""
    expected_exit: int | None = None
    """What the caller of the killed shell sees: 128+signal, or 255 through ssh."""
    generic: bool = False
    """The target is a generic name (node, python, bash…) or a device glob (``/dev/nvidia*``): it
    hits far more than one server."""
    invalid_pattern: bool = False
    """The regex does not compile: pgrep/pkill exit 2 and signal nothing."""
    unresolved: list[str] = Field(default_factory=list)
    """Shell expansions (``$PORT``, ``$(cat pidfile)``) whose value is unknown here: the victims
    listed are then a guess or empty."""
    reached: bool = True
    """False when an earlier kill in the same script took down the shell that would run this one:
    the command never runs and ``victims`` are only what it *would* hit."""
    platform: str = "linux"
    """The platform whose tools were modelled."""
    notes: list[str] = Field(default_factory=list)

    def skips(self, later: SimpleCommand) -> bool:
        """Does ``later`` (a command of the same script, after this one) not run because a shell
        it needs was killed? The deepest shell it shares with the kill's chain decides."""
        if not self.killed_frames or later.position <= self.command.position:
            return False
        common: ShellFrame | None = None
        for a, b in zip(self.command.shells, later.shells, strict=False):
            if a != b:
                break
            common = a
        if common is None:
            # they share only the harness shell, which runs (or launches) both
            return self.harness_killed
        return common in self.killed_frames


# ---------------------------------------------------------------- signals

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
    return name != "0" and name not in NOT_FATAL and name not in STOPPING
