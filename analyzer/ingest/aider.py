"""aider chat history: ``.aider.chat.history.md`` (formats.md §5).

Markdown, appended to by every aider run in the repository: ``# aider chat started at <time>`` opens a
run (a ``SystemEvent(subtype="session_start")``, the only time the file has), ``#### `` lines are what
the user typed (one block of them is one message; in architect mode aider also logs the
architect's answer, handed to the editor model, as such a block: it repeats the answer and is skipped), ``> `` lines are aider's own output, and other
text is the model's answer.

Commands: the user's ``/run CMD`` (or ``!CMD``) is a shell ``ToolEvent`` with ``by_user=True``; a
command the model suggested and the user let aider run shows as ``> Running CMD``, a shell
``ToolEvent`` of the agent. aider never writes command output, exit codes or ids here, so ``output``
is None. ``> Model:`` / ``> Main model:`` give the model; ``^C`` lines are user interrupts; the rest of
aider's chatter (token counts, prompts, applied edits) is counted skipped. Records are blocks: a user
message, an answer, or one ``>`` line; ``line`` is where the block starts.
"""

from __future__ import annotations

import re
from pathlib import Path

from analyzer.events import AssistantEvent, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest.base import IngestError, SessionBuilder, parse_ts, read_regular

NAME = "aider"
DESCRIPTION = "aider .aider.chat.history.md: `# aider chat started at`, `#### ` user lines, `> ` tool lines"

_STARTED = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
_MODEL = re.compile(r"^(?:Main model|Model): (\S+)")


def detect(path: Path, head: bytes) -> str | None:
    if not head or head.lstrip()[:1] != b"#":
        return None
    text = head.decode("utf-8", "replace")
    if re.search(r"^# aider chat started at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", text, re.M):
        return "Markdown with `# aider chat started at` headers"
    return None


def _strip(line: str, prefix: str) -> str:
    """A history line without its prefix and the two trailing spaces aider adds for Markdown breaks."""
    body = line[len(prefix):] if line.startswith(prefix) else line.lstrip("#>")
    return body[:-2] if body.endswith("  ") else body.rstrip()


class _Reader:
    def __init__(self, b: SessionBuilder) -> None:
        self.b = b
        self.user: list[str] = []
        self.said: list[str] = []
        self.start = 0
        self.last_answer = ""
        """The model's last answer, whitespace-normalised: architect mode hands it on as a ``####`` block."""

    def flush(self) -> None:
        if self.user:
            self._user("\n".join(self.user), self.start)
            self.user = []
        if self.said:
            text = "\n".join(self.said).strip("\n")
            if text.strip():
                self.b.add(AssistantEvent(text=text, model=self.b.session.get("model"), line=self.start))
                self.last_answer = " ".join(text.split())
            self.said = []

    def _user(self, text: str, line: int) -> None:
        self.b.records += 1
        if self.last_answer and " ".join(text.split()) == self.last_answer:
            # architect mode: aider sends the architect model's answer to the editor model as a user
            # message and logs it as one; nobody typed it, and it is the answer already read
            self.b.skipped += 1
            return
        first = text.split("\n", 1)[0]
        command = first[5:] if first.startswith("/run ") else first[1:] if first.startswith("!") else None
        if command is not None:
            command = "\n".join([command, *text.split("\n")[1:]]).strip()
            self.b.add(ToolEvent(name="run", category="shell", input={"command": command}, command=command,
                                 by_user=True, line=line))
        else:
            self.b.add(UserEvent(text=text, origin="command" if first.startswith("/") else "prompt",
                                 line=line))

    def tool_line(self, text: str, line: int) -> None:
        b = self.b
        b.records += 1
        if text.startswith("Running "):
            command = text[len("Running "):].strip()
            b.add(ToolEvent(name="shell", category="shell", input={"command": command}, command=command,
                            line=line))
        elif text.strip().startswith("^C"):
            b.add(UserEvent(text=text.strip(), origin="interrupt", line=line))
        else:
            if (m := _MODEL.match(text)) and "model" not in b.session:
                b.session["model"] = m.group(1)
            b.skipped += 1

    def read(self, lines: list[str]) -> None:
        after_tool_line = False
        for lineno, raw in enumerate(lines, start=1):
            line = raw.rstrip("\n")
            continuation = after_tool_line and bool(line.strip()) and not line.startswith(("#", ">"))
            after_tool_line = line.startswith("> ") or (continuation and after_tool_line)
            if continuation:
                continue  # aider quotes only the first line of a multi-line message (a suggested script)
            started = _STARTED.match(line)
            marked = started or line.startswith(("#### ", "> ")) or line in ("####", ">")
            if marked and self.said:
                self.flush()  # the answer ends where the next user, aider or session line starts
            if started:
                self.flush()
                self.b.records += 1
                self.b.add(SystemEvent(subtype="session_start", text=line.lstrip("# "), line=lineno,
                                       ts=parse_ts(started.group(1))))
            elif line.startswith("#### ") or line == "####":
                if not self.user:
                    self.flush()
                    self.start = lineno
                self.user.append(_strip(line, "#### "))
            elif line.startswith("> ") or line == ">":
                self.flush()
                self.tool_line(_strip(line, "> "), lineno)
            elif not line.strip() and not self.said:
                self.flush()  # a blank line ends a user block
            else:
                if self.user:
                    self.flush()
                if not self.said:
                    self.start = lineno
                    self.b.records += 1
                self.said.append(line)
        self.flush()


def load(path: Path) -> Session:
    b = SessionBuilder(path=path, format=NAME)
    b.session["agent"] = "aider"
    try:
        text = read_regular(path).decode("utf-8", "replace")
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from exc
    _Reader(b).read(text.splitlines())
    if not any(isinstance(e, SystemEvent) and e.subtype == "session_start" for e in b.events):
        raise IngestError(path, "no `# aider chat started at` session in this file")
    return b.build()
