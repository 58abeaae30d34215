"""The typed timeline every log format is read into.

One session becomes an ordered list of events, a pydantic discriminated union on ``kind``. Formats
differ in what they record; the union keeps what the lifecycle stage needs and nothing that only
one format can fill is required.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Level(StrEnum):
    """How bad a diagnostic is. ``error``: a record was lost; ``warning``: read with a guess."""

    error = "error"
    warning = "warning"
    info = "info"


class Diagnostic(BaseModel):
    """Something about the input that a person should know: a record that could not be read, a
    guess the loader made. Never raised: collected on the session."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # a clean file has none

    level: Level
    """error (a record was lost), warning (read, with a guess) or info."""
    message: str
    """What happened, in words a user can act on."""
    file: str | None = None
    """The file the record is in (a sub-agent file, a storage part), or None for the session file."""
    line: int | None = None
    """1-based line (JSONL) or record number (JSON arrays, storage files) where it happened."""


class CaseMarks(BaseModel):
    """Rule-case markers from the ``*.session.yaml`` fixture format; empty for real logs."""

    model_config = ConfigDict(frozen=True)

    expect: tuple[str, ...] = ()
    """Rules that must fire with this event as anchor."""
    ok: tuple[str, ...] = ()
    """Rules that must not fire with this event as anchor."""
    todo_expect: tuple[str, ...] = ()
    """Known gaps: should fire, does not yet; reported, not failing."""
    todo_ok: tuple[str, ...] = ()
    """Known false positives: fires, should not; reported, not failing."""
    example: bool = False
    """Shown in ``analyzer rules explain`` as a documented example."""

    def __bool__(self) -> bool:
        return bool(self.expect or self.ok or self.todo_expect or self.todo_ok)


class _EventBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int = -1
    """Position in the session timeline, 0-based. Assigned by the session builder."""
    ref: str | None = None
    """The log's own id for this record (message uuid, ``toolu_…``, ``call_id``); None if it has none."""
    line: int | None = None
    """1-based line or record number in ``source`` (or the session file) where the event starts."""
    source: str | None = None
    """The file this event was read from when it is not the session's main file (sub-agent files,
    opencode part files); None means the main file."""
    ts: datetime | None = None
    """When it happened (timezone-aware UTC where the log says so); None when the format has no time."""
    agent: str = "main"
    """``main`` for the top-level agent, else the sub-agent's id."""
    marks: CaseMarks = Field(default_factory=CaseMarks)
    """Rule-case markers (fixture format only)."""


class UserEvent(_EventBase):
    """A message typed by the person driving the agent."""

    kind: Literal["user"] = "user"
    text: str
    """The message text, with harness wrappers (``<command-message>`` …) left as written."""
    origin: Literal["prompt", "command", "interrupt", "meta"] = "prompt"
    """``prompt``: typed text; ``command``: a slash command; ``interrupt``: the user stopped the
    agent ("[Request interrupted by user]"); ``meta``: injected by the harness, not typed."""


class AssistantEvent(_EventBase):
    """Text the agent said (to the user). Thinking is kept separately and is not shown as said."""

    kind: Literal["assistant"] = "assistant"
    text: str
    """What the agent said."""
    thinking: str | None = None
    """Private reasoning, when the log keeps it."""
    model: str | None = None
    """Model id, e.g. ``claude-opus-4-7``."""


ToolCategory = Literal["shell", "task_output", "task_stop", "subagent", "file", "other"]


