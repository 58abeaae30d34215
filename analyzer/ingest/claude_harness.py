"""What Claude Code writes into tool results and user turns about background tasks.

Read by the Claude Code reader and by the readers of other files that carry Claude Code's text:
chat documents converted from Claude Code sessions keep the tool results and the
``<task-notification>`` turns as Claude Code wrote them, without the structured fields around them.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

BACKGROUND = re.compile(r"^Command (?:running in background|was manually backgrounded[^\n:]*) with ID: ([\w-]+)")
"""A Bash result saying the command goes on as a background task (asked for, or moved there when
it outlived the tool's timeout)."""
_NOTE_EXIT = re.compile(r"exit code (-?\d+)", re.IGNORECASE)


def tag(text: str, name: str) -> str | None:
    """The text inside ``<name>…</name>`` (HTML entities decoded: Claude Code escapes them)."""
    start = text.find(f"<{name}>")
    if start < 0:
        return None
    start += len(name) + 2
    end = text.find(f"</{name}>", start)
    return html.unescape(text[start:end if end >= 0 else len(text)])


def background_task(result: str) -> str | None:
    """The task id when a Bash result says the command runs on in the background."""
    m = BACKGROUND.search(result[:300])
    return m.group(1) if m else None


COMPACTION_SUMMARY = "This session is being continued from a previous conversation"
"""How the summary Claude Code hands the agent after a compaction begins (``isCompactSummary``
on disk; a conversion keeps only the text): the harness speaking, not the user."""


def is_notification(text: str) -> bool:
    return text.lstrip().startswith("<task-notification>")


@dataclass(frozen=True)
class Notification:
    """A ``<task-notification>``: a background task ended, or its monitor saw an event."""

    task_id: str | None
    status: str | None
    summary: str
    event: str | None
    exit_code: int | None

    @property
    def subtype(self) -> str:
        return "monitor-event" if self.event is not None and self.status is None else "task-notification"

    @property
    def text(self) -> str:
        return self.summary if self.event is None else f"{self.summary}: {self.event}"

    def fields(self) -> dict[str, Any]:
        """The ``SystemEvent`` fields it fills."""
        return {"subtype": self.subtype, "text": self.text, "task_id": self.task_id, "status": self.status,
                "exit_code": self.exit_code}


def read_notification(text: str) -> Notification:
    summary = tag(text, "summary") or ""
    m = _NOTE_EXIT.search(summary)
    return Notification(task_id=tag(text, "task-id"), status=tag(text, "status"), summary=summary,
                        event=tag(text, "event"), exit_code=int(m.group(1)) if m else None)


def task_ref(args: dict[str, Any]) -> str | None:
    """The background task a poll or stop tool call names (``TaskOutput``, ``BashOutput``, ``KillShell``…)."""
    ref = args.get("bash_id") or args.get("shell_id") or args.get("task_id")
    return str(ref) if ref is not None else None
