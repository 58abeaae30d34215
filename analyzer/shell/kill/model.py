"""The data of kill semantics: the processes a kill can see, which it hits and why, the verdict.

A hit carries its why as data (:class:`HitReason`); :mod:`analyzer.shell.kill.reasons` writes every
sentence from it, so a rule or a report reads fields and never parses words.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.shell.kill.reasons import sentence
from analyzer.shell.model import ShellFrame, SimpleCommand

ProcessKind = Literal["server", "shell", "ssh-client", "agent", "gpu", "other"]
Mechanism = Literal[
    "pkill", "kill", "kill-pgrep", "xargs-kill", "ps-grep-kill", "lsof-kill", "nvidia-smi-kill", "pidof-kill",
    "killall", "fuser-port", "fuser-file", "systemctl", "launchctl", "docker", "docker-compose", "tmux",
    "screen", "task-stop", "pm2", "supervisorctl", "brew-services",
]
Matched = Literal[
    "command line", "process name", "pid", "process group", "process group of a match", "port", "open file",
    "unit", "launchd job", "container", "compose container", "tmux session", "screen session", "task",
    "pm2 app", "supervisor program", "brew service",
]
"""What of a process a kill selected it by."""
AboveKind = Literal["harness", "remote-shell", "su-shell", "session-shell", "shell", "launcher", "wrapper"]
Fate = Literal["dies", "dies-with-its-commands", "ignores", "stops", "relays", "unharmed"]
"""What the signal does to a process above the kill: ``dies-with-its-commands`` is a shell of the
chain that dies, so the commands after the kill in it never run; ``relays``: sudo forwards it."""

COMM_LEN_LINUX = 15  # TASK_COMM_LEN - 1
COMM_LEN_BSD = 16  # MAXCOMLEN on macOS / FreeBSD


def comm_of(argv0: str, limit: int = COMM_LEN_LINUX) -> str:
    """The kernel's name for a process started as ``argv0``: the basename, cut to ``limit`` bytes."""
    base = os.path.basename(argv0.rstrip("/")) or argv0
    return base.encode("utf-8")[:limit].decode("utf-8", "ignore")


class Process(BaseModel):
    """A process a kill could hit, as the caller (the lifecycle stage) knows it at that moment."""

    model_config = ConfigDict(frozen=True, defer_build=True)

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
    manager: str | None = None
    """The process manager that runs it as a named unit: ``pm2``, ``supervisor``, ``brew`` (a systemd
    unit or launchd job is ``unit``)."""
    manager_name: str | None = None
    """Its unit's name in that manager: the pm2 app, the supervisor program (``group:name``), the formula."""
    manager_id: int | None = None
    """Its unit's number in that manager, when a listing showed it (pm2's ``id`` column)."""

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


class Above(BaseModel):
    """A process above the kill (a shell of its chain or a lingering wrapper), as data."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    kind: AboveKind
    """``harness``: the agent's wrapper shell; ``remote-shell``: sshd's ``$SHELL -c``; ``su-shell``,
    ``session-shell`` (tmux/screen), ``shell`` (``bash -c``); ``launcher`` (``su``, ``watch``
    starting a nested shell) and ``wrapper`` (``sudo``, ``timeout`` around the kill)."""
    name: str = ""
    """The wrapper's program, the tmux/screen of a session shell, a shell's first two words."""
    host: str | None = None

    @property
    def is_shell(self) -> bool:
        """A shell of the kill's own chain: when it dies, the commands after the kill in it never run."""
        return self.kind not in ("launcher", "wrapper")


class HitReason(BaseModel):
    """Why a kill hits one process, as data; :func:`analyzer.shell.kill.reasons.sentence` says it."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    mechanism: Mechanism
    matched: Matched
    """What of the process selected it."""
    written: str = ""
    """The kill as the sentence quotes it (``pkill -9 -f 'launch_server.*3000[01]'``, ``fuser -k``)."""
    verb: str = ""
    """The action of a service, container or session kill (``stop``, ``kill-session``)."""
    target: str = ""
    """The operand that selected it: a port, a file, a unit glob, a container, a service, a task."""
    subject: str | None = None
    """The process's text the kill matched: command line, process name, PID, the file it holds, its
    unit or container."""
    span: tuple[int, int] | None = None
    """Where in ``subject`` the pattern matched (character offsets), for highlighting."""
    above: Above | None = None
    """Set when the process is above the kill: its own shell, the agent's wrapper shell, sudo."""
    fate: Fate | None = None
    """What the signal does to a process above the kill."""
    program: str = ""
    """``pkill``, ``kill``, ``killall``: the command whose later commands a dead shell never runs."""
    signal_name: str = ""
    agent: bool = False
    """The process is the agent's own CLI: the session itself dies."""

    @property
    def calling_shell(self) -> bool:
        """The process is a shell that runs this kill (the harness included)."""
        return self.above is not None and self.above.is_shell


class Hit(BaseModel):
    """One process a kill hits, and why (as data; ``reason`` is the sentence)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    process: Process
    why: HitReason
    frame: ShellFrame | None = None
    """Set when the process is a shell in the command's own chain (or the harness)."""
    ancestor: bool = False
    """The process is an ancestor of the killing process (its own shell, sudo, the agent)."""

    @property
    def reason(self) -> str:
        """The why in words a person can check: ``pkill -f 'launch_server.*3000[01]' matches its
        command line 'python3 -m sglang… --port 30001'``."""
        return sentence(self.why)


class KillVerdict(BaseModel):
    """What one kill-ish command would hit, as procps/psmisc/bash really behave."""

    model_config = ConfigDict(defer_build=True)

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
    victims: list[Hit] = Field(default_factory=list)
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
    selects: str | None = None
    """What a generic kill selects, in words: ``every `python` process``, ``every process using a
    GPU``, ``every running container``."""
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

    def mark_generic(self, selects: str) -> None:
        """The kill selects far more than one server: the first reason found names what."""
        self.generic = True
        self.selects = self.selects or selects

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