class ToolEvent(_EventBase):
    """A tool call paired with its result. The result fields are None when the log has no result
    (the session ended, or the result line was lost)."""

    kind: Literal["tool"] = "tool"
    name: str
    """The tool's name as the log spells it (``Bash``, ``exec_command``, ``bash``…)."""
    category: ToolCategory = "other"
    """What the tool does, across formats: ``shell`` runs ``command``; ``task_output`` polls a
    background task; ``task_stop`` kills one; ``subagent`` starts a sub-agent; ``file`` reads or
    edits files."""
    input: dict[str, Any] = Field(default_factory=dict)
    """The call's arguments as logged (parsed from JSON strings where the format stores them so)."""
    command: str | None = None
    """The shell command string, uniformly across formats (argv joined with shell quoting where the
    log keeps an argv). None for tools that are not shell tools."""
    output: str | None = None
    """What the call returned, as text (stdout and stderr combined where the log splits them)."""
    is_error: bool | None = None
    """The harness marked the result as an error."""
    exit_code: int | None = None
    """Exit status when the log shows it (Claude Code only on failure, from "Exit code N")."""
    interrupted: bool = False
    """The call was interrupted by the user or a timeout."""
    truncated: bool = False
    """The harness cut ``output`` before logging it (opencode's "…N bytes truncated… Full output saved
    to …", Claude Code's "[N characters truncated]" and ``<persisted-output>`` previews): what is not
    in it may still have been printed, so its absence is unknown, not evidence."""
    background: bool = False
    """The harness ran it in the background (``run_in_background``, a unified-exec session)."""
    task_id: str | None = None
    """The background task this call started (launch) or refers to (poll, stop)."""
    by_user: bool = False
    """The user ran this command themselves (Claude Code ``!`` bash mode, Codex user shell)."""
    result_ref: str | None = None
    """The log's id of the result record, if separate from the call."""
    result_line: int | None = None
    """Line of the result record, if separate from the call."""
    result_ts: datetime | None = None
    """When the result arrived."""
    cwd: str | None = None
    """Working directory of the call, when logged."""

    def status_words(self) -> list[str]:
        """How the call ended, in a few words for listings: ``background b1``, ``exit 1``…"""
        out = []
        if self.background:
            out.append("background" + (f" {self.task_id}" if self.task_id else ""))
        elif self.task_id:
            out.append(f"task {self.task_id}")
        if self.exit_code is not None:
            out.append(f"exit {self.exit_code}")
        elif self.is_error:
            out.append("error")
        if self.interrupted:
            out.append("interrupted")
        if self.truncated:
            out.append("output cut")
        if self.output is None and self.category == "shell":
            out.append("no result")
        return out


class SystemEvent(_EventBase):
    """Something the harness recorded: a background task finished, the context was compacted, an
    API error. Kept because lifecycle evidence lives here (task exit codes)."""

    kind: Literal["system"] = "system"
    subtype: str
    """``task-notification``, ``compact_boundary``, ``api_error``, … as the log names it."""
    text: str = ""
    """Human-readable content."""
    task_id: str | None = None
    """For task notifications: the background task this is about."""
    exit_code: int | None = None
    """For task notifications: the task's exit code."""
    status: str | None = None
    """For task notifications: ``completed``, ``failed``, ``killed``…"""


Event = Annotated[UserEvent | AssistantEvent | ToolEvent | SystemEvent, Field(discriminator="kind")]
"""One entry of the timeline."""


class Counts(BaseModel):
    """How the input's records were accounted for (Nothing lost: records = events' records +
    skipped + lost)."""

    records: int = 0
    """Records read from the input (lines, array items, storage files)."""
    events: int = 0
    """Events in the timeline."""
    skipped: int = 0
    """Known non-conversation records (``file-history-snapshot``, ``progress``, token counts…)."""
    diagnostics: int = 0
    """Diagnostics of any level."""
    lost: int = Field(default=0, exclude=True)
    """Records that could not be read (each error diagnostic stands for the records it reports).
    Not in the JSON ``counts`` (a partly read file says so in its diagnostics and ``errors``)."""


class Session(BaseModel):
    """A loaded session: the timeline and everything learned about the input."""

    path: str
    """The file or folder the session was loaded from, as given."""
    format: str
    """The ingest format name (``claude-code``, ``codex``, …)."""
    session_id: str | None = None
    """The log's session id, if it has one."""
    agent: str | None = None
    """The harness that wrote the log (``claude-code``, ``codex``…)."""
    model: str | None = None
    """The main model used, if logged."""
    cwd: str | None = None
    """The working directory of the session, if logged."""
    events: list[Event] = Field(default_factory=list)
    """The timeline, ordered."""
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    """Problems found while reading."""
    counts: Counts = Field(default_factory=Counts)
    """Record accounting."""
    sources: list[str] = Field(default_factory=list)
    """Every file read for this session (sub-agent files, storage parts), main file first."""
    part: int | None = None
    """1-based position of this session in a file that holds several (a harness concatenated Gemini
    stream-json runs); None when the file holds one. Lines stay the file's own line numbers."""

    @property
    def name(self) -> str:
        return Path(self.path).name + (f"#{self.part}" if self.part is not None else "")

    def tools(self) -> list[ToolEvent]:
        return [e for e in self.events if isinstance(e, ToolEvent)]

    def shell_calls(self) -> list[ToolEvent]:
        return [e for e in self.events if isinstance(e, ToolEvent) and e.command is not None]


__all__ = [
    "AssistantEvent",
    "CaseMarks",
    "Counts",
    "Diagnostic",
    "Event",
    "Level",
    "Session",
    "SystemEvent",
    "ToolCategory",
    "ToolEvent",
    "UserEvent",
]
