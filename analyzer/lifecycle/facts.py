"""Lifecycle facts: what the timeline says happened to servers, each pointing at its event.

A pydantic union on ``kind``; rules query them through ``World``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Strength = Literal["strong", "medium", "weak"]
State = Literal["starting", "ready", "failed", "stopped", "unknown"]


class _Fact(BaseModel):
    # schemas built on first use: a session with no kill or correction never builds those
    model_config = ConfigDict(defer_build=True)

    event: int
    """Index of the event this fact was read from."""
    instance: str | None = None
    """The server instance it is about (``World.instances`` key), when known."""
    detail: str = ""
    """One sentence a person can read."""


class Launch(_Fact):
    """A command starts a server."""

    kind: Literal["launch"] = "launch"
    server: str
    """Catalog kind (``sglang``, ``vllm``, ``systemd``, ``docker``…)."""
    label: str
    """Human name of the kind."""
    host: str
    """Normalised host: ``local`` or the ssh target without the user part."""
    port: int | None = None
    """Listening port, when known."""
    bind: str | None = None
    """Bind address, when given."""
    gpus: str | None = None
    """``CUDA_VISIBLE_DEVICES`` or ``tp=N``."""
    log_file: str | None = None
    """Where its output goes."""
    pid: int | None = None
    """Process id when the output shows it (``PID: 123``, ``[1] 123``)."""
    pid_event: int | None = None
    """The event whose output bound ``pid`` (the launch's own echo, a port lister, its log)."""
    task_id: str | None = None
    """The harness's background task id."""
    unit: str | None = None
    """systemd unit; for a process manager's unit (``server`` pm2, supervisor, brew, launchd) its
    name there: the pm2 app, the supervisor program, the formula, the launchd label."""
    app: str | None = None
    """For a process manager's unit: the catalog kind of the program it runs (``uvicorn`` for
    ``pm2 start "uvicorn app:app --port 8000"``), whose ready and failure lines its logs show."""
    container: str | None = None
    """Docker container name."""
    session: str | None = None
    """The tmux or screen session it runs in (``tmux:api``, ``screen:api``): started with it, or
    typed into it with ``send-keys`` / ``-X stuff``."""
    argv: list[str] = Field(default_factory=list)
    """The server process's argv (for kill matching)."""
    command_position: int = 0
    """Position of the launching simple command in its script."""
    ran: bool = True
    """False when the process model predicts it never ran (its shell was killed before it)."""
    duplicate_of: int | None = None
    """Event index of the live launch this one duplicates."""
    overlaps: list[tuple[int, int]] = Field(default_factory=list)
    """(port, launch event) of servers outside this compose stack that still held a port its
    containers publish (a later ``docker compose ps`` shows it); ``duplicate_of`` is the first."""
    collided: str | None = None
    """The output line showing its port already held by a server no launch of this log started
    (``EADDRINUSE``, "Another next dev server is already running"): one from before the log or
    the user's own."""


class Probe(_Fact):
    """A check whether a server is up: an HTTP request, a port listing, a task poll."""

    kind: Literal["probe"] = "probe"
    method: str
    """``http``, ``port-check``, ``port-list``, ``redis-ping``, ``process-list``, ``systemctl``,
    ``docker-ps``, ``task-poll``, ``log``."""
    target: str
    """What it checked (URL, port, unit, task id, log file)."""
    answered: bool | None
    """True: it is up; False: refused / not running; None: cannot tell."""


class Ready(_Fact):
    """Evidence that an instance serves."""

    kind: Literal["ready"] = "ready"
    source: Literal["probe", "log", "user", "agent"]
    """Where the evidence comes from, strongest first."""
    strength: Strength
    quote: str = ""
    """The words or line that say so."""


class Failure(_Fact):
    """Evidence that an instance (or one launch of it) died or cannot serve."""

    kind: Literal["failure"] = "failure"
    reason: Literal["killed", "oom", "address-in-use", "traceback", "exit", "refused", "crash", "error"]
    quote: str = ""
    """The output line that shows it."""
    launch_event: int | None = None
    """The launch it is about, when it is one launch (a duplicate killed at once)."""


class Victim(BaseModel):
    """One process a kill hits, in world terms."""

    model_config = ConfigDict(defer_build=True)

    label: str
    """What it is: ``sglang server on gpu1:30001``, ``the remote shell running this command``…"""
    reason: str
    """Why it matched."""
    role: Literal["server", "shell", "ssh-client", "agent", "gpu", "other"]
    instance: str | None = None
    """The instance, for servers."""
    launch_event: int | None = None
    """The launch of that instance's process."""
    matched: str | None = None
    """What of the process the kill selected it by: ``command line``, ``process name``, ``pid``,
    ``port``, ``open file``, ``unit``, ``container``, ``tmux session``, ``task``… (None for a
    victim the world adds itself, such as a unit from before the log)."""
    subject: str | None = None
    """The process's text the reason quotes, shortened around the match: its command line, its
    process name, its PID. None when the reason quotes nothing (a port, a unit)."""
    match_span: tuple[int, int] | None = None
    """Where in ``subject`` the kill matched, for highlighting."""
    lead: str = ""
    """The reason up to the quoted ``subject`` (``pkill -9 -f … matches its command line``); the
    whole reason when it quotes nothing."""
    consequence: str = ""
    """The reason after the quote: what hitting it does (``it is the agent's shell running this
    command …; it dies with SIGKILL, so the commands after this pkill in it never run``)."""


class RelaunchMatch(BaseModel):
    """A launch later in the same command that a kill's pattern matches too."""

    model_config = ConfigDict(defer_build=True)

    event: int
    """The launch's event (the kill's own)."""
    text: str
    """The launch's command line, as the pattern was matched against it."""
    span: tuple[int, int]
    """Where in ``text`` the pattern matched."""


class Kill(_Fact):
    """A command or tool that stops processes, with what it really hits."""

    kind: Literal["kill"] = "kill"
    mechanism: str
    """``pkill``, ``kill``, ``killall``, ``fuser-file``, ``systemctl``, ``task-stop``…"""
    text: str
    """The kill as written (``pkill -9 -f "launch_server.*3000[01]"``)."""
    pattern: str | None = None
    """The pattern it matches with, if any."""
    victims: list[Victim] = Field(default_factory=list)
    self_kill: bool = False
    """It hits the shell running it: the commands after it in that shell never run."""
    also_matches_relaunch: list[int] = Field(default_factory=list)
    """Launch events in the same command whose text the pattern matches too."""
    relaunches: list[RelaunchMatch] = Field(default_factory=list)
    """Those launches, with where the pattern matches each."""
    generic: bool = False
    """A generic name (node, python, zsh) or every GPU process."""
    selects: str | None = None
    """What a generic kill selects, in words: ``every `python` process``, ``every process using a
    GPU``, ``every running container``."""
    command_span: tuple[int, int] | None = None
    """Where the kill is written in the event's command (for a nested one, the word holding it)."""
    platform: str = "linux"
    """The platform the verdict assumed."""
    notes: list[str] = Field(default_factory=list)
    command_position: int = 0
    stack: str | None = None
    """For ``docker compose down|stop|kill|restart|rm -s`` naming no service: the key of the whole
    stack it takes down (its victims are every live service). Taking one's own stack down to
    redeploy it is not a kill of a server in the user's hands."""


class Instruction(_Fact):
    """The user asks for something to happen to a server (or not to)."""

    kind: Literal["instruction"] = "instruction"
    action: Literal["launch", "stop", "restart", "hold"]
    targets: list[str] = Field(default_factory=list)
    """Instances it refers to; empty when it names none that the world knows."""
    target_text: str = ""
    """How the user named the target (``sglang on *:30001``), or ``unspecified``."""
    quote: str = ""


class Correction(_Fact):
    """The user contradicts the agent about server state."""

    kind: Literal["correction"] = "correction"
    quote: str = ""
    corrects: int | None = None
    """The agent event it corrects (the latest lifecycle action before it)."""
    disputes: int | None = None
    """The readiness evidence the message contradicts ("am getting 502" right after the agent's
    probe answered): the event of that ``Ready``, for a report of a server down or broken."""


class ModelDisagreement(_Fact):
    """What was observed contradicts the process model (a predicted self-kill, yet later commands
    ran). Observation wins; the disagreement is kept for the report."""

    kind: Literal["disagreement"] = "disagreement"
    predicted: str
    observed: str
    shown_by_output: bool = False
    """The output itself shows what happened (a later command's printed text), not only the exit
    status (which a kill of a backgrounded subshell leaves 0)."""


Fact = Annotated[
    Launch | Probe | Ready | Failure | Kill | Instruction | Correction | ModelDisagreement,
    Field(discriminator="kind"),
]
